"""The control-plane messages between the JobManager and its TaskManagers (DESIGN.md §3).

Frozen dataclasses, pickled by the RPC layer only after the connection proved the job secret.
Every message a TaskManager sends names the job attempt it belongs to, so the JobManager can
drop what a TaskManager of an earlier, failed attempt still had in flight.

``TaskManagerPayload`` is what a TaskManager process is started with (through the launcher,
not over RPC); it lives here, not in ``taskmanager``, so that the JobManager's process does not
import the TaskManager's modules to start one (start-up time).

TaskManager → JobManager: ``RegisterTaskManager`` (call; the reply is ``Registered``),
``TaskStateUpdate``, ``AcknowledgeCheckpoint``, ``DeclineCheckpoint``, ``Heartbeat``,
``CollectBatch``. (Printed output travels with the Spark bootstrap's own messages.)
JobManager → TaskManager: ``DeployTasks``, ``AssignSplits``, ``TriggerCheckpoint``,
``NotifyCheckpointComplete``, ``NotifyCheckpointAborted``, ``CancelTasks``,
``ReleasePartitions``, ``ReleaseTaskManager``, ``Heartbeat``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from flintlock.common.ids import CheckpointId, ResultPartitionId
from flintlock.runtime.checkpoint.failure import CheckpointFailureReason
from flintlock.runtime.checkpoint.pending import SubtaskState, TaskId
from flintlock.runtime.checkpoint.stats import NO_METRICS, SubtaskCheckpointMetrics
from flintlock.runtime.execution_state import ExecutionState
from flintlock.runtime.metrics.report import SubtaskMetricsReport
from flintlock.runtime.network.barriers import CheckpointOptions
from flintlock.runtime.rpc import RemoteFailure

if TYPE_CHECKING:  # types of fields only: neither module is needed to build a message
    from flintlock.graph.scheduling import AllocationPlan
    from flintlock.usercode.python_env import PythonDependencies

DataAddress = tuple[str, int]


@dataclass(frozen=True)
class TaskManagerPayload:
    """What a TaskManager process is started with (pickled into the Spark task)."""

    job_id: str
    attempt: int
    tm_index: int
    jm_host: str
    jm_port: int
    secret: bytes
    configuration: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class RegisterTaskManager:
    attempt: int
    tm_index: int
    host: str
    data_port: int
    pid: int


@dataclass(frozen=True, slots=True)
class Registered:
    accepted: bool
    reason: str = ""


@dataclass(frozen=True, slots=True)
class DeployTasks:
    """Everything a TaskManager needs to run its subtasks of one attempt.

    ``job_graph`` is the cloudpickled ``JobGraph`` (user functions travel by value);
    ``addresses`` the data server of every TaskManager by index; ``restored`` the state each
    of this TaskManager's subtasks restores, by task and then operator id.
    """

    attempt: int
    job_graph: bytes
    plan: AllocationPlan
    addresses: Mapping[int, DataAddress]
    restored: Mapping[TaskId, Mapping[str, Any]] = field(default_factory=dict)
    checkpoint_dir: str | None = None
    finished: frozenset[TaskId] = frozenset()
    """Subtasks the restored checkpoint recorded as finished: they run, but end at once."""
    python_dependencies: PythonDependencies | None = None
    """The job's ``usercode.python_env.PythonDependencies`` (None: nothing to install), made
    ready before ``job_graph`` is unpickled."""


@dataclass(frozen=True, slots=True)
class TaskStateUpdate:
    attempt: int
    task: TaskId
    state: ExecutionState
    error: RemoteFailure | None = None
    consequence: bool = False
    """The task failed only because another one did (its producer failed, or its consumer
    released the partition it wrote to): that task's own report names the cause, so the
    JobManager waits briefly for it. Decided on the TaskManager, which knows the data
    plane's errors; the JobManager does not import them."""


@dataclass(frozen=True, slots=True)
class TriggerCheckpoint:
    attempt: int
    task: TaskId
    checkpoint_id: CheckpointId
    timestamp: int
    options: CheckpointOptions


@dataclass(frozen=True, slots=True)
class CheckpointLocation:
    """Where the tasks of a TaskManager write their state for a savepoint (sent once per
    TaskManager, before the savepoint's first trigger; checkpoints' locations follow from
    the checkpoint directory the deployment names)."""

    attempt: int
    checkpoint_id: CheckpointId
    location: str


@dataclass(frozen=True, slots=True)
class AcknowledgeCheckpoint:
    attempt: int
    task: TaskId
    checkpoint_id: CheckpointId
    state: SubtaskState
    metrics: SubtaskCheckpointMetrics = NO_METRICS


@dataclass(frozen=True, slots=True)
class DeclineCheckpoint:
    attempt: int
    task: TaskId
    checkpoint_id: CheckpointId
    reason: CheckpointFailureReason
    error: RemoteFailure | None = None


@dataclass(frozen=True, slots=True)
class NotifyCheckpointComplete:
    attempt: int
    checkpoint_id: CheckpointId
    in_flight_data: bool = False
    """The checkpoint held channel state (see ``coordinator_actions``)."""


@dataclass(frozen=True, slots=True)
class NotifyCheckpointAborted:
    attempt: int
    checkpoint_id: CheckpointId


@dataclass(frozen=True, slots=True)
class AssignSplits:
    """Splits from a source's enumerator (in the JobManager) for one source subtask."""

    attempt: int
    task: TaskId
    operator_id: str
    splits: tuple[Any, ...] = ()
    no_more_splits: bool = False


@dataclass(frozen=True, slots=True)
class CancelTasks:
    attempt: int
    tasks: frozenset[TaskId] | None = None
    """Only these subtasks (a restarting pipelined region); None: every subtask."""


@dataclass(frozen=True, slots=True)
class ReleasePartitions:
    """BATCH: these finished BLOCKING result partitions of the TaskManager will not be read
    again (every region reading them finished): delete their spill files now."""

    attempt: int
    partitions: frozenset[ResultPartitionId]


@dataclass(frozen=True, slots=True)
class ReleaseTaskManager:
    """The attempt is over: stop serving partitions and exit. A TaskManager whose subtasks
    finished keeps its data server up until this arrives, because consumers on other
    TaskManagers may still be reading its result partitions."""

    attempt: int


@dataclass(frozen=True, slots=True)
class Heartbeat:
    """Sent both ways; from a TaskManager it carries each running subtask's metrics
    (``SubtaskMetricsReport``: Flink's task metrics, busy / backpressured / idle ms per second
    since the last heartbeat among them, and the user's metrics)."""

    attempt: int
    tm_index: int
    tasks: Mapping[TaskId, SubtaskMetricsReport] = field(default_factory=dict)
    logs: tuple[str, ...] = ()
    """Log lines of the TaskManager's process since its previous heartbeat
    (``output_tail``)."""
    stdout: tuple[str, ...] = ()
    """Lines its process printed since its previous heartbeat."""


@dataclass(frozen=True, slots=True)
class CollectBatch:
    """Records of ``execute_and_collect``; ``token`` = (producing subtask, checkpoint id) makes
    a re-sent batch recognisable (None: not checkpointed, never deduplicated)."""

    attempt: int
    collect_id: str
    token: tuple[int, int] | None
    records: list[Any]
