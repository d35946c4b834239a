"""The ``kafka`` table connector (Flink's ``KafkaDynamicTableFactory``) on flintlock's Kafka
DataStream connector: a source of the rows in a topic's message values (and keys), and an
append-only sink writing one message per row.

Options (Flink's names and defaults): ``topic`` (a topic, or ``;``-separated topics for a
source) or ``topic-pattern``; ``properties.bootstrap.servers`` (required),
``properties.group.id``, any other ``properties.<librdkafka key>``; ``format`` or
``value.format`` (``json``, ``csv``, ``avro``, ``raw``; the changelog formats ``canal-json``
and ``debezium-json``, read without a key format)
with the format's options under ``<format>.`` or ``value.<format>.``; ``key.format`` with
``key.fields`` (``;``-separated columns written into, and read from, the message key; named in
the key without ``key.fields-prefix``) and
``value.fields-include`` (``ALL``, or ``EXCEPT_KEY``: the key columns not in the value);
``scan.startup.mode`` (``group-offsets`` by default, ``earliest-offset``, ``latest-offset``,
``timestamp`` with ``scan.startup.timestamp-millis``, ``specific-offsets`` with
``scan.startup.specific-offsets`` = ``partition:0,offset:42;partition:1,offset:300``),
``scan.bounded.mode`` (``unbounded`` by default, ``latest-offset``, ``group-offsets``,
``timestamp``, ``specific-offsets``), ``scan.topic-partition-discovery.interval``,
``sink.delivery-guarantee`` (``at-least-once`` by default, ``exactly-once`` with
``sink.transactional-id-prefix``, ``none``), ``sink.partitioner`` (``default``: by key hash,
or spread when there is no key), ``sink.parallelism``, ``scan.parallelism``.

Guarantees are the DataStream connector's: offsets in the source's checkpoints, transactions
committed on checkpoint completion for an exactly-once sink. A message whose value the format
cannot read fails the job, unless the format ignores parse errors (then it is skipped).

The factory runs on the driver; the (de)serializers on task threads.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from flintlock.common.types import row_of
from flintlock.common.watermark_strategy import WatermarkStrategy
from flintlock.datastream.connectors.base import DeliveryGuarantee
from flintlock.datastream.connectors.kafka import (
    KafkaOffsetResetStrategy,
    KafkaOffsetsInitializer,
    KafkaRecordDeserializationSchema,
    KafkaRecordSerializationSchema,
    KafkaSink,
    KafkaSource,
    KafkaTopicPartition,
)
from flintlock.datastream.data_stream import DataStream
from flintlock.datastream.functions import FlatMapFunction
from flintlock.table import formats
from flintlock.table.connectors import registry
from flintlock.table.connectors._options import Options, check_keys
from flintlock.table.connectors._sinks import sink_fields, sink_parallelism
from flintlock.table.connectors._sources import check_bounded
from flintlock.table.errors import UnsupportedFeatureError, ValidationError
from flintlock.table.formats import avro
from flintlock.table.plan.nodes import Field, TableSpec

CONNECTOR_OPTIONS = {
    "connector", "topic", "topic-pattern", "format", "value.format", "key.format",
    "key.fields", "key.fields-prefix", "value.fields-include", "scan.startup.mode",
    "scan.startup.specific-offsets", "scan.startup.timestamp-millis", "scan.bounded.mode",
    "scan.bounded.specific-offsets", "scan.bounded.timestamp-millis",
    "scan.topic-partition-discovery.interval", "sink.partitioner", "sink.delivery-guarantee",
    "sink.transactional-id-prefix", "sink.parallelism", "scan.parallelism",
}
BINARY_FORMATS = {"avro"}


class _Codec:
    """A format's per-row functions on bytes (text formats in UTF-8)."""

    def __init__(self, name: str, fields: list[Field], options: Options, prefix: str) -> None:
        self.name = name
        self.changes: Callable[[bytes], list[Any]] | None = None  # a changelog format's rows
        if name == "avro":
            settings = avro.AvroSettings(options, prefix)
            self.encode: Callable[[Any], bytes] = avro.row_writer(fields, settings)
            self.decode: Callable[[bytes], list[Any] | None] = avro.bytes_reader(fields,
                                                                                settings)
            return
        found = formats.lookup(name)
        write = found.writer(fields, options, prefix)
        charset = options.get_str(f"{prefix}.charset", "UTF-8") if name == "raw" else "UTF-8"
        self.encode = lambda row: write(row).encode(charset or "UTF-8", "surrogateescape")
        if found.changelog:  # debezium-json, canal-json: rows with their kinds
            self.decode = _no_reading(name)
            changes = found.changelog_reader(fields, options, prefix)
            self.changes = lambda data: changes(data.decode("utf-8", "surrogateescape"))
        else:
            read = found.reader(fields, options, prefix)
            self.decode = lambda data: read(data.decode(charset or "UTF-8", "surrogateescape"))


