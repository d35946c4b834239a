"""PendingCheckpoint: ack bookkeeping, explicit states, discarding on abort."""

from __future__ import annotations

import pickle

import pytest

from flintlock.common.ids import CheckpointId, JobVertexId, SubtaskIndex
from flintlock.runtime.checkpoint.failure import CheckpointFailureReason
from flintlock.runtime.checkpoint.pending import (
    AckResult,
    IllegalPendingTransitionError,
    PendingCheckpoint,
    PendingState,
    SubtaskState,
    TaskId,
)
from flintlock.runtime.network.barriers import CheckpointOptions, CheckpointType

A = TaskId(JobVertexId("src"), SubtaskIndex(0))
B = TaskId(JobVertexId("sink"), SubtaskIndex(0))
C = TaskId(JobVertexId("sink"), SubtaskIndex(1))


class CountingState:
    def __init__(self, size: int) -> None:
        self.state_size = size
        self.discards = 0

    def discard(self) -> None:
        self.discards += 1


class FailingState(CountingState):
    def discard(self) -> None:
        super().discard()
        raise OSError("disk gone")


def pending(*tasks: TaskId, savepoint: bool = False) -> PendingCheckpoint:
    kind = CheckpointType.SAVEPOINT if savepoint else CheckpointType.CHECKPOINT
    options = CheckpointOptions(kind)
    return PendingCheckpoint(CheckpointId(7), 1000, 1000.0, options, tasks or (A, B))


def test_counting_state_satisfies_the_protocol() -> None:
    assert isinstance(CountingState(1), SubtaskState)


def test_acks_until_fully_acknowledged() -> None:
    checkpoint = pending(A, B)
    assert checkpoint.acknowledge(A, CountingState(3)) is AckResult.SUCCESS
    assert not checkpoint.is_fully_acknowledged
    assert checkpoint.not_yet_acknowledged == {B}
    assert checkpoint.acknowledge(B, CountingState(4)) is AckResult.SUCCESS
    assert checkpoint.is_fully_acknowledged
    assert checkpoint.state_size == 7


def test_duplicate_and_unknown_acks() -> None:
    checkpoint = pending(A, B)
    checkpoint.acknowledge(A, CountingState(1))
    assert checkpoint.acknowledge(A, CountingState(1)) is AckResult.DUPLICATE
    assert checkpoint.acknowledge(C, CountingState(1)) is AckResult.UNKNOWN
    assert set(checkpoint.acknowledged) == {A}


def test_ack_after_abort_is_discarded_and_abort_discards_collected_states() -> None:
    checkpoint = pending(A, B)
    first = CountingState(5)
    checkpoint.acknowledge(A, first)
    checkpoint.abort(CheckpointFailureReason.CHECKPOINT_EXPIRED)
    assert first.discards == 1
    assert checkpoint.state is PendingState.ABORTED
    assert checkpoint.failure_reason is CheckpointFailureReason.CHECKPOINT_EXPIRED
    assert checkpoint.acknowledge(B, CountingState(1)) is AckResult.DISCARDED


def test_a_failing_discard_does_not_stop_the_abort() -> None:
    checkpoint = pending(A, B)
    bad, good = FailingState(1), CountingState(1)
    checkpoint.acknowledge(A, bad)
    checkpoint.acknowledge(B, good)
    checkpoint.abort(CheckpointFailureReason.CHECKPOINT_DECLINED)
    assert (bad.discards, good.discards) == (1, 1)


def test_completing_hands_over_the_states_and_forbids_abort() -> None:
    checkpoint = pending(A)
    state = CountingState(2)
    checkpoint.acknowledge(A, state)
    assert checkpoint.mark_completed() == {A: state}
    with pytest.raises(IllegalPendingTransitionError):
        checkpoint.abort(CheckpointFailureReason.CHECKPOINT_EXPIRED)
    assert state.discards == 0


def test_cannot_complete_with_acks_outstanding_or_abort_twice() -> None:
    checkpoint = pending(A, B)
    with pytest.raises(IllegalPendingTransitionError, match="2 acks outstanding"):
        checkpoint.mark_completed()
    checkpoint.abort(CheckpointFailureReason.CHECKPOINT_EXPIRED)
    with pytest.raises(IllegalPendingTransitionError, match="aborted"):
        checkpoint.abort(CheckpointFailureReason.CHECKPOINT_EXPIRED)


def test_needs_a_task_to_ack() -> None:
    with pytest.raises(ValueError):
        PendingCheckpoint(CheckpointId(1), 0, 0.0, CheckpointOptions(), ())


def test_transition_error_survives_pickling() -> None:
    error = IllegalPendingTransitionError(3, "aborted", "completed")
    copy = pickle.loads(pickle.dumps(error))
    assert str(copy) == str(error)
    assert copy.checkpoint_id == 3
