"""Avro rows (PyFlink's ``pyflink.datastream.formats.avro``): each record is one Avro datum in
Avro's binary encoding, without a container header (what Flink's ``AvroRowSerializationSchema``
writes into a Kafka value), described by an Avro record schema given as a JSON string::

    schema = '{"type": "record", "name": "Order", "fields": [
                 {"name": "id", "type": "long"}, {"name": "note", "type": ["null", "string"]}]}'
    reader = AvroRowDeserializationSchema(avro_schema_string=schema)   # bytes -> Row
    writer = AvroRowSerializationSchema(avro_schema_string=schema)     # Row  -> bytes

Encoding and decoding are fastavro's (the ``avro`` extra). Records (also nested ones) become
``Row``s named by the schema's fields; arrays lists, maps dicts; logical types the values
fastavro gives (``date``, ``datetime``, ``Decimal``, ``UUID``). A datum that does not decode,
or leaves bytes over, raises ``FormatParseError``; a row that does not fit the schema too,
naming the schema's complaint. Schemas are parsed once, when the schema object is made, so a
bad schema fails in the user's program.
"""

from __future__ import annotations

import io
import json
from typing import Any, BinaryIO

from flintlock.common.typeinfo import PickledBytesTypeInfo
from flintlock.datastream.formats._avro_files import (
    AvroFileError,
    AvroFileReader,
    load_fastavro,
)
from flintlock.datastream.formats._fields import FormatParseError, row_of

__all__ = ["AvroBulkWriters", "AvroFileError", "AvroInputFormat", "AvroRowDeserializationSchema",
           "AvroRowSerializationSchema", "AvroSchema", "AvroWriters", "FormatParseError",
           "GenericRecordAvroTypeInfo"]


_fastavro = load_fastavro


def _parsed(avro_schema_string: Any, what: str) -> Any:
    if not isinstance(avro_schema_string, str):
        raise TypeError(f"{what} needs avro_schema_string (a JSON str), got "
                        f"{avro_schema_string!r}")
    try:
        schema = json.loads(avro_schema_string)
    except ValueError as bad:
        raise ValueError(f"{what}: the Avro schema is not JSON: {bad}") from None
    if not isinstance(schema, dict) or schema.get("type") != "record":
        raise ValueError(f"{what} needs an Avro record schema, got {avro_schema_string!r}")
    fastavro = _fastavro()
    try:
        return fastavro.parse_schema(schema)
    except (fastavro.schema.SchemaParseException, ValueError, KeyError, TypeError) as bad:
        raise ValueError(f"{what}: invalid Avro schema: {bad}") from None


def _record_names(schema: Any, named: dict[str, Any]) -> None:
    """Every named record type in ``schema``, by name (for references to them)."""
    if isinstance(schema, list):
        for branch in schema:
            _record_names(branch, named)
    elif isinstance(schema, dict):
        if schema.get("type") == "record":
            named[schema["name"]] = schema
            for field in schema["fields"]:
                _record_names(field["type"], named)
        elif schema.get("type") == "array":
            _record_names(schema["items"], named)
        elif schema.get("type") == "map":
            _record_names(schema["values"], named)


