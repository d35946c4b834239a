"""When the checkpoint coordinator may start the next checkpoint, and when to wake it up.

Three things decide it: the periodic due time (when the next periodic checkpoint is wanted),
the minimum pause after the last completed checkpoint, and the concurrency limit (a
non-savepoint request waits while ``max-concurrent-checkpoints`` checkpoints are pending, until
one of them ends). Savepoints skip the pause and the limit. ``next_timer`` names the earliest
moment a waiting request or the periodic checkpoint may start, and only when it differs from
the timer already armed, so the coordinator emits ``ScheduleNextTrigger`` once per change.

I/O-free; it reads the injected clock. Owned by the coordinator's thread, like the coordinator.
"""

from __future__ import annotations

import random

from flintlock.common.clock import Clock
from flintlock.runtime.checkpoint.coordinator_settings import CoordinatorSettings
from flintlock.runtime.checkpoint.requests import CheckpointRequestQueue

_AFTER_A_COMPLETION = float("inf")


class TriggerTiming:
    """The periodic due time, the pause after a completion and the armed trigger timer."""

    def __init__(self, settings: CoordinatorSettings, clock: Clock) -> None:
        self._settings = settings
        self._clock = clock
        self._periodic_due_ms: float | None = None  # None: no periodic checkpoint wanted
        self._last_completion_ms: float | None = None
        self._timer_at: float | None = None  # the trigger timer armed last; None: none

    def start_periodic(self, rng: random.Random) -> None:
        """The first periodic checkpoint is due after a random delay in [min-pause, interval]
        (so restarted jobs do not all checkpoint in step)."""
        low = min(self._settings.min_pause_ms, self._settings.interval_ms)
        delay = rng.randint(low, self._settings.interval_ms)
        self._periodic_due_ms = self._clock.now_ms() + delay

    def stop_periodic(self) -> None:
        self._periodic_due_ms = None

    def periodic_is_due(self) -> bool:
        due = self._periodic_due_ms
        return due is not None and self._clock.now_ms() >= due

    def periodic_triggered(self, now: float) -> None:
        """A periodic checkpoint starts at ``now``: the next one is due an interval later."""
        if self._settings.periodic:
            self._periodic_due_ms = now + self._settings.interval_ms

    def completed(self, now: float) -> None:
        """A checkpoint completed at ``now``: the minimum pause starts."""
        self._last_completion_ms = now

    def timer_fired(self) -> None:
        self._timer_at = None

    def blocked_until(self, pending_checkpoints: int) -> float | None:
        """When a non-savepoint request may run: None = now; inf = after a completion."""
        if pending_checkpoints >= self._settings.max_concurrent:
            return _AFTER_A_COMPLETION
        if self._last_completion_ms is None:
            return None
        earliest = self._last_completion_ms + self._settings.min_pause_ms
        return earliest if self._clock.now_ms() < earliest else None

    def next_timer(self, queue: CheckpointRequestQueue, pending_checkpoints: int) -> float | None:
        """The earliest moment something may need to start, if the armed timer is not set for
        it already (then it counts as armed); None when there is nothing new to arm."""
        wanted: list[float] = []
        if self._periodic_due_ms is not None and not queue.has_periodic:
            wanted.append(self._periodic_due_ms)
        head = queue.peek()
        if head is not None and not head.is_savepoint:
            blocked = self.blocked_until(pending_checkpoints)
            if blocked is not None and blocked != _AFTER_A_COMPLETION:
                wanted.append(blocked)
        at = min(wanted, default=None)
        if at is None or at == self._timer_at:
            return None
        self._timer_at = at
        return at
