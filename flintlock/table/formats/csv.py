"""The ``csv`` format of Flink's table connectors: one line per row, columns in schema order.

Writing (Flink's ``CsvRowDataSerializationSchema`` on Jackson's CSV generator): columns joined
by ``csv.field-delimiter`` (``,``); NULL as ``csv.null-literal`` (nothing by default); a text
column is quoted with ``csv.quote-character`` (``"``, doubled inside) when Jackson's loose check
asks for it — longer than 24 characters, or holding a character below the safe minimum (one
past the largest of the delimiter, the quote and the line feed: a space, a comma, a quote...),
unless ``csv.disable-quote-character``; a quote inside is doubled (also with
``csv.escape-character``, which only makes a value holding it quoted, itself doubled).
Values as ``_text`` describes; ARRAY elements and ROW fields joined by
``csv.array-element-delimiter`` (``;``). MAP and MULTISET are refused, as Flink does.

Reading (``CsvRowDataDeserializationSchema``): the line is split with Python's ``csv`` module
under the same delimiter, quote and escape; a column equal to ``csv.null-literal`` is NULL, any
other is converted (an empty column is the empty STRING, ``false`` for a BOOLEAN, and an error
for a number or a date, as in Flink); a line with another number of columns or a column that
does not convert raises ``FormatParseError``. With ``csv.ignore-parse-errors`` a
column that does not convert is NULL and a line with too few or too many columns is skipped.
``csv.allow-comments`` skips lines starting with ``#``.

Built on the driver; writers and readers run on the task threads of the sink or source.
"""

from __future__ import annotations

import csv
import decimal
import importlib
import os
from collections.abc import Callable, Collection
from itertools import repeat
from typing import Any

from flintlock.common.speedups import PURE_PYTHON_ENV
from flintlock.common.types import row_of
from flintlock.table import types as t
from flintlock.table.connectors._options import Options
from flintlock.table.formats import _columns, _text
from flintlock.table.formats._base import FormatParseError, FormatSettings
from flintlock.table.plan.nodes import Field

OPTION_KEYS = frozenset({
    "field-delimiter", "disable-quote-character", "quote-character", "allow-comments",
    "ignore-parse-errors", "array-element-delimiter", "escape-character", "null-literal",
    "write-bigdecimal-in-scientific-notation",
})
MAX_QUOTE_CHECK = 24


class CsvSettings(FormatSettings):
    def __init__(self, options: Options, prefix: str) -> None:
        super().__init__(options, prefix)
        delimiter = self.text("field-delimiter", ",")
        if delimiter == "\\t":
            delimiter = "\t"
        if len(delimiter) != 1:
            raise FormatParseError(
                f"Option '{self.key('field-delimiter')}' must be a string with single "
                f"character, but was: {delimiter}")
        self.delimiter = delimiter
        self.quote = None if self.flag("disable-quote-character") else self.char(
            "quote-character", '"')
        self.escape = self.char("escape-character", None)
        self.array_delimiter = self.text("array-element-delimiter", ";")
        self.null_literal = self.optional_text("null-literal")
        self.comments = self.flag("allow-comments")
        self.ignore_errors = self.flag("ignore-parse-errors")
        self.scientific = self.flag("write-bigdecimal-in-scientific-notation", True)
        self.min_safe = max(ord(delimiter), ord(self.quote or "\0"), ord("\n")) + 1


# -- writing --------------------------------------------------------------------------------------

Text = Callable[[Any], str]


