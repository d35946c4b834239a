"""The exactly-once aligner over the scenarios Flink's aligned-checkpoint suites pin down
(AlignedCheckpointsTest, CheckpointBarrierAlignerTestBase): each case is a list of calls and
the exact actions expected from each."""

from __future__ import annotations

import pickle

import pytest

from flintlock.runtime.checkpoint.alignment import (
    BarrierAligner,
    CheckpointBarrier,
    CheckpointFailureReason,
    CheckpointMetrics,
    IllegalPhaseTransitionError,
    Phase,
    StreamCorruptedError,
    TriggerCheckpoint,
)
from flintlock.testing.clock import ManualClock

from .barrier_actions import (
    CANCELLED,
    SUBSUMED,
    abort,
    barrier,
    block,
    blocked,
    cancel,
    exactly_once,
    resume,
    trigger,
)


def aligner(num_channels: int, clock: ManualClock | None = None) -> BarrierAligner:
    return exactly_once(num_channels, clock)


def test_single_channel_abort_and_resume() -> None:
    a = aligner(1)
    assert a.on_barrier(0, barrier(1)) == [trigger(1)]
    assert a.on_barrier(0, barrier(2)) == [trigger(2)]
    assert a.on_cancellation_marker(0, cancel(4)) == [abort(4, CANCELLED)]
    assert a.on_barrier(0, barrier(5)) == [trigger(5)]
    assert a.on_cancellation_marker(0, cancel(6)) == [abort(6, CANCELLED)]
    assert blocked(a) == set()


def test_blocks_each_channel_until_all_delivered_then_triggers_and_resumes() -> None:
    a = aligner(3)
    assert a.on_barrier(1, barrier(1)) == [block(1)]
    assert a.on_barrier(2, barrier(1)) == [block(2)]
    assert blocked(a) == {1, 2}
    assert a.on_buffer(0, b"xy") == []
    assert a.on_barrier(0, barrier(1)) == [
        trigger(1, processed=2),
        resume(1),
        resume(2),
    ]
    assert blocked(a) == set()
    assert a.phase is Phase.IDLE


def test_multiple_checkpoints_in_order() -> None:
    a = aligner(2)
    for checkpoint_id in (1, 2, 3):
        assert a.on_barrier(0, barrier(checkpoint_id)) == [block(0)]
        assert a.on_buffer(1, b"") == []
        assert a.on_barrier(1, barrier(checkpoint_id)) == [trigger(checkpoint_id), resume(0)]


def test_metrics_alignment_duration_start_delay_and_bytes() -> None:
    clock = ManualClock(1000)
    a = aligner(2, clock)
    assert a.on_barrier(0, CheckpointBarrier(1, 990)) == [block(0)]  # type: ignore[arg-type]
    clock.advance(5)
    a.on_buffer(1, b"1234")
    a.on_buffer(1, bytearray(3))
    clock.advance(2)
    actions = a.on_barrier(1, CheckpointBarrier(1, 990))  # type: ignore[arg-type]
    assert actions[0] == TriggerCheckpoint(
        1,  # type: ignore[arg-type]
        CheckpointBarrier(1, 990),  # type: ignore[arg-type]
        CheckpointMetrics(7.0, 10.0, 7),
    )


def test_buffer_size_falls_back_to_the_size_attribute() -> None:
    class SizedBuffer:
        size = 11

    a = aligner(2)
    a.on_barrier(0, barrier(1))
    a.on_buffer(1, SizedBuffer())
    assert a.on_barrier(1, barrier(1))[0] == trigger(1, processed=11)


def test_skipped_barrier_newer_one_subsumes_the_alignment() -> None:
    a = aligner(3)
    assert a.on_barrier(0, barrier(3)) == [block(0)]
    assert a.on_barrier(1, barrier(3)) == [block(1)]
    assert a.on_barrier(2, barrier(5)) == [
        abort(3, SUBSUMED),
        resume(0),
        resume(1),
        block(2),
    ]
    assert blocked(a) == {2}
    # the trailing cancellation of the subsumed checkpoint is ignored
    assert a.on_cancellation_marker(0, cancel(3)) == []
    assert a.on_barrier(0, barrier(5)) == [block(0)]
    assert a.on_barrier(1, barrier(5)) == [trigger(5), resume(0), resume(2)]


