"""Running one operator outside a task, for unit tests: an output that records what the operator
emits, a processing-time scheduler a test advances by hand, and an in-memory state writer."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flintlock.runtime.checkpoint.handles import StreamStateHandle
from flintlock.runtime.network.event_time import NO_TIMESTAMP, TimestampedBatch


class CollectingOutput:
    """An operator ``Output`` that keeps records (with their timestamps), watermarks and
    watermark-status changes, in the order they were emitted."""

    def __init__(self) -> None:
        self.events: list[tuple[Any, ...]] = []

    def collect_batch(self, records: list[Any]) -> None:
        stamps = records.timestamps if type(records) is TimestampedBatch else (
            [NO_TIMESTAMP] * len(records))
        self.events.extend(("record", v, t) for v, t in zip(records, stamps, strict=True))

    def emit_watermark(self, timestamp: int) -> None:
        self.events.append(("watermark", timestamp))

    def emit_watermark_status(self, idle: bool) -> None:
        self.events.append(("idle", idle))

    def records(self) -> list[tuple[Any, int]]:
        """(value, timestamp) of every record, in order."""
        return [(event[1], event[2]) for event in self.events if event[0] == "record"]

    def values(self) -> list[Any]:
        return [event[1] for event in self.events if event[0] == "record"]

    def watermarks(self) -> list[int]:
        return [event[1] for event in self.events if event[0] == "watermark"]


class ManualTimers:
    """A processing-time ``TimerScheduler`` whose clock moves only by ``advance``, which runs
    the timers that became due, in time order (ties in the order they were scheduled)."""

    def __init__(self, now: int = 0) -> None:
        self.now = now
        self.scheduled: list[tuple[int, Callable[[int], None]]] = []

    def now_ms(self) -> int:
        return self.now

    def schedule(self, timestamp: int, callback: Callable[[int], None]) -> None:
        self.scheduled.append((timestamp, callback))

    def advance(self, ms: int) -> None:
        self.now += ms
        due = sorted((t, i, c) for i, (t, c) in enumerate(self.scheduled) if t <= self.now)
        self.scheduled = [(t, c) for t, c in self.scheduled if t > self.now]
        for timestamp, _, callback in due:
            callback(timestamp)


class MemoryStateWriter:
    """A ``StateWriter`` that keeps the files in a dict (``files[name]``)."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}

    def write_state(self, name: str, data: bytes) -> StreamStateHandle:
        self.files[name] = bytes(data)
        return StreamStateHandle(f"memory://{name}", len(data), "")

    def read(self, handle: StreamStateHandle) -> bytes:
        return self.files[handle.uri.split("//", 1)[1]]
