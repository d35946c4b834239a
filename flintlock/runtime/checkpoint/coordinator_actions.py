"""What the checkpoint coordinator asks its driver to do (STYLE.md §2, §4).

The coordinator (``coordinator.py``) decides; the driver in the JobManager carries these out
with real timers and RPC, in list order. Every action is a frozen, slotted dataclass named as
an imperative. Timer actions carry absolute times on the coordinator's monotonic clock
(``Clock.now_ms``).

Timers: there is one trigger timer — a ``ScheduleNextTrigger`` replaces the previous one, and
when it fires the driver calls ``on_periodic_tick()``. Each ``ScheduleTimeout`` is its own
timer; when it fires the driver calls ``on_timeout(checkpoint_id)`` (a timeout for a
checkpoint that already finished is ignored, so the driver need not cancel these).
"""

from __future__ import annotations

from dataclasses import dataclass

from flintlock.common.errors import FlintlockError
from flintlock.common.ids import CheckpointId
from flintlock.runtime.checkpoint.failure import CheckpointError, CheckpointFailureReason
from flintlock.runtime.checkpoint.pending import TaskId
from flintlock.runtime.network.barriers import CheckpointOptions


@dataclass(frozen=True, slots=True)
class TriggerCheckpointOnTask:
    """Tell a source subtask to snapshot and emit barrier ``checkpoint_id``.

    ``location`` is the checkpoint's storage directory. For checkpoints every process can
    compute it (``CheckpointStorage.checkpoint_location``); a savepoint's directory is chosen
    here, so the driver must make it known to every task that writes state for it.
    """

    task: TaskId
    checkpoint_id: CheckpointId
    timestamp: int
    options: CheckpointOptions
    location: str


@dataclass(frozen=True, slots=True)
class NotifyCheckpointComplete:
    """The checkpoint is durably stored: the task may commit (two-phase-commit sinks).
    ``in_flight_data``: some task's snapshot held channel state (data an unaligned barrier
    overtook), which is processed, and committed, only after this checkpoint."""

    task: TaskId
    checkpoint_id: CheckpointId
    in_flight_data: bool = False


@dataclass(frozen=True, slots=True)
class NotifyCheckpointAborted:
    task: TaskId
    checkpoint_id: CheckpointId
    reason: CheckpointFailureReason


@dataclass(frozen=True, slots=True)
class ScheduleTimeout:
    """Call ``on_timeout(checkpoint_id)`` at ``at_ms``."""

    checkpoint_id: CheckpointId
    at_ms: float


@dataclass(frozen=True, slots=True)
class ScheduleNextTrigger:
    """(Re)arm the single trigger timer: call ``on_periodic_tick()`` at ``at_ms``."""

    at_ms: float


@dataclass(frozen=True, slots=True)
class FailJob:
    """Checkpointing cannot go on (e.g. too many consecutive failures): fail the job."""

    cause: FlintlockError


@dataclass(frozen=True, slots=True)
class CompleteSavepointRequest:
    request_id: str
    path: str
    """The savepoint's directory (``<path>/_metadata`` is its metadata)."""


@dataclass(frozen=True, slots=True)
class FailSavepointRequest:
    request_id: str
    error: CheckpointError


@dataclass(frozen=True, slots=True)
class CompleteCheckpointRequest:
    """A manual checkpoint asked for with a request id completed."""

    request_id: str
    checkpoint_id: CheckpointId
    path: str


@dataclass(frozen=True, slots=True)
class FailCheckpointRequest:
    request_id: str
    error: CheckpointError


CoordinatorAction = (
    TriggerCheckpointOnTask
    | NotifyCheckpointComplete
    | NotifyCheckpointAborted
    | ScheduleTimeout
    | ScheduleNextTrigger
    | FailJob
    | CompleteSavepointRequest
    | FailSavepointRequest
    | CompleteCheckpointRequest
    | FailCheckpointRequest
)