def _no_reading(name: str) -> Callable[[bytes], list[Any] | None]:
    def refuse(data: bytes) -> list[Any] | None:
        raise UnsupportedFeatureError(f"reading the '{name}' format from Kafka")
    return refuse


class _Layout:
    """Which columns go to the key and which to the value, and with which formats."""

    def __init__(self, spec: TableSpec, fields: tuple[Field, ...]) -> None:
        options = Options(spec.options)
        self.options = options
        value_format, value_prefix = _value_format(options)
        names = [f.name for f in fields]
        key_fields = [k.strip() for k in (options.get_str("key.fields") or "").split(";")
                      if k.strip()]
        for key in key_fields:
            if key not in names:
                raise ValidationError(f"Could not find the field '{key}' in the table schema "
                                      f"for usage in the key format. A key field must be a "
                                      f"regular, physical column. Available: [{', '.join(names)}]")
        key_format = options.get_str("key.format")
        if key_fields and key_format is None:
            raise ValidationError("The Kafka table 'key.fields' needs a 'key.format'.")
        if key_format is not None and not key_fields:
            raise ValidationError(
                "A key format 'key.format' requires the declaration of one or more of key "
                "fields using 'key.fields'.")
        include = options.get_choice("value.fields-include", ("ALL", "EXCEPT_KEY"), "ALL")
        self.key_indexes = [names.index(k) for k in key_fields]
        self.value_indexes = [i for i in range(len(fields))
                              if include == "ALL" or i not in self.key_indexes]
        self.width = len(fields)
        self.value = _Codec(value_format, [fields[i] for i in self.value_indexes], options,
                            value_prefix)
        prefix = options.get_str("key.fields-prefix") or ""
        for key in key_fields:
            if not key.startswith(prefix):
                raise ValidationError(f"All fields in 'key.fields' must be prefixed with "
                                      f"'{prefix}' when option 'key.fields-prefix' is set but "
                                      f"field '{key}' is not prefixed.")
        key_columns = [Field(fields[i].name[len(prefix):], fields[i].type)
                       for i in self.key_indexes]
        self.key = (None if key_format is None else _Codec(
            key_format, key_columns, options, f"key.{key_format}"))
        self.value_format = value_format
        self.key_format = key_format


def _value_format(options: Options) -> tuple[str, str]:
    plain, prefixed = options.get_str("format"), options.get_str("value.format")
    if plain is not None and prefixed is not None:
        raise ValidationError("Option 'format' and 'value.format' cannot be set at the same "
                              "time: use 'value.format'.")
    if plain is None and prefixed is None:
        raise ValidationError("Could not find required sink format 'value.format'.")
    if plain is not None:
        return plain, plain
    assert prefixed is not None
    return prefixed, f"value.{prefixed}"


