"""The at-least-once tracker over the scenarios Flink's CheckpointBarrierTrackerTest pins down:
each case is a list of calls and the exact actions expected from each."""

from __future__ import annotations

import pytest

from flintlock.runtime.checkpoint.alignment import (
    MAX_PENDING_CHECKPOINTS,
    AbortCheckpoint,
    BarrierTracker,
    CancelCheckpointMarker,
    CheckpointBarrier,
    CheckpointFailureReason,
    CheckpointingMode,
    CheckpointMetrics,
    StreamCorruptedError,
    TriggerCheckpoint,
    UnknownChannelError,
    create_barrier_handler,
)
from flintlock.testing.clock import ManualClock

CANCELLED = CheckpointFailureReason.CHECKPOINT_DECLINED_ON_CANCELLATION_BARRIER


def barrier(checkpoint_id: int, timestamp: int = 0) -> CheckpointBarrier:
    return CheckpointBarrier(checkpoint_id, timestamp)  # type: ignore[arg-type]


def trigger(checkpoint_id: int, delay: float = 0.0, timestamp: int = 0) -> TriggerCheckpoint:
    return TriggerCheckpoint(
        checkpoint_id,  # type: ignore[arg-type]
        barrier(checkpoint_id, timestamp),
        CheckpointMetrics(0.0, delay, 0),
    )


def abort(checkpoint_id: int) -> AbortCheckpoint:
    return AbortCheckpoint(checkpoint_id, CANCELLED)  # type: ignore[arg-type]


def cancel(checkpoint_id: int) -> CancelCheckpointMarker:
    return CancelCheckpointMarker(checkpoint_id)  # type: ignore[arg-type]


def tracker(num_channels: int) -> BarrierTracker:
    handler = create_barrier_handler(
        num_channels, CheckpointingMode.AT_LEAST_ONCE, clock=ManualClock(0)
    )
    assert isinstance(handler, BarrierTracker)
    return handler


def test_factory_picks_the_tracker_for_at_least_once() -> None:
    assert isinstance(tracker(3), BarrierTracker)


def test_single_channel_triggers_every_barrier_at_once() -> None:
    t = tracker(1)
    assert t.on_buffer(0, b"x") == []
    assert t.on_barrier(0, barrier(1)) == [trigger(1)]
    assert t.on_barrier(0, barrier(2)) == [trigger(2)]
    assert t.on_barrier(0, barrier(4)) == [trigger(4)]
    assert not t.is_blocked(0)


def test_triggers_once_every_channel_delivered_and_never_blocks() -> None:
    t = tracker(3)
    assert t.on_barrier(1, barrier(1)) == []
    assert not t.is_blocked(1)
    assert t.on_buffer(1, b"after barrier") == []
    assert t.on_barrier(0, barrier(1)) == []
    assert t.on_barrier(2, barrier(1)) == [trigger(1)]
    assert t.pending_checkpoint_ids == []


def test_interleaved_checkpoints_complete_in_order() -> None:
    t = tracker(2)
    assert t.on_barrier(0, barrier(1)) == []
    assert t.on_barrier(0, barrier(2)) == []
    assert t.on_barrier(1, barrier(1)) == [trigger(1)]
    assert t.on_barrier(1, barrier(2)) == [trigger(2)]


def test_skipped_barrier_lets_the_newer_checkpoint_drop_the_older_silently() -> None:
    t = tracker(3)
    assert t.on_barrier(0, barrier(1)) == []
    assert t.on_barrier(0, barrier(2)) == []
    assert t.on_barrier(1, barrier(2)) == []
    assert t.on_barrier(2, barrier(2)) == [trigger(2)]
    assert t.pending_checkpoint_ids == []
    # checkpoint 1 is gone: its trailing barriers are ignored
    assert t.on_barrier(1, barrier(1)) == []
    assert t.on_barrier(2, barrier(1)) == []


def test_out_of_order_older_barrier_is_ignored() -> None:
    t = tracker(2)
    assert t.on_barrier(0, barrier(3)) == []
    assert t.on_barrier(1, barrier(2)) == []
    assert t.pending_checkpoint_ids == [3]
    assert t.on_barrier(1, barrier(3)) == [trigger(3)]


def test_start_delay_is_measured_at_the_first_barrier() -> None:
    clock = ManualClock(100)
    t = BarrierTracker(2, clock)
    t.on_barrier(0, barrier(1, timestamp=40))
    clock.advance(500)
    assert t.on_barrier(1, barrier(1, timestamp=40)) == [trigger(1, delay=60.0, timestamp=40)]


def test_at_most_fifty_pending_checkpoints_oldest_dropped_first() -> None:
    t = tracker(2)
    for checkpoint_id in range(1, MAX_PENDING_CHECKPOINTS + 2):
        assert t.on_barrier(0, barrier(checkpoint_id)) == []
    assert len(t.pending_checkpoint_ids) == MAX_PENDING_CHECKPOINTS
    assert t.pending_checkpoint_ids[0] == 2
    assert t.on_barrier(1, barrier(1)) == []
    assert t.on_barrier(1, barrier(2)) == [trigger(2)]


def test_cancellation_before_any_barrier_aborts_and_swallows_trailing_events() -> None:
    t = tracker(3)
    assert t.on_cancellation_marker(0, cancel(1)) == [abort(1)]
    assert t.on_barrier(1, barrier(1)) == []
    assert t.on_cancellation_marker(2, cancel(1)) == []
    assert t.pending_checkpoint_ids == []
    assert t.on_barrier(0, barrier(2)) == []