def _scalar_text(data_type: t.DataType, settings: CsvSettings) -> Text | None:
    if isinstance(data_type, t.BooleanType):
        return lambda v: "true" if v else "false"
    if isinstance(data_type, (t.TinyIntType, t.SmallIntType, t.IntType, t.BigIntType)):
        return lambda v: str(int(v))
    if isinstance(data_type, t.DoubleType):
        return lambda v: _text.java_double(float(v))
    if isinstance(data_type, t.FloatType):
        return lambda v: _text.java_float(float(v))
    if isinstance(data_type, t.DecimalType):
        plain = not settings.scientific
        return lambda v: _text.decimal_text(decimal.Decimal(v), plain)
    if isinstance(data_type, (t.CharType, t.VarCharType)):
        return str
    if isinstance(data_type, (t.BinaryType, t.VarBinaryType)):
        return _text.bytes_text
    if isinstance(data_type, t.TimestampType):
        return _text.timestamp_text
    if isinstance(data_type, t.LocalZonedTimestampType):
        return lambda v: _text.timestamp_text(v, zone=True)
    if isinstance(data_type, t.DateType):
        return _text.date_text
    if isinstance(data_type, t.TimeType):
        return _text.time_text
    return None


def column_text(data_type: t.DataType, settings: CsvSettings, nested: bool = False) -> Text:
    """The unquoted text of a non-NULL column value."""
    scalar = _scalar_text(data_type, settings)
    if scalar is not None:
        return scalar
    if nested:
        raise FormatParseError(
            f"Unsupported type for the CSV format: nested {t.sql_string(data_type)}")
    null = settings.null_literal or ""
    joiner = settings.array_delimiter
    if isinstance(data_type, t.ArrayType):
        element = column_text(data_type.element_type, settings, nested=True)
        return lambda v: joiner.join(null if e is None else element(e) for e in v)
    if isinstance(data_type, t.RowType):
        texts = [column_text(f.data_type, settings, nested=True) for f in data_type.fields]
        return lambda v: joiner.join(null if e is None else text(e)
                                     for text, e in zip(texts, v, strict=True))
    raise FormatParseError(f"Unsupported type for the CSV format: {t.sql_string(data_type)}")


def _quoter(settings: CsvSettings) -> Callable[[str], str]:
    quote, escape, min_safe = settings.quote, settings.escape, settings.min_safe
    if quote is None:
        return lambda text: text
    def quoted(text: str) -> str:
        if len(text) > MAX_QUOTE_CHECK or any(ord(c) < min_safe or c == escape for c in text):
            if escape:
                text = text.replace(escape, escape + escape)
            return quote + text.replace(quote, quote + quote) + quote
        return text
    return quoted


def row_writer(fields: list[Field], settings: CsvSettings) -> Text:
    """The CSV line (without line feed) of a row."""
    quote = _quoter(settings)
    texts = []
    for field in fields:
        try:
            text = column_text(field.type, settings)
        except FormatParseError:
            raise FormatParseError(f"Unsupported type '{t.sql_string(field.type)}' for field "
                                   f"'{field.name}'.") from None
        is_text = _scalar_text(field.type, settings) is None or isinstance(
            field.type, (t.CharType, t.VarCharType, t.BinaryType, t.VarBinaryType, t.DateType,
                         t.TimeType, t.TimestampType, t.LocalZonedTimestampType))
        texts.append((text, is_text))
    delimiter = settings.delimiter
    null = settings.null_literal or ""

    def write(row: Any) -> str:
        parts = []
        for (text, is_text), value in zip(texts, row, strict=True):
            if value is None:
                parts.append(null)
            elif is_text:
                parts.append(quote(text(value)))
            else:
                parts.append(text(value))
        return delimiter.join(parts)
    return write


# -- reading ---------------------------------------------------------------------------------------

Read = Callable[[str], Any]