def _check(spec: TableSpec) -> None:
    options = Options(spec.options)
    value_format, value_prefix = _value_format(options)
    allowed = set(CONNECTOR_OPTIONS)
    for name, prefix in ((value_format, value_prefix),
                         (options.get_str("key.format"), f"key.{options.get_str('key.format')}")):
        if name is None:
            continue
        keys = avro.OPTION_KEYS if name in BINARY_FORMATS else formats.lookup(name).option_keys
        allowed |= {f"{prefix}.{key}" for key in keys}
    allowed |= {k for k in spec.options if k.startswith("properties.")}
    check_keys("kafka", spec.options, allowed)
    if options.get_str("properties.bootstrap.servers") is None:
        raise ValidationError("One or more required options are missing.\n\nMissing required "
                              "options are:\n\nproperties.bootstrap.servers")


def _properties(options: Options) -> dict[str, str]:
    return {k[len("properties."):]: v for k, v in options.raw.items()
            if k.startswith("properties.")}


# -- source --------------------------------------------------------------------------------------

class TableRecordDeserializer(KafkaRecordDeserializationSchema):
    """A consumed message as a row of the table (None: the format skipped it)."""

    def __init__(self, layout: _Layout) -> None:
        self.value = layout.value.decode
        self.key = layout.key.decode if layout.key is not None else None
        self.key_indexes = layout.key_indexes
        self.value_indexes = layout.value_indexes
        self.width = layout.width

    def deserialize(self, record: Any) -> Any:
        values = self.value(record.value) if record.value is not None else None
        if values is None:
            return None
        if self.key is None and len(self.value_indexes) == self.width:
            return row_of(values)
        out: list[Any] = [None] * self.width
        if self.key is not None and record.key is not None:
            key_values = self.key(record.key) or [None] * len(self.key_indexes)
            for index, value in zip(self.key_indexes, key_values, strict=True):
                out[index] = value
        for index, value in zip(self.value_indexes, values, strict=True):
            out[index] = value
        return row_of(out)


def _specific_offsets(text: str, topic: str, key: str) -> dict[KafkaTopicPartition, int]:
    found = {}
    for part in filter(None, (p.strip() for p in text.split(";"))):
        match = re.fullmatch(r"partition:(\d+),offset:(\d+)", part.replace(" ", ""))
        if match is None:
            raise ValidationError(
                f"Invalid properties '{key}' should follow the format 'partition:0,offset:42;"
                f"partition:1,offset:300', but is '{text}'.")
        found[KafkaTopicPartition(topic, int(match.group(1)))] = int(match.group(2))
    return found


def _offsets(options: Options, kind: str, topics: list[str], bounded: bool
             ) -> KafkaOffsetsInitializer | None:
    modes = (("unbounded", "latest-offset", "group-offsets", "timestamp", "specific-offsets")
             if bounded else
             ("earliest-offset", "latest-offset", "group-offsets", "timestamp",
              "specific-offsets"))
    mode = options.get_choice(f"scan.{kind}.mode", modes,
                              "unbounded" if bounded else "group-offsets")
    if mode == "unbounded":
        return None
    if mode == "earliest-offset":
        return KafkaOffsetsInitializer.earliest()
    if mode == "latest-offset":
        return KafkaOffsetsInitializer.latest()
    if mode == "group-offsets":
        reset = _properties(options).get("auto.offset.reset", "none").lower()
        strategy = {"earliest": KafkaOffsetResetStrategy.EARLIEST,
                    "latest": KafkaOffsetResetStrategy.LATEST}.get(
                        reset, KafkaOffsetResetStrategy.NONE)
        return KafkaOffsetsInitializer.committed_offsets(strategy)
    if mode == "timestamp":
        key = f"scan.{kind}.timestamp-millis"
        millis = options.get_int(key)
        if millis is None:
            raise ValidationError(f"'{key}' is required in 'timestamp' {kind} mode but missing.")
        return KafkaOffsetsInitializer.timestamp(millis)
    key = f"scan.{kind}.specific-offsets"
    text = options.get_str(key)
    if text is None or len(topics) != 1:
        raise ValidationError(f"'{key}' is required in 'specific-offsets' {kind} mode (with a "
                              "single topic) but missing.")
    return KafkaOffsetsInitializer.offsets(_specific_offsets(text, topics[0], key))


