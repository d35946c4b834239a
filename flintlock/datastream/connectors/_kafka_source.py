"""The machinery behind ``KafkaSource``: one split per topic partition, found and given its
starting (and, bounded, stopping) offset in the JobManager, read in the source subtasks with a
librdkafka consumer (``confluent_kafka``) that is *assigned* its partitions, never subscribed:
the split enumerator, not Kafka's group protocol, decides who reads what, as in Flink.

**Splits** (``KafkaPartitionSplit``): topic, partition, the offset of the next record to read
and, bounded, the offset to stop before. Offsets are always concrete: the enumerator resolves
``earliest`` / ``latest`` / ``committed`` / ``timestamp`` / explicit offsets against the broker
when it creates a split (``OffsetResolver``), so a restored split resumes at exactly its
checkpointed offset. Partitions found by a later discovery start at their earliest offset (a
partition that appeared after the job started holds only records the job has not seen).

**Discovery** (``PartitionDiscovery``, JobManager thread): lists the topics (a fixed list or a
regular expression that must match a whole topic name) and their partitions; its state is the
set of partitions already turned into splits, so a restore never creates a split twice.

**Reader** (``KafkaPartitionReader``, task thread): one consumer per source subtask, created on
the first poll. ``poll`` takes what librdkafka has fetched (never blocking: an empty answer is
"nothing now"), deserializes values (or whole ``KafkaRecord``s, for a record deserializer),
advances each split's next offset and returns the values with their Kafka timestamps and
partitions (``StampedRecords``): the source operator makes the timestamps the records' event
timestamps and generates watermarks per partition (``per_split_watermarks``). A bounded
split is finished once the consumer's position reached its stop offset (positions also move
past transaction markers, which are never delivered as records). Its snapshot is its
unfinished splits; on checkpoint completion the offsets of that snapshot are committed to the
consumer group, for monitoring only (Flink's ``commit.offsets.on.checkpoint``).
``pending_records`` is Flink's ``pendingRecords``: per split, its stop offset (bounded) or the
partition's high watermark as librdkafka last saw it in a fetch response (read from its cache
at most once a second, on the task thread) less the next offset.
"""

from __future__ import annotations

import logging
import re
import time
import uuid
from dataclasses import dataclass
from typing import Any, NamedTuple

from flintlock.common.errors import FlintlockError

log = logging.getLogger(__name__)

NO_TIMESTAMP = -(2**63)  # the runtime's "no event timestamp" (runtime.network.event_time)
METADATA_TIMEOUT_S = 30.0
HIGH_WATERMARK_REFRESH_S = 1.0  # how often the reader reads the partitions' cached ends


class KafkaSourceError(FlintlockError):
    """The broker refused or failed a request the source needs (metadata, offsets, fetch)."""


class KafkaOffsetResetError(KafkaSourceError):
    """A partition has no committed offset and the reset strategy is NONE."""

    def __init__(self, topic: str, partition: int, group_id: str) -> None:
        super().__init__(topic, partition, group_id)
        self.topic, self.partition, self.group_id = topic, partition, group_id

    def __str__(self) -> str:
        return (f"{self.topic}-{self.partition} has no committed offset for group "
                f"{self.group_id!r} and the offset reset strategy is NONE")


class KafkaDeserializationError(KafkaSourceError):
    """The value deserializer failed on a record: names the topic, partition and offset."""

    def __init__(self, topic: str, partition: int, offset: int, reason: str) -> None:
        super().__init__(topic, partition, offset, reason)
        self.topic, self.partition, self.offset, self.reason = topic, partition, offset, reason

    def __str__(self) -> str:
        return (f"cannot deserialize the record at {self.topic}-{self.partition} offset "
                f"{self.offset}: {self.reason}")


@dataclass(frozen=True, slots=True)
class OffsetSpec:
    """What a ``KafkaOffsetsInitializer`` means: ``kind`` is earliest, latest, committed,
    timestamp or specific; ``reset`` (earliest, latest or none) applies where no offset is
    found; ``offsets`` maps (topic, partition) to an offset for ``specific``."""

    kind: str
    reset: str = "none"
    timestamp_ms: int = 0
    offsets: tuple[tuple[tuple[str, int], int], ...] = ()


