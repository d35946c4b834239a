"""A recording fake of the part of ``confluent_kafka`` the ``KafkaSink`` writers use, with a
broker that enforces transactions the way Kafka does (KIP-98), reduced to one process.

librdkafka's mock cluster (kafka_broker.py) speaks the real protocol but does not enforce
transactions: a ``read_committed`` reader sees aborted and open transactions' records, an older
producer is not fenced, and offsets committed inside a transaction are ignored. This fake does
the opposite: no protocol at all, but the rules a broker applies, so the sink's *order of
calls* can be checked against them:

* ``init_transactions`` of a transactional id bumps its epoch: an open transaction of that id
  is aborted (Kafka's "abort of a lingering transaction" at ``InitProducerId``) and every
  older producer of the id is fenced (its next transactional call raises);
* ``produce`` on a transactional producer needs an open transaction; ``begin_transaction``
  needs ``init_transactions`` first and no open transaction;
* records and offsets sent in a transaction become visible together at
  ``commit_transaction`` (``committed`` is what a ``read_committed`` reader sees) and vanish at
  an abort.

Every client call is appended to ``FakeKafka.calls`` as ``(transactional id or group id,
call)``, and broker-side effects as ``(id, "aborted lingering transaction")``. ``crash_at``
makes the n-th call (counted from 0, before it takes effect) raise ``Crash``: the process
died there, and the test drops the writer as a failed attempt's.

What it is not: evidence about a real broker. It shows the sink keeps Kafka's rules, if Kafka
keeps them.
"""

from __future__ import annotations

import types
from dataclasses import dataclass, field
from typing import Any

OFFSET_INVALID = -1001  # confluent_kafka's "no committed offset"


class KafkaException(Exception):
    """What the fake's clients raise where confluent_kafka's would."""


class Crash(BaseException):  # not an Exception: the sink must not catch it
    """The process died at this call (``FakeKafka.crash_at``)."""


class TopicPartition:
    def __init__(self, topic: str, partition: int = -1, offset: int = OFFSET_INVALID) -> None:
        self.topic = topic
        self.partition = partition
        self.offset = offset

    def __repr__(self) -> str:
        return f"TopicPartition({self.topic!r}, {self.partition}, {self.offset})"


@dataclass
class _Transaction:
    records: list[tuple[str, bytes | None, bytes | None]] = field(default_factory=list)
    offsets: dict[tuple[str, str, int], int] = field(default_factory=dict)


@dataclass
class FakeKafka:
    """The broker and the call log (see the module docstring)."""

    calls: list[tuple[str | None, str]] = field(default_factory=list)
    committed: list[tuple[str, bytes | None, bytes | None]] = field(default_factory=list)
    offsets: dict[tuple[str, str, int], int] = field(default_factory=dict)
    epochs: dict[str, int] = field(default_factory=dict)
    open: dict[str, _Transaction] = field(default_factory=dict)
    crash_at: int | None = None
    steps: int = 0  # crash points passed so far

    def step(self, who: str | None, call: str) -> None:
        """A crash point, then the call's record in the log."""
        if self.crash_at is not None and self.steps == self.crash_at:
            self.steps += 1
            raise Crash(f"crashed before {who}: {call}")
        self.steps += 1
        self.calls.append((who, call))

    def module(self) -> types.SimpleNamespace:
        """What ``_kafka()`` returns in place of ``confluent_kafka``."""
        broker = self

        class Producer(_Producer):
            def __init__(self, config: dict[str, Any]) -> None:
                super().__init__(broker, config)

        class Consumer(_Consumer):
            def __init__(self, config: dict[str, Any]) -> None:
                super().__init__(broker, config)

        return types.SimpleNamespace(Producer=Producer, Consumer=Consumer,
                                     TopicPartition=TopicPartition,
                                     KafkaException=KafkaException)

    def lingering(self) -> list[str]:
        """Transactional ids with a transaction still open (it would hold back every
        ``read_committed`` reader of its partitions until the broker times it out)."""
        return sorted(self.open)