def test_stale_barriers_are_ignored_and_never_block() -> None:
    a = aligner(2)
    assert a.on_barrier(0, barrier(5)) == [block(0)]
    assert a.on_barrier(1, barrier(4)) == []
    assert blocked(a) == {0}
    assert a.on_barrier(1, barrier(5)) == [trigger(5), resume(0)]
    assert a.on_barrier(0, barrier(3)) == []
    with pytest.raises(StreamCorruptedError):
        a.on_barrier(1, barrier(5))


def test_out_of_order_checkpoint_after_completion_is_ignored() -> None:
    a = aligner(2)
    a.on_barrier(0, barrier(2))
    a.on_barrier(1, barrier(2))
    assert a.on_barrier(0, barrier(1)) == []
    assert a.on_barrier(1, barrier(1)) == []
    assert blocked(a) == set()


def test_cancellation_during_alignment_aborts_and_unblocks_all() -> None:
    a = aligner(3)
    a.on_barrier(0, barrier(2))
    a.on_barrier(2, barrier(2))
    assert a.on_buffer(1, b"x") == []
    assert a.on_cancellation_marker(1, cancel(2)) == [
        abort(2, CANCELLED),
        resume(0),
        resume(2),
    ]
    assert blocked(a) == set()
    assert a.on_cancellation_marker(0, cancel(2)) == []


def test_newer_cancellation_subsumes_the_alignment() -> None:
    a = aligner(3)
    a.on_barrier(0, barrier(1))
    assert a.on_cancellation_marker(1, cancel(2)) == [
        abort(1, SUBSUMED),
        resume(0),
        abort(2, CANCELLED),
    ]
    assert a.on_barrier(2, barrier(1)) == []
    assert a.on_barrier(2, barrier(2)) == []
    assert blocked(a) == set()


def test_multiple_cancellations_then_a_barrier_of_the_cancelled_checkpoint() -> None:
    a = aligner(3)
    assert a.on_cancellation_marker(1, cancel(6)) == [abort(6, CANCELLED)]
    assert a.on_cancellation_marker(2, cancel(6)) == []
    assert a.on_barrier(0, barrier(6)) == []
    assert blocked(a) == set()


def test_barrier_meeting_an_already_cancelled_checkpoint() -> None:
    a = aligner(3)
    assert a.on_barrier(1, barrier(1)) == [block(1)]
    assert a.on_cancellation_marker(0, cancel(1)) == [abort(1, CANCELLED), resume(1)]
    assert a.on_barrier(1, barrier(2)) == [block(1)]
    assert a.on_barrier(2, barrier(1)) == []
    assert a.on_barrier(0, barrier(2)) == [block(0)]
    assert a.on_barrier(2, barrier(2)) == [trigger(2), resume(0), resume(1)]


def test_end_of_partition_before_alignment_counts_as_delivered() -> None:
    a = aligner(3)
    assert a.on_end_of_partition(2) == []
    assert a.on_barrier(0, barrier(1)) == [block(0)]
    assert a.on_barrier(1, barrier(1)) == [trigger(1), resume(0)]


def test_end_of_partition_during_alignment_triggers_when_only_it_was_missing() -> None:
    a = aligner(3)
    a.on_barrier(0, barrier(2))
    a.on_barrier(2, barrier(2))
    assert a.on_end_of_partition(1) == [trigger(2), resume(0), resume(2)]
    assert blocked(a) == set()
    assert a.on_barrier(0, barrier(3)) == [block(0)]
    assert a.on_barrier(2, barrier(3)) == [trigger(3), resume(0)]