def column_reader(data_type: t.DataType, settings: CsvSettings, nested: bool = False) -> Read:
    """A column's text (not empty) as a value of ``data_type``."""
    if isinstance(data_type, t.BooleanType):
        return _text.parse_boolean
    if isinstance(data_type, (t.TinyIntType, t.SmallIntType, t.IntType, t.BigIntType)):
        return lambda s: int(s.strip())
    if isinstance(data_type, (t.DoubleType, t.FloatType)):
        return lambda s: float(s.strip())
    if isinstance(data_type, t.DecimalType):
        precision, scale = data_type.precision, data_type.scale
        return lambda s: _text.parse_decimal(s, precision, scale)
    if isinstance(data_type, (t.CharType, t.VarCharType)):
        return str
    if isinstance(data_type, (t.BinaryType, t.VarBinaryType)):
        return _text.parse_bytes
    if isinstance(data_type, t.TimestampType):
        return _text.parse_timestamp
    if isinstance(data_type, t.LocalZonedTimestampType):
        return lambda s: _text.parse_timestamp(s.rstrip("Z"))
    if isinstance(data_type, t.DateType):
        return _text.parse_date
    if isinstance(data_type, t.TimeType):
        return _text.parse_time
    if nested:
        raise FormatParseError(
            f"Unsupported type for the CSV format: nested {t.sql_string(data_type)}")
    splitter = settings.array_delimiter
    if isinstance(data_type, t.ArrayType):
        element = column_reader(data_type.element_type, settings, nested=True)
        return lambda s: [element(part) if part else None for part in s.split(splitter)]
    if isinstance(data_type, t.RowType):
        readers = [column_reader(f.data_type, settings, nested=True) for f in data_type.fields]
        names = list(data_type.names)
        return lambda s: row_of([r(part) if part else None for r, part in zip(
            readers, s.split(splitter), strict=True)], fields=names)
    raise FormatParseError(f"Unsupported type for the CSV format: {t.sql_string(data_type)}")


def line_reader(fields: list[Field], settings: CsvSettings,
                wanted: Collection[int] | None = None) -> Callable[[str], list[Any] | None]:
    """A line as the row's values; None for a skipped line. A column not in ``wanted`` (all
    by default) keeps its text, unconverted (see ``_columns``)."""
    readers = [(column_reader(f.type, settings) if wanted is None or i in wanted else str,
                isinstance(f.type, (t.CharType, t.VarCharType)))
               for i, f in enumerate(fields)]
    null, ignore, comments = settings.null_literal, settings.ignore_errors, settings.comments
    dialect: dict[str, Any] = dict(
        delimiter=settings.delimiter, quotechar=settings.quote or '"',
        quoting=csv.QUOTE_NONE if settings.quote is None else csv.QUOTE_MINIMAL,
        escapechar=settings.escape, doublequote=True, strict=False)
    width = len(readers)

    def convert(read: Read, is_string: bool, text: str) -> Any:
        if text == null:
            return None
        try:
            return read(text)
        except (ValueError, ArithmeticError, TypeError):
            if ignore:
                return None
            raise

    def parse(line: str) -> list[Any] | None:
        if not line or (comments and line.startswith("#")):
            return None
        try:
            columns = next(csv.reader([line], **dialect))
            if len(columns) != width:
                raise ValueError(f"Row length mismatch. {width} fields expected but was "
                                 f"{len(columns)}.")
            return [convert(read, is_string, text)
                    for (read, is_string), text in zip(readers, columns, strict=True)]
        except (ValueError, ArithmeticError, TypeError, csv.Error) as error:
            if ignore:
                return None
            raise FormatParseError(f"Failed to deserialize CSV row '{line}'.") from error
    return parse


def batch_reader(fields: list[Field], settings: CsvSettings,
                 wanted: Collection[int] | None = None) -> _columns.BatchRead:
    """Lines as columns (``_columns``): where no line holds the quote or escape character
    or a NUL, none is empty or a comment, and every line has the schema's number of columns,
    the lines are split at the delimiter at once (what the ``csv`` module reads from such a
    line) and the wanted columns are converted whole (``_split``: in C where built, else
    ``_python_split``); any other batch, or one where a column does not convert, is read line
    by line (``line_reader``), which gives its errors and skips."""
    per_line = _columns.per_line(line_reader(fields, settings, wanted), len(fields), wanted)
    split = _split(fields, settings, wanted)
    specials = [c for c in (settings.quote, settings.escape, "\0") if c]
    comments = settings.comments
    one_column = len(fields) == 1  # else an empty line has too few columns: per line anyway

    def decode(lines: list[str]) -> tuple[_columns.Columns, int]:
        text = "\n".join(lines)
        if (any(c in text for c in specials) or (one_column and "" in lines)
                or (comments and ("\n#" in text or text.startswith("#")))):
            return per_line(lines)
        try:
            columns = split(text, lines)
        except _columns.Irregular:
            return per_line(lines)
        return columns, len(lines)
    return decode