@dataclass(frozen=True, slots=True)
class KafkaSourceSettings:
    """What ``KafkaSource.builder()`` collected: client properties (Flink's own keys among
    them), which partitions (topics, a pattern or explicit partitions), where to start and
    stop, and how to deserialize."""

    properties: dict[str, str]
    topics: tuple[str, ...]
    pattern: str | None
    partitions: tuple[tuple[str, int], ...]
    starting: OffsetSpec
    stopping: OffsetSpec | None
    bounded: bool
    deserializer: Any
    client_id_prefix: str


@dataclass(frozen=True, slots=True)
class KafkaPartitionSplit:
    topic: str
    partition: int
    next_offset: int
    stop_offset: int | None = None  # bounded: stop before this offset

    @property
    def split_id(self) -> str:
        return f"{self.topic}-{self.partition}"

    @property
    def finished(self) -> bool:
        return self.stop_offset is not None and self.next_offset >= self.stop_offset


class KafkaRecord(NamedTuple):
    """A consumed record as a ``KafkaRecordDeserializationSchema`` sees it."""

    topic: str
    partition: int
    offset: int
    timestamp: int | None  # epoch ms; None when the record has none
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...]


class StampedRecords(list[Any]):
    """Records with their Kafka timestamps and splits (``timestamps[i]`` and ``splits[i]``
    are those of ``self[i]``), and the splits the poll finished: what the source operator
    needs for per-partition watermarks (``runtime.tasks.split_watermarks``)."""

    __slots__ = ("finished_splits", "splits", "timestamps")

    def __init__(self) -> None:
        super().__init__()
        self.timestamps: list[int] = []
        self.splits: list[str] = []
        self.finished_splits: list[str] = []


def client_config(properties: dict[str, str], client_id: str) -> dict[str, Any]:
    """librdkafka settings from the source's properties (Flink's own keys removed)."""
    config = {k: v for k, v in properties.items() if k not in FLINK_ONLY_KEYS}
    config.setdefault("client.id", client_id)
    return config


def reset_policy(starting: OffsetSpec) -> str:
    """librdkafka's ``auto.offset.reset`` for a reader whose next offset is no longer on the
    broker (deleted by retention): what the starting offsets say, as Flink's source does —
    ``error`` (the task fails) for a reset strategy NONE, never a silent jump."""
    if starting.kind in ("earliest", "latest"):
        return starting.kind
    if starting.kind == "timestamp":
        return "latest"
    return "error" if starting.reset == "none" else starting.reset


FLINK_ONLY_KEYS = frozenset({
    "partition.discovery.interval.ms", "commit.offsets.on.checkpoint", "client.id.prefix",
    "register.consumer.metrics",
})


def _kafka() -> Any:
    try:
        import confluent_kafka
    except ImportError:
        raise FlintlockError("the Kafka connector needs confluent-kafka: pip install "
                             "'flintlock[kafka]'") from None
    return confluent_kafka


def _consumer(config: dict[str, Any]) -> Any:
    settings = dict(config)
    settings.setdefault("group.id", f"flintlock-unused-{uuid.uuid4().hex[:12]}")
    settings.update({"enable.auto.commit": False, "enable.auto.offset.store": False,
                     "enable.partition.eof": False})
    return _kafka().Consumer(settings)


def _record(message: Any) -> KafkaRecord:
    kind, timestamp = message.timestamp()
    return KafkaRecord(message.topic(), message.partition(), message.offset(),
                       timestamp if kind else None, message.key(), message.value(),
                       tuple(message.headers() or ()))


