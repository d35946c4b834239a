"""The ``KafkaSink`` writers: one librdkafka producer per sink subtask, for each of the three
delivery guarantees.

**NONE**: records are handed to the producer as they come; a checkpoint waits for nothing.
**AT_LEAST_ONCE**: the same, and every checkpoint flushes the producer (``snapshot_state``
returns only once the broker acknowledged every record before the barrier, and raises if one
failed), so a restore can only repeat records, never lose one.

**EXACTLY_ONCE**: two-phase commit on Kafka transactions, one transaction per checkpoint per
subtask. Pre-commit (``snapshot_state(n)``): the records since the last checkpoint become a
``StagedBatch`` of checkpoint ``n`` in the writer's state. Commit (``commit(n)``, on
notify-complete): each staged batch up to ``n`` is written in one transaction of the
subtask's transactional id ``<prefix>-<subtask>``, together with a *commit marker*: the
transaction also commits, through ``send_offsets_to_transaction``, the offset ``n`` of a
consumer group ``<transactional id>.commits`` on the marker partition. Kafka makes the records
and the marker visible atomically. A restored writer first fences every transactional id whose
state it restored (``init_transactions`` aborts that id's open transaction of an earlier
attempt), then reads the marker: a batch whose checkpoint is at or below the committed marker
was committed before the failure and is dropped; any other is written again, in a new
transaction. So nothing is lost and nothing is written twice, under any single failure, on a
broker that enforces transactions.

Why the records wait in the checkpoint rather than in an open transaction, as in Flink: Flink
commits a pre-committed transaction after a failure by resuming it with its producer id and
epoch from another process; librdkafka cannot resume a transaction. The cost is state: the
records of one checkpoint interval live in the sink's checkpointed state, and they reach Kafka
when the checkpoint completes (what a ``read_committed`` reader sees in Flink too).

The marker partition is partition 0 of the sink's topic (exactly once needs a fixed topic).
Every writer's snapshot also holds a ``WriterIdentity`` entry, so that after a restore at a
lower parallelism the ids of subtasks that no longer exist are still fenced (their open
transactions would otherwise block ``read_committed`` readers until they time out).

All of it belongs to the sink subtask's task thread.
"""

from __future__ import annotations

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
    marker_topic: str | None = None  # exactly once: the serializer's (fixed) topic


@dataclass(frozen=True, slots=True)
class StagedBatch:
    """Serialized records of one checkpoint: (topic, key, value, timestamp or None)."""

    transactional_id: str
    checkpoint_id: int
    records: tuple[tuple[str, bytes | None, bytes | None, int | None], ...]


@dataclass(frozen=True, slots=True)
class WriterIdentity:
    transactional_id: str


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
        self._id = f"{settings.transactional_id_prefix}-{subtask_index}"
        self._buffer: list[tuple[str, bytes | None, bytes | None, int | None]] = []
        self._staged: list[StagedBatch] = []
        self._end_rule = EndOfInputRule()

    def set_checkpointing(self, enabled: bool) -> None:
        self._end_rule.set_checkpointing(enabled)

    def restore(self, state: list[Any]) -> None:
        if state:
            self._end_rule.saw_checkpoint()
        ids = {e.transactional_id for e in state}
        batches = [e for e in state if isinstance(e, StagedBatch)]
        for transactional_id in sorted(ids):
            self._recover(transactional_id,
                          [b for b in batches if b.transactional_id == transactional_id])

    def write(self, records: list[Any]) -> None:
        self._buffer.extend(self._serialize_all(records))

    def snapshot_state(self, checkpoint_id: int) -> list[Any]:
        self._end_rule.saw_checkpoint()
        if self._buffer:
            self._staged.append(StagedBatch(self._id, checkpoint_id, tuple(self._buffer)))
            self._buffer = []
        return [WriterIdentity(self._id), *self._staged]

    def commit(self, checkpoint_id: int) -> None:
        ready = [b for b in self._staged if b.checkpoint_id <= checkpoint_id]
        for batch in ready:
            self._transact(self._own_producer(), batch)
        self._staged = [b for b in self._staged if b.checkpoint_id > checkpoint_id]

    def end_input(self) -> None:
        """Without checkpointing, writes everything in one transaction; with checkpointing,
        the final checkpoint does."""
        if self._buffer and self._end_rule.publish_at_end():
            batch = StagedBatch(self._id, 0, tuple(self._buffer))
            self._buffer = []
            self._transact(self._own_producer(), batch, marker=False)

    def _own_producer(self) -> Any:
        if self._producer is None:
            self._producer = self._fenced_producer(self._id)
        return self._producer

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

    def _recover(self, transactional_id: str, batches: list[StagedBatch]) -> None:
        """Fences ``transactional_id`` and writes its batches that were not committed."""
        own = transactional_id == self._id
        producer = self._own_producer() if own else self._fenced_producer(transactional_id)
        committed = self._committed_marker(transactional_id)
        for batch in sorted(batches, key=lambda b: b.checkpoint_id):
            if batch.checkpoint_id > committed:
                if own:
                    self._staged.append(batch)  # committed with its checkpoint, again
                else:
                    self._transact(producer, batch)
        if not own:
            producer.flush(FLUSH_TIMEOUT_S)

    def _committed_marker(self, transactional_id: str) -> int:
        topic = self._settings.marker_topic
        if topic is None:
            return -1
        kafka = _kafka()
        consumer = kafka.Consumer({**self._marker_consumer_config(transactional_id)})
        try:
            found = consumer.committed([kafka.TopicPartition(topic, 0)],
                                       timeout=TRANSACTION_TIMEOUT_S)
        finally:
            consumer.close()
        return int(found[0].offset)

    def _marker_consumer_config(self, transactional_id: str) -> dict[str, Any]:
        config = {k: v for k, v in self._settings.config.items()
                  if k not in PRODUCER_ONLY_KEYS}
        config.update({"group.id": f"{transactional_id}.commits", "enable.auto.commit": False,
                       "isolation.level": "read_committed"})
        return config

    def _transact(self, producer: Any, batch: StagedBatch, marker: bool = True) -> None:
        kafka = _kafka()
        topic = self._settings.marker_topic
        try:
            producer.begin_transaction()
            self._produce_all(producer, batch.records)
            if marker and topic is not None:
                consumer = kafka.Consumer(self._marker_consumer_config(batch.transactional_id))
                try:
                    producer.send_offsets_to_transaction(
                        [kafka.TopicPartition(topic, 0, batch.checkpoint_id)],
                        consumer.consumer_group_metadata(), TRANSACTION_TIMEOUT_S)
                finally:
                    consumer.close()
            producer.commit_transaction(TRANSACTION_TIMEOUT_S)
        except kafka.KafkaException as failed:
            raise KafkaSinkError(f"transaction of checkpoint {batch.checkpoint_id} "
                                 f"({batch.transactional_id}) failed: {failed}") from failed
        self._errors.raise_any()


PRODUCER_ONLY_KEYS = frozenset({
    "acks", "linger.ms", "batch.size", "batch.num.messages", "compression.type",
    "compression.codec", "enable.idempotence", "transactional.id", "transaction.timeout.ms",
    "partitioner", "queue.buffering.max.messages", "queue.buffering.max.kbytes",
    "queue.buffering.max.ms", "message.timeout.ms", "delivery.timeout.ms", "retries",
    "message.send.max.retries", "retry.backoff.ms", "max.in.flight.requests.per.connection",
    "max.in.flight",
})

