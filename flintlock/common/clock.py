"""Time sources. Cores take a ``Clock`` so tests can drive time by hand (STYLE.md §2, §11).

``SystemClock`` reads the monotonic clock for durations and the wall clock for timestamps;
``ManualClock`` (in ``flintlock.testing``) advances only when told.
"""

from __future__ import annotations

import time
from typing import Protocol


class Clock(Protocol):
    """Milliseconds: ``now_ms`` for durations and deadlines (monotonic), ``wall_ms`` for
    timestamps that leave the process (checkpoint trigger times, record timestamps)."""

    def now_ms(self) -> float: ...

    def wall_ms(self) -> int: ...


class SystemClock:
    __slots__ = ()

    def now_ms(self) -> float:
        return time.monotonic() * 1000.0

    def wall_ms(self) -> int:
        return time.time_ns() // 1_000_000


SYSTEM_CLOCK = SystemClock()
