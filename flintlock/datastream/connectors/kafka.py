"""Kafka source and sink under PyFlink's module path (``pyflink.datastream.connectors.kafka``),
on librdkafka through ``confluent-kafka`` (the ``kafka`` extra; docs/decisions.md says why).

Reading::

    source = (KafkaSource.builder()
              .set_bootstrap_servers("broker:9092")
              .set_topics("orders")                     # or .set_topic_pattern("orders-.*")
              .set_group_id("my-job")
              .set_starting_offsets(KafkaOffsetsInitializer.earliest())
              .set_value_only_deserializer(SimpleStringSchema())
              .build())
    ds = env.from_source(source, WatermarkStrategy.for_monotonous_timestamps(), "kafka")

Each partition is one split, dealt round robin to the source subtasks by the enumerator in the
JobManager; the next offset of every split is checkpointed, so a restore (also at another
parallelism) resumes exactly there. Kafka's record timestamps become the records' event
timestamps. Offsets are committed to the group on checkpoint completion, for monitoring only.
New partitions are looked for every ``partition.discovery.interval.ms`` (default 5 minutes,
not for a bounded source, a non-positive value turns it off). The machinery: ``_kafka_source``.

Writing::

    sink = (KafkaSink.builder()
            .set_bootstrap_servers("broker:9092")
            .set_record_serializer(KafkaRecordSerializationSchema.builder()
                                   .set_topic("results")
                                   .set_value_serialization_schema(SimpleStringSchema())
                                   .build())
            .set_delivery_guarantee(DeliveryGuarantee.EXACTLY_ONCE)
            .set_transactional_id_prefix("my-job")
            .build())
    ds.sink_to(sink)

The three guarantees, and how exactly once survives a failure: ``_kafka_sink``. Properties
are librdkafka's (the Java client's common names are the same: ``bootstrap.servers``,
``group.id``, ``isolation.level``, ``security.protocol``, ``sasl.*`` ...).
"""

from __future__ import annotations

import abc
import enum
import re
from collections.abc import Callable, Mapping
from typing import Any

from flintlock.datastream.connectors._enumeration import DealingEnumerator, EnumeratorSnapshot
from flintlock.datastream.connectors._kafka_sink import (
    AtLeastOnceWriter,
    ExactlyOnceWriter,
    KafkaSinkError,
    KafkaSinkSettings,
)
from flintlock.datastream.connectors._kafka_source import (
    KafkaDeserializationError,
    KafkaOffsetResetError,
    KafkaPartitionReader,
    KafkaRecord,
    KafkaSourceError,
    KafkaSourceSettings,
    OffsetSpec,
    PartitionDiscovery,
    client_config,
    reset_policy,
)
from flintlock.datastream.connectors.base import DeliveryGuarantee, Sink, Source

DEFAULT_DISCOVERY_INTERVAL_MS = 300_000
DEFAULT_CLIENT_ID_PREFIX = "flintlock-kafka-source"


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError(f"{what} must be a non-empty str, got {value!r}")
    return value


def _schema(value: Any, method: str, what: str) -> Any:
    if not callable(getattr(value, method, None)):
        raise TypeError(f"{what} must have a {method}() method (e.g. SimpleStringSchema()), "
                        f"got {value!r}")
    return value


class KafkaTopicPartition:
    """A topic and a partition number (keys of ``KafkaOffsetsInitializer.offsets``)."""

    def __init__(self, topic: str, partition: int) -> None:
        self._topic = _text(topic, "topic")
        if isinstance(partition, bool) or not isinstance(partition, int) or partition < 0:
            raise ValueError(f"partition must be an int >= 0, got {partition!r}")
        self._partition = partition

    def _to_tuple(self) -> tuple[str, int]:
        return self._topic, self._partition

    def __eq__(self, other: object) -> bool:
        return isinstance(other, KafkaTopicPartition) and other._to_tuple() == self._to_tuple()

    def __hash__(self) -> int:
        return hash(self._to_tuple())

    def __repr__(self) -> str:
        return f"KafkaTopicPartition({self._topic!r}, {self._partition})"


