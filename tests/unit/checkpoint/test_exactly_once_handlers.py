"""Cases every exactly-once barrier handler must pass, aligned and unaligned alike: one
channel, cancellation before the first barrier and after the trigger, a repeated barrier.
Where the two differ (what the next checkpoint's first barrier does), the case says so."""

from __future__ import annotations

import pytest

from flintlock.runtime.checkpoint.alignment import BarrierAligner, StreamCorruptedError

from .barrier_actions import (
    CANCELLED,
    abort,
    barrier,
    block,
    blocked,
    cancel,
    exactly_once,
    trigger,
)

MODES = ["aligned", "unaligned"]


def handler(mode: str, num_channels: int) -> BarrierAligner:
    return exactly_once(num_channels, unaligned=mode == "unaligned")


@pytest.mark.parametrize("mode", MODES)
def test_single_channel_triggers_at_once_never_blocks_and_captures_nothing(mode: str) -> None:
    h = handler(mode, 1)
    assert h.on_buffer(0, b"abc") == []
    assert h.on_barrier(0, barrier(1)) == [trigger(1)]
    assert h.on_buffer(0, b"after") == []
    assert blocked(h) == set()
    assert not h.is_capturing(1)  # type: ignore[arg-type]
    assert h.on_barrier(0, barrier(2)) == [trigger(2)]


@pytest.mark.parametrize("mode, next_first_barrier", [
    ("aligned", [block(0)]),  # the next checkpoint aligns as usual
    ("unaligned", [trigger(2)]),  # the next checkpoint triggers at its first barrier
])
def test_cancellation_before_the_first_barrier(mode: str, next_first_barrier: list) -> None:
    h = handler(mode, 3)
    assert h.on_cancellation_marker(1, cancel(1)) == [abort(1, CANCELLED)]
    assert h.on_barrier(0, barrier(1)) == []
    assert h.on_buffer(0, b"x") == []  # nothing captured for the cancelled checkpoint
    assert h.on_barrier(2, barrier(1)) == []
    assert blocked(h) == set()
    assert h.on_barrier(0, barrier(2)) == next_first_barrier


@pytest.mark.parametrize("mode", MODES)
def test_cancellation_after_the_trigger_is_ignored(mode: str) -> None:
    h = handler(mode, 2)
    h.on_barrier(0, barrier(1))
    h.on_barrier(1, barrier(1))
    assert h.on_cancellation_marker(0, cancel(1)) == []


@pytest.mark.parametrize("mode, channels", [("aligned", 3), ("unaligned", 2)])
def test_second_barrier_of_a_checkpoint_on_one_channel_is_corrupt(mode: str,
                                                                  channels: int) -> None:
    h = handler(mode, channels)
    h.on_barrier(0, barrier(1))
    with pytest.raises(StreamCorruptedError):
        h.on_barrier(0, barrier(1))
