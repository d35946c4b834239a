"""The ``avro`` format of Flink's table connectors: a row as one Avro datum in Avro's binary
encoding, no container header, with the schema Flink derives from the table's columns
(``AvroSchemaConverter``): a record named ``record`` whose fields are the columns, a nullable
column as the union ``["null", T]``; BOOLEAN ``boolean``, TINYINT / SMALLINT / INT ``int``,
BIGINT ``long``, FLOAT ``float``, DOUBLE ``double``, CHAR / VARCHAR ``string``, BINARY /
VARBINARY ``bytes``, DECIMAL ``bytes`` with the ``decimal`` logical type, DATE ``int`` ``date``,
TIME ``int`` ``time-millis``, TIMESTAMP / TIMESTAMP_LTZ ``long`` ``timestamp-millis`` (precision
up to 3) or ``timestamp-micros``, ARRAY ``array``, MAP (string keys) ``map``, ROW a nested
record named ``record_<column>``.

A binary format: used by the Kafka connector (message values), not by the filesystem
connector. Encoding and decoding are fastavro's (the ``avro`` extra); a datum that does not
decode raises ``FormatParseError`` unless ``avro.ignore-parse-errors`` (flintlock's; Flink's
avro format has none, so it is not accepted as an option here). Runs on task threads.
"""

from __future__ import annotations

import datetime
import io
from collections.abc import Callable
from typing import Any

from flintlock.common.types import Row, row_of
from flintlock.datastream.formats._avro_files import load_fastavro
from flintlock.table import types as t
from flintlock.table.connectors._options import Options
from flintlock.table.errors import UnsupportedFeatureError
from flintlock.table.formats._base import FormatParseError, FormatSettings
from flintlock.table.plan.nodes import Field

OPTION_KEYS = frozenset({"encoding", "codec", "timestamp_mapping.legacy"})
_UTC = datetime.UTC


class AvroSettings(FormatSettings):
    def __init__(self, options: Options, prefix: str) -> None:
        super().__init__(options, prefix)
        if self.choice("encoding", ("binary", "json"), "binary") != "binary":
            raise UnsupportedFeatureError("the Avro format's JSON encoding ('avro.encoding')")


def avro_type(data_type: t.DataType, name: str) -> Any:
    """The Avro schema of ``data_type`` (a union with null when it is nullable)."""
    plain = _plain(data_type, name)
    return ["null", plain] if data_type._nullable else plain


def _plain(data_type: t.DataType, name: str) -> Any:
    simple = {t.BooleanType: "boolean", t.TinyIntType: "int", t.SmallIntType: "int",
              t.IntType: "int", t.BigIntType: "long", t.FloatType: "float",
              t.DoubleType: "double", t.CharType: "string", t.VarCharType: "string",
              t.BinaryType: "bytes", t.VarBinaryType: "bytes"}
    found = simple.get(type(data_type))
    if found is not None:
        return found
    if isinstance(data_type, t.DecimalType):
        return {"type": "bytes", "logicalType": "decimal", "precision": data_type.precision,
                "scale": data_type.scale}
    if isinstance(data_type, t.DateType):
        return {"type": "int", "logicalType": "date"}
    if isinstance(data_type, t.TimeType):
        return {"type": "int", "logicalType": "time-millis"}
    if isinstance(data_type, (t.TimestampType, t.LocalZonedTimestampType)):
        unit = "millis" if data_type.precision <= 3 else "micros"
        return {"type": "long", "logicalType": f"timestamp-{unit}"}
    if isinstance(data_type, t.ArrayType):
        return {"type": "array", "items": avro_type(data_type.element_type, name)}
    if isinstance(data_type, t.MapType) and isinstance(data_type.key_type,
                                                        (t.CharType, t.VarCharType)):
        return {"type": "map", "values": avro_type(data_type.value_type, name)}
    if isinstance(data_type, t.RowType):
        return record_schema([Field(f.name, f.data_type) for f in data_type.fields],
                             f"record_{name}")
    raise FormatParseError(f"Unsupported type for the Avro format: {t.sql_string(data_type)}")


def record_schema(fields: list[Field], name: str = "record") -> dict[str, Any]:
    out = []
    for field in fields:
        entry: dict[str, Any] = {"name": field.name, "type": avro_type(field.type, field.name)}
        if field.type._nullable:
            entry["default"] = None
        out.append(entry)
    return {"type": "record", "name": name, "fields": out}


def _to_datum(value: Any, data_type: t.DataType) -> Any:
    if value is None:
        return None
    if isinstance(data_type, t.RowType):
        return {f.name: _to_datum(v, f.data_type)
                for f, v in zip(data_type.fields, value, strict=True)}
    if isinstance(data_type, t.ArrayType):
        return [_to_datum(v, data_type.element_type) for v in value]
    if isinstance(data_type, t.MapType):
        return {k: _to_datum(v, data_type.value_type) for k, v in value.items()}
    if isinstance(data_type, (t.TimestampType, t.LocalZonedTimestampType)) and (
            value.tzinfo is None):
        return value.replace(tzinfo=_UTC)
    return value


def _from_datum(value: Any, data_type: t.DataType) -> Any:
    if value is None:
        return None
    if isinstance(data_type, t.RowType):
        return row_of([_from_datum(value.get(f.name), f.data_type) for f in data_type.fields],
                      fields=list(data_type.names))
    if isinstance(data_type, t.ArrayType):
        return [_from_datum(v, data_type.element_type) for v in value]
    if isinstance(data_type, t.MapType):
        return {k: _from_datum(v, data_type.value_type) for k, v in value.items()}
    if isinstance(value, datetime.datetime) and value.tzinfo is not None:
        return value.astimezone(_UTC).replace(tzinfo=None)
    return value


def row_writer(fields: list[Field], settings: AvroSettings) -> Callable[[Any], bytes]:
    fastavro = load_fastavro()
    schema = fastavro.parse_schema(record_schema(fields))
    row_type = t.RowType([t.RowField(f.name, f.type) for f in fields])

    def write(row: Any) -> bytes:
        buffer = io.BytesIO()
        fastavro.schemaless_writer(buffer, schema, _to_datum(row, row_type))
        return buffer.getvalue()
    return write


def bytes_reader(fields: list[Field], settings: AvroSettings
                 ) -> Callable[[bytes], list[Any] | None]:
    fastavro = load_fastavro()
    schema = fastavro.parse_schema(record_schema(fields))
    row_type = t.RowType([t.RowField(f.name, f.type) for f in fields])

    def read(data: bytes) -> list[Any] | None:
        try:
            datum = fastavro.schemaless_reader(io.BytesIO(data), schema)
        except Exception as error:  # fastavro raises many kinds for a bad datum
            raise FormatParseError(f"Failed to deserialize Avro record: {error}") from error
        row = _from_datum(datum, row_type)
        return list(row._values) if isinstance(row, Row) else None
    return read


__all__ = ["OPTION_KEYS", "AvroSettings", "bytes_reader", "record_schema", "row_writer"]
