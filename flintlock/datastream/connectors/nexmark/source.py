"""``NexmarkSource``: the Nexmark event stream as a DataStream source (``env.from_source``),
split over any parallelism, checkpointable at its position.

**Splits.** The JobManager's ``DealingEnumerator`` hands out one split per subtask of the
first run: split i of p holds the event numbers i, i+p, i+2p, ... (so every subtask moves
through event time together, as the datagen connector deals its rows). Every number is in
exactly one split; since an event is a function of its number alone (``generator.event``), the
union of the splits is the same stream at any parallelism. A split carries its position (how
many of its events were emitted): a checkpoint restores it exactly, and a restore at another
parallelism hands whole splits to the new readers.

**Records.** Each event comes out as ``to_record(event_type, values)`` — by default an
``Event`` (a frozen dataclass per kind, below) — in a list whose ``timestamps`` attribute
holds the event times in epoch milliseconds, which the source operator makes the records'
timestamps (a watermark strategy without a timestamp assigner uses them as they are).

**Rate.** Unthrottled by default (Flink's ``max-emit-speed``); with ``rate_limited`` a reader
emits an event once the wall clock has passed its event time shifted to the reader's start
(Flink's ``rate.limited``): the configured events per second for the whole source.

The source object lives in the user's program and the job; the enumerator on the JobManager
thread; each reader on its source task's thread.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from flintlock.common.clock import SYSTEM_CLOCK, Clock
from flintlock.datastream.connectors._enumeration import (
    DealingEnumerator,
    EnumeratorSnapshot,
    SplitQueueReader,
)
from flintlock.datastream.connectors.base import Source
from flintlock.datastream.connectors.nexmark.config import NexmarkConfig
from flintlock.datastream.connectors.nexmark.generator import AUCTION, BID, PERSON, event
from flintlock.datastream.connectors.nexmark.model import Auction, Bid, Person

RecordFactory = Callable[[int, tuple[Any, ...]], Any]


def to_event(event_type: int, values: tuple[Any, ...]) -> Any:
    """The default record: a ``Person``, ``Auction`` or ``Bid``."""
    if event_type == BID:
        return Bid(*values)
    if event_type == AUCTION:
        return Auction(*values)
    return Person(*values)


@dataclass(frozen=True, slots=True)
class NexmarkSplit:
    """Event numbers ``offset, offset + stride, ...``; ``position`` of them emitted; ``count``
    of them in all (None: unbounded)."""

    split_id: str
    offset: int
    stride: int
    position: int
    count: int | None

    @property
    def remaining(self) -> int | None:
        return None if self.count is None else self.count - self.position

    @property
    def next_number(self) -> int:
        return self.offset + self.position * self.stride


def initial_splits(events: int | None, parallelism: int) -> list[NexmarkSplit]:
    """One split per subtask; split i holds the numbers congruent to i modulo p."""
    splits = []
    for index in range(parallelism):
        count = None
        if events is not None:
            base, extra = divmod(events, parallelism)
            count = base + (1 if index < extra else 0)
        splits.append(NexmarkSplit(str(index), index, parallelism, 0, count))
    return splits


class _Splits:
    def __init__(self, events: int | None, parallelism: int) -> None:
        self._splits = initial_splits(events, parallelism)

    def initial(self) -> list[Any]:
        return list(self._splits)

    def discover(self) -> list[Any]:
        return []

    def snapshot(self) -> Any:
        return None


class StampedEvents(list[Any]):
    """Records with their event times (``timestamps[i]`` belongs to ``self[i]``)."""

    __slots__ = ("timestamps",)

    def __init__(self) -> None:
        super().__init__()
        self.timestamps: list[int] = []


class NexmarkReader(SplitQueueReader):
    """Generates the events of its splits in order; see the module docstring."""

    def __init__(self, config: NexmarkConfig, to_record: RecordFactory = to_event,
                 clock: Clock = SYSTEM_CLOCK) -> None:
        super().__init__()
        self._config = config
        self._to_record = to_record
        self._clock = clock
        self._started_ms: int | None = None  # wall clock at the first poll (rate-limited)
        self._budget_ms: int | None = None  # event time the wall clock allows, this poll

    def pending_records(self) -> int:
        return sum(s.remaining or 0 for s in tuple(self._splits))

    def poll(self, max_records: int) -> tuple[list[Any], bool]:
        if self._config.rate_limited:
            now = int(self._clock.now_ms())
            if self._started_ms is None:
                self._started_ms = now
            self._budget_ms = self._config.base_time_ms + (now - self._started_ms)
        records, finished = super().poll(max_records)
        out = StampedEvents()
        for record, timestamp in records:
            out.append(record)
            out.timestamps.append(timestamp)
        return out, finished

    def read_split(self, split: Any, budget: int, out: list[Any]) -> tuple[Any, bool]:
        remaining = split.remaining
        count = budget if remaining is None else min(budget, remaining)
        config, to_record, limit = self._config, self._to_record, self._budget_ms
        number, stride, emitted = split.next_number, split.stride, 0
        while emitted < count:
            if limit is not None and config.timestamp_for(number) > limit:
                break
            event_type, values, timestamp = event(config, number)
            out.append((to_record(event_type, values), timestamp))
            number += stride
            emitted += 1
        advanced = replace(split, position=split.position + emitted)
        return advanced, advanced.remaining == 0

    def snapshot_state(self, checkpoint_id: int) -> list[Any]:
        return list(self._splits)


class NexmarkSource(Source):
    """The Nexmark events of ``config`` (``config.events`` of them, or unbounded)."""

    def __init__(self, config: NexmarkConfig | None = None,
                 to_record: RecordFactory = to_event) -> None:
        self.config = config or NexmarkConfig()
        self.to_record = to_record

    def is_bounded(self) -> bool:
        return self.config.events is not None

    def create_enumerator(self, parallelism: int,
                          restored_state: EnumeratorSnapshot | None) -> DealingEnumerator:
        return DealingEnumerator(parallelism, restored_state,
                                 _Splits(self.config.events, parallelism),
                                 bounded=self.is_bounded())

    def create_reader(self, subtask_index: int, parallelism: int) -> NexmarkReader:
        return NexmarkReader(self.config, self.to_record)

    def __repr__(self) -> str:
        return f"NexmarkSource(events={self.config.events})"


__all__ = ["PERSON", "NexmarkReader", "NexmarkSource", "NexmarkSplit", "StampedEvents",
           "initial_splits", "to_event"]
