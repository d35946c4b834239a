"""Why a checkpoint failed or was not triggered: Flink's reasons, as an enum and an error."""

from __future__ import annotations

import enum

from flintlock.common.errors import FlintlockError


class CheckpointFailureReason(enum.Enum):
    """Each reason says whether it happened before the trigger (a refusal to start) and
    whether it counts towards ``tolerable-failed-checkpoints``."""

    def __init__(self, message: str, pre_flight: bool, counts: bool) -> None:
        self.message = message
        self.pre_flight = pre_flight
        self.counts_as_failure = counts

    PERIODIC_SCHEDULER_SHUTDOWN = ("periodic checkpoint scheduler is shut down", True, False)
    TOO_MANY_CHECKPOINT_REQUESTS = (
        "the maximum number of queued checkpoint requests was exceeded", True, False)
    MINIMUM_TIME_BETWEEN_CHECKPOINTS = (
        "the minimum time between checkpoints is still pending", True, False)
    NOT_ALL_REQUIRED_TASKS_RUNNING = ("not all required tasks are currently running", True, False)
    IO_EXCEPTION = ("an exception occurred while triggering the checkpoint", True, True)
    BLOCKING_OUTPUT_EXIST = ("blocking outputs cannot be checkpointed", True, False)
    CHECKPOINT_COORDINATOR_SHUTDOWN = ("the checkpoint coordinator is shut down", False, False)
    CHECKPOINT_COORDINATOR_SUSPEND = ("the checkpoint coordinator is suspended", False, False)
    CHECKPOINT_EXPIRED = ("the checkpoint expired before completing", False, True)
    CHECKPOINT_SUBSUMED = ("the checkpoint was subsumed by a newer one", False, False)
    CHECKPOINT_DECLINED = ("the checkpoint was declined", False, True)
    CHECKPOINT_DECLINED_TASK_NOT_READY = (
        "the checkpoint was declined: tasks not ready", False, False)
    CHECKPOINT_DECLINED_TASK_CLOSING = (
        "the checkpoint was declined: a task is closing", False, False)
    CHECKPOINT_DECLINED_SUBSUMED = (
        "the checkpoint was declined: a newer barrier arrived", False, False)
    CHECKPOINT_DECLINED_ON_CANCELLATION_BARRIER = (
        "the checkpoint was declined: cancellation barrier received", False, False)
    CHECKPOINT_DECLINED_INPUT_END_OF_STREAM = (
        "the checkpoint was declined: an input ended before its barrier", False, False)
    CHECKPOINT_ASYNC_EXCEPTION = ("the asynchronous part of a task's snapshot failed", False, True)
    FINALIZE_CHECKPOINT_FAILURE = ("the completed checkpoint could not be stored", False, True)
    TRIGGER_CHECKPOINT_FAILURE = ("a task failed to trigger the checkpoint", False, True)
    TASK_FAILURE = ("a task failed", False, False)
    JOB_FAILOVER_REGION = ("the job is failing over", False, False)
    UNKNOWN_TASK_CHECKPOINT_NOTIFICATION_FAILURE = ("a task could not be notified", False, False)


class CheckpointError(FlintlockError):
    """A checkpoint failed or was refused, for ``reason``."""

    def __init__(self, reason: CheckpointFailureReason, detail: str = "") -> None:
        super().__init__(reason, detail)
        self.reason = reason
        self.detail = detail

    def __str__(self) -> str:
        suffix = f" ({self.detail})" if self.detail else ""
        return f"{self.reason.name}: {self.reason.message}{suffix}"


class StreamCorruptedError(FlintlockError):
    """The events on a channel are impossible (e.g. two barriers of one checkpoint)."""
