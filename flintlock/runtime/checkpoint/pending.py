"""A pending checkpoint: triggered, not yet acknowledged by every task (DESIGN.md §5).

The coordinator creates one ``PendingCheckpoint`` per trigger. It records which tasks still
owe an acknowledgement, the state each task acknowledged with, and the per-task metrics, and
it moves through explicit states::

    PENDING ──all acks──▶ (coordinator finalises) ──▶ COMPLETED
       │
       └──decline / timeout / subsumed / shutdown──▶ ABORTED

Invariants:
- a task appears in at most one of ``not_yet_acknowledged`` and ``acknowledged``;
- once ABORTED, every state it held has been discarded exactly once, and any state that
  arrives later is discarded by the caller (``AckResult.DISCARDED``);
- a COMPLETED checkpoint hands its states over to the ``CompletedCheckpoint`` (it no longer
  owns them, so aborting it afterwards is illegal).

Tasks are identified by ``TaskId`` — the (job vertex, subtask index) pair. It is stable across
job attempts, which is what a restore needs; stale acknowledgements from an earlier attempt
cannot be mistaken for new ones because the coordinator aborts all pending checkpoints on a
failover and checkpoint ids only ever grow.

Thread ownership: owned by the coordinator; touched only on the coordinator's thread.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from flintlock.common.errors import FlintlockError
from flintlock.common.ids import CheckpointId, JobVertexId, SubtaskIndex
from flintlock.runtime.checkpoint.failure import CheckpointFailureReason
from flintlock.runtime.network.barriers import CheckpointOptions

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True, order=True)
class TaskId:
    """One subtask of the job: its job vertex and subtask index."""

    vertex: JobVertexId
    subtask: SubtaskIndex

    def __str__(self) -> str:
        return f"{self.vertex}[{self.subtask}]"


@runtime_checkable
class SubtaskState(Protocol):
    """The opaque state a task acknowledges a checkpoint with (S1's ``TaskStateSnapshot``).

    Must be picklable (it travels with the ack). ``_metadata`` records only the kinds it has
    names for (``metadata_json``): ``TaskStateSnapshot``, ``FINISHED_TASK``,
    ``EnumeratorState``; completing a checkpoint with any other kind fails it.
    """

    @property
    def state_size(self) -> int: ...

    def discard(self) -> None: ...


class AckResult(enum.Enum):
    SUCCESS = "success"
    DUPLICATE = "duplicate"
    """The task already acknowledged this checkpoint; the new state was ignored (and
    discarded by the coordinator unless it is the very same object)."""
    UNKNOWN = "unknown"
    """The task is not part of this checkpoint; its state must be discarded."""
    DISCARDED = "discarded"
    """The checkpoint is already gone; the state must be discarded."""


class PendingState(enum.Enum):
    PENDING = "pending"
    COMPLETED = "completed"
    ABORTED = "aborted"


class IllegalPendingTransitionError(FlintlockError):
    """A pending checkpoint was asked to make a move its state does not allow."""

    def __init__(self, checkpoint_id: CheckpointId, current: str, requested: str) -> None:
        super().__init__(checkpoint_id, current, requested)
        self.checkpoint_id = checkpoint_id
        self.current = current
        self.requested = requested

    def __str__(self) -> str:
        return (
            f"checkpoint {self.checkpoint_id} is {self.current}; cannot move to {self.requested}"
        )


_ALLOWED: dict[PendingState, frozenset[PendingState]] = {
    PendingState.PENDING: frozenset({PendingState.COMPLETED, PendingState.ABORTED}),
    PendingState.COMPLETED: frozenset(),
    PendingState.ABORTED: frozenset(),
}


def discard_quietly(state: SubtaskState | None, context: str) -> None:
    """Discard ``state``; a failure is logged, never raised (cleanup must not stop the job)."""
    if state is None:
        return
    try:
        state.discard()
    except Exception:
        log.warning("could not discard state (%s)", context, exc_info=True)


class PendingCheckpoint:
    """Acks outstanding and states collected for one triggered checkpoint."""

    def __init__(
        self,
        checkpoint_id: CheckpointId,
        trigger_timestamp: int,
        trigger_ms: float,
        options: CheckpointOptions,
        tasks_to_ack: Iterable[TaskId],
        request_id: str | None = None,
        periodic: bool = True,
    ) -> None:
        self.checkpoint_id = checkpoint_id
        self.trigger_timestamp = trigger_timestamp  # wall clock, travels in the barrier
        self.trigger_ms = trigger_ms  # monotonic, for durations
        self.options = options
        self.request_id = request_id
        self.periodic = periodic
        self._not_yet_acknowledged: set[TaskId] = set(tasks_to_ack)
        self._acknowledged: dict[TaskId, SubtaskState | None] = {}
        self._state = PendingState.PENDING
        self.failure_reason: CheckpointFailureReason | None = None
        if not self._not_yet_acknowledged:
            raise ValueError("a checkpoint needs at least one task to acknowledge it")

    # -- queries ------------------------------------------------------------------------

    @property
    def state(self) -> PendingState:
        return self._state

    @property
    def is_savepoint(self) -> bool:
        return self.options.is_savepoint

    @property
    def is_fully_acknowledged(self) -> bool:
        return self._state is PendingState.PENDING and not self._not_yet_acknowledged

    @property
    def is_aborted(self) -> bool:
        return self._state is PendingState.ABORTED

    @property
    def not_yet_acknowledged(self) -> frozenset[TaskId]:
        return frozenset(self._not_yet_acknowledged)

    @property
    def acknowledged(self) -> Mapping[TaskId, SubtaskState | None]:
        return dict(self._acknowledged)

    @property
    def state_size(self) -> int:
        return sum(s.state_size for s in self._acknowledged.values() if s is not None)

    # -- moves --------------------------------------------------------------------------

    def acknowledge(self, task: TaskId, state: SubtaskState | None) -> AckResult:
        """Record ``task``'s ack. The caller discards ``state`` unless SUCCESS is returned."""
        if self._state is not PendingState.PENDING:
            return AckResult.DISCARDED
        if task in self._acknowledged:
            return AckResult.DUPLICATE
        if task not in self._not_yet_acknowledged:
            return AckResult.UNKNOWN
        self._not_yet_acknowledged.discard(task)
        self._acknowledged[task] = state
        return AckResult.SUCCESS

    def mark_completed(self) -> dict[TaskId, SubtaskState | None]:
        """Hand the collected states over to the completed checkpoint."""
        if not self.is_fully_acknowledged:
            raise IllegalPendingTransitionError(
                self.checkpoint_id, self._describe(), PendingState.COMPLETED.value
            )
        self._move(PendingState.COMPLETED)
        return dict(self._acknowledged)

    def abort(self, reason: CheckpointFailureReason) -> None:
        """Abort and discard every state acknowledged so far."""
        self._move(PendingState.ABORTED)
        self.failure_reason = reason
        for task, state in self._acknowledged.items():
            discard_quietly(state, f"checkpoint {self.checkpoint_id}, task {task}")
        self._acknowledged = dict.fromkeys(self._acknowledged)

    def _move(self, target: PendingState) -> None:
        if target not in _ALLOWED[self._state]:
            raise IllegalPendingTransitionError(self.checkpoint_id, self._describe(), target.value)
        self._state = target

    def _describe(self) -> str:
        if self._state is PendingState.PENDING and self._not_yet_acknowledged:
            return f"pending ({len(self._not_yet_acknowledged)} acks outstanding)"
        return self._state.value

    def __repr__(self) -> str:
        kind = "savepoint" if self.is_savepoint else "checkpoint"
        return f"PendingCheckpoint({kind} {self.checkpoint_id}, {self._describe()})"