def create_source(spec: TableSpec, context: registry.ConnectorContext,
                  watermark_strategy: WatermarkStrategy | None = None) -> DataStream:
    """The topic's rows; with ``watermark_strategy`` (the table's WATERMARK, pushed into the
    source by the planner) the source makes watermarks per partition, as Flink's does."""
    _check(spec)
    layout = _Layout(spec, spec.physical)
    options = layout.options
    topics = [t.strip() for t in (options.get_str("topic") or "").split(";") if t.strip()]
    pattern = options.get_str("topic-pattern")
    if bool(topics) == bool(pattern):
        raise ValidationError("Option 'topic' and 'topic-pattern' shouldn't be set together; "
                              "one of them is required for a Kafka source.")
    props = _properties(options)
    builder = KafkaSource.builder().set_bootstrap_servers(props.pop("bootstrap.servers"))
    builder = builder.set_topics(*topics) if topics else builder.set_topic_pattern(pattern or "")
    if "group.id" in props:
        builder.set_group_id(props.pop("group.id"))
    discovery = options.get_duration_ms("scan.topic-partition-discovery.interval")
    if discovery is not None:
        props["partition.discovery.interval.ms"] = str(discovery)
    builder.set_properties(props)
    starting = _offsets(options, "startup", topics, bounded=False)
    assert starting is not None
    if starting.spec.kind == "committed" and "group.id" not in props and not options.has(
            "properties.group.id"):
        raise ValidationError(
            "'properties.group.id' is required when 'scan.startup.mode' is 'group-offsets' "
            "(the default): set it, or choose another 'scan.startup.mode'.")
    builder.set_starting_offsets(starting)
    stopping = _offsets(options, "bounded", topics, bounded=True)
    check_bounded(spec, context, stopping is not None)
    if stopping is not None:
        builder.set_bounded(stopping)
    changes = layout.value.changes
    if changes is not None and (layout.key is not None or len(layout.value_indexes)
                                != layout.width):
        raise UnsupportedFeatureError(f"a key format with the '{layout.value_format}' value "
                                      "format in a Kafka source")
    builder.set_deserializer(TableRecordDeserializer(layout) if changes is None
                             else ChangelogRecordDeserializer(changes))
    stream = context.env.from_source(
        builder.build(), watermark_strategy or WatermarkStrategy.no_watermarks(),
        f"kafka[{spec.name}]")
    parallelism = options.get_int("scan.parallelism")
    if parallelism is not None:
        stream.set_parallelism(parallelism)
    return stream if changes is None else stream.flat_map(_Flatten())


class ChangelogRecordDeserializer(KafkaRecordDeserializationSchema):
    """A message of a changelog format as the list of rows (with kinds) it carries."""

    def __init__(self, changes: Callable[[bytes], list[Any]]) -> None:
        self.changes = changes

    def deserialize(self, record: Any) -> Any:
        return None if record.value is None else (self.changes(record.value) or None)


class _Flatten(FlatMapFunction):
    def flat_map(self, value: Any) -> Any:
        return value


# -- sink ----------------------------------------------------------------------------------------

class _Projected:
    """A serialization schema writing some of a row's columns with a codec."""

    def __init__(self, encode: Callable[[Any], bytes], indexes: list[int], width: int) -> None:
        self.encode = encode
        self.indexes = None if indexes == list(range(width)) else indexes

    def serialize(self, record: Any) -> bytes:
        if self.indexes is None:
            return self.encode(record)
        return self.encode(row_of([record[i] for i in self.indexes], record.get_row_kind()))


