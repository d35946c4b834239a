"""JSON rows (PyFlink's ``pyflink.datastream.formats.json``): one JSON object per record, its
members the fields of a declared ``Types.ROW_NAMED(...)``::

    schema = (JsonRowDeserializationSchema.builder()
              .type_info(Types.ROW_NAMED(["id", "name"], [Types.LONG(), Types.STRING()]))
              .ignore_parse_errors()          # skip (and count) malformed records
              .build())
    KafkaSource.builder()....set_value_only_deserializer(schema)

    JsonRowSerializationSchema.builder().with_type_info(row_type).build()

Reading: a missing member or ``null`` is a null field (``fail_on_missing_field()``: a missing
member is an error); members not declared are ignored; numbers are read exactly (a BIG_DEC keeps
every digit). Malformed input raises ``FormatParseError`` (connectors add where it came from,
e.g. the Kafka partition and offset), unless ``ignore_parse_errors()``: then ``deserialize``
returns None, which connectors skip, and ``skipped_records`` counts it (per subtask). Field
representations: ``_fields``.
"""

from __future__ import annotations

import decimal
import json
from typing import Any

from flintlock.datastream.formats._fields import (
    FormatParseError,
    converter,
    row_of,
    row_type,
)

__all__ = ["FormatParseError", "JsonRowDeserializationSchema", "JsonRowSerializationSchema"]


class JsonRowDeserializationSchema:
    """JSON bytes to ``Row``s of the declared type."""

    def __init__(self, type_info: Any, fail_on_missing_field: bool = False,
                 ignore_parse_errors: bool = False) -> None:
        self._type_info = row_type(type_info, "JsonRowDeserializationSchema")
        self._names = self._type_info.get_field_names()
        self._fields = [converter(t) for t in self._type_info.get_field_types()]
        self._fail_on_missing = fail_on_missing_field
        self._ignore_errors = ignore_parse_errors
        self.skipped_records = 0

    @staticmethod
    def builder() -> JsonRowDeserializationSchemaBuilder:
        return JsonRowDeserializationSchemaBuilder()

    def deserialize(self, message: bytes | str) -> Any:
        try:
            return self._parse(message)
        except FormatParseError:
            if not self._ignore_errors:
                raise
            self.skipped_records += 1
            return None

    def _parse(self, message: bytes | str) -> Any:
        try:
            document = json.loads(message, parse_float=decimal.Decimal)
        except (ValueError, TypeError) as bad:
            raise FormatParseError("(record)", f"not JSON: {bad}") from None
        if not isinstance(document, dict):
            raise FormatParseError("(record)", f"expected a JSON object, got {document!r}")
        values = []
        for name, field in zip(self._names, self._fields, strict=True):
            if name not in document and self._fail_on_missing:
                raise FormatParseError(name, "missing")
            value = document.get(name)
            try:
                values.append(None if value is None else field.from_json(value))
            except ValueError as bad:
                raise FormatParseError(name, str(bad)) from None
        return row_of(self._names, values)


class JsonRowDeserializationSchemaBuilder:
    def __init__(self) -> None:
        self._type_info: Any = None
        self._fail_on_missing = False
        self._ignore_errors = False

    def type_info(self, type_info: Any) -> JsonRowDeserializationSchemaBuilder:
        self._type_info = row_type(type_info, "JsonRowDeserializationSchema")
        return self

    def fail_on_missing_field(self) -> JsonRowDeserializationSchemaBuilder:
        self._fail_on_missing = True
        return self

    def ignore_parse_errors(self) -> JsonRowDeserializationSchemaBuilder:
        self._ignore_errors = True
        return self

    def build(self) -> JsonRowDeserializationSchema:
        if self._type_info is None:
            raise ValueError("JsonRowDeserializationSchema needs its row type: call "
                             "type_info(Types.ROW_NAMED([...], [...]))")
        if self._fail_on_missing and self._ignore_errors:
            raise ValueError("fail_on_missing_field and ignore_parse_errors exclude each other")
        return JsonRowDeserializationSchema(self._type_info, self._fail_on_missing,
                                            self._ignore_errors)


class JsonRowSerializationSchema:
    """``Row``s (or tuples, lists, dicts by field name) of the declared type to JSON bytes."""

    def __init__(self, type_info: Any) -> None:
        self._type_info = row_type(type_info, "JsonRowSerializationSchema")
        self._names = self._type_info.get_field_names()
        self._fields = [converter(t) for t in self._type_info.get_field_types()]

    @staticmethod
    def builder() -> JsonRowSerializationSchemaBuilder:
        return JsonRowSerializationSchemaBuilder()

    def serialize(self, row: Any) -> bytes:
        values = [row.get(n) for n in self._names] if isinstance(row, dict) else list(row)
        if len(values) != len(self._names):
            raise FormatParseError("(record)", f"{len(values)} fields, the row type has "
                                   f"{len(self._names)}")
        document = {}
        for name, field, value in zip(self._names, self._fields, values, strict=True):
            try:
                document[name] = None if value is None else field.to_json(value)
            except (ValueError, TypeError, AttributeError) as bad:
                raise FormatParseError(name, f"cannot write {value!r}: {bad}") from None
        return json.dumps(document, ensure_ascii=False, separators=(",", ":"),
                          allow_nan=False).encode()


class JsonRowSerializationSchemaBuilder:
    def __init__(self) -> None:
        self._type_info: Any = None

    def with_type_info(self, type_info: Any) -> JsonRowSerializationSchemaBuilder:
        self._type_info = row_type(type_info, "JsonRowSerializationSchema")
        return self

    def build(self) -> JsonRowSerializationSchema:
        if self._type_info is None:
            raise ValueError("JsonRowSerializationSchema needs its row type: call "
                             "with_type_info(Types.ROW_NAMED([...], [...]))")
        return JsonRowSerializationSchema(self._type_info)


# PyFlink spells the builders both ways: ``JsonRowSerializationSchema.builder()`` and
# ``JsonRowSerializationSchema.Builder()``.
JsonRowDeserializationSchema.Builder = JsonRowDeserializationSchemaBuilder  # type: ignore[attr-defined]
JsonRowSerializationSchema.Builder = JsonRowSerializationSchemaBuilder  # type: ignore[attr-defined]
