"""PyFlink's ``pyflink.datastream.connectors.hybrid_source``: ``HybridSource`` reads several
sources one after the other — bounded ones first (a backfill from files, say), then a last one
that may be unbounded (Kafka)::

    source = HybridSource.builder(file_source).add_source(kafka_source).build()
    env.from_source(source, WatermarkStrategy.no_watermarks(), "hybrid")

Every underlying source must be one flintlock can enumerate (``create_enumerator`` and
``create_reader``: all of flintlock's connectors are); every source but the last must be
bounded (``InvalidHybridSourceError`` at ``build()``). The hybrid source is bounded when its
last source is.

**Enumeration** (``HybridEnumerator``, JobManager thread): one enumerator per underlying
source, all started together; their splits reach the readers wrapped as ``HybridSplit(index,
split)``, and an underlying enumerator's "no more splits" for a reader travels as the split
``NoMoreSplitsOf(index)``, since the runtime's own signal would end the whole hybrid reader.
Its snapshot is the tuple of the underlying enumerators' snapshots.

**Reading** (``HybridReader``, task thread): one reader per underlying source, made up front;
the hybrid reader polls source 0's reader until it is finished, then source 1's, and so on, and
is finished with the last one. Its snapshot entries are the underlying readers' entries, each
tagged with its source's index (``HybridSplit``); after a restore, a source a reader had
finished has no entries left, gets "no more splits" again and finishes at once, so reading
resumes where it was.

Difference from Flink: Flink switches to the next source when *all* readers have finished the
current one (the readers report to the enumerator); flintlock's readers do not report back,
so each source subtask switches as soon as *it* has finished its share. Records of one key
read by different subtasks from different sources may therefore interleave where Flink would
deliver all records of the earlier source first (docs/api.md, "Hybrid source").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from flintlock.common.errors import FlintlockError
from flintlock.datastream.connectors.base import Source


class InvalidHybridSourceError(FlintlockError, ValueError):
    """A hybrid source built from sources that cannot be chained."""


@dataclass(frozen=True, slots=True)
class HybridSplit:
    """A split (or a reader's snapshot entry) of the underlying source ``index``."""

    index: int
    split: Any

    @property
    def split_id(self) -> str:
        return f"{self.index}:{getattr(self.split, 'split_id', self.split)}"


@dataclass(frozen=True, slots=True)
class NoMoreSplitsOf:
    """The underlying source ``index`` has no more splits for this reader."""

    index: int


class _SourceContext:
    """The enumerator context one underlying enumerator sees."""

    def __init__(self, index: int, context: Any) -> None:
        self._index = index
        self._context = context

    @property
    def parallelism(self) -> int:
        return int(self._context.parallelism)

    def assign_splits(self, subtask: int, splits: list[Any]) -> None:
        self._context.assign_splits(subtask, [HybridSplit(self._index, s) for s in splits])

    def signal_no_more_splits(self, subtask: int) -> None:
        self._context.assign_splits(subtask, [NoMoreSplitsOf(self._index)])

    def call_periodically(self, interval_ms: int, callback: Callable[[], None]) -> None:
        self._context.call_periodically(interval_ms, callback)


class HybridEnumerator:
    """The underlying sources' enumerators side by side (see the module docstring)."""

    def __init__(self, enumerators: list[Any]) -> None:
        self._enumerators = enumerators

    def start(self, context: Any) -> None:
        for index, enumerator in enumerate(self._enumerators):
            enumerator.start(_SourceContext(index, context))

    def add_reader(self, subtask: int) -> None:
        for enumerator in self._enumerators:
            enumerator.add_reader(subtask)

    def snapshot_state(self, checkpoint_id: int) -> tuple[Any, ...]:
        return tuple(e.snapshot_state(checkpoint_id) for e in self._enumerators)

    def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        for enumerator in self._enumerators:
            notify = getattr(enumerator, "notify_checkpoint_complete", None)
            if notify is not None:
                notify(checkpoint_id)

    def close(self) -> None:
        for enumerator in self._enumerators:
            close = getattr(enumerator, "close", None)
            if close is not None:
                close()


class HybridReader:
    """Reads the underlying sources' readers in order (see the module docstring)."""

    def __init__(self, readers: list[Any]) -> None:
        self._readers = readers
        self._current = 0  # index of the reader being read; task thread

    def restore(self, state: list[Any]) -> None:
        for index, reader in enumerate(self._readers):
            reader.restore([entry.split for entry in state if entry.index == index])

    def add_splits(self, splits: list[Any]) -> None:
        for split in splits:
            reader = self._readers[split.index]
            if isinstance(split, NoMoreSplitsOf):
                reader.notify_no_more_splits()
            else:
                reader.add_splits([split.split])

    def notify_no_more_splits(self) -> None:
        """Not sent by ``HybridEnumerator``; the end comes from the last reader."""

    def poll(self, max_records: int) -> tuple[Any, bool]:
        last = len(self._readers) - 1
        while True:
            records, finished = self._readers[self._current].poll(max_records)
            if not finished or self._current == last:
                return records, finished
            self._current += 1
            if records:
                return records, False

    def snapshot_state(self, checkpoint_id: int) -> list[HybridSplit]:
        return [HybridSplit(index, entry) for index, reader in enumerate(self._readers)
                for entry in reader.snapshot_state(checkpoint_id)]

    def pending_records(self) -> int:
        return sum(int(reader.pending_records()) for reader in tuple(self._readers)
                   if hasattr(reader, "pending_records"))

    def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        for reader in self._readers:
            notify = getattr(reader, "notify_checkpoint_complete", None)
            if notify is not None:
                notify(checkpoint_id)

    def close(self) -> None:
        for reader in self._readers:
            close = getattr(reader, "close", None)
            if close is not None:
                close()


class HybridSource(Source):
    """Sources read one after the other; build it with ``HybridSource.builder(first)``."""

    def __init__(self, sources: list[Source]) -> None:
        if not sources:
            raise InvalidHybridSourceError("a HybridSource needs at least one source")
        for position, source in enumerate(sources):
            _check_source(source, position, last=position == len(sources) - 1)
        self._sources = list(sources)

    @staticmethod
    def builder(first_source: Source) -> HybridSourceBuilder:
        return HybridSourceBuilder(first_source)

    def get_sources(self) -> list[Source]:
        return list(self._sources)

    def is_bounded(self) -> bool:
        return self._sources[-1].is_bounded()

    def create_enumerator(self, parallelism: int, restored_state: tuple[Any, ...] | None
                          ) -> HybridEnumerator:
        restored = restored_state or (None,) * len(self._sources)
        if len(restored) != len(self._sources):
            raise InvalidHybridSourceError(
                f"a checkpoint of a hybrid source of {len(restored)} sources cannot be "
                f"restored into one of {len(self._sources)}")
        return HybridEnumerator([source.create_enumerator(parallelism, state)  # type: ignore[attr-defined]
                                 for source, state in zip(self._sources, restored, strict=True)])

    def create_reader(self, subtask_index: int, parallelism: int) -> HybridReader:
        return HybridReader([source.create_reader(subtask_index, parallelism)  # type: ignore[attr-defined]
                             for source in self._sources])

    def __repr__(self) -> str:
        return f"HybridSource({', '.join(map(repr, self._sources))})"


class HybridSourceBuilder:
    """Collects the sources of a ``HybridSource``, first to last."""

    def __init__(self, first_source: Source) -> None:
        self._sources = [first_source]

    def add_source(self, source: Source) -> HybridSourceBuilder:
        self._sources.append(source)
        return self

    def build(self) -> HybridSource:
        return HybridSource(self._sources)


def _check_source(source: Any, position: int, last: bool) -> None:
    if not isinstance(source, Source):
        raise InvalidHybridSourceError(
            f"source {position} of a HybridSource must be a Source, got {source!r}")
    if not (hasattr(source, "create_enumerator") and hasattr(source, "create_reader")):
        raise InvalidHybridSourceError(
            f"source {position} of a HybridSource ({type(source).__name__}) must enumerate "
            "its splits (create_enumerator and create_reader), as flintlock's connectors do")
    if not last and not source.is_bounded():
        raise InvalidHybridSourceError(
            f"source {position} of a HybridSource ({type(source).__name__}) is unbounded: "
            "every source but the last must be bounded")


__all__ = ["HybridSource", "HybridSourceBuilder"]