_GUARANTEES = {"at-least-once": DeliveryGuarantee.AT_LEAST_ONCE,
               "exactly-once": DeliveryGuarantee.EXACTLY_ONCE, "none": DeliveryGuarantee.NONE}


def create_sink(stream: DataStream, spec: TableSpec, fields: tuple[Field, ...],
                context: registry.ConnectorContext) -> Any:
    _check(spec)
    layout = _Layout(spec, sink_fields(spec, fields))
    options = layout.options
    topic = options.get_str("topic")
    if topic is None or ";" in topic or options.has("topic-pattern"):
        raise ValidationError("Currently a Kafka sink only supports a single 'topic' (no "
                              "'topic-pattern').")
    partitioner = options.get_choice("sink.partitioner", ("default", "fixed", "round-robin"),
                                     "default")
    if partitioner != "default":
        raise UnsupportedFeatureError(f"the Kafka sink partitioner '{partitioner}'",
                                      "use 'default'")
    records = KafkaRecordSerializationSchema.builder().set_topic(topic)
    records.set_value_serialization_schema(
        _Projected(layout.value.encode, layout.value_indexes, layout.width))
    if layout.key is not None:
        records.set_key_serialization_schema(
            _Projected(layout.key.encode, layout.key_indexes, layout.width))
    return stream._add_sink("Sink: kafka", kafka_sink(options, records.build()),
                            parallelism=sink_parallelism(spec))


def kafka_sink(options: Options, records: Any) -> KafkaSink:
    """The KafkaSink of a table's ``properties.*`` and ``sink.delivery-guarantee`` /
    ``sink.transactional-id-prefix`` options (also upsert-kafka's)."""
    guarantee = options.get_choice("sink.delivery-guarantee", tuple(_GUARANTEES),
                                   "at-least-once")
    props = _properties(options)
    builder = (KafkaSink.builder().set_bootstrap_servers(props.pop("bootstrap.servers"))
               .set_record_serializer(records)
               .set_delivery_guarantee(_GUARANTEES[guarantee]))
    for key, value in props.items():
        builder.set_property(key, value)
    prefix = options.get_str("sink.transactional-id-prefix")
    if guarantee == "exactly-once" and not prefix:
        raise ValidationError("sink.transactional-id-prefix must be specified when using "
                              "DeliveryGuarantee.EXACTLY_ONCE.")
    if prefix:
        builder.set_transactional_id_prefix(prefix)
    return builder.build()


class KafkaFactory:
    identifier = "kafka"

    def required_options(self) -> set[str]:
        return set()

    def optional_options(self) -> set[str]:
        patterns = {"properties.#", "key.#", "value.#", "avro.#"}
        patterns |= {f"{name}.#" for name in formats.FORMATS}
        return (CONNECTOR_OPTIONS - {"connector"}) | patterns

    def create_source(self, spec: TableSpec, context: registry.ConnectorContext,
                      watermark_strategy: WatermarkStrategy | None = None) -> DataStream:
        return create_source(spec, context, watermark_strategy)

    def supports_watermark_push_down(self, spec: TableSpec) -> bool:
        """Whether the source can make the table's watermarks itself, per partition (Flink's
        ``SupportsWatermarkPushDown``): a row format, one row per message."""
        return not self.accepts_updates(spec)

    def create_sink(self, stream: DataStream, spec: TableSpec, fields: tuple[Field, ...],
                    context: registry.ConnectorContext) -> Any:
        return create_sink(stream, spec, fields, context)

    def accepts_updates(self, spec: TableSpec) -> bool:
        name, _ = _value_format(Options(spec.options))
        return name in formats.FORMATS and formats.FORMATS[name].changelog


FACTORY = KafkaFactory()
registry.FACTORIES[FACTORY.identifier] = FACTORY

__all__ = ["KafkaFactory", "TableRecordDeserializer", "kafka_sink"]
