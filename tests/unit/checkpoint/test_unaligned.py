"""The unaligned handler over the scenarios Flink's UnalignedCheckpointsTest pins down:
trigger at the first barrier, capture of in-flight buffers, overtaking (announced barriers),
subsumption, cancellation and end of partition — each as calls and the exact actions."""

from __future__ import annotations

import pytest

from flintlock.common.errors import InvalidConfigValueError
from flintlock.runtime.checkpoint.alignment import (
    BarrierAligner,
    BlockChannel,
    CheckpointingMode,
    CheckpointMetrics,
    Phase,
    ResumeChannel,
    TriggerCheckpoint,
    create_barrier_handler,
)
from flintlock.testing.clock import ManualClock

from .barrier_actions import (
    CANCELLED,
    SAVEPOINT,
    SUBSUMED,
    abort,
    barrier,
    cancel,
    exactly_once,
    persist,
    trigger,
)


def unaligned(num_channels: int) -> BarrierAligner:
    return exactly_once(num_channels, unaligned=True)


def test_zero_timeout_also_means_unaligned_from_the_start() -> None:
    handler = create_barrier_handler(
        2,
        CheckpointingMode.EXACTLY_ONCE,
        unaligned=True,
        aligned_timeout_ms=0,
        clock=ManualClock(0),
    )
    assert handler.on_barrier(0, barrier(1)) == [trigger(1)]  # type: ignore[arg-type]


def test_unaligned_needs_exactly_once_and_timeouts_are_not_negative() -> None:
    with pytest.raises(InvalidConfigValueError):
        create_barrier_handler(2, CheckpointingMode.AT_LEAST_ONCE, unaligned=True)
    with pytest.raises(InvalidConfigValueError):
        create_barrier_handler(
            2, CheckpointingMode.EXACTLY_ONCE, unaligned=True, aligned_timeout_ms=-1
        )


def test_first_barrier_triggers_and_inflight_buffers_are_captured_per_channel() -> None:
    u = unaligned(3)
    assert u.on_buffer(1, b"before trigger") == []
    assert u.on_barrier(0, barrier(1)) == [trigger(1)]
    assert not u.is_blocked(0)
    assert u.is_capturing(1)  # type: ignore[arg-type]
    assert u.on_buffer(0, b"a0") == []
    assert u.on_buffer(1, b"b1") == [persist(1, 1, b"b1")]
    assert u.on_buffer(2, b"c1") == [persist(1, 2, b"c1")]
    assert u.on_barrier(2, barrier(1)) == []
    assert u.on_buffer(2, b"c2") == []
    assert u.on_buffer(1, b"b2") == [persist(1, 1, b"b2")]
    assert u.on_barrier(1, barrier(1)) == []
    assert not u.is_capturing(1)  # type: ignore[arg-type]
    assert u.phase is Phase.IDLE
    assert u.on_buffer(1, b"b3") == []


def test_multiple_checkpoints_in_order() -> None:
    u = unaligned(2)
    for checkpoint_id in (1, 2, 3):
        assert u.on_barrier(1, barrier(checkpoint_id)) == [trigger(checkpoint_id)]
        assert u.on_buffer(0, b"x") == [persist(checkpoint_id, 0, b"x")]
        assert u.on_barrier(0, barrier(checkpoint_id)) == []


def test_announced_barrier_overtakes_and_the_overtaken_buffers_are_captured() -> None:
    u = unaligned(2)
    assert u.on_barrier_announced(0, barrier(1)) == [trigger(1)]
    # the buffers the priority barrier overtook on channel 0 are still consumed in order
    assert u.on_buffer(0, b"overtaken") == [persist(1, 0, b"overtaken")]
    assert u.on_buffer(1, b"other") == [persist(1, 1, b"other")]
    assert u.on_barrier(0, barrier(1)) == []
    assert u.on_buffer(0, b"after") == []
    assert u.on_barrier_announced(1, barrier(1)) == []
    assert u.on_barrier(1, barrier(1)) == []
    assert u.phase is Phase.IDLE


def test_announcement_of_an_aligned_savepoint_changes_nothing() -> None:
    u = unaligned(2)
    assert u.on_barrier_announced(0, barrier(1, SAVEPOINT)) == []
    assert u.on_barrier(0, barrier(1, SAVEPOINT)) == [BlockChannel(0)]  # type: ignore[arg-type]


def test_savepoints_are_aligned_even_with_unaligned_checkpoints() -> None:
    u = unaligned(2)
    assert u.on_barrier(0, barrier(1, SAVEPOINT)) == [BlockChannel(0)]  # type: ignore[arg-type]
    assert u.on_buffer(1, b"x") == []
    actions = u.on_barrier(1, barrier(1, SAVEPOINT))
    assert actions == [
        TriggerCheckpoint(1, barrier(1, SAVEPOINT), CheckpointMetrics(0.0, 0.0, 1)),  # type: ignore[arg-type]
        ResumeChannel(0),  # type: ignore[arg-type]
    ]


def test_newer_barrier_subsumes_the_capturing_checkpoint() -> None:
    u = unaligned(3)
    assert u.on_barrier(0, barrier(1)) == [trigger(1)]
    assert u.on_barrier(1, barrier(2)) == [abort(1, SUBSUMED), trigger(2)]
    assert u.on_buffer(0, b"x") == [persist(2, 0, b"x")]
    assert u.on_buffer(1, b"y") == []
    assert u.on_barrier(2, barrier(1)) == []
    assert u.on_buffer(2, b"z") == [persist(2, 2, b"z")]


def test_cancellation_while_capturing_aborts_and_stops_capture() -> None:
    u = unaligned(3)
    u.on_barrier(0, barrier(1))
    assert u.on_cancellation_marker(1, cancel(1)) == [abort(1, CANCELLED)]
    assert u.on_buffer(2, b"x") == []
    assert u.on_barrier(2, barrier(1)) == []
    assert not u.is_capturing(1)  # type: ignore[arg-type]


def test_newer_cancellation_while_capturing_subsumes_then_cancels() -> None:
    u = unaligned(2)
    u.on_barrier(0, barrier(1))
    assert u.on_cancellation_marker(1, cancel(2)) == [abort(1, SUBSUMED), abort(2, CANCELLED)]
    assert u.on_cancellation_marker(0, cancel(2)) == []


def test_end_of_partition_completes_the_capture() -> None:
    u = unaligned(3)
    u.on_barrier(0, barrier(1))
    u.on_barrier(1, barrier(1))
    assert u.on_buffer(2, b"last") == [persist(1, 2, b"last")]
    assert u.on_end_of_partition(2) == []
    assert not u.is_capturing(1)  # type: ignore[arg-type]
    assert u.on_barrier(0, barrier(2)) == [trigger(2)]
    assert u.on_buffer(1, b"y") == [persist(2, 1, b"y")]
    assert u.on_barrier(1, barrier(2)) == []
    assert u.phase is Phase.IDLE


def test_end_of_partition_before_the_barrier_needs_no_capture_from_that_channel() -> None:
    u = unaligned(2)
    u.on_end_of_partition(1)
    assert u.on_barrier(0, barrier(1)) == [trigger(1)]
    assert u.phase is Phase.IDLE

