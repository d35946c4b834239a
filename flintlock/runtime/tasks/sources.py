"""Source operators: the head of a source subtask, asked by the task for the next batch.

The task thread calls ``emit_next(max_records)`` between mails; it returns an ``InputStatus``.
A source's position lives in operator list state, written in ``snapshot_state`` — which the
task calls from a mail, between two batches, right before it sends the checkpoint barrier — so
every record before the barrier is covered by the snapshot and every record after it is not.
After a restore, a source resumes from its snapshotted position (sources are rewindable).

The contract a connector's ``Source`` object fulfils (``env.from_source``):

* ``create_reader(subtask_index, parallelism) -> SourceReader`` — the split assignment is static:
  the reader picks its share of the source's splits from its index;
* ``SourceReader.restore(state: list)`` — the state it returned from a snapshot, redistributed
  (operator list state, even split) when the parallelism changed;
* ``SourceReader.poll(max_records) -> (records, finished)`` — up to ``max_records`` records;
  ``finished`` when it will never produce more; ``([], False)`` when nothing is ready now;
  records that carry their own event timestamps (Kafka's) come as a list with a
  ``timestamps`` attribute (one int per record), which a timestamp assigner sees as the
  previous timestamp; a reader with ``per_split_watermarks = True`` also gives ``splits``
  (the split id of each record) and ``finished_splits`` (ids of splits it finished), and then
  gets watermarks per split (``split_watermarks``);
* ``SourceReader.snapshot_state(checkpoint_id) -> list`` — picklable entries describing its
  position; ``notify_checkpoint_complete(checkpoint_id)`` and ``close()`` are optional;
* ``SourceReader.pending_records() -> int`` (optional) — records known to be left to read:
  Flink's ``pendingRecords`` metric of the source operator, called on the TaskManager's
  heartbeat thread, so it must only read (docs/metrics.md); ``pending_bytes() -> int``
  (optional, the same rules) is FLIP-33's ``pendingBytes``.

A source may instead have its splits enumerated in the JobManager (``runtime.enumerators``):
then it also has ``create_enumerator(parallelism, restored_state) -> SplitEnumerator`` (with
``start(context)``, ``add_reader(subtask)``, ``snapshot_state(checkpoint_id)``, optional
``notify_checkpoint_complete`` and ``close``), and its readers get ``add_splits(splits)`` and
``notify_no_more_splits()`` on the task thread, between polls.

All of it belongs to the task thread.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any

from flintlock.common.errors import FlintlockError
from flintlock.common.operator_spec import CollectionSource, OperatorSpec
from flintlock.common.state import ListStateDescriptor
from flintlock.common.watermark_strategy import WatermarkStrategy
from flintlock.runtime.network.event_time import TimestampedBatch
from flintlock.runtime.tasks.operator import OperatorContext, StreamOperator
from flintlock.runtime.tasks.split_watermarks import SplitWatermarks
from flintlock.runtime.tasks.watermarks import PeriodicEmission, WatermarkEmitter

POSITION_STATE = ListStateDescriptor("_flintlock_source_position", None)


class InputStatus(enum.Enum):
    MORE_AVAILABLE = 0
    NOTHING_AVAILABLE = 1
    END_OF_INPUT = 2


class SourceOperator(StreamOperator):
    """Base of source operators; ``emit_next`` replaces ``process_batch``."""

    is_source = True

    def emit_next(self, max_records: int) -> InputStatus:
        raise NotImplementedError

    def add_splits(self, splits: list[Any]) -> None:
        raise FlintlockError(f"{type(self).__name__} takes no splits")

    def notify_no_more_splits(self) -> None:
        raise FlintlockError(f"{type(self).__name__} takes no splits")


class CollectionSourceOperator(SourceOperator):
    """``env.from_collection``: subtask i emits every p-th element starting at i, in order."""

    def __init__(self, source: CollectionSource) -> None:
        self._all = source.elements
        self._offset = 0

    def initialize_state(self, restored: Any) -> None:
        ctx = self.context
        self._elements = self._all[ctx.subtask_index::ctx.parallelism]
        self._state = ctx.operator_backend.get_list_state(POSITION_STATE)
        positions = self._state.get()
        self._offset = max(positions) if positions else 0
        _source_gauge(ctx, lambda: len(self._elements) - self._offset)

    def emit_next(self, max_records: int) -> InputStatus:
        start = self._offset
        batch = list(self._elements[start:start + max_records])
        self._offset = start + len(batch)
        if batch:
            self.output.collect_batch(batch)
        if self._offset >= len(self._elements):
            return InputStatus.END_OF_INPUT
        return InputStatus.MORE_AVAILABLE

    def snapshot_state(self, checkpoint_id: int) -> Any:
        self._state.update([self._offset])
        return None


class ReaderSourceOperator(SourceOperator):
    """``env.from_source``: drives the connector's ``SourceReader``; with a watermark strategy
    other than ``no_watermarks()`` it assigns timestamps and emits watermarks as the strategy
    says (``watermarks.WatermarkEmitter``), periodically; per split (``split_watermarks``)
    when the reader asks for it."""

    def __init__(self, source: Any, strategy: WatermarkStrategy | None = None) -> None:
        self._source = source
        self._reader: Any = None
        self._strategy = strategy
        self._emitter: WatermarkEmitter | None = None
        self._per_split: SplitWatermarks | None = None
        self._split_ids: list[Any] = []  # splits seen before open
        self._periodic: PeriodicEmission | None = None

    def initialize_state(self, restored: Any) -> None:
        ctx = self.context
        self._reader = self._source.create_reader(ctx.subtask_index, ctx.parallelism)
        self._state = ctx.operator_backend.get_list_state(POSITION_STATE)
        positions = list(self._state.get())
        self._reader.restore(positions)
        self._note_splits(positions)
        for name, method in (("pendingRecords", "pending_records"),
                             ("pendingBytes", "pending_bytes")):
            supplier = getattr(self._reader, method, None)
            if supplier is not None:
                _source_gauge(ctx, supplier, name)

    def open(self) -> None:
        strategy = self._strategy
        if strategy is None or strategy == WatermarkStrategy.no_watermarks():
            return
        timers = self.context.timers
        self._emitter = WatermarkEmitter(strategy, self, timers.now_ms)
        if getattr(self._reader, "per_split_watermarks", False) and self._emitter.is_periodic:
            self._per_split = SplitWatermarks(strategy, self, timers.now_ms)
            for split_id in self._split_ids:
                self._per_split.add_split(split_id)
        emit = (self._per_split.on_periodic_emit if self._per_split is not None
                else self._emitter.on_periodic_emit)
        interval = self.context.environment.auto_watermark_interval_ms
        self._periodic = PeriodicEmission(timers, interval, emit)
        if self._emitter.is_periodic:
            self._periodic.start()

    def emit_next(self, max_records: int) -> InputStatus:
        records, finished = self._reader.poll(max_records)
        eager_splits: Any = None
        if records:
            batch = list(records)
            own: list[int] | None = getattr(records, "timestamps", None)
            emitter = self._emitter
            if emitter is not None:
                timestamps = emitter.timestamps_of(batch, own)
                split_ids = getattr(records, "splits", None)
                if self._per_split is not None and split_ids is not None:
                    if emitter.is_eager:  # a watermark computed from each record: after them
                        eager_splits = split_ids
                    else:
                        self._per_split.on_timestamps(split_ids, timestamps)
                else:
                    emitter.on_timestamps(timestamps)
                if self._strategy is not None and self._strategy.timestamp_assigner is not None:
                    own = timestamps
            values = batch
            if own is not None:
                batch = TimestampedBatch(batch, own)
            self.output.collect_batch(batch)
            if eager_splits is not None and self._per_split is not None:
                self._per_split.on_values(eager_splits, values)
        if self._per_split is not None:
            for split_id in getattr(records, "finished_splits", ()):
                self._per_split.remove_split(split_id)
        if finished:
            return InputStatus.END_OF_INPUT
        return InputStatus.MORE_AVAILABLE if records else InputStatus.NOTHING_AVAILABLE

    def snapshot_state(self, checkpoint_id: int) -> Any:
        self._state.update(list(self._reader.snapshot_state(checkpoint_id)))
        return None

    def add_splits(self, splits: list[Any]) -> None:
        self._reader.add_splits(splits)
        self._note_splits(splits)

    def _note_splits(self, splits: list[Any]) -> None:
        if not getattr(self._reader, "per_split_watermarks", False):
            return
        ids = [split.split_id for split in splits if hasattr(split, "split_id")]
        if self._per_split is not None:
            for split_id in ids:
                self._per_split.add_split(split_id)
        else:
            self._split_ids.extend(ids)

    def notify_no_more_splits(self) -> None:
        self._reader.notify_no_more_splits()

    def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        notify = getattr(self._reader, "notify_checkpoint_complete", None)
        if notify is not None:
            notify(checkpoint_id)

    def process_watermark(self, timestamp: int) -> None:
        """The chain's end of input (the maximum watermark): the strategy's last watermark,
        then the maximum."""
        if self._periodic is not None:
            self._periodic.stop()
        if self._per_split is not None:
            self._per_split.end(timestamp)
        elif self._emitter is not None:
            self._emitter.end(timestamp)
        else:
            self.emit_watermark(timestamp)

    def emit_watermark_status(self, idle: bool) -> None:
        self.output.emit_watermark_status(idle)

    def close(self) -> None:
        if self._periodic is not None:
            self._periodic.stop()
        close = getattr(self._reader, "close", None)
        if close is not None:
            close()


def _source_gauge(context: OperatorContext, supplier: Callable[[], int],
                  name: str = "pendingRecords") -> None:
    """Registers a source's backlog gauge (Flink's ``pendingRecords`` or ``pendingBytes``) in
    the source operator's metric group."""
    context.environment.metric_groups.operator(
        context.operator_id, context.operator_name).gauge(name, supplier)


def create_source_operator(spec: OperatorSpec) -> SourceOperator:
    if isinstance(spec.source, CollectionSource):
        return CollectionSourceOperator(spec.source)
    if not hasattr(spec.source, "create_reader"):
        raise TypeError(f"{type(spec.source).__name__} is not a source flintlock can run: it "
                        "has no create_reader(subtask_index, parallelism)")
    return ReaderSourceOperator(spec.source, spec.watermark_strategy)
