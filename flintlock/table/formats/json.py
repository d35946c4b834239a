"""The ``json`` format of Flink's table connectors: one JSON object per row and line.

Writing (Flink's ``JsonRowDataSerializationSchema``): fields in schema order, compact
(``{"a":1,"b":"x"}``), NULL as ``null`` (left out with ``json.encode.ignore-null-fields``),
values as ``_text`` describes (timestamps by ``json.timestamp-format.standard``: ``SQL`` or
``ISO-8601``; decimals normalized unless ``json.encode.decimal-as-plain-number``), ARRAY as a
list, ROW as an object, MAP (string keys only, as Flink) as an object whose NULL keys follow
``json.map-null-key.mode`` (``FAIL``, ``DROP``, ``LITERAL`` with ``json.map-null-key.literal``).

Reading (``JsonRowDataDeserializationSchema``): a missing field is NULL (an error with
``json.fail-on-missing-field``), unknown fields are ignored, numbers and booleans are also read
from strings, a STRING field takes a non-string value's JSON text. A line that is not a JSON
object or whose values do not convert raises ``FormatParseError`` (``Failed to deserialize JSON
'...'``); with ``json.ignore-parse-errors`` a line that is not JSON is skipped and a field
that does not convert is NULL, as in Flink.

Built on the driver; encoders and decoders run on the task threads of the sink or source.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection
from itertools import repeat
from typing import Any

from flintlock.common.types import row_of
from flintlock.table import types as t
from flintlock.table.connectors._options import Options
from flintlock.table.formats import _columns, _text
from flintlock.table.formats._base import FormatParseError, FormatSettings
from flintlock.table.plan.nodes import Field

OPTION_KEYS = frozenset({
    "fail-on-missing-field", "ignore-parse-errors", "timestamp-format.standard",
    "map-null-key.mode", "map-null-key.literal", "encode.decimal-as-plain-number",
    "encode.ignore-null-fields", "decode.json-parser.enabled",
})

Text = Callable[[Any], str]


class JsonSettings(FormatSettings):
    """The ``json.*`` (or ``canal-json.*``) options, read once."""

    def __init__(self, options: Options, prefix: str) -> None:
        super().__init__(options, prefix)
        self.iso = self.choice("timestamp-format.standard", ("SQL", "ISO-8601"), "SQL") != "SQL"
        self.plain_decimals = self.flag("encode.decimal-as-plain-number")
        self.ignore_nulls = self.flag("encode.ignore-null-fields")
        self.null_key_mode = self.choice("map-null-key.mode", ("FAIL", "DROP", "LITERAL"), "FAIL")
        self.null_key_literal = self.text("map-null-key.literal", "null")
        self.fail_on_missing = self.flag("fail-on-missing-field")
        self.ignore_errors = self.flag("ignore-parse-errors")


# -- writing --------------------------------------------------------------------------------------

def _string(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def value_writer(data_type: t.DataType, settings: JsonSettings) -> Text:
    """The JSON text of a non-NULL value of ``data_type``."""
    if isinstance(data_type, t.BooleanType):
        return lambda v: "true" if v else "false"
    if isinstance(data_type, (t.TinyIntType, t.SmallIntType, t.IntType, t.BigIntType)):
        return lambda v: str(int(v))
    if isinstance(data_type, t.DoubleType):
        return lambda v: _text.java_double(float(v))
    if isinstance(data_type, t.FloatType):
        return lambda v: _text.java_float(float(v))
    if isinstance(data_type, t.DecimalType):
        plain = settings.plain_decimals
        return lambda v: _text.decimal_text(v, plain)
    if isinstance(data_type, (t.CharType, t.VarCharType)):
        return _string
    if isinstance(data_type, (t.BinaryType, t.VarBinaryType)):
        return lambda v: '"' + _text.bytes_text(v) + '"'
    iso = settings.iso
    if isinstance(data_type, t.TimestampType):
        return lambda v: '"' + _text.timestamp_text(v, iso) + '"'
    if isinstance(data_type, t.LocalZonedTimestampType):
        return lambda v: '"' + _text.timestamp_text(v, iso, zone=True) + '"'
    if isinstance(data_type, t.DateType):
        return lambda v: '"' + _text.date_text(v) + '"'
    if isinstance(data_type, t.TimeType):
        return lambda v: '"' + _text.time_text(v) + '"'
    return _nested_writer(data_type, settings)


def _nullable(write: Text) -> Text:
    return lambda v: "null" if v is None else write(v)


def _nested_writer(data_type: t.DataType, settings: JsonSettings) -> Text:
    if isinstance(data_type, t.ArrayType):
        element = _nullable(value_writer(data_type.element_type, settings))
        return lambda v: "[" + ",".join(map(element, v)) + "]"
    if isinstance(data_type, t.MapType):
        if not isinstance(data_type.key_type, (t.CharType, t.VarCharType)):
            raise FormatParseError(
                f"JSON format doesn't support non-string as key type of map. The type is: "
                f"{t.sql_string(data_type)}")
        return _map_writer(_nullable(value_writer(data_type.value_type, settings)), settings)
    if isinstance(data_type, t.MultisetType):
        if not isinstance(data_type.element_type, (t.CharType, t.VarCharType)):
            raise FormatParseError(
                f"JSON format doesn't support non-string as key type of map. The type is: "
                f"{t.sql_string(data_type)}")
        return _map_writer(str, settings)
    if isinstance(data_type, t.RowType):
        return row_writer([Field(f.name, f.data_type) for f in data_type.fields], settings)
    raise FormatParseError(f"Unsupported type for the JSON format: {t.sql_string(data_type)}")


def _map_writer(value: Text, settings: JsonSettings) -> Text:
    mode, literal = settings.null_key_mode, settings.null_key_literal

    def write(entries: dict[Any, Any]) -> str:
        parts = []
        for key, item in entries.items():
            if key is None:
                if mode == "DROP":
                    continue
                if mode == "FAIL":
                    raise FormatParseError(
                        "JSON format doesn't support to serialize map data with null keys. You "
                        "can drop null key entries or encode null in literals by specifying "
                        "map-null-key.mode option.")
                key = literal
            parts.append(_string(key) + ":" + value(item))
        return "{" + ",".join(parts) + "}"
    return write


def row_writer(fields: list[Field], settings: JsonSettings) -> Text:
    """The JSON object text of a row (a ``Row`` or any sequence of the field values)."""
    names = [_string(f.name) + ":" for f in fields]
    writers = [value_writer(f.type, settings) for f in fields]
    pairs = list(zip(names, writers, strict=True))
    skip_nulls = settings.ignore_nulls

    def write(row: Any) -> str:
        parts = []
        for (name, writer), value in zip(pairs, row, strict=True):
            if value is None:
                if not skip_nulls:
                    parts.append(name + "null")
            else:
                parts.append(name + writer(value))
        return "{" + ",".join(parts) + "}"
    return write


# -- reading ---------------------------------------------------------------------------------------

Read = Callable[[Any], Any]


def _text_of(node: Any) -> str:
    return node if isinstance(node, str) else json.dumps(node, separators=(",", ":"))


def value_reader(data_type: t.DataType, settings: JsonSettings) -> Read:
    """A JSON value (as ``json.loads`` gives it) as a Python value of ``data_type``."""
    if isinstance(data_type, t.BooleanType):
        return lambda n: n if isinstance(n, bool) else _text.parse_boolean(_text_of(n))
    if isinstance(data_type, (t.TinyIntType, t.SmallIntType, t.IntType, t.BigIntType)):
        return _integer
    if isinstance(data_type, (t.DoubleType, t.FloatType)):
        return lambda n: float(n) if not isinstance(n, (dict, list, bool)) else _bad(n)
    if isinstance(data_type, t.DecimalType):
        precision, scale = data_type.precision, data_type.scale
        return lambda n: _text.parse_decimal(_text_of(n), precision, scale)
    if isinstance(data_type, (t.CharType, t.VarCharType)):
        return _text_of
    if isinstance(data_type, (t.BinaryType, t.VarBinaryType)):
        return lambda n: _text.parse_bytes(n)
    iso = settings.iso
    if isinstance(data_type, t.TimestampType):
        return lambda n: _text.parse_timestamp(n, iso)
    if isinstance(data_type, t.LocalZonedTimestampType):
        return lambda n: _text.parse_timestamp(n, iso, zone=True)
    if isinstance(data_type, t.DateType):
        return _text.parse_date
    if isinstance(data_type, t.TimeType):
        return _text.parse_time
    return _nested_reader(data_type, settings)


def _integer(node: Any) -> int:
    if isinstance(node, (bool, dict, list)):
        raise ValueError(f"unexpected JSON value {node!r}")
    if isinstance(node, float):
        return int(node)
    return int(str(node).strip())


def _bad(node: Any) -> Any:
    raise ValueError(f"unexpected JSON value {node!r}")


def _nullable_reader(read: Read) -> Read:
    return lambda n: None if n is None else read(n)


def _nested_reader(data_type: t.DataType, settings: JsonSettings) -> Read:
    if isinstance(data_type, t.ArrayType):
        element = _nullable_reader(value_reader(data_type.element_type, settings))
        return lambda n: [element(e) for e in n] if isinstance(n, list) else _bad(n)
    if isinstance(data_type, t.MapType):
        key = value_reader(data_type.key_type, settings)
        value = _nullable_reader(value_reader(data_type.value_type, settings))
        return lambda n: ({key(k): value(v) for k, v in n.items()} if isinstance(n, dict)
                          else _bad(n))
    if isinstance(data_type, t.MultisetType):
        member = value_reader(data_type.element_type, settings)
        return lambda n: ({member(k): int(v) for k, v in n.items()} if isinstance(n, dict)
                          else _bad(n))
    if isinstance(data_type, t.RowType):
        fields = [Field(f.name, f.data_type) for f in data_type.fields]
        names = [f.name for f in fields]
        read = object_reader(fields, settings)
        return lambda n: row_of(read(n), fields=names)
    raise FormatParseError(f"Unsupported type for the JSON format: {t.sql_string(data_type)}")


def _or_null(read: Read) -> Read:
    """With ``ignore-parse-errors`` a field that does not convert is NULL (the row stays)."""
    def lenient(node: Any) -> Any:
        try:
            return read(node)
        except (ValueError, TypeError, ArithmeticError, AttributeError):
            return None
    return lenient


def object_reader(fields: list[Field], settings: JsonSettings,
                  wanted: Collection[int] | None = None) -> Callable[[Any], list[Any]]:
    """A JSON object as the list of the fields' values (a field not in ``wanted``, all by
    default, as the JSON value it holds, unconverted)."""
    readers = [(f.name, _nullable_reader(value_reader(f.type, settings))
                if wanted is None or i in wanted else _as_is) for i, f in enumerate(fields)]
    if settings.ignore_errors:
        readers = [(name, _or_null(reader)) for name, reader in readers]
    fail_on_missing = settings.fail_on_missing

    def read(node: Any) -> list[Any]:
        if not isinstance(node, dict):
            return _bad(node)  # type: ignore[no-any-return]
        values: list[Any] = []
        for name, reader in readers:
            if name not in node:
                if fail_on_missing:
                    raise ValueError("Some field is missing in the JSON data.")
                values.append(None)
                continue
            try:
                values.append(reader(node[name]))
            except (ValueError, TypeError, ArithmeticError, AttributeError) as error:
                raise ValueError(f"Fail to deserialize at field: {name}.") from error
        return values
    return read


def _as_is(node: Any) -> Any:
    return node


def line_reader(fields: list[Field], settings: JsonSettings,
                wanted: Collection[int] | None = None) -> Callable[[str], list[Any] | None]:
    """A line as the row's values; None for a skipped line (parse errors ignored)."""
    read = object_reader(fields, settings, wanted)
    ignore = settings.ignore_errors

    def parse(line: str) -> list[Any] | None:
        if not line.strip():
            return None
        try:
            return read(json.loads(line))
        except (ValueError, TypeError, ArithmeticError, AttributeError) as error:
            if ignore:
                return None
            raise FormatParseError(f"Failed to deserialize JSON '{line}'.") from error
    return parse


