"""The output flusher: one daemon thread per task that flushes its record writers every
``execution.buffer-timeout``, so records do not wait in a half-full buffer longer than that.

A writer registers itself (``register``) and is flushed through its
``_flush_from_flusher``, which takes the writer's own lock; the flusher holds only the list of
its writers. Owned by the task that created it (``stop`` when the task ends)."""

from __future__ import annotations

import threading
import time
from typing import Protocol


class _Flushable(Protocol):
    def _flush_from_flusher(self) -> None: ...


class OutputFlusher:
    """A daemon thread flushing its writers every ``interval_ms`` (``execution.buffer-timeout``)."""

    def __init__(self, interval_ms: int, name: str = "task") -> None:
        if interval_ms <= 0:
            raise ValueError("the output flusher needs a positive interval")
        self.interval_s = interval_ms / 1000.0
        self._writers: list[_Flushable] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._run, name=f"output flusher for {name}", daemon=True
        )
        self._thread.start()

    def register(self, writer: _Flushable) -> None:
        with self._lock:
            self._writers.append(writer)

    def unregister(self, writer: _Flushable) -> None:
        with self._lock:
            if writer in self._writers:
                self._writers.remove(writer)

    def _run(self) -> None:
        """Flushes on a fixed schedule (every ``interval_s`` from the start, not ``interval_s``
        after the previous flush ended), so the time a flush takes and a late wake-up do not
        stretch the buffer timeout; ticks missed altogether are skipped, not made up."""
        due = time.monotonic() + self.interval_s
        while not self._stop.wait(max(0.0, due - time.monotonic())):
            with self._lock:
                writers = list(self._writers)
            for writer in writers:
                writer._flush_from_flusher()
            due += self.interval_s
            now = time.monotonic()
            if due <= now:
                due = now + self.interval_s

    def stop(self, timeout_s: float = 10.0) -> None:
        """Stops and joins the thread (idempotent)."""
        self._stop.set()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout_s)

    @property
    def is_alive(self) -> bool:
        return self._thread.is_alive()