class KafkaOffsetResetStrategy(enum.Enum):
    """Where to start in a partition with no committed (or given) offset."""

    LATEST = "latest"
    EARLIEST = "earliest"
    NONE = "none"


class KafkaOffsetsInitializer:
    """Where each partition starts (or, as a stopping initializer, ends)."""

    def __init__(self, spec: OffsetSpec) -> None:
        self._spec = spec

    @property
    def spec(self) -> OffsetSpec:
        return self._spec

    @staticmethod
    def earliest() -> KafkaOffsetsInitializer:
        return KafkaOffsetsInitializer(OffsetSpec("earliest"))

    @staticmethod
    def latest() -> KafkaOffsetsInitializer:
        return KafkaOffsetsInitializer(OffsetSpec("latest"))

    @staticmethod
    def committed_offsets(offset_reset_strategy: KafkaOffsetResetStrategy =
                          KafkaOffsetResetStrategy.NONE) -> KafkaOffsetsInitializer:
        """The group's committed offsets; ``offset_reset_strategy`` where there is none."""
        return KafkaOffsetsInitializer(OffsetSpec("committed", _reset(offset_reset_strategy)))

    @staticmethod
    def timestamp(timestamp: int) -> KafkaOffsetsInitializer:
        """The first record whose timestamp is at or after ``timestamp`` (epoch ms)."""
        if isinstance(timestamp, bool) or not isinstance(timestamp, int) or timestamp < 0:
            raise ValueError(f"timestamp must be epoch milliseconds (int >= 0), got "
                             f"{timestamp!r}")
        return KafkaOffsetsInitializer(OffsetSpec("timestamp", timestamp_ms=timestamp))

    @staticmethod
    def offsets(offsets: Mapping[KafkaTopicPartition, int],
                offset_reset_strategy: KafkaOffsetResetStrategy =
                KafkaOffsetResetStrategy.EARLIEST) -> KafkaOffsetsInitializer:
        """Explicit offsets; partitions not listed start by ``offset_reset_strategy``."""
        chosen = []
        for tp, offset in dict(offsets).items():
            if not isinstance(tp, KafkaTopicPartition):
                raise TypeError(f"offsets keys must be KafkaTopicPartition, got {tp!r}")
            if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
                raise ValueError(f"offset of {tp!r} must be an int >= 0, got {offset!r}")
            chosen.append((tp._to_tuple(), offset))
        return KafkaOffsetsInitializer(OffsetSpec("specific", _reset(offset_reset_strategy),
                                                  offsets=tuple(sorted(chosen))))

    def __repr__(self) -> str:
        return f"KafkaOffsetsInitializer({self._spec})"


def _reset(strategy: Any) -> str:
    if not isinstance(strategy, KafkaOffsetResetStrategy):
        raise TypeError(f"offset_reset_strategy must be a KafkaOffsetResetStrategy, got "
                        f"{strategy!r}")
    return str(strategy.value)


class KafkaRecordDeserializationSchema:
    """Turns a consumed ``KafkaRecord`` into a record of the stream (None: skip it).
    Subclass and override ``deserialize``, or use ``value_only(schema)``."""

    def deserialize(self, record: KafkaRecord) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must override deserialize(record)")

    @staticmethod
    def value_only(value_deserialization_schema: Any) -> KafkaRecordDeserializationSchema:
        return _ValueOnly(_schema(value_deserialization_schema, "deserialize",
                                  "the value schema"))


class _ValueOnly(KafkaRecordDeserializationSchema):
    def __init__(self, schema: Any) -> None:
        self._schema = schema

    def deserialize(self, record: KafkaRecord) -> Any:
        return self._schema.deserialize(record.value)


