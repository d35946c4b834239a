"""The queue of an async I/O operator: which results may leave, and in which order.

An async I/O operator (``async_operator``) puts every input record into this queue when it
issues the record's request, and every watermark when it arrives; a request's completion marks
its record's entry complete with the outputs it produced. ``pop_ready()`` then returns what
may be emitted now, in emission order. No I/O and no threads here: the operator calls
everything on the task thread.

The rules (Flink's ordered and unordered stream element queues):

* **ordered**: entries leave strictly in the order they were added; a completed record waits
  for every record before it.
* **unordered**: watermarks cut the queue into segments. Within a segment completed records
  leave in the order they completed; a record never leaves before a watermark that arrived
  before it, and a watermark leaves only once every record before it has left. So results may
  overtake each other, but never a watermark: event time stays correct downstream.
* **capacity** bounds the entries held (records and watermarks, as in Flink): ``is_full``
  tells the operator to wait before adding another one; ``add_*`` on a full queue raises
  ``AsyncQueueFullError``.

``entries()`` lists what a checkpoint must keep, in the order to re-add it on restore: the
input of every record still in the queue (complete or not: a complete one has not been
emitted) and the watermarks between them.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

from flintlock.common.errors import FlintlockError


class AsyncQueueFullError(FlintlockError):
    """An entry was added to an async I/O queue that already holds ``capacity`` entries."""

    def __init__(self, capacity: int) -> None:
        super().__init__(capacity)
        self.capacity = capacity

    def __str__(self) -> str:
        return f"the async I/O queue already holds its capacity of {self.capacity} entries"


class UnknownAsyncEntryError(FlintlockError):
    """A completion named a record entry this queue does not hold (or one already complete)."""


@dataclass(eq=False, slots=True)
class RecordEntry:
    """One input record and, once its request completed, the outputs it produced."""

    value: Any
    timestamp: int | None
    outputs: list[Any] | None = None
    left: bool = False
    """Emitted: it has left the queue."""

    @property
    def done(self) -> bool:
        return self.outputs is not None


@dataclass(frozen=True, slots=True)
class WatermarkEntry:
    timestamp: int


Entry = RecordEntry | WatermarkEntry


@dataclass(eq=False, slots=True)
class _Segment:
    """Unordered mode: the records added between two watermarks, or one watermark."""

    watermark: WatermarkEntry | None = None
    records: list[RecordEntry] = field(default_factory=list)  # in the order they were added
    completed: deque[RecordEntry] = field(default_factory=deque)  # in completion order
    pending: int = 0


class AsyncResultQueue:
    def __init__(self, capacity: int, ordered: bool) -> None:
        if capacity <= 0:
            raise ValueError(f"the capacity of an async I/O operator must be positive, "
                             f"got {capacity}")
        self.capacity = capacity
        self.ordered = ordered
        self._size = 0
        self._in_order: deque[Entry] = deque()  # ordered mode
        self._segments: deque[_Segment] = deque()  # unordered mode
        self._segment_of: dict[int, _Segment] = {}  # unordered: id(record entry) -> segment

    def __len__(self) -> int:
        return self._size

    @property
    def is_full(self) -> bool:
        return self._size >= self.capacity

    def add_record(self, value: Any, timestamp: int | None) -> RecordEntry:
        self._check_room()
        entry = RecordEntry(value, timestamp)
        self._size += 1
        if self.ordered:
            self._in_order.append(entry)
            return entry
        segments = self._segments
        if not segments or segments[-1].watermark is not None:
            segments.append(_Segment())
        segment = segments[-1]
        segment.records.append(entry)
        segment.pending += 1
        self._segment_of[id(entry)] = segment
        return entry

    def add_watermark(self, timestamp: int) -> None:
        self._check_room()
        entry = WatermarkEntry(timestamp)
        self._size += 1
        if self.ordered:
            self._in_order.append(entry)
        else:
            self._segments.append(_Segment(watermark=entry))

    def complete(self, entry: RecordEntry, outputs: list[Any]) -> None:
        if entry.done:
            raise UnknownAsyncEntryError(f"the request for {entry.value!r} completed twice")
        if self.ordered:
            entry.outputs = outputs
            return
        segment = self._segment_of.pop(id(entry), None)
        if segment is None:
            raise UnknownAsyncEntryError(f"no queued request for {entry.value!r}")
        entry.outputs = outputs
        segment.pending -= 1
        segment.completed.append(entry)

    def pop_ready(self) -> list[Entry]:
        """The entries that may be emitted now, in emission order; they leave the queue."""
        ready = self._pop_ordered() if self.ordered else self._pop_unordered()
        self._size -= len(ready)
        return ready

    def _pop_ordered(self) -> list[Entry]:
        ready: list[Entry] = []
        queue = self._in_order
        while queue:
            head = queue[0]
            if isinstance(head, RecordEntry) and not head.done:
                break
            ready.append(queue.popleft())
        return ready

    def _pop_unordered(self) -> list[Entry]:
        ready: list[Entry] = []
        segments = self._segments
        while segments:
            first = segments[0]
            if first.watermark is not None:
                ready.append(first.watermark)
                segments.popleft()
                continue
            while first.completed:
                entry = first.completed.popleft()
                entry.left = True
                ready.append(entry)
            if first.pending:
                break
            first.records.clear()
            segments.popleft()
        return ready

    def entries(self) -> list[Entry]:
        """Everything still queued, in the order it was added (for a checkpoint)."""
        if self.ordered:
            return list(self._in_order)
        out: list[Entry] = []
        for segment in self._segments:
            if segment.watermark is not None:
                out.append(segment.watermark)
            else:
                out.extend(e for e in segment.records if not e.left)
        return out

    def _check_room(self) -> None:
        if self._size >= self.capacity:
            raise AsyncQueueFullError(self.capacity)
