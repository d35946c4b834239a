"""What a subtask reports to the JobManager, through its TaskManager: state changes (with the
failure, annotated with where a failed import looked, and whether it is only a consequence of
another task's failure), checkpoint acknowledgements with typed metrics, and declines.

Called on the task thread (state changes, declines from the barrier handler) and on the
snapshot executor (acks, declines of the asynchronous part); ``ReportChannel.tell`` is
thread-safe.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol

from flintlock.common.ids import CheckpointId
from flintlock.runtime import messages as msg
from flintlock.runtime.checkpoint.failure import CheckpointFailureReason
from flintlock.runtime.checkpoint.pending import SubtaskState, TaskId
from flintlock.runtime.checkpoint.stats import subtask_metrics
from flintlock.runtime.execution_state import ExecutionState
from flintlock.runtime.network.buffer import BufferPoolDestroyedError
from flintlock.runtime.network.input_channel import ProducerFailedError
from flintlock.runtime.rpc import RemoteFailure

if TYPE_CHECKING:
    from flintlock.runtime.tasks.stream_task import StreamTask


class ReportChannel(Protocol):
    """The TaskManager side of the reports."""

    @property
    def attempt(self) -> int: ...

    def tell(self, message: object) -> None: ...

    def annotate(self, error: BaseException) -> None: ...

    def report_final_metrics(self, task_id: TaskId, task: StreamTask) -> None: ...


class TaskReports:
    """``TaskCallbacks`` of one subtask."""

    def __init__(self, channel: ReportChannel, task_id: TaskId) -> None:
        self._channel = channel
        self._task_id = task_id

    def task_state_changed(self, task: StreamTask, state: ExecutionState,
                           error: BaseException | None) -> None:
        channel = self._channel
        if error is not None:
            channel.annotate(error)
        failure = RemoteFailure.capture(error) if error is not None else None
        consequence = isinstance(error, (ProducerFailedError, BufferPoolDestroyedError))
        if state is ExecutionState.FINISHED:  # its final counts, before the JobManager may end
            channel.report_final_metrics(self._task_id, task)
        channel.tell(msg.TaskStateUpdate(
            channel.attempt, self._task_id, state, failure, consequence))

    def acknowledge_checkpoint(self, task: StreamTask, checkpoint_id: CheckpointId,
                               state: SubtaskState,
                               metrics: Mapping[str, float]) -> None:
        self._channel.tell(msg.AcknowledgeCheckpoint(
            self._channel.attempt, self._task_id, checkpoint_id, state,
            subtask_metrics(metrics)))

    def decline_checkpoint(self, task: StreamTask, checkpoint_id: CheckpointId,
                           reason: CheckpointFailureReason, error: BaseException | None) -> None:
        failure = RemoteFailure.capture(error) if error is not None else None
        self._channel.tell(msg.DeclineCheckpoint(
            self._channel.attempt, self._task_id, checkpoint_id, reason,
            failure))
