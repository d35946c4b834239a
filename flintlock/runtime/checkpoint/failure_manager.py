"""Counts consecutive checkpoint failures and decides when the job must fail.

``execution.checkpointing.tolerable-failed-checkpoints`` = N: the job fails on the (N+1)-th
consecutive counted failure. What counts (``CheckpointFailureReason.counts_as_failure``):
expiry, declines, asynchronous snapshot failures, a failed store write, trigger I/O errors.
What never counts: pre-flight refusals, subsumption, shutdown, task failures, savepoints
(a failed savepoint is reported to whoever asked for it, the job keeps running), and a
failure of a checkpoint older than the latest completed one (a success came after it).
Each checkpoint counts at most once. A completed checkpoint resets the count; so does
reaching the limit (the restarted job gets a fresh budget).

Thread ownership: owned by the coordinator's thread.
"""

from __future__ import annotations

from flintlock.common.errors import FlintlockError
from flintlock.common.ids import CheckpointId
from flintlock.runtime.checkpoint.failure import CheckpointFailureReason


class TooManyCheckpointFailuresError(FlintlockError):
    """More consecutive checkpoints failed than ``tolerable-failed-checkpoints`` allows."""

    def __init__(self, tolerable: int, failures: int, last_reason: CheckpointFailureReason,
                 last_detail: str = "") -> None:
        super().__init__(tolerable, failures, last_reason, last_detail)
        self.tolerable = tolerable
        self.failures = failures
        self.last_reason = last_reason
        self.last_detail = last_detail  # the cause: which task, what failed there

    def __str__(self) -> str:
        return (
            f"{self.failures} consecutive checkpoint failures exceed the tolerable "
            f"{self.tolerable} (last: {self.last_reason.name}: {self.last_reason.message}"
            + (f"; {self.last_detail})" if self.last_detail else ")")
        )


class CheckpointFailureManager:
    """Decides, failure by failure, whether the job has to fail."""

    def __init__(self, tolerable_failures: int) -> None:
        if tolerable_failures < 0:
            raise ValueError("tolerable_failures must be >= 0")
        self.tolerable_failures = tolerable_failures
        self._consecutive = 0
        self._last_success: int = -1
        self._counted: set[int] = set()

    @property
    def consecutive_failures(self) -> int:
        return self._consecutive

    def on_success(self, checkpoint_id: CheckpointId) -> None:
        self._last_success = max(self._last_success, checkpoint_id)
        self._consecutive = 0
        self._counted = {c for c in self._counted if c > checkpoint_id}

    def on_failure(
        self,
        reason: CheckpointFailureReason,
        checkpoint_id: CheckpointId | None = None,
        is_savepoint: bool = False,
        detail: str = "",
    ) -> TooManyCheckpointFailuresError | None:
        """The error to fail the job with, or None if the failure is tolerated; ``detail`` (the
        cause: the declining task and its exception) goes into the error's message, so the
        log line, the exception history and the dashboard say why."""
        if not reason.counts_as_failure or is_savepoint:
            return None
        if checkpoint_id is not None:
            if checkpoint_id < self._last_success or checkpoint_id in self._counted:
                return None
            self._counted.add(checkpoint_id)
        self._consecutive += 1
        if self._consecutive <= self.tolerable_failures:
            return None
        error = TooManyCheckpointFailuresError(
            self.tolerable_failures, self._consecutive, reason, detail
        )
        self._consecutive = 0
        return error