def test_end_of_partition_of_one_missing_channel_keeps_waiting_for_the_other() -> None:
    a = aligner(3)
    a.on_barrier(0, barrier(1))
    assert a.on_end_of_partition(1) == []
    assert blocked(a) == {0}
    assert a.on_end_of_partition(2) == [trigger(1), resume(0)]


def test_checkpoints_continue_on_the_last_open_channel_without_blocking() -> None:
    a = aligner(2)
    a.on_end_of_partition(0)
    assert a.on_barrier(1, barrier(4)) == [trigger(4)]
    assert blocked(a) == set()
    assert a.on_end_of_partition(1) == []
    assert a.phase is Phase.IDLE


def test_duplicate_barrier_after_completion_is_corrupt_too() -> None:
    a = aligner(2)
    a.on_barrier(0, barrier(1))
    a.on_barrier(1, barrier(1))
    with pytest.raises(StreamCorruptedError):
        a.on_barrier(1, barrier(1))


def test_illegal_phase_transition_is_rejected_and_the_error_pickles() -> None:
    a = aligner(2)
    with pytest.raises(IllegalPhaseTransitionError) as caught:
        a._move(Phase.IDLE)
    error = pickle.loads(pickle.dumps(caught.value))
    assert (error.source, error.target) == (Phase.IDLE, Phase.IDLE)
    assert "IDLE" in str(error)


def test_no_timeout_without_unaligned() -> None:
    clock = ManualClock(0)
    a = aligner(2, clock)
    a.on_barrier(0, barrier(1))
    assert a.alignment_deadline_ms() is None
    clock.advance(10_000)
    assert a.on_timer() == []
    assert blocked(a) == {0}


def test_statistics_show_the_alignment_in_progress() -> None:
    a = aligner(3)
    a.on_end_of_partition(2)
    a.on_barrier(1, barrier(4))
    stats = a.statistics()
    assert (stats.latest_checkpoint_id, stats.in_progress) == (4, (4,))
    assert (stats.blocked_channels, stats.finished_channels) == ((1,), (2,))
    a.on_barrier(0, barrier(4))
    assert a.statistics().in_progress == ()
    assert a.statistics().blocked_channels == ()


# -- the coordinator's abort (issue 29) -------------------------------------------------------

EXPIRED = CheckpointFailureReason.CHECKPOINT_EXPIRED


def test_an_abort_notification_releases_the_alignment_in_progress() -> None:
    handler = aligner(3)
    assert handler.on_barrier(0, barrier(1)) == [block(0)]  # type: ignore[arg-type]
    assert handler.on_barrier(2, barrier(1)) == [block(2)]  # type: ignore[arg-type]
    assert handler.abort(1, EXPIRED) == [abort(1, EXPIRED), resume(0), resume(2)]  # type: ignore[arg-type]
    assert blocked(handler) == set() and handler.phase is Phase.IDLE
    assert handler.on_barrier(1, barrier(1)) == []  # type: ignore[arg-type]


def test_an_abort_of_an_unseen_checkpoint_subsumes_the_current_one_and_ignores_its_barriers(
) -> None:
    handler = aligner(2)
    handler.on_barrier(0, barrier(1))  # type: ignore[arg-type]
    assert handler.abort(2, EXPIRED) == [abort(1, SUBSUMED), resume(0), abort(2, EXPIRED)]  # type: ignore[arg-type]
    assert handler.on_barrier(0, barrier(2)) == []  # type: ignore[arg-type]
    assert handler.on_barrier(1, barrier(2)) == []  # type: ignore[arg-type]
    assert handler.on_barrier(0, barrier(3)) == [block(0)]  # type: ignore[arg-type]


def test_an_abort_of_a_finished_or_older_checkpoint_does_nothing() -> None:
    handler = aligner(1)
    handler.on_barrier(0, barrier(2))  # type: ignore[arg-type]
    assert handler.abort(2, EXPIRED) == []  # type: ignore[arg-type]
    assert handler.abort(1, EXPIRED) == []  # type: ignore[arg-type]
