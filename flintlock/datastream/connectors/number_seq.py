"""PyFlink's ``pyflink.datastream.connectors.number_seq``: ``NumberSequenceSource(start, end)``
emits every integer from ``start`` to ``end``, both inclusive, once — a bounded source.

The range is cut into one contiguous split per source subtask, in the JobManager
(``DealingEnumerator``); split i goes to subtask i. A reader's state is its unfinished splits,
each with the next number to emit, so a restore continues right after the last number covered
by the checkpoint, and a restore at another parallelism redistributes the remaining ranges
(a range is never in two readers). Within a split, numbers come in ascending order.

Created in the user's program; the enumerator lives on the JobManager thread, each reader on
its source task's thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flintlock.datastream.connectors._enumeration import (
    DealingEnumerator,
    EnumeratorSnapshot,
    FixedSplits,
    SplitQueueReader,
)
from flintlock.datastream.connectors.base import Source


@dataclass(frozen=True, slots=True)
class NumberSequenceSplit:
    """Numbers ``current`` to ``to`` (inclusive) of one split; empty once ``current > to``."""

    split_id: str
    current: int
    to: int

    @property
    def remaining(self) -> int:
        return max(0, self.to - self.current + 1)


def split_range(start: int, end: int, parts: int) -> list[NumberSequenceSplit]:
    """``start..end`` (inclusive) cut into ``parts`` contiguous splits whose sizes differ by at
    most one; empty splits are left out."""
    total = end - start + 1
    base, extra = divmod(max(total, 0), parts)
    splits, current = [], start
    for index in range(parts):
        size = base + (1 if index < extra else 0)
        if size:
            splits.append(NumberSequenceSplit(str(index), current, current + size - 1))
        current += size
    return splits


class NumberSequenceReader(SplitQueueReader):
    """Emits the numbers of its splits, ascending within each split."""

    def pending_records(self) -> int:
        """The numbers of its assigned splits not read yet (any thread: reads a copy)."""
        return sum(split.remaining for split in tuple(self._splits))

    def read_split(self, split: Any, budget: int, out: list[Any]) -> tuple[Any, bool]:
        count = min(budget, split.remaining)
        out.extend(range(split.current, split.current + count))
        advanced = NumberSequenceSplit(split.split_id, split.current + count, split.to)
        return advanced, advanced.remaining == 0


class NumberSequenceSource(Source):
    """Every integer from ``start`` to ``end`` inclusive, split over the source subtasks."""

    def __init__(self, start: int, end: int) -> None:
        for name, value in (("start", start), ("end", end)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"NumberSequenceSource {name} must be an int, got {value!r}")
        if end < start:
            raise ValueError(f"NumberSequenceSource: end ({end}) is smaller than start ({start})")
        self._start = start
        self._end = end

    def get_start(self) -> int:
        return self._start

    def get_end(self) -> int:
        return self._end

    def is_bounded(self) -> bool:
        return True

    def create_enumerator(self, parallelism: int,
                          restored_state: EnumeratorSnapshot | None) -> DealingEnumerator:
        discovery = FixedSplits(split_range(self._start, self._end, parallelism))
        return DealingEnumerator(parallelism, restored_state, discovery, bounded=True)

    def create_reader(self, subtask_index: int, parallelism: int) -> NumberSequenceReader:
        return NumberSequenceReader()

    def __repr__(self) -> str:
        return f"NumberSequenceSource({self._start}, {self._end})"


__all__ = ["NumberSequenceSource"]
