"""The JobManager thread's loop: events other threads hand over, and timers.

RPC dispatcher threads and callers of the JobManager's public methods ``enqueue`` actions;
the JobManager thread runs them, and the timers that are due, in ``process``. Nothing else
touches the JobManager's state, so none of it needs a lock.

Thread ownership: ``enqueue`` from any thread; ``schedule`` and ``process`` on the JobManager
thread only.
"""

from __future__ import annotations

import heapq
import queue
from collections.abc import Callable

from flintlock.common.clock import Clock


class EventLoop:
    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._events: queue.Queue[tuple[Callable[[], None], str]] = queue.Queue()
        self._timers: list[tuple[float, int, Callable[[], None]]] = []
        self._timer_seq = 0

    def enqueue(self, action: Callable[[], None], description: str) -> None:
        """Runs ``action`` on the JobManager thread (any thread may call this)."""
        self._events.put((action, description))

    def schedule(self, at_ms: float, callback: Callable[[], None]) -> None:
        """Runs ``callback`` once the clock reaches ``at_ms``."""
        self._timer_seq += 1
        heapq.heappush(self._timers, (at_ms, self._timer_seq, callback))

    def process(self, max_wait_s: float) -> None:
        """Runs the due timers, then waits up to ``max_wait_s`` (less if a timer is due
        sooner) for events and runs all that are queued."""
        now = self._clock.now_ms()
        while self._timers and self._timers[0][0] <= now:
            _, _, callback = heapq.heappop(self._timers)
            callback()
        wait = max_wait_s
        if self._timers:
            wait = min(wait, max(0.0, (self._timers[0][0] - now) / 1000.0))
        try:
            action, _ = self._events.get(timeout=wait)
        except queue.Empty:
            return
        action()
        while True:
            try:
                action, _ = self._events.get_nowait()
            except queue.Empty:
                return
            action()
