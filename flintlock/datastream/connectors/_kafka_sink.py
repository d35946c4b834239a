"""The ``KafkaSink`` writers: one librdkafka producer per sink subtask, for each of the three
delivery guarantees.

**NONE**: records are handed to the producer as they come; a checkpoint waits for nothing.
**AT_LEAST_ONCE**: the same, and every checkpoint flushes the producer (``snapshot_state``
returns only once the broker acknowledged every record before the barrier, and raises if one
failed), so a restore can only repeat records, never lose one.

**EXACTLY_ONCE**: two-phase commit on Kafka transactions, one transaction per checkpoint per
subtask. Pre-commit (``snapshot_state(n)``): the records since the last checkpoint become a
``StagedBatch`` of checkpoint ``n`` in the writer's state. Commit (``commit(n)``, on
notify-complete): each staged batch up to ``n`` is written in one transaction of the writer's
transactional id, together with a *commit marker*: the transaction also commits, through
``send_offsets_to_transaction``, the offset ``n`` of a consumer group
``<transactional id>.commits`` on partition 0 of the topic of the first record the writer
staged (recorded in its state). Kafka makes the records and the marker visible atomically.

Recovery: a writer's whole state is one ``WriterState`` entry (its transactional id and staged
batches), so however the state is redistributed, one restored writer gets all of it. For each
restored entry the writer fences that id (``init_transactions`` aborts the open transaction of
the failed attempt), reads its marker, writes every batch above the marker in a transaction of
that id, and is done with the id: the batches belong to a completed checkpoint, so they are
committed at the restore, as the ``FileSink`` commits restored pending files. A batch at or
below the marker was committed before the failure and is dropped. Then, as Flink's writer
does at its start, the writer initializes the producer of its own id, before that id can be
in any checkpoint: a later restore of the id fences that producer, so a writer of a failed
attempt that lives on (a late notify-complete) fails instead of writing a batch again. Nothing
is lost and nothing is written twice under any single failure, on a broker that enforces
transactions (tests/unit/connectors/test_kafka_transactions.py checks the order of the calls
against a fake broker that does).

Transactional ids are ``<prefix>-<subtask>-<8 hex digits>``, new for every writer instance:
after a rescale, the entry of old subtask 1 may land on new subtask 0 while a new subtask 1
runs; with ids per subtask index the two would fence each other.

Why the records wait in the checkpoint rather than in an open transaction, as in Flink: Flink
commits a pre-committed transaction after a failure by resuming it with its producer id and
epoch from another process; librdkafka cannot resume a transaction. The cost is state: the
records of one checkpoint interval live in the sink's checkpointed state, and they reach Kafka
when the checkpoint completes (what a ``read_committed`` reader sees in Flink too).

All of it belongs to the sink subtask's task thread.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from flintlock.common.errors import FlintlockError
from flintlock.datastream.connectors._delivery import EndOfInputRule
from flintlock.datastream.connectors._kafka_source import NO_TIMESTAMP, _kafka

FLUSH_TIMEOUT_S = 60.0
TRANSACTION_TIMEOUT_S = 60.0


class KafkaSinkError(FlintlockError):
    """The broker refused records or a transaction step of the sink."""


@dataclass(frozen=True, slots=True)
class KafkaSinkSettings:
    config: dict[str, Any]  # librdkafka producer settings
    serializer: Any  # KafkaRecordSerializationSchema
    guarantee: str  # "none", "at-least-once" or "exactly-once"
    transactional_id_prefix: str = "flintlock-kafka-sink"


@dataclass(frozen=True, slots=True)
class StagedBatch:
    """Serialized records of one checkpoint: (topic, key, value, timestamp or None)."""

    checkpoint_id: int
    records: tuple[tuple[str, bytes | None, bytes | None, int | None], ...]


@dataclass(frozen=True, slots=True)
class WriterState:
    """All an exactly-once writer checkpoints, in one entry (see "Recovery")."""

    transactional_id: str
    batches: tuple[StagedBatch, ...]
    marker_topic: str | None  # where its commit marker lives (None: nothing staged yet)


class _DeliveryErrors:
    """Collects delivery failures reported by the producer's callbacks."""

    def __init__(self) -> None:
        self.failures: list[str] = []

    def __call__(self, error: Any, message: Any) -> None:
        if error is not None:
            self.failures.append(f"{message.topic()}: {error.str()}")

    def raise_any(self) -> None:
        if self.failures:
            first, count = self.failures[0], len(self.failures)
            self.failures = []
            raise KafkaSinkError(f"{count} record(s) were not delivered; first: {first}")