_KEPT: dict[type[t.DataType], tuple[type, ...]] = {
    t.TinyIntType: (int,), t.SmallIntType: (int,), t.IntType: (int,), t.BigIntType: (int,),
    t.CharType: (str,), t.VarCharType: (str,)}
"""Types whose JSON values are the column's values as they are, when every one has the type."""


def _column(data_type: t.DataType, settings: JsonSettings) -> Callable[[list[Any]], list[Any]]:
    read = _nullable_reader(value_reader(data_type, settings))
    kept = frozenset((*_KEPT.get(type(data_type), ()), type(None)))

    def convert(nodes: list[Any]) -> list[Any]:
        if len(kept) > 1 and set(map(type, nodes)) <= kept:
            return nodes
        return list(map(read, nodes))
    return convert


def batch_reader(fields: list[Field], settings: JsonSettings,
                 wanted: Collection[int] | None = None) -> _columns.BatchRead:
    """Lines as columns (``formats._columns``): the batch parsed as one JSON array and each
    wanted field taken from every object at once; a batch that is not one object per line
    (a blank line, a line that is not JSON or not an object, with ``fail-on-missing-field``
    a missing field) or where a value does not convert is read line by line
    (``line_reader``), which gives its errors, skips and NULLs."""
    width = len(fields)
    per_line = _columns.per_line(line_reader(fields, settings, wanted), width, wanted)
    converters = [(i, f.name, _column(f.type, settings)) for i, f in enumerate(fields)
                  if wanted is None or i in wanted]
    fail_on_missing = settings.fail_on_missing

    def decode(lines: list[str]) -> tuple[_columns.Columns, int]:
        try:
            nodes = json.loads("[" + ",".join(lines) + "]")
        except ValueError:
            return per_line(lines)
        if len(nodes) != len(lines) or (nodes and set(map(type, nodes)) != {dict}):
            return per_line(lines)
        columns: _columns.Columns = [None] * width
        try:
            for i, name, convert in converters:
                if fail_on_missing and not all(map(dict.__contains__, nodes, repeat(name))):
                    return per_line(lines)
                columns[i] = convert(list(map(dict.get, nodes, repeat(name))))
        except (ValueError, TypeError, ArithmeticError, AttributeError):
            return per_line(lines)
        return columns, len(nodes)
    return decode


__all__ = ["OPTION_KEYS", "JsonSettings", "batch_reader", "line_reader", "row_writer",
           "value_writer"]
