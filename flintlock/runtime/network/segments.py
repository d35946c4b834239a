"""The free segments of a TaskManager's ``NetworkBufferPool`` (``buffer``), allocated lazily.

The pool's network memory is a fixed number of segments; zeroing all of them when the
TaskManager starts (64 MB by default) cost about 50 ms of its start and the memory of every
segment it never used. ``FreeSegments`` counts the segments not yet made and makes one when a
``pop`` finds no returned segment to reuse; returned segments are reused before new ones are
made, so a TaskManager holds only as many as it ever used at once.

No lock of its own: the pool's lock guards it.
"""

from __future__ import annotations


class FreeSegments:
    """The free segments of a ``NetworkBufferPool``: a stack of segments plus a count of
    segments not yet allocated, made on the first ``pop`` that finds the stack empty. Counts
    (``len``) include both. Guarded by the pool's lock."""

    __slots__ = ("_segments", "_size", "_untouched")

    def __init__(self, count: int, size: int) -> None:
        self._segments: list[bytearray] = []
        self._untouched = count
        self._size = size

    def __len__(self) -> int:
        return len(self._segments) + self._untouched

    def pop(self) -> bytearray:
        if self._segments:
            return self._segments.pop()
        if not self._untouched:
            raise IndexError("no free segment")
        self._untouched -= 1
        return bytearray(self._size)

    def extend(self, segments: list[bytearray]) -> None:
        self._segments.extend(segments)
