"""The ``upsert-kafka`` table connector (Flink's ``UpsertKafkaDynamicTableFactory``): a topic as
a table keyed by its PRIMARY KEY — each message is the latest value of its key, a message with
a NULL value (a tombstone) deletes the key.

Options: ``topic``, ``properties.bootstrap.servers`` (required), other ``properties.*``,
``key.format`` and ``value.format`` (both required; ``json``, ``csv``, ``avro``, ``raw``) with
their ``key.<format>.*`` / ``value.<format>.*`` options, ``key.fields-prefix``,
``value.fields-include`` (``ALL`` by default, or ``EXCEPT_KEY``), ``sink.parallelism``,
``sink.delivery-guarantee`` / ``sink.transactional-id-prefix`` (as for ``kafka``),
``sink.buffer-flush.max-rows`` / ``.interval`` (accepted; every change is sent),
``scan.bounded.mode`` (as for ``kafka``; unbounded by default), ``scan.parallelism``. The
table must declare a PRIMARY KEY; its columns are the message key (``key.fields`` is not an
option here), as in Flink.

**Source.** The topic is read from its earliest offsets, as Flink's; each message becomes a
row of its value (with the key columns from the key), a tombstone the key alone. As Flink's
planner puts a ``ChangelogNormalize`` after this source, so does the connector
(``ChangelogNormalize``, keyed by the primary key, the last row per key in keyed state): the
first value of a key is ``+I``, a later different one ``-U`` (the previous row) and ``+U``, an
identical one nothing, a tombstone ``-D`` of the previous row (nothing for an unknown key).

**Sink.** ``+I``/``+U`` rows are messages whose key is the key columns and whose value is the
row; ``-D`` and ``-U`` rows are tombstones (the key, a NULL value), as Flink's serializer
writes them: an ``-U`` reaches the sink when no ``+U`` of the same key may follow (a filter
over an updating query), and must delete the key then. Guarantees are the ``kafka`` sink's.

The factory runs on the driver; the functions on task threads.
"""

from __future__ import annotations

from typing import Any

from flintlock.common.state import ValueStateDescriptor
from flintlock.common.types import Row, RowKind, row_of
from flintlock.common.watermark_strategy import WatermarkStrategy
from flintlock.datastream.changelog.rows import key_selector
from flintlock.datastream.connectors.kafka import (
    KafkaOffsetsInitializer,
    KafkaRecordDeserializationSchema,
    KafkaRecordSerializationSchema,
    KafkaSource,
)
from flintlock.datastream.data_stream import DataStream
from flintlock.datastream.functions import KeyedProcessFunction, RuntimeContext
from flintlock.table import formats
from flintlock.table.connectors import kafka, registry
from flintlock.table.connectors._options import Options, check_keys
from flintlock.table.connectors._sinks import sink_fields, sink_parallelism
from flintlock.table.connectors._sources import check_bounded
from flintlock.table.errors import ValidationError
from flintlock.table.formats import avro
from flintlock.table.plan.nodes import Field, TableSpec

CONNECTOR_OPTIONS = {
    "connector", "topic", "key.format", "value.format", "key.fields-prefix",
    "value.fields-include", "sink.parallelism", "sink.delivery-guarantee",
    "sink.transactional-id-prefix", "sink.buffer-flush.max-rows",
    "sink.buffer-flush.interval", "scan.bounded.mode", "scan.bounded.specific-offsets",
    "scan.bounded.timestamp-millis", "scan.parallelism",
}
_NO_KEY = (
    "'upsert-kafka' tables require to define a PRIMARY KEY constraint. The PRIMARY KEY "
    "specifies which columns should be read from or write to the Kafka message key. The "
    "PRIMARY KEY also defines records in the 'upsert-kafka' table should update or delete on "
    "which keys.")


def _checked(spec: TableSpec) -> tuple[TableSpec, list[int]]:
    """The spec as the ``kafka`` connector reads it (``key.fields`` = the primary key), and
    the key's column indexes."""
    options = Options(spec.options)
    allowed = set(CONNECTOR_OPTIONS) | {k for k in spec.options if k.startswith("properties.")}
    for side in ("key", "value"):
        name = options.get_str(f"{side}.format")
        if name is None:
            raise ValidationError("One or more required options are missing.\n\nMissing "
                                  f"required options are:\n\n{side}.format")
        keys = avro.OPTION_KEYS if name in kafka.BINARY_FORMATS else formats.lookup(
            name).option_keys
        allowed |= {f"{side}.{name}.{key}" for key in keys}
        if name in formats.FORMATS and formats.FORMATS[name].changelog:
            raise ValidationError(f"'upsert-kafka' connector doesn't support '{name}' as "
                                  f"{side} format, because '{name}' is not in insert-only mode.")
    check_keys("upsert-kafka", spec.options, allowed)
    for required in ("topic", "properties.bootstrap.servers"):
        if not options.has(required):
            raise ValidationError("One or more required options are missing.\n\nMissing "
                                  f"required options are:\n\n{required}")
    if not spec.primary_key:
        raise ValidationError(_NO_KEY)
    names = [f.name for f in spec.physical]
    as_kafka = dict(spec.options, **{"key.fields": ";".join(spec.primary_key)})
    as_kafka.pop("sink.buffer-flush.max-rows", None)
    as_kafka.pop("sink.buffer-flush.interval", None)
    return TableSpec(spec.path, spec.physical, as_kafka, primary_key=spec.primary_key), [
        names.index(k) for k in spec.primary_key]