class _Producer:
    def __init__(self, broker: FakeKafka, config: dict[str, Any]) -> None:
        self._broker = broker
        self._id: str | None = config.get("transactional.id")
        self._epoch: int | None = None
        self._deliveries: list[Any] = []

    def _transactional(self, call: str) -> None:
        self._broker.step(self._id, call)
        if self._id is None:
            raise KafkaException(f"{call}: the producer has no transactional.id")
        if self._epoch is None:
            raise KafkaException(f"{call} before init_transactions")
        if self._broker.epochs[self._id] != self._epoch:
            raise KafkaException(f"{call}: producer fenced (a newer one of {self._id!r} "
                                 "called init_transactions)")

    def _transaction(self, call: str) -> _Transaction:
        self._transactional(call)
        assert self._id is not None
        if self._id not in self._broker.open:
            raise KafkaException(f"{call} outside a transaction")
        return self._broker.open[self._id]

    def init_transactions(self, timeout: float | None = None) -> None:
        self._broker.step(self._id, "init_transactions")
        if self._id is None:
            raise KafkaException("init_transactions: the producer has no transactional.id")
        if self._broker.open.pop(self._id, None) is not None:
            self._broker.calls.append((self._id, "aborted lingering transaction"))
        self._epoch = self._broker.epochs.get(self._id, 0) + 1
        self._broker.epochs[self._id] = self._epoch

    def begin_transaction(self) -> None:
        self._transactional("begin_transaction")
        assert self._id is not None
        if self._id in self._broker.open:
            raise KafkaException("begin_transaction inside an open transaction")
        self._broker.open[self._id] = _Transaction()

    def produce(self, topic: str, value: bytes | None = None, key: bytes | None = None,
                on_delivery: Any = None, timestamp: int = 0, **_: Any) -> None:
        record = (topic, key, value)
        if self._id is None:
            self._broker.step(None, "produce")
            self._broker.committed.append(record)
        else:
            self._transaction("produce").records.append(record)
        if on_delivery is not None:
            self._deliveries.append(on_delivery)

    def send_offsets_to_transaction(self, offsets: list[TopicPartition], metadata: Any,
                                    timeout: float | None = None) -> None:
        transaction = self._transaction("send_offsets_to_transaction")
        for tp in offsets:
            transaction.offsets[metadata.group_id, tp.topic, tp.partition] = tp.offset

    def commit_transaction(self, timeout: float | None = None) -> None:
        transaction = self._transaction("commit_transaction")
        assert self._id is not None
        del self._broker.open[self._id]
        self._broker.committed.extend(transaction.records)
        self._broker.offsets.update(transaction.offsets)

    def abort_transaction(self, timeout: float | None = None) -> None:
        self._transaction("abort_transaction")
        assert self._id is not None
        del self._broker.open[self._id]

    def poll(self, timeout: float | None = None) -> int:
        delivered, self._deliveries = self._deliveries, []
        for callback in delivered:
            callback(None, None)
        return len(delivered)

    def flush(self, timeout: float | None = None) -> int:
        self.poll()
        return 0


@dataclass(frozen=True)
class _GroupMetadata:
    group_id: str


class _Consumer:
    def __init__(self, broker: FakeKafka, config: dict[str, Any]) -> None:
        self._broker = broker
        self._group: str = config["group.id"]

    def committed(self, partitions: list[TopicPartition],
                  timeout: float | None = None) -> list[TopicPartition]:
        self._broker.step(self._group, "committed")
        return [TopicPartition(tp.topic, tp.partition,
                               self._broker.offsets.get((self._group, tp.topic, tp.partition),
                                                        OFFSET_INVALID))
                for tp in partitions]

    def consumer_group_metadata(self) -> _GroupMetadata:
        return _GroupMetadata(self._group)

    def close(self) -> None:
        pass