Split = Callable[[str, list[str]], _columns.Columns]


def _python_split(fields: list[Field], settings: CsvSettings,
                  wanted: Collection[int] | None) -> Split:
    """``(text, lines) -> columns`` of a batch of plain lines (``batch_reader``), raising
    ``_columns.Irregular`` where a line has another number of columns or a column does not
    convert: the Python twin of ``_c_split``."""
    width, delimiter = len(fields), settings.delimiter
    converters = [(i, _columns.column_converter(
        f.type, column_reader(f.type, settings), settings.null_literal))
        for i, f in enumerate(fields) if wanted is None or i in wanted]

    def split(text: str, lines: list[str]) -> _columns.Columns:
        if set(map(str.count, lines, repeat(delimiter))) != {width - 1}:
            raise _columns.Irregular
        pieces = text.replace("\n", delimiter).split(delimiter)  # line after line
        columns: _columns.Columns = [None] * width
        for i, convert in converters:
            columns[i] = convert(pieces[i::width])
        return columns
    return split


_INTEGERS = (t.TinyIntType, t.SmallIntType, t.IntType, t.BigIntType)


def _c_split(fields: list[Field], settings: CsvSettings, wanted: Collection[int] | None,
             twin: Split) -> Split | None:
    """``_python_split`` with the split, the integer and the plain TIMESTAMP columns in C
    (``common/_cformats.c``; the other wanted columns converted from their texts as the twin
    does); the twin reads a batch the C split finds not plain. None where the C module is not
    built (or ``FLINTLOCK_PURE_PYTHON``), a NULL literal is set (a column equal to it is the
    twin's case) or the delimiter is not one character."""
    if (_cformats is None or settings.null_literal is not None
            or len(settings.delimiter) != 1 or settings.delimiter == "\n"):
        return None
    kinds, after = bytearray(len(fields)), []
    for i, f in enumerate(fields):
        if wanted is not None and i not in wanted:
            continue
        if isinstance(f.type, _INTEGERS):
            kinds[i] = 2
        elif isinstance(f.type, t.TimestampType):
            kinds[i] = 3
        else:
            kinds[i] = 1
            if not isinstance(f.type, (t.CharType, t.VarCharType)):
                after.append((i, _columns.column_converter(
                    f.type, column_reader(f.type, settings), None)))
    split_columns, delimiter, width, codes = (
        _cformats.split_columns, settings.delimiter, len(fields), bytes(kinds))

    def split(text: str, lines: list[str]) -> _columns.Columns:
        columns: _columns.Columns | None = split_columns(text, delimiter, width, len(lines),
                                                          codes)
        if columns is None:
            return twin(text, lines)
        for i, convert in after:
            columns[i] = convert(columns[i])
        return columns
    return split


def _split(fields: list[Field], settings: CsvSettings, wanted: Collection[int] | None
           ) -> Split:
    twin = _python_split(fields, settings, wanted)
    fast = _c_split(fields, settings, wanted, twin)
    if fast is None:
        return twin
    return lambda text, lines: fast(text, lines) if lines else twin(text, lines)


def _load_cformats() -> Any:
    if os.environ.get(PURE_PYTHON_ENV, "").strip().lower() in ("1", "true", "yes"):
        return None
    try:
        return importlib.import_module("flintlock.common._cformats")
    except ImportError:
        return None


_cformats = _load_cformats()
"""The compiled ``common/_cformats`` module, or None (``_python_split`` reads every batch)."""


__all__ = ["OPTION_KEYS", "CsvSettings", "batch_reader", "line_reader", "row_writer"]