class _Rows:
    """Converts between fastavro's dicts and Rows along a parsed schema."""

    def __init__(self, schema: Any) -> None:
        self._named: dict[str, Any] = {}
        _record_names(schema, self._named)

    def _resolve(self, schema: Any) -> Any:
        return self._named.get(schema, schema) if isinstance(schema, str) else schema

    def to_row(self, schema: Any, value: Any) -> Any:
        schema = self._resolve(schema)
        if value is None:
            return None
        if isinstance(schema, list):  # a union: the branch the value was read with
            branches = [b for b in map(self._resolve, schema) if isinstance(b, dict)]
            for branch in branches:
                kind = branch.get("type")
                if (kind == "array" and isinstance(value, list)) or (
                        kind == "record" and isinstance(value, dict)
                        and {f["name"] for f in branch["fields"]} == set(value)):
                    return self.to_row(branch, value)
            maps = [b for b in branches if b.get("type") == "map"]
            if maps and isinstance(value, dict):
                return self.to_row(maps[0], value)
            return value
        if isinstance(schema, dict):
            kind = schema.get("type")
            if kind == "record":
                names = [f["name"] for f in schema["fields"]]
                return row_of(names, [self.to_row(f["type"], value.get(f["name"]))
                                      for f in schema["fields"]])
            if kind == "array":
                return [self.to_row(schema["items"], v) for v in value]
            if kind == "map":
                return {k: self.to_row(schema["values"], v) for k, v in value.items()}
        return value

    def to_datum(self, schema: Any, value: Any) -> Any:
        """``value`` as fastavro writes it for ``schema``: a record from a dict, from a named
        Row whose names are the record's, or else field by field in the schema's order."""
        schema = self._resolve(schema)
        if value is None:
            return None
        if isinstance(schema, list):  # a union: the first branch of the value's kind
            for branch in map(self._resolve, schema):
                if isinstance(branch, dict) and _fits(branch.get("type"), value):
                    return self.to_datum(branch, value)
            return value
        if not isinstance(schema, dict):
            return value
        kind = schema.get("type")
        if kind == "record":
            return self._record(schema, value)
        if kind == "array" and isinstance(value, (list, tuple)):
            return [self.to_datum(schema["items"], v) for v in value]
        if kind == "map" and isinstance(value, dict):
            return {k: self.to_datum(schema["values"], v) for k, v in value.items()}
        return value

    def _record(self, schema: dict[str, Any], value: Any) -> Any:
        fields = schema["fields"]
        names = [f["name"] for f in fields]
        if isinstance(value, dict):
            values = [value.get(n) for n in names]
        elif hasattr(value, "get_field_names") and set(value.get_field_names() or ()) == set(
                names):
            values = [value[n] for n in names]
        elif isinstance(value, (tuple, list)) or hasattr(value, "get_field_names"):
            values = list(value)
            if len(values) != len(names):
                raise FormatParseError(schema.get("name", "(record)"),
                                       f"{len(values)} fields, the schema has {len(names)}")
        else:
            return value  # fastavro names what does not fit
        return {f["name"]: self.to_datum(f["type"], v)
                for f, v in zip(fields, values, strict=True)}


def _fits(kind: Any, value: Any) -> bool:
    """Whether a union branch of ``kind`` takes ``value`` (records, arrays, maps)."""
    if kind == "record":
        return isinstance(value, (tuple, dict)) or hasattr(value, "get_field_names")
    if kind == "array":
        return isinstance(value, list)
    return kind == "map" and isinstance(value, dict)


class AvroRowDeserializationSchema:
    """Avro binary datums to ``Row``s."""

    def __init__(self, record_class: str | None = None,
                 avro_schema_string: str | None = None) -> None:
        if record_class is not None:
            raise ValueError("AvroRowDeserializationSchema takes avro_schema_string; Java "
                             "record classes (record_class) do not exist in flintlock")
        self._schema = _parsed(avro_schema_string, "AvroRowDeserializationSchema")
        self._rows = _Rows(self._schema)

    def deserialize(self, message: bytes) -> Any:
        fastavro = _fastavro()
        stream = io.BytesIO(message)
        try:
            datum = fastavro.schemaless_reader(stream, self._schema, None)
        except (EOFError, StopIteration, ValueError, IndexError, TypeError,
                UnicodeDecodeError) as bad:
            raise FormatParseError("(record)", f"not an Avro datum of the schema: "
                                   f"{type(bad).__name__}: {bad}") from None
        if stream.tell() != len(message):
            raise FormatParseError("(record)", f"{len(message) - stream.tell()} bytes left "
                                   "after the Avro datum")
        return self._rows.to_row(self._schema, datum)


class AvroRowSerializationSchema:
    """``Row``s (or dicts by field name) to Avro binary datums."""

    def __init__(self, record_class: str | None = None,
                 avro_schema_string: str | None = None) -> None:
        if record_class is not None:
            raise ValueError("AvroRowSerializationSchema takes avro_schema_string; Java "
                             "record classes (record_class) do not exist in flintlock")
        self._schema = _parsed(avro_schema_string, "AvroRowSerializationSchema")
        self._rows = _Rows(self._schema)

    def serialize(self, row: Any) -> bytes:
        datum = self._rows.to_datum(self._schema, row)
        out = io.BytesIO()
        fastavro = _fastavro()
        try:
            fastavro.schemaless_writer(out, self._schema, datum, strict=True)
        except (ValueError, TypeError, AttributeError, KeyError) as bad:
            raise FormatParseError("(record)", f"does not fit the Avro schema: {bad}") from None
        return out.getvalue()