class _ProducingWriter:
    takes_timestamps = True  # records' event timestamps become the Kafka timestamps

    def __init__(self, settings: KafkaSinkSettings) -> None:
        self._settings = settings
        self._serialize: Callable[[Any], tuple[str, bytes | None, bytes | None, int | None]] = (
            settings.serializer.serialize)
        self._errors = _DeliveryErrors()
        self._producer: Any = None

    def _serialize_all(self, records: list[Any]) -> list[Any]:
        """Serialized records; a record's event timestamp (if it has one) is its Kafka
        timestamp, as in Flink."""
        serialized = list(map(self._serialize, records))
        stamps = getattr(records, "timestamps", None)
        if stamps is not None:
            serialized = [(topic, key, value, ts if ts > NO_TIMESTAMP else None)
                          for (topic, key, value, _), ts in zip(serialized, stamps,
                                                               strict=True)]
        return serialized

    def _produce_all(self, producer: Any, records: Any) -> None:
        errors = self._errors
        for topic, key, value, timestamp in records:
            while True:
                try:
                    producer.produce(topic, value, key, on_delivery=errors,
                                     timestamp=timestamp or 0)
                    break
                except BufferError:  # the local queue is full: let deliveries drain it
                    producer.poll(0.1)
        producer.poll(0)

    def _flush(self, producer: Any) -> None:
        remaining = producer.flush(FLUSH_TIMEOUT_S)
        if remaining:
            raise KafkaSinkError(f"{remaining} record(s) not acknowledged within "
                                 f"{FLUSH_TIMEOUT_S} s")
        self._errors.raise_any()

    def close(self) -> None:
        if self._producer is not None:
            self._producer.flush(FLUSH_TIMEOUT_S)
            self._producer = None


class AtLeastOnceWriter(_ProducingWriter):
    """NONE and AT_LEAST_ONCE (which also flushes at every checkpoint)."""

    def restore(self, state: list[Any]) -> None:
        """Nothing to restore: every record was acknowledged before the checkpoint."""

    def write(self, records: list[Any]) -> None:
        if self._producer is None:
            self._producer = _kafka().Producer(self._settings.config)
        self._produce_all(self._producer, self._serialize_all(records))
        self._errors.raise_any()

    def snapshot_state(self, checkpoint_id: int) -> list[Any]:
        if self._producer is not None and self._settings.guarantee == "at-least-once":
            self._flush(self._producer)
        return []

    def commit(self, checkpoint_id: int) -> None:
        """Nothing is held back."""

    def end_input(self) -> None:
        if self._producer is not None:
            self._flush(self._producer)


