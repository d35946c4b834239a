"""The alternating handler (aligned first, unaligned after the alignment timeout) over the
scenarios Flink's AlternatingCheckpointsTest pins down: switching by timeout on input and on
the timer, barriers that arrive already unaligned, savepoints that never switch."""

from __future__ import annotations

from flintlock.runtime.checkpoint.alignment import (
    AbortCheckpoint,
    BarrierAligner,
    CancelCheckpointMarker,
    CheckpointOptions,
    Phase,
)
from flintlock.testing.clock import ManualClock

from .barrier_actions import (
    CANCELLED,
    SAVEPOINT,
    SUBSUMED,
    UNALIGNED,
    barrier,
    block,
    exactly_once,
    persist,
    resume,
    trigger,
)

TIMEOUT = 10.0


def alternating(num_channels: int, clock: ManualClock) -> BarrierAligner:
    return exactly_once(num_channels, clock, unaligned=True, aligned_timeout_ms=TIMEOUT)


def test_completes_aligned_before_the_timeout() -> None:
    clock = ManualClock(0)
    h = alternating(2, clock)
    assert h.on_barrier(0, barrier(1)) == [block(0)]
    assert h.alignment_deadline_ms() == TIMEOUT
    clock.advance(TIMEOUT - 1)
    assert h.on_buffer(1, b"ab") == []
    assert h.on_barrier(1, barrier(1)) == [
        trigger(1, alignment=TIMEOUT - 1, processed=2),
        resume(0),
    ]
    assert h.alignment_deadline_ms() is None


def test_switches_to_unaligned_when_input_arrives_after_the_timeout() -> None:
    clock = ManualClock(0)
    h = alternating(3, clock)
    assert h.on_barrier(0, barrier(1)) == [block(0)]
    assert h.on_barrier(1, barrier(1)) == [block(1)]
    assert h.on_buffer(2, b"abc") == []
    clock.advance(TIMEOUT)
    assert h.on_buffer(2, b"late") == [
        trigger(1, UNALIGNED, alignment=TIMEOUT, processed=3),
        resume(0),
        resume(1),
        persist(1, 2, b"late"),
    ]
    assert h.phase is Phase.CAPTURING
    # what was queued behind the barriers of the blocked channels is after the barrier:
    # processed, never persisted
    assert h.on_buffer(0, b"queued behind barrier") == []
    assert h.on_buffer(2, b"more") == [persist(1, 2, b"more")]
    assert h.on_barrier(2, barrier(1)) == []
    assert h.phase is Phase.IDLE


def test_switches_on_the_timer_without_input() -> None:
    clock = ManualClock(0)
    h = alternating(2, clock)
    h.on_barrier(1, barrier(1))
    clock.advance(TIMEOUT - 0.5)
    assert h.on_timer() == []
    clock.advance(0.5)
    assert h.check_alignment_timeout() == [trigger(1, UNALIGNED, alignment=TIMEOUT), resume(1)]
    assert h.on_timer() == []
    assert h.alignment_deadline_ms() is None
    assert h.is_capturing(1)  # type: ignore[arg-type]


def test_last_barrier_after_the_deadline_switches_then_completes() -> None:
    clock = ManualClock(0)
    h = alternating(2, clock)
    h.on_barrier(0, barrier(1))
    clock.advance(TIMEOUT + 5)
    assert h.on_barrier(1, barrier(1)) == [trigger(1, UNALIGNED, alignment=TIMEOUT + 5), resume(0)]
    assert h.phase is Phase.IDLE


def test_barrier_that_arrives_unaligned_switches_at_once() -> None:
    clock = ManualClock(0)
    h = alternating(3, clock)
    h.on_barrier(0, barrier(1))
    clock.advance(2)
    assert h.on_barrier(1, barrier(1, UNALIGNED)) == [
        trigger(1, UNALIGNED, alignment=2),
        resume(0),
    ]
    assert h.on_buffer(2, b"x") == [persist(1, 2, b"x")]


def test_first_barrier_already_unaligned_triggers_at_once() -> None:
    h = alternating(2, ManualClock(0))
    assert h.on_barrier(0, barrier(1, UNALIGNED)) == [trigger(1, UNALIGNED)]
    assert h.on_buffer(1, b"x") == [persist(1, 1, b"x")]


def test_savepoints_never_switch() -> None:
    clock = ManualClock(0)
    h = alternating(2, clock)
    assert h.on_barrier(0, barrier(1, SAVEPOINT)) == [block(0)]
    assert h.alignment_deadline_ms() is None
    clock.advance(TIMEOUT * 100)
    assert h.on_timer() == []
    assert h.on_buffer(1, b"x") == []
    assert h.is_blocked(0)
    assert h.on_barrier(1, barrier(1, SAVEPOINT)) == [
        trigger(1, SAVEPOINT, alignment=TIMEOUT * 100, processed=1),
        resume(0),
    ]


def test_the_barrier_may_carry_its_own_timeout() -> None:
    clock = ManualClock(0)
    h = alternating(2, clock)
    own = CheckpointOptions(alignment_timeout_ms=3)
    h.on_barrier(0, barrier(1, own))
    assert h.alignment_deadline_ms() == 3
    clock.advance(3)
    assert h.on_timer() == [trigger(1, own.to_unaligned(), alignment=3), resume(0)]


def test_cancellation_after_the_switch_aborts() -> None:
    clock = ManualClock(0)
    h = alternating(2, clock)
    h.on_barrier(0, barrier(1))
    clock.advance(TIMEOUT)
    h.on_timer()
    assert h.on_cancellation_marker(1, CancelCheckpointMarker(1)) == [  # type: ignore[arg-type]
        AbortCheckpoint(1, CANCELLED)  # type: ignore[arg-type]
    ]
    assert h.on_buffer(1, b"x") == []


def test_newer_barrier_after_the_switch_subsumes_and_aligns_again() -> None:
    clock = ManualClock(0)
    h = alternating(2, clock)
    h.on_barrier(0, barrier(1))
    clock.advance(TIMEOUT)
    h.on_timer()
    assert h.on_barrier(0, barrier(2)) == [AbortCheckpoint(1, SUBSUMED), block(0)]  # type: ignore[arg-type]
    assert h.alignment_deadline_ms() == 2 * TIMEOUT


def test_end_of_partition_during_aligned_phase_triggers_aligned() -> None:
    clock = ManualClock(0)
    h = alternating(2, clock)
    h.on_barrier(0, barrier(1))
    clock.advance(1)
    assert h.on_end_of_partition(1) == [trigger(1, alignment=1), resume(0)]
    assert h.on_timer() == []


def test_cancellation_during_aligned_phase_stops_the_timer() -> None:
    clock = ManualClock(0)
    h = alternating(2, clock)
    h.on_barrier(0, barrier(1))
    assert h.on_cancellation_marker(1, CancelCheckpointMarker(1)) == [  # type: ignore[arg-type]
        AbortCheckpoint(1, CANCELLED),  # type: ignore[arg-type]
        resume(0),
    ]
    clock.advance(TIMEOUT)
    assert h.on_timer() == []
    assert h.alignment_deadline_ms() is None
