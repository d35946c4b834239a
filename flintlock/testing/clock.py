"""A clock that moves only when a test says so."""

from __future__ import annotations


class ManualClock:
    """Implements ``flintlock.common.clock.Clock``; starts at ``start_ms``."""

    def __init__(self, start_ms: float = 0.0) -> None:
        self._now = float(start_ms)

    def now_ms(self) -> float:
        return self._now

    def wall_ms(self) -> int:
        return int(self._now)

    def advance(self, ms: float) -> None:
        if ms < 0:
            raise ValueError("a clock cannot go back")
        self._now += ms