class KafkaSource(Source):
    """Reads Kafka topics (see the module docstring); made by ``KafkaSource.builder()``."""

    def __init__(self, settings: KafkaSourceSettings) -> None:
        self._settings = settings

    @staticmethod
    def builder() -> KafkaSourceBuilder:
        return KafkaSourceBuilder()

    @property
    def settings(self) -> KafkaSourceSettings:
        return self._settings

    def is_bounded(self) -> bool:
        return self._settings.bounded

    def create_enumerator(self, parallelism: int,
                          restored_state: EnumeratorSnapshot | None) -> DealingEnumerator:
        s = self._settings
        known = restored_state.discovery if restored_state is not None else frozenset()
        discovery = PartitionDiscovery(
            client_config(s.properties, f"{s.client_id_prefix}-enumerator"),
            s.topics, s.pattern, s.starting, s.stopping, known, s.partitions)
        interval = int(s.properties.get("partition.discovery.interval.ms",
                                        DEFAULT_DISCOVERY_INTERVAL_MS))
        return DealingEnumerator(parallelism, restored_state, discovery, bounded=s.bounded,
                                 discovery_interval_ms=interval if interval > 0 else None)

    def create_reader(self, subtask_index: int, parallelism: int) -> KafkaPartitionReader:
        s = self._settings
        commit = s.properties.get("commit.offsets.on.checkpoint", "true").lower() == "true"
        config = client_config(s.properties, f"{s.client_id_prefix}-{subtask_index}")
        config.setdefault("auto.offset.reset", reset_policy(s.starting))
        return KafkaPartitionReader(
            config, s.deserializer, commit,
            whole_record=isinstance(s.deserializer, KafkaRecordDeserializationSchema))

    def __repr__(self) -> str:
        s = self._settings
        what = s.pattern if s.pattern is not None else ", ".join(
            s.topics or [f"{t}-{p}" for t, p in s.partitions])
        return f"KafkaSource({what} at {s.properties.get('bootstrap.servers')})"