# -- source --------------------------------------------------------------------------------------

class UpsertRecordDeserializer(KafkaRecordDeserializationSchema):
    """A message as a row (+I) of its key and value; a tombstone as the key alone (-D)."""

    def __init__(self, layout: Any) -> None:
        self._rows = kafka.TableRecordDeserializer(layout)
        assert layout.key is not None
        self._key = layout.key.decode
        self._key_indexes = layout.key_indexes
        self._width = layout.width

    def deserialize(self, record: Any) -> Any:
        if record.value is not None:
            return self._rows.deserialize(record)
        if record.key is None:
            return None
        out: list[Any] = [None] * self._width
        for index, value in zip(self._key_indexes, self._key(record.key) or [], strict=False):
            out[index] = value
        return row_of(out, RowKind.DELETE)


class ChangelogNormalize(KeyedProcessFunction):
    """Upserts and deletes per key as a full changelog (see the module)."""

    def open(self, runtime_context: RuntimeContext) -> None:
        self._last = runtime_context.get_state(ValueStateDescriptor("upsert-kafka-last", None))

    def process_element(self, value: Row, ctx: Any) -> Any:
        previous = self._last.value()
        if value.get_row_kind() is RowKind.DELETE:
            if previous is not None:
                self._last.clear()
                yield row_of(list(previous), RowKind.DELETE)
            return
        current = list(value)
        if previous is None:
            self._last.update(tuple(current))
            yield row_of(current, RowKind.INSERT)
            return
        if tuple(current) == tuple(previous):
            return
        self._last.update(tuple(current))
        yield row_of(list(previous), RowKind.UPDATE_BEFORE)
        yield row_of(current, RowKind.UPDATE_AFTER)


def create_source(spec: TableSpec, context: registry.ConnectorContext) -> DataStream:
    as_kafka, key_indexes = _checked(spec)
    layout = kafka._Layout(as_kafka, as_kafka.physical)
    options = layout.options
    props = kafka._properties(options)
    topics = [t.strip() for t in (options.get_str("topic") or "").split(";") if t.strip()]
    builder = (KafkaSource.builder().set_bootstrap_servers(props.pop("bootstrap.servers"))
               .set_topics(*topics).set_properties(props)
               .set_starting_offsets(KafkaOffsetsInitializer.earliest()))
    if "group.id" in props:
        builder.set_group_id(props.pop("group.id"))
    stopping = kafka._offsets(options, "bounded", topics, bounded=True)
    check_bounded(spec, context, stopping is not None)
    if stopping is not None:
        builder.set_bounded(stopping)
    builder.set_deserializer(UpsertRecordDeserializer(layout))
    stream = context.env.from_source(builder.build(), WatermarkStrategy.no_watermarks(),
                                     f"upsert-kafka[{spec.name}]")
    parallelism = options.get_int("scan.parallelism")
    if parallelism is not None:
        stream.set_parallelism(parallelism)
    return stream.key_by(key_selector(key_indexes)).process(ChangelogNormalize())


# -- sink ----------------------------------------------------------------------------------------

class _UpsertValue:
    """The row's value columns; a -D or -U row's value is NULL (a tombstone)."""

    def __init__(self, value: Any) -> None:
        self._value = value

    def serialize(self, record: Any) -> bytes | None:
        if record.get_row_kind() in (RowKind.DELETE, RowKind.UPDATE_BEFORE):
            return None
        return self._value.serialize(record)  # type: ignore[no-any-return]


def create_sink(stream: DataStream, spec: TableSpec, fields: tuple[Field, ...],
                context: registry.ConnectorContext) -> Any:
    as_kafka, _ = _checked(spec)
    layout = kafka._Layout(as_kafka, sink_fields(spec, fields))
    options = layout.options
    topic = options.get_str("topic")
    if topic is None or ";" in topic:
        raise ValidationError("The 'upsert-kafka' sink writes to a single 'topic'.")
    assert layout.key is not None
    records = (KafkaRecordSerializationSchema.builder().set_topic(topic)
               .set_value_serialization_schema(_UpsertValue(kafka._Projected(
                   layout.value.encode, layout.value_indexes, layout.width)))
               .set_key_serialization_schema(kafka._Projected(
                   layout.key.encode, layout.key_indexes, layout.width)))
    return stream._add_sink(f"Sink: upsert-kafka[{spec.name}]",
                            kafka.kafka_sink(options, records.build()),
                            parallelism=sink_parallelism(spec))


class UpsertKafkaFactory:
    identifier = "upsert-kafka"

    def required_options(self) -> set[str]:
        return {"topic", "properties.bootstrap.servers", "key.format", "value.format"}

    def optional_options(self) -> set[str]:
        patterns = {"properties.#", "key.#", "value.#"}
        return (CONNECTOR_OPTIONS - {"connector"}) | patterns

    def create_source(self, spec: TableSpec, context: registry.ConnectorContext) -> DataStream:
        return create_source(spec, context)

    def create_sink(self, stream: DataStream, spec: TableSpec, fields: tuple[Field, ...],
                    context: registry.ConnectorContext) -> Any:
        return create_sink(stream, spec, fields, context)

    def accepts_updates(self, spec: TableSpec) -> bool:
        return True


FACTORY = UpsertKafkaFactory()
registry.FACTORIES[FACTORY.identifier] = FACTORY

__all__ = ["ChangelogNormalize", "UpsertKafkaFactory", "UpsertRecordDeserializer"]