class OffsetResolver:
    """Turns an ``OffsetSpec`` into concrete offsets for a list of partitions."""

    def __init__(self, consumer: Any, group_id: str | None) -> None:
        self._consumer = consumer
        self._group_id = group_id

    def resolve(self, spec: OffsetSpec, partitions: list[tuple[str, int]]) -> list[int]:
        if spec.kind == "earliest":
            return [self._bounds(tp)[0] for tp in partitions]
        if spec.kind == "latest":
            return [self._bounds(tp)[1] for tp in partitions]
        if spec.kind == "timestamp":
            return self._by_time(spec.timestamp_ms, partitions)
        if spec.kind == "committed":
            return self._committed(spec.reset, partitions)
        chosen = dict(spec.offsets)
        return [chosen[tp] if tp in chosen else self._reset(spec.reset, tp)
                for tp in partitions]

    def _bounds(self, tp: tuple[str, int]) -> tuple[int, int]:
        topic_partition = _kafka().TopicPartition(*tp)
        try:
            low, high = self._consumer.get_watermark_offsets(
                topic_partition, timeout=METADATA_TIMEOUT_S, cached=False)
        except _kafka().KafkaException as failed:
            raise KafkaSourceError(f"cannot list the offsets of {tp[0]}-{tp[1]}: "
                                   f"{failed}") from failed
        return int(low), int(high)

    def _by_time(self, timestamp_ms: int, partitions: list[tuple[str, int]]) -> list[int]:
        kafka = _kafka()
        asked = [kafka.TopicPartition(t, p, timestamp_ms) for t, p in partitions]
        try:
            found = self._consumer.offsets_for_times(asked, timeout=METADATA_TIMEOUT_S)
        except kafka.KafkaException as failed:
            raise KafkaSourceError(f"cannot find offsets by timestamp: {failed}") from failed
        # No record at or after the timestamp: start at the end, as Flink does.
        return [tp.offset if tp.offset >= 0 else self._bounds(p)[1]
                for tp, p in zip(found, partitions, strict=True)]

    def _committed(self, reset: str, partitions: list[tuple[str, int]]) -> list[int]:
        kafka = _kafka()
        try:
            found = self._consumer.committed([kafka.TopicPartition(t, p) for t, p in partitions],
                                             timeout=METADATA_TIMEOUT_S)
        except kafka.KafkaException as failed:
            raise KafkaSourceError(f"cannot fetch committed offsets: {failed}") from failed
        return [tp.offset if tp.offset >= 0 else self._reset(reset, p)
                for tp, p in zip(found, partitions, strict=True)]

    def _reset(self, reset: str, tp: tuple[str, int]) -> int:
        if reset == "earliest":
            return self._bounds(tp)[0]
        if reset == "latest":
            return self._bounds(tp)[1]
        raise KafkaOffsetResetError(tp[0], tp[1], self._group_id or "")


class PartitionDiscovery:
    """Finds the source's partitions and makes splits of new ones (JobManager thread)."""

    def __init__(self, config: dict[str, Any], topics: tuple[str, ...], pattern: str | None,
                 starting: OffsetSpec, stopping: OffsetSpec | None,
                 known: frozenset[tuple[str, int]] = frozenset(),
                 partitions: tuple[tuple[str, int], ...] = ()) -> None:
        self._config = config
        self._topics = topics
        self._chosen = partitions  # set_partitions: only these
        self._pattern = re.compile(pattern) if pattern is not None else None
        self._starting = starting
        self._stopping = stopping
        self._known = set(known)

    def initial(self) -> list[Any]:
        return self._splits(self._starting)

    def discover(self) -> list[Any]:
        return self._splits(OffsetSpec("earliest"))

    def snapshot(self) -> Any:
        return frozenset(self._known)

    def _splits(self, starting: OffsetSpec) -> list[Any]:
        consumer = _consumer(self._config)
        try:
            new = [tp for tp in self._partitions(consumer) if tp not in self._known]
            if not new:
                return []
            resolver = OffsetResolver(consumer, self._config.get("group.id"))
            starts = resolver.resolve(starting, new)
            stops: list[int | None] = (
                list(resolver.resolve(self._stopping, new)) if self._stopping is not None
                else [None] * len(new))
        finally:
            consumer.close()
        self._known.update(new)
        return [KafkaPartitionSplit(t, p, start, stop)
                for (t, p), start, stop in zip(new, starts, stops, strict=True)]

    def _partitions(self, consumer: Any) -> list[tuple[str, int]]:
        try:
            metadata = consumer.list_topics(timeout=METADATA_TIMEOUT_S)
        except _kafka().KafkaException as failed:
            raise KafkaSourceError(f"cannot list the broker's topics: {failed}") from failed
        if self._chosen:
            return [(t, p) for t, p in self._chosen
                    if t in metadata.topics and p in metadata.topics[t].partitions]
        if self._pattern is not None:
            names = sorted(t for t in metadata.topics if self._pattern.fullmatch(t))
        else:
            names = [t for t in self._topics if t in metadata.topics]
        return [(topic, p) for topic in names
                for p in sorted(metadata.topics[topic].partitions)]