def test_cancellation_after_some_barriers_aborts_once() -> None:
    t = tracker(3)
    assert t.on_barrier(0, barrier(1)) == []
    assert t.on_barrier(1, barrier(1)) == []
    assert t.on_cancellation_marker(2, cancel(1)) == [abort(1)]
    assert t.pending_checkpoint_ids == []
    assert t.on_barrier(0, barrier(2)) == []


def test_cancellation_aborts_older_pending_checkpoints_too() -> None:
    t = tracker(2)
    assert t.on_barrier(0, barrier(1)) == []
    assert t.on_barrier(0, barrier(2)) == []
    assert t.on_barrier(0, barrier(3)) == []
    assert t.on_cancellation_marker(1, cancel(3)) == [abort(1), abort(2), abort(3)]
    assert t.pending_checkpoint_ids == []


def test_interleaved_cancellations_and_barriers() -> None:
    t = tracker(2)
    assert t.on_barrier(0, barrier(1)) == []
    assert t.on_cancellation_marker(0, cancel(2)) == [abort(1), abort(2)]
    assert t.on_barrier(1, barrier(1)) == []
    assert t.on_cancellation_marker(1, cancel(2)) == []
    assert t.on_barrier(0, barrier(3)) == []
    assert t.on_cancellation_marker(1, cancel(3)) == [abort(3)]
    assert t.on_barrier(0, barrier(4)) == []
    assert t.on_barrier(1, barrier(4)) == [trigger(4)]


def test_single_channel_cancellation_aborts_at_once() -> None:
    t = tracker(1)
    assert t.on_cancellation_marker(0, cancel(1)) == [abort(1)]
    assert t.on_barrier(0, barrier(2)) == [trigger(2)]
    assert t.on_cancellation_marker(0, cancel(1)) == []


def test_finished_channel_counts_as_delivered_for_pending_and_future_checkpoints() -> None:
    t = tracker(3)
    assert t.on_barrier(0, barrier(1)) == []
    assert t.on_barrier(1, barrier(1)) == []
    assert t.on_end_of_partition(2) == [trigger(1)]
    assert t.on_barrier(0, barrier(2)) == []
    assert t.on_barrier(1, barrier(2)) == [trigger(2)]


def test_end_of_partition_before_the_alignment() -> None:
    t = tracker(2)
    assert t.on_end_of_partition(0) == []
    assert t.on_barrier(1, barrier(1)) == [trigger(1)]


def test_all_channels_finished_leaves_nothing_pending() -> None:
    t = tracker(3)
    t.on_barrier(0, barrier(1))
    t.on_cancellation_marker(0, cancel(2))
    assert t.on_end_of_partition(0) == []
    assert t.on_end_of_partition(1) == []
    assert t.on_end_of_partition(2) == []
    assert t.pending_checkpoint_ids == []


def test_second_barrier_on_one_channel_is_corrupt() -> None:
    t = tracker(2)
    t.on_barrier(0, barrier(1))
    with pytest.raises(StreamCorruptedError):
        t.on_barrier(0, barrier(1))


def test_events_after_end_of_partition_and_unknown_channels_are_rejected() -> None:
    t = tracker(2)
    t.on_end_of_partition(1)
    with pytest.raises(StreamCorruptedError):
        t.on_barrier(1, barrier(1))
    with pytest.raises(UnknownChannelError):
        t.on_barrier(2, barrier(1))
    with pytest.raises(UnknownChannelError):
        t.is_blocked(-1)


def test_announcements_are_ignored_and_statistics_show_pending() -> None:
    t = tracker(3)
    assert t.on_barrier_announced(0, barrier(1)) == []
    t.on_barrier(0, barrier(1))
    t.on_barrier(0, barrier(2))
    t.on_end_of_partition(2)
    stats = t.statistics()
    assert stats.latest_checkpoint_id == 2
    assert stats.in_progress == (1, 2)
    assert stats.blocked_channels == ()
    assert stats.finished_channels == (2,)


# -- the coordinator's abort (issue 29) -------------------------------------------------------

EXPIRED = CheckpointFailureReason.CHECKPOINT_EXPIRED


def test_an_abort_notification_drops_the_count_and_swallows_the_late_barriers() -> None:
    tracker = create_barrier_handler(2, CheckpointingMode.AT_LEAST_ONCE, clock=ManualClock(0))
    assert tracker.on_barrier(0, barrier(1)) == []  # type: ignore[arg-type]
    assert tracker.abort(1, EXPIRED) == [AbortCheckpoint(1, EXPIRED)]  # type: ignore[arg-type]
    assert tracker.on_barrier(1, barrier(1)) == []  # type: ignore[arg-type]
    assert tracker.abort(1, EXPIRED) == []  # type: ignore[arg-type]


def test_an_abort_of_an_unseen_checkpoint_aborts_older_ones_and_its_own_barriers() -> None:
    tracker = create_barrier_handler(2, CheckpointingMode.AT_LEAST_ONCE, clock=ManualClock(0))
    tracker.on_barrier(0, barrier(1))  # type: ignore[arg-type]
    assert tracker.abort(2, EXPIRED) == [AbortCheckpoint(1, EXPIRED), AbortCheckpoint(2, EXPIRED)]  # type: ignore[arg-type]
    assert tracker.on_barrier(0, barrier(2)) == []  # type: ignore[arg-type]
    assert tracker.on_barrier(1, barrier(2)) == []  # type: ignore[arg-type]
    assert tracker.on_barrier(0, barrier(3)) == []  # type: ignore[arg-type]
    assert tracker.on_barrier(1, barrier(3)) == [trigger(3)]  # type: ignore[arg-type]
