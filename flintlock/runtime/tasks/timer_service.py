"""The task's one wall-clock timer service: processing-time timers of its operators, the
alignment timeout of alternating checkpoints, the checks of timeoutable barriers.

Flink runs a task's timers on its mailbox thread; here too every callback runs on the task
thread: when a timer is due, the service puts its action into the task's mailbox, and the
task loop runs it between two batches like any other mail. One thread per task waits for the
earliest due time (a heap), instead of a thread per timer.

Event-time timers and windows are not wall-clock timers: they fire when a watermark passes
them, on the task thread, inside the operators (``contexts``, ``window_operator``).

Thread ownership: ``schedule``, ``schedule_after`` and ``cancel`` may be called from any
thread (operators call them on the task thread); the service's own thread only moves due
actions into the mailbox. State is guarded by ``_lock``.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from collections.abc import Callable

from flintlock.common.clock import Clock
from flintlock.runtime.tasks.mailbox import Mailbox


class TimerHandle:
    """A scheduled action; ``cancel`` before it is due and it never runs."""

    __slots__ = ("cancelled",)

    def __init__(self) -> None:
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class TaskTimerService:
    def __init__(self, mailbox: Mailbox, clock: Clock, name: str) -> None:
        self._mailbox = mailbox
        self._clock = clock
        self._name = name
        self._lock = threading.Condition()
        self._heap: list[tuple[float, int, Callable[[], None], str, TimerHandle]] = []
        self._sequence = itertools.count()  # ties keep the order they were scheduled in
        self._thread: threading.Thread | None = None
        self._closed = False

    def now_ms(self) -> int:
        """Processing time: the wall clock in milliseconds."""
        return self._clock.wall_ms()

    def schedule(self, timestamp_ms: int, callback: Callable[[int], None]) -> TimerHandle:
        """A processing-time timer: ``callback(timestamp_ms)`` on the task thread once the
        wall clock reaches ``timestamp_ms``."""
        delay_s = max(0.0, (timestamp_ms - self.now_ms()) / 1000.0)
        return self.schedule_after(delay_s, lambda: callback(timestamp_ms),
                                   f"timer {timestamp_ms}")

    def schedule_after(self, delay_s: float, action: Callable[[], None],
                       description: str) -> TimerHandle:
        """``action`` on the task thread after ``delay_s`` seconds."""
        handle = TimerHandle()
        with self._lock:
            if self._closed:
                handle.cancel()
                return handle
            heapq.heappush(self._heap, (time.monotonic() + max(0.0, delay_s),
                                        next(self._sequence), action, description, handle))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, daemon=True,
                                                name=f"flintlock-timers-{self._name}")
                self._thread.start()
            self._lock.notify()
        return handle

    def close(self) -> None:
        """Cancels every timer and ends the service's thread (the task is ending)."""
        with self._lock:
            self._closed = True
            for entry in self._heap:
                entry[4].cancel()
            self._heap.clear()
            self._lock.notify()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()

    def _run(self) -> None:
        while True:
            with self._lock:
                while not self._closed and (
                        not self._heap or self._heap[0][0] > time.monotonic()):
                    wait = self._heap[0][0] - time.monotonic() if self._heap else None
                    self._lock.wait(wait)
                if self._closed:
                    return
                _, _, action, description, handle = heapq.heappop(self._heap)
            if not handle.cancelled and not self._mailbox.closed:
                self._mailbox.offer(action, description)