class KafkaPartitionReader:
    """Reads its partition splits (the runtime's SourceReader; task thread)."""

    per_split_watermarks = True  # watermarks per partition, as Flink's Kafka source

    def __init__(self, config: dict[str, Any], deserializer: Any,
                 commit_on_checkpoint: bool, whole_record: bool = False) -> None:
        self._config = config
        self._deserialize = deserializer.deserialize
        self._whole_record = whole_record  # the deserializer takes a KafkaRecord
        self._commit = commit_on_checkpoint and "group.id" in config
        self._splits: dict[tuple[str, int], KafkaPartitionSplit] = {}  # unfinished
        self._snapshots: dict[int, list[KafkaPartitionSplit]] = {}  # awaiting commit
        self._no_more_splits = False
        self._consumer: Any = None
        self._assigned = False  # whether the consumer's assignment matches _splits
        self._finished_now: list[str] = []  # split ids finished since the last poll
        self._high_watermarks: dict[tuple[str, int], int] = {}  # task thread writes
        self._next_refresh_s = 0.0

    def restore(self, state: list[Any]) -> None:
        self.add_splits(state)

    def add_splits(self, splits: list[Any]) -> None:
        for split in splits:
            if not split.finished:
                self._splits[(split.topic, split.partition)] = split
                self._assigned = False

    def notify_no_more_splits(self) -> None:
        self._no_more_splits = True

    def poll(self, max_records: int) -> tuple[list[Any], bool]:
        out = StampedRecords()
        if self._splits:
            consumer = self._ready_consumer()
            messages = consumer.consume(num_messages=max_records, timeout=0)
            if messages:
                self._take(messages, out)
                self._refresh_high_watermarks(consumer)
            else:
                self._finish_reached(consumer)
        out.finished_splits, self._finished_now = self._finished_now, []
        return out, self._no_more_splits and not self._splits

    def pending_records(self) -> int:
        """Records left in the splits as far as known (the heartbeat thread: reads copies)."""
        ends = self._high_watermarks
        pending = 0
        for split in tuple(self._splits.values()):
            end = split.stop_offset if split.stop_offset is not None else ends.get(
                (split.topic, split.partition))
            if end is not None:
                pending += max(0, end - split.next_offset)
        return pending

    def _refresh_high_watermarks(self, consumer: Any) -> None:
        """The unbounded splits' ends from librdkafka's cache (no request), once a second."""
        now = time.monotonic()
        if now < self._next_refresh_s:
            return
        self._next_refresh_s = now + HIGH_WATERMARK_REFRESH_S
        kafka = _kafka()
        ends = {}
        for key, split in tuple(self._splits.items()):
            if split.stop_offset is None:
                try:
                    high = consumer.get_watermark_offsets(kafka.TopicPartition(*key),
                                                          cached=True)[1]
                except kafka.KafkaException as failed:  # only the metric goes without it
                    log.debug("no cached high watermark of %s-%s: %s", *key, failed)
                    continue
                if high >= 0:
                    ends[key] = int(high)
        self._high_watermarks = ends

    def _ready_consumer(self) -> Any:
        if self._consumer is None:
            self._consumer = _consumer(self._config)
        if not self._assigned:
            kafka = _kafka()
            self._consumer.assign([kafka.TopicPartition(s.topic, s.partition, s.next_offset)
                                   for s in self._splits.values()])
            self._assigned = True
        return self._consumer

    def _take(self, messages: list[Any], out: StampedRecords) -> None:
        """Deserializes a batch of messages into ``out`` and advances the splits once per
        partition (no object per record beyond the value)."""
        splits, nexts, done = self._splits, {}, set()
        deserialize, whole = self._deserialize, self._whole_record
        for message in messages:
            if message.error() is not None:
                self._check_error(message)
                continue
            key = (message.topic(), message.partition())
            split = splits.get(key)
            if split is None or key in done:
                continue  # a partition this reader no longer reads, or past its stop
            # An offset below the split's can only follow an offset reset (the next offset
            # was deleted by retention; auto.offset.reset, see reset_policy): take it.
            offset, stop = message.offset(), split.stop_offset
            if stop is not None and offset >= stop:
                done.add(key)
                continue
            try:
                value = deserialize(_record(message) if whole else message.value())
            except Exception as failed:
                raise KafkaDeserializationError(key[0], key[1], offset,
                                                f"{type(failed).__name__}: {failed}") from failed
            nexts[key] = offset + 1
            if value is not None:  # a deserializer that skips malformed records returns None
                kind, timestamp = message.timestamp()
                out.append(value)
                out.timestamps.append(timestamp if kind else NO_TIMESTAMP)
                out.splits.append(split.split_id)
            if stop is not None and offset + 1 >= stop:
                done.add(key)
        for key, next_offset in nexts.items():
            split = splits[key]
            splits[key] = KafkaPartitionSplit(key[0], key[1], next_offset, split.stop_offset)
        for key in done:
            self._finish(splits[key])

    @staticmethod
    def _check_error(message: Any) -> None:
        """Connection trouble is logged (librdkafka reconnects by itself, as Flink's source
        rides out a broker restart); any other error fails the task."""
        error = message.error()
        kafka = _kafka()
        transient = {kafka.KafkaError._TRANSPORT, kafka.KafkaError._ALL_BROKERS_DOWN,
                     kafka.KafkaError._RESOLVE, kafka.KafkaError._TIMED_OUT}
        if not error.fatal() and (error.retriable() or error.code() in transient):
            log.warning("Kafka source: %s (retrying)", error.str())
            return
        raise KafkaSourceError(f"reading {message.topic()}-{message.partition()}: "
                               f"{error.str()}")

    def _finish_reached(self, consumer: Any) -> None:
        """Bounded splits whose consumer position passed the stop offset (e.g. over a
        transaction marker, which is never delivered)."""
        bounded = [s for s in self._splits.values() if s.stop_offset is not None]
        if not bounded:
            return
        kafka = _kafka()
        positions = consumer.position([kafka.TopicPartition(s.topic, s.partition)
                                       for s in bounded])
        for split, position in zip(bounded, positions, strict=True):
            if position.offset >= 0 and position.offset >= (split.stop_offset or 0):
                self._finish(split)

    def _finish(self, split: KafkaPartitionSplit) -> None:
        del self._splits[(split.topic, split.partition)]
        self._finished_now.append(split.split_id)
        self._assigned = False

    def snapshot_state(self, checkpoint_id: int) -> list[Any]:
        splits = list(self._splits.values())
        if self._commit:
            self._snapshots[checkpoint_id] = splits
        return splits

    def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        """Commits the offsets of that checkpoint to the consumer group (monitoring only)."""
        done = [c for c in self._snapshots if c <= checkpoint_id]
        if not done or self._consumer is None:
            return
        kafka = _kafka()
        splits = self._snapshots[max(done)]
        for c in done:
            del self._snapshots[c]
        if splits:
            self._consumer.commit(offsets=[kafka.TopicPartition(s.topic, s.partition,
                                                                s.next_offset)
                                           for s in splits], asynchronous=True)

    def close(self) -> None:
        if self._consumer is not None:
            self._consumer.close()
            self._consumer = None