class KafkaSourceBuilder:
    def __init__(self) -> None:
        self._properties: dict[str, str] = {}
        self._topics: tuple[str, ...] = ()
        self._pattern: str | None = None
        self._partitions: tuple[tuple[str, int], ...] = ()
        self._subscription: str | None = None  # topics, topic pattern or partitions
        self._starting = KafkaOffsetsInitializer.earliest()
        self._stopping: KafkaOffsetsInitializer | None = None
        self._bounded = False
        self._deserializer: Any = None

    def set_bootstrap_servers(self, bootstrap_servers: str) -> KafkaSourceBuilder:
        self._properties["bootstrap.servers"] = _text(bootstrap_servers, "bootstrap servers")
        return self

    def set_group_id(self, group_id: str) -> KafkaSourceBuilder:
        self._properties["group.id"] = _text(group_id, "group id")
        return self

    def set_topics(self, *topics: str) -> KafkaSourceBuilder:
        chosen = tuple(dict.fromkeys(_text(t, "topic") for t in topics))
        self._subscribe("topics")
        self._topics = chosen
        return self

    def set_topic_pattern(self, topic_pattern: str) -> KafkaSourceBuilder:
        try:
            re.compile(_text(topic_pattern, "topic pattern"))
        except re.error as bad:
            raise ValueError(f"topic pattern {topic_pattern!r} is not a regular expression: "
                             f"{bad}") from None
        self._subscribe("topic pattern")
        self._pattern = topic_pattern
        return self

    def set_partitions(self, partitions: Any) -> KafkaSourceBuilder:
        """Exactly these partitions (a set of ``KafkaTopicPartition``); partition discovery
        finds them once they exist, and nothing else."""
        chosen = []
        for tp in partitions:
            if not isinstance(tp, KafkaTopicPartition):
                raise TypeError(f"set_partitions takes KafkaTopicPartition values, got {tp!r}")
            chosen.append(tp._to_tuple())
        if not chosen:
            raise ValueError("set_partitions needs at least one partition")
        self._subscribe("partitions")
        self._partitions = tuple(sorted(set(chosen)))
        return self

    def _subscribe(self, kind: str) -> None:
        """One way of choosing partitions per source, as in Flink."""
        if self._subscription not in (None, kind):
            raise ValueError(f"cannot use {kind}: this KafkaSource already reads "
                             f"{self._subscription}")
        self._subscription = kind

    def set_starting_offsets(self, initializer: KafkaOffsetsInitializer) -> KafkaSourceBuilder:
        self._starting = _initializer(initializer)
        return self

    def set_bounded(self, stopping_offsets_initializer: KafkaOffsetsInitializer
                    ) -> KafkaSourceBuilder:
        """Stop each partition at these offsets, and end the source when all have."""
        self._stopping = _initializer(stopping_offsets_initializer)
        self._bounded = True
        return self

    def set_unbounded(self, stopping_offsets_initializer: KafkaOffsetsInitializer
                      ) -> KafkaSourceBuilder:
        """Stop each partition at these offsets, but keep the source running."""
        self._stopping = _initializer(stopping_offsets_initializer)
        self._bounded = False
        return self

    def set_value_only_deserializer(self, deserialization_schema: Any) -> KafkaSourceBuilder:
        self._deserializer = _schema(deserialization_schema, "deserialize", "the deserializer")
        return self

    def set_deserializer(self, record_deserializer: KafkaRecordDeserializationSchema
                         ) -> KafkaSourceBuilder:
        """A deserializer of whole records (topic, partition, offset, timestamp, key, value,
        headers): ``KafkaRecordDeserializationSchema.value_only(schema)`` or a subclass."""
        if not isinstance(record_deserializer, KafkaRecordDeserializationSchema):
            raise TypeError("set_deserializer takes a KafkaRecordDeserializationSchema (for a "
                            "value schema use set_value_only_deserializer), got "
                            f"{record_deserializer!r}")
        self._deserializer = record_deserializer
        return self

    def set_client_id_prefix(self, prefix: str) -> KafkaSourceBuilder:
        """Client ids ``<prefix>-<subtask>`` (readers) and ``<prefix>-enumerator``; the same
        as ``set_property("client.id.prefix", prefix)``, as in Flink."""
        self._properties["client.id.prefix"] = _text(prefix, "client id prefix")
        return self

    def set_property(self, key: str, value: str) -> KafkaSourceBuilder:
        self._properties[_text(key, "property key")] = str(value)
        return self

    def set_properties(self, props: Mapping[str, Any]) -> KafkaSourceBuilder:
        for key, value in dict(props).items():
            self.set_property(key, value)
        return self

    def build(self) -> KafkaSource:
        props = dict(self._properties)
        if "bootstrap.servers" not in props:
            raise ValueError("KafkaSource needs bootstrap servers: call "
                             "set_bootstrap_servers('host:9092')")
        if self._subscription is None:
            raise ValueError("KafkaSource needs topics: call set_topics(...), "
                             "set_topic_pattern(...) or set_partitions(...)")
        if self._deserializer is None:
            raise ValueError("KafkaSource needs a deserializer: call "
                             "set_value_only_deserializer(SimpleStringSchema()) or "
                             "set_deserializer(...)")
        uses_group = [i for i in (self._starting, self._stopping)
                      if i is not None and i.spec.kind == "committed"]
        if uses_group and "group.id" not in props:
            raise ValueError("committed_offsets() needs a consumer group: call "
                             "set_group_id(...)")
        _check_int_property(props, "partition.discovery.interval.ms")
        prefix = _text(props.get("client.id.prefix", DEFAULT_CLIENT_ID_PREFIX),
                       "client.id.prefix")
        return KafkaSource(KafkaSourceSettings(
            props, self._topics, self._pattern, self._partitions, self._starting.spec,
            self._stopping.spec if self._stopping is not None else None, self._bounded,
            self._deserializer, prefix))


def _initializer(value: Any) -> KafkaOffsetsInitializer:
    if not isinstance(value, KafkaOffsetsInitializer):
        raise TypeError(f"expected a KafkaOffsetsInitializer (e.g. "
                        f"KafkaOffsetsInitializer.earliest()), got {value!r}")
    return value


