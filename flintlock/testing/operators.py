"""Running one operator outside a task, for unit tests: ``open_operator`` builds, sets up and
opens it as a task would, with an output that records what it emits (``CollectingOutput``), a
processing-time scheduler a test advances by hand (``ManualTimers``), and an in-memory state
writer (``MemoryStateWriter``). Everything runs on the test's thread."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flintlock.common.operator_spec import OperatorSpec
from flintlock.runtime.network.event_time import NO_TIMESTAMP, TimestampedBatch
from flintlock.runtime.state.handles import StreamStateHandle
from flintlock.runtime.tasks.operator import OperatorContext
from flintlock.runtime.tasks.operator_factory import create_operator


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


def open_operator(spec: OperatorSpec, *, restored: Any = False, output: Any = None,
                  **context: Any) -> tuple[Any, Any]:
    """``spec``'s operator as a task opens it: set up with an ``OperatorContext`` of subtask 0
    of 1 with ``ManualTimers`` (``context`` sets any other field: ``keyed_backend``,
    ``key_selectors``, ``timers``, ``side_outputs``, ``environment``, ``subtask_index``...),
    emitting into ``output`` (a new ``CollectingOutput``), its state initialized with
    ``restored``, then opened. Returns (operator, output)."""
    fields: dict[str, Any] = {
        "task_name": "task", "operator_name": "op", "operator_id": "op-id", "subtask_index": 0,
        "parallelism": 1, "max_parallelism": 128, "attempt_number": 0, "timers": ManualTimers(),
        **context,
    }
    operator = create_operator(spec)
    out = output if output is not None else CollectingOutput()
    operator.setup(OperatorContext(**fields), out)
    operator.initialize_state(restored)
    operator.open()
    return operator, out
