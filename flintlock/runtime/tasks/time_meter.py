"""How a subtask spends its time: busy, backpressured, idle — milliseconds per second
(DESIGN.md §4, Flink's busyTimeMsPerSecond / backPressuredTimeMsPerSecond /
idleTimeMsPerSecond).

The task thread adds the time it waits for input (idle); the record writers count the time
they wait for a free buffer (backpressured); busy is the rest of the wall time. ``sample()``
turns the totals accumulated since the previous sample into per-second rates. The heartbeat
thread samples: reads of the float totals are safe without a lock (one writer, the GIL).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from flintlock.common.clock import SYSTEM_CLOCK, Clock


@dataclass(frozen=True, slots=True)
class TaskTimeStatistics:
    busy_ms_per_s: float
    backpressured_ms_per_s: float
    idle_ms_per_s: float
    window_ms: float


class TaskTimeMeter:
    def __init__(self, backpressured_total_ms: Callable[[], float],
                 clock: Clock = SYSTEM_CLOCK) -> None:
        self._backpressured_total_ms = backpressured_total_ms
        self._clock = clock
        self._idle_ms = 0.0  # written by the task thread only
        self._last_at = clock.now_ms()
        self._last_idle = 0.0
        self._last_backpressured = backpressured_total_ms()

    def add_idle(self, ms: float) -> None:
        self._idle_ms += ms

    def sample(self) -> TaskTimeStatistics:
        now = self._clock.now_ms()
        window = max(now - self._last_at, 1e-9)
        idle = self._idle_ms - self._last_idle
        backpressured = self._backpressured_total_ms() - self._last_backpressured
        self._last_at, self._last_idle = now, self._idle_ms
        self._last_backpressured += backpressured
        scale = 1000.0 / window
        idle_rate = min(1000.0, max(0.0, idle * scale))
        pressure_rate = min(1000.0 - idle_rate, max(0.0, backpressured * scale))
        return TaskTimeStatistics(
            busy_ms_per_s=max(0.0, 1000.0 - idle_rate - pressure_rate),
            backpressured_ms_per_s=pressure_rate, idle_ms_per_s=idle_rate, window_ms=window)