class AvroSchema:
    """A parsed Avro schema (PyFlink's ``AvroSchema``): ``AvroSchema.parse_string(json)``."""

    def __init__(self, schema_string: str) -> None:
        self._string = schema_string
        self.parsed = _parsed(schema_string, "AvroSchema")

    @staticmethod
    def parse_string(json_schema: str) -> AvroSchema:
        return AvroSchema(json_schema)

    def __str__(self) -> str:
        return self._string

    def __repr__(self) -> str:
        return f"AvroSchema.parse_string({self._string!r})"


class GenericRecordAvroTypeInfo(PickledBytesTypeInfo):
    """The type of a stream of Avro generic records (dicts, or Rows) of ``schema``; records
    travel between operators pickled, as any undeclared value."""

    __slots__ = ("schema",)

    def __init__(self, schema: AvroSchema) -> None:
        if not isinstance(schema, AvroSchema):
            raise TypeError(f"GenericRecordAvroTypeInfo needs an AvroSchema, got {schema!r}")
        self.schema = schema

    def __repr__(self) -> str:
        return f"GenericRecordAvroTypeInfo({self.schema!r})"


class AvroBulkWriter:
    """Writes the records of one part file as an Avro container file (fastavro)."""

    def __init__(self, stream: BinaryIO, schema: Any, rows: _Rows) -> None:
        self._schema = schema
        self._rows = rows
        self._writer = _fastavro().write.Writer(stream, schema)

    def add_elements(self, records: list[Any]) -> None:
        write, to_datum = self._writer.write, self._rows.to_datum
        for record in records:
            try:
                write(to_datum(self._schema, record))
            except (ValueError, TypeError, AttributeError, KeyError) as bad:
                raise FormatParseError("(record)", f"does not fit the Avro schema: {bad}") \
                    from None

    def finish(self) -> None:
        self._writer.flush()

    def discard(self) -> None:
        """The part file is abandoned: nothing more is written to it."""


class AvroBulkWriterFactory:
    """One ``AvroBulkWriter`` per part file (``FileSink.for_bulk_format``)."""

    def __init__(self, schema: AvroSchema) -> None:
        self._schema = schema

    def create(self, stream: BinaryIO) -> AvroBulkWriter:
        parsed = self._schema.parsed
        return AvroBulkWriter(stream, parsed, _Rows(parsed))

    def __repr__(self) -> str:
        return f"AvroWriters.for_generic_record({self._schema!r})"


class AvroWriters:
    """PyFlink's entry point for Avro part files: ``AvroWriters.for_generic_record(schema)``."""

    @staticmethod
    def for_generic_record(schema: AvroSchema) -> AvroBulkWriterFactory:
        if not isinstance(schema, AvroSchema):
            raise TypeError(f"for_generic_record needs an AvroSchema "
                            f"(AvroSchema.parse_string(...)), got {schema!r}")
        return AvroBulkWriterFactory(schema)


AvroBulkWriters = AvroWriters  # the name newer PyFlink releases give it


class AvroInputFormat:
    """PyFlink's ``AvroInputFormat(path, schema)``: the Avro container file(s) at ``path``
    read as dicts of ``schema`` (a file, or a directory), through
    ``env.create_input(format)``; see ``_avro_files``."""

    def __init__(self, path: str, schema: AvroSchema) -> None:
        if not isinstance(path, str) or not path:
            raise TypeError(f"AvroInputFormat needs a path (a non-empty str), got {path!r}")
        if not isinstance(schema, AvroSchema):
            raise TypeError(f"AvroInputFormat needs an AvroSchema (AvroSchema.parse_string(...))"
                            f", got {schema!r}")
        self._path = path
        self._schema = schema
        self._type_info = GenericRecordAvroTypeInfo(schema)

    def get_produced_type(self) -> GenericRecordAvroTypeInfo:
        return self._type_info

    def create_split_reader(self) -> AvroFileReader:
        return AvroFileReader(self._schema.parsed)

    def as_source(self) -> Any:
        """The bounded ``FileSource`` ``env.create_input`` reads this format with."""
        from flintlock.datastream.connectors.file_system import FileSource

        return FileSource.for_bulk_file_format(self, self._path).build()

    def __repr__(self) -> str:
        return f"AvroInputFormat({self._path!r}, {self._schema!r})"