class ExactlyOnceWriter(_ProducingWriter):
    def __init__(self, settings: KafkaSinkSettings, subtask_index: int) -> None:
        super().__init__(settings)
        self._id = f"{settings.transactional_id_prefix}-{subtask_index}-{uuid.uuid4().hex[:8]}"
        self._buffer: list[tuple[str, bytes | None, bytes | None, int | None]] = []
        self._staged: list[StagedBatch] = []
        self._marker_topic: str | None = None  # the first staged record's topic, then fixed
        self._marker_group: Any = None  # the consumer whose group metadata marks commits
        self._end_rule = EndOfInputRule()

    @property
    def transactional_id(self) -> str:
        return self._id

    def set_checkpointing(self, enabled: bool) -> None:
        self._end_rule.set_checkpointing(enabled)

    def restore(self, state: list[Any]) -> None:
        if state:
            self._end_rule.saw_checkpoint()
        for entry in sorted(state, key=lambda e: e.transactional_id):
            self._recover(entry)
        # Initialized now, before its id can be in a checkpoint: a restore of that id fences
        # this producer, so a writer of a failed attempt that lives on cannot commit a batch
        # the restore committed (see "Recovery").
        self._producer = self._fenced_producer(self._id)

    def write(self, records: list[Any]) -> None:
        self._buffer.extend(self._serialize_all(records))

    def snapshot_state(self, checkpoint_id: int) -> list[Any]:
        self._end_rule.saw_checkpoint()
        if self._buffer:
            if self._marker_topic is None:
                self._marker_topic = self._buffer[0][0]
            self._staged.append(StagedBatch(checkpoint_id, tuple(self._buffer)))
            self._buffer = []
        return [WriterState(self._id, tuple(self._staged), self._marker_topic)]

    def commit(self, checkpoint_id: int) -> None:
        ready = [b for b in self._staged if b.checkpoint_id <= checkpoint_id]
        if ready and self._producer is None:  # restore() was not called
            self._producer = self._fenced_producer(self._id)
        if ready and self._marker_group is None:
            self._marker_group = self._marker_consumer(self._id)
        for batch in ready:
            self._transact(self._producer, self._marker_group, self._marker_topic, batch)
        self._staged = [b for b in self._staged if b.checkpoint_id > checkpoint_id]

    def end_input(self) -> None:
        """Without checkpointing, writes everything in one transaction (no marker: nothing
        is restored without checkpoints); with checkpointing, the final checkpoint does."""
        if self._buffer and self._end_rule.publish_at_end():
            if self._producer is None:
                self._producer = self._fenced_producer(self._id)
            batch = StagedBatch(0, tuple(self._buffer))
            self._buffer = []
            self._transact(self._producer, None, None, batch)

    def close(self) -> None:
        super().close()
        if self._marker_group is not None:
            self._marker_group.close()
            self._marker_group = None

    def _fenced_producer(self, transactional_id: str) -> Any:
        config = dict(self._settings.config)
        config["transactional.id"] = transactional_id
        producer = _kafka().Producer(config)
        try:
            producer.init_transactions(TRANSACTION_TIMEOUT_S)
        except _kafka().KafkaException as failed:
            raise KafkaSinkError(f"cannot initialize transactions for {transactional_id!r}: "
                                 f"{failed}") from failed
        return producer

    def _recover(self, entry: WriterState) -> None:
        """Fences the entry's id, then writes its batches that were not committed."""
        producer = self._fenced_producer(entry.transactional_id)
        marker_group = self._marker_consumer(entry.transactional_id)
        try:
            committed = self._committed_marker(marker_group, entry.marker_topic)
            for batch in sorted(entry.batches, key=lambda b: b.checkpoint_id):
                if batch.checkpoint_id > committed:
                    self._transact(producer, marker_group, entry.marker_topic, batch)
        finally:
            marker_group.close()
            producer.flush(FLUSH_TIMEOUT_S)

    def _marker_consumer(self, transactional_id: str) -> Any:
        config = {k: v for k, v in self._settings.config.items()
                  if k not in PRODUCER_ONLY_KEYS}
        config.update({"group.id": f"{transactional_id}.commits", "enable.auto.commit": False,
                       "isolation.level": "read_committed"})
        return _kafka().Consumer(config)

    def _committed_marker(self, marker_group: Any, topic: str | None) -> int:
        if topic is None:
            return -1
        kafka = _kafka()
        try:
            found = marker_group.committed([kafka.TopicPartition(topic, 0)],
                                           timeout=TRANSACTION_TIMEOUT_S)
        except kafka.KafkaException as failed:
            raise KafkaSinkError(f"cannot read the commit marker: {failed}") from failed
        return int(found[0].offset)

    def _transact(self, producer: Any, marker_group: Any, topic: str | None,
                  batch: StagedBatch) -> None:
        kafka = _kafka()
        try:
            producer.begin_transaction()
            self._produce_all(producer, batch.records)
            if marker_group is not None and topic is not None:
                producer.send_offsets_to_transaction(
                    [kafka.TopicPartition(topic, 0, batch.checkpoint_id)],
                    marker_group.consumer_group_metadata(), TRANSACTION_TIMEOUT_S)
            producer.commit_transaction(TRANSACTION_TIMEOUT_S)
        except kafka.KafkaException as failed:
            raise KafkaSinkError(f"the transaction of checkpoint {batch.checkpoint_id} "
                                 f"failed: {failed}") from failed
        self._errors.raise_any()


PRODUCER_ONLY_KEYS = frozenset({
    "acks", "linger.ms", "batch.size", "batch.num.messages", "compression.type",
    "compression.codec", "enable.idempotence", "transactional.id", "transaction.timeout.ms",
    "partitioner", "queue.buffering.max.messages", "queue.buffering.max.kbytes",
    "queue.buffering.max.ms", "message.timeout.ms", "delivery.timeout.ms", "retries",
    "message.send.max.retries", "retry.backoff.ms", "max.in.flight.requests.per.connection",
    "max.in.flight",
})