def _check_int_property(props: dict[str, str], key: str) -> None:
    if key in props:
        try:
            int(props[key])
        except ValueError:
            raise ValueError(f"property {key} must be an integer (milliseconds), got "
                             f"{props[key]!r}") from None


class KafkaRecordSerializationSchema:
    """Turns a record into (topic, key bytes, value bytes, timestamp)."""

    def __init__(self, topic: str | None, topic_selector: Callable[[Any], str] | None,
                 key_schema: Any, value_schema: Any) -> None:
        self._topic = topic
        self._topic_selector = topic_selector
        self._key_schema = key_schema
        self._value_schema = value_schema

    @staticmethod
    def builder() -> KafkaRecordSerializationSchemaBuilder:
        return KafkaRecordSerializationSchemaBuilder()

    @property
    def topic(self) -> str | None:
        """The fixed topic (None with a topic selector)."""
        return self._topic

    def serialize(self, record: Any) -> tuple[str, bytes | None, bytes | None, int | None]:
        topic = self._topic if self._topic is not None else self._select(record)
        key = self._key_schema.serialize(record) if self._key_schema is not None else None
        return topic, key, self._value_schema.serialize(record), None

    def _select(self, record: Any) -> str:
        assert self._topic_selector is not None
        topic = self._topic_selector(record)
        if not isinstance(topic, str) or not topic:
            raise KafkaSinkError(f"the topic selector returned {topic!r} for {record!r}; "
                                 "it must return a topic name")
        return topic


class KafkaTopicSelector(abc.ABC):
    """Chooses the topic of each record (``set_topic_selector``; a plain callable works
    too)."""

    @abc.abstractmethod
    def apply(self, data: Any) -> str: ...


class KafkaRecordSerializationSchemaBuilder:
    def __init__(self) -> None:
        self._topic: str | None = None
        self._topic_selector: Callable[[Any], str] | None = None
        self._key_schema: Any = None
        self._value_schema: Any = None

    def set_topic(self, topic: str) -> KafkaRecordSerializationSchemaBuilder:
        self._topic = _text(topic, "topic")
        self._topic_selector = None
        return self

    def set_topic_selector(self, topic_selector: Callable[[Any], str]
                           ) -> KafkaRecordSerializationSchemaBuilder:
        """A function from record to topic name (PyFlink's ``KafkaTopicSelector``)."""
        select = getattr(topic_selector, "apply", topic_selector)
        if not callable(select):
            raise TypeError(f"topic selector must be callable, got {topic_selector!r}")
        self._topic_selector = select
        self._topic = None
        return self

    def set_key_serialization_schema(self, key_serialization_schema: Any
                                     ) -> KafkaRecordSerializationSchemaBuilder:
        self._key_schema = _schema(key_serialization_schema, "serialize", "the key schema")
        return self

    def set_value_serialization_schema(self, value_serialization_schema: Any
                                       ) -> KafkaRecordSerializationSchemaBuilder:
        self._value_schema = _schema(value_serialization_schema, "serialize",
                                     "the value schema")
        return self

    def build(self) -> KafkaRecordSerializationSchema:
        if self._topic is None and self._topic_selector is None:
            raise ValueError("the record serializer needs a topic: call set_topic(...) or "
                             "set_topic_selector(...)")
        if self._value_schema is None:
            raise ValueError("the record serializer needs a value schema: call "
                             "set_value_serialization_schema(SimpleStringSchema())")
        return KafkaRecordSerializationSchema(self._topic, self._topic_selector,
                                              self._key_schema, self._value_schema)


_GUARANTEES = {DeliveryGuarantee.NONE: "none",
               DeliveryGuarantee.AT_LEAST_ONCE: "at-least-once",
               DeliveryGuarantee.EXACTLY_ONCE: "exactly-once"}


class KafkaSink(Sink):
    """Writes records to Kafka (see the module docstring); made by ``KafkaSink.builder()``."""

    def __init__(self, settings: KafkaSinkSettings) -> None:
        self._settings = settings

    @staticmethod
    def builder() -> KafkaSinkBuilder:
        return KafkaSinkBuilder()

    @property
    def settings(self) -> KafkaSinkSettings:
        return self._settings

    def create_writer(self, subtask_index: int,
                      parallelism: int) -> AtLeastOnceWriter | ExactlyOnceWriter:
        if self._settings.guarantee == "exactly-once":
            return ExactlyOnceWriter(self._settings, subtask_index)
        return AtLeastOnceWriter(self._settings)

    def __repr__(self) -> str:
        return (f"KafkaSink({self._settings.guarantee} to "
                f"{self._settings.config.get('bootstrap.servers')})")


class KafkaSinkBuilder:
    def __init__(self) -> None:
        self._properties: dict[str, str] = {}
        self._serializer: KafkaRecordSerializationSchema | None = None
        self._guarantee = DeliveryGuarantee.NONE
        self._prefix: str | None = None

    def set_bootstrap_servers(self, bootstrap_servers: str) -> KafkaSinkBuilder:
        self._properties["bootstrap.servers"] = _text(bootstrap_servers, "bootstrap servers")
        return self

    def set_delivery_guarantee(self, delivery_guarantee: DeliveryGuarantee) -> KafkaSinkBuilder:
        if delivery_guarantee not in _GUARANTEES:
            raise TypeError(f"delivery guarantee must be a DeliveryGuarantee, got "
                            f"{delivery_guarantee!r}")
        self._guarantee = delivery_guarantee
        return self

    def set_transactional_id_prefix(self, transactional_id_prefix: str) -> KafkaSinkBuilder:
        self._prefix = _text(transactional_id_prefix, "transactional id prefix")
        return self

    def set_record_serializer(self, record_serializer: KafkaRecordSerializationSchema
                              ) -> KafkaSinkBuilder:
        if not isinstance(record_serializer, KafkaRecordSerializationSchema):
            raise TypeError("record serializer must be built with "
                            f"KafkaRecordSerializationSchema.builder(), got {record_serializer!r}")
        self._serializer = record_serializer
        return self

    def set_property(self, key: str, value: str) -> KafkaSinkBuilder:
        self._properties[_text(key, "property key")] = str(value)
        return self

    def build(self) -> KafkaSink:
        config: dict[str, Any] = dict(self._properties)
        if "bootstrap.servers" not in config:
            raise ValueError("KafkaSink needs bootstrap servers: call "
                             "set_bootstrap_servers('host:9092')")
        if self._serializer is None:
            raise ValueError("KafkaSink needs a record serializer: call "
                             "set_record_serializer(KafkaRecordSerializationSchema.builder()"
                             "...build())")
        guarantee = _GUARANTEES[self._guarantee]
        if guarantee == "exactly-once":
            if self._prefix is None:
                raise ValueError("an EXACTLY_ONCE KafkaSink needs set_transactional_id_prefix("
                                 "...), unique to this job and sink")
        # Keyed records land where Java's default partitioner would put them.
        config.setdefault("partitioner", "murmur2_random")
        return KafkaSink(KafkaSinkSettings(config, self._serializer, guarantee,
                                           self._prefix or "flintlock-kafka-sink"))


__all__ = [
    "DeliveryGuarantee",
    "KafkaDeserializationError",
    "KafkaOffsetResetError",
    "KafkaOffsetResetStrategy",
    "KafkaOffsetsInitializer",
    "KafkaRecord",
    "KafkaRecordDeserializationSchema",
    "KafkaRecordSerializationSchema",
    "KafkaRecordSerializationSchemaBuilder",
    "KafkaSink",
    "KafkaSinkBuilder",
    "KafkaSinkError",
    "KafkaSource",
    "KafkaSourceBuilder",
    "KafkaSourceError",
    "KafkaTopicPartition",
    "KafkaTopicSelector",
]
