"""CSV rows (PyFlink's ``pyflink.datastream.formats.csv``): one CSV line per record, its
columns the fields of a declared ``Types.ROW_NAMED(...)`` in order::

    row = Types.ROW_NAMED(["id", "name"], [Types.LONG(), Types.STRING()])
    schema = (CsvRowDeserializationSchema.Builder(row)
              .set_field_delimiter(";").set_ignore_parse_errors(True).build())
    writer = CsvRowSerializationSchema.Builder(row).set_null_literal("NULL").build()

Fields are scalars or arrays of scalars, whose elements are joined by the array element
delimiter (``;`` by default; an element containing it, or a null element, cannot be written;
an empty array is an empty column, read back as null unless a null literal is set); ROW and
MAP fields are a ``TypeError`` when the schema is built. Quoting follows
RFC 4180 with Python's ``csv`` module (quote character ``"``, doubled inside quotes, or an
escape character if one is set). An empty column is null,
except for a STRING (the empty string) unless a null literal is set; a serialized null is
the null literal (or nothing). A line with another number of columns, or a column that does
not parse, raises ``FormatParseError`` naming the field, unless ``set_ignore_parse_errors``:
then ``deserialize`` returns None, which connectors skip, and ``skipped_records`` counts it.
Serialized lines end with the line delimiter (``\\n``). Field representations: ``_fields``.
"""

from __future__ import annotations

import csv
import io
from typing import Any

# CSV files for FileSource and FileSink (CsvSchema, CsvReaderFormat, CsvBulkWriters).
from flintlock.datastream.formats._csv_files import (
    CsvBulkWriters,
    CsvFileParseError,
    CsvReaderFormat,
    CsvSchema,
    CsvSchemaBuilder,
)
from flintlock.datastream.formats._fields import (
    Converter,
    FormatParseError,
    is_string_type,
    row_of,
    row_type,
    text_form,
)

__all__ = ["CsvBulkWriters", "CsvFileParseError", "CsvReaderFormat", "CsvRowDeserializationSchema",
           "CsvRowSerializationSchema", "CsvSchema", "CsvSchemaBuilder", "FormatParseError"]


def _one_char(value: Any, what: str) -> str:
    if not isinstance(value, str) or len(value) != 1:
        raise ValueError(f"{what} must be a single character, got {value!r}")
    return value


class _Dialect:
    def __init__(self) -> None:
        self.field_delimiter = ","
        self.quote_character: str | None = '"'
        self.escape_character: str | None = None
        self.array_element_delimiter = ";"
        self.null_literal: str | None = None

    def options(self) -> dict[str, Any]:
        quoted = self.quote_character is not None
        return {"delimiter": self.field_delimiter, "quotechar": self.quote_character,
                "escapechar": self.escape_character, "doublequote": self.escape_character is None,
                "quoting": csv.QUOTE_MINIMAL if quoted else csv.QUOTE_NONE,
                # \r\n: the writer then quotes a field holding either character.
                "strict": True, "lineterminator": "\r\n"}


class _Columns:
    """A row type's columns as text (shared by both directions)."""

    def __init__(self, type_info: Any, what: str, array_delimiter: str) -> None:
        row = row_type(type_info, what)
        self.names = row.get_field_names()
        self.types = row.get_field_types()
        self.fields = [text_form(t, array_delimiter) for t in self.types]
        self.strings = [is_string_type(t) for t in self.types]


class CsvRowDeserializationSchema:
    """CSV bytes to ``Row``s of the declared type."""

    def __init__(self, type_info: Any, dialect: _Dialect, ignore_parse_errors: bool) -> None:
        self._columns = _Columns(type_info, "CsvRowDeserializationSchema",
                                 dialect.array_element_delimiter)
        self._dialect = dialect
        self._ignore_errors = ignore_parse_errors
        self.skipped_records = 0

    class Builder:
        def __init__(self, type_info: Any) -> None:
            row_type(type_info, "CsvRowDeserializationSchema")
            self._type_info = type_info
            self._dialect = _Dialect()
            self._ignore_errors = False

        def set_field_delimiter(self, c: str) -> CsvRowDeserializationSchema.Builder:
            self._dialect.field_delimiter = _one_char(c, "field delimiter")
            return self

        def set_allow_comments(self, allow: bool = True) -> CsvRowDeserializationSchema.Builder:
            """Accepted; lines starting with ``#`` are then skipped like malformed ones."""
            self._allow_comments = bool(allow)
            return self

        def set_array_element_delimiter(self, delimiter: str
                                        ) -> CsvRowDeserializationSchema.Builder:
            self._dialect.array_element_delimiter = _text(delimiter, "array element delimiter")
            return self

        def set_quote_character(self, c: str) -> CsvRowDeserializationSchema.Builder:
            self._dialect.quote_character = _one_char(c, "quote character")
            return self

        def set_escape_character(self, c: str) -> CsvRowDeserializationSchema.Builder:
            self._dialect.escape_character = _one_char(c, "escape character")
            return self

        def set_null_literal(self, null_literal: str) -> CsvRowDeserializationSchema.Builder:
            self._dialect.null_literal = _text(null_literal, "null literal")
            return self

        def set_ignore_parse_errors(self, ignore: bool = True
                                    ) -> CsvRowDeserializationSchema.Builder:
            self._ignore_errors = bool(ignore)
            return self

        def build(self) -> CsvRowDeserializationSchema:
            schema = CsvRowDeserializationSchema(self._type_info, self._dialect,
                                                 self._ignore_errors)
            schema._comments = getattr(self, "_allow_comments", False)
            return schema

    _comments = False

    def deserialize(self, message: bytes | str) -> Any:
        text = message.decode() if isinstance(message, (bytes, bytearray)) else message
        if self._comments and text.startswith("#"):
            return None
        try:
            return self._parse(text)
        except FormatParseError:
            if not self._ignore_errors:
                raise
            self.skipped_records += 1
            return None

    def _parse(self, text: str) -> Any:
        try:
            rows = list(csv.reader(io.StringIO(text, newline=""), **self._dialect.options()))
        except csv.Error as bad:
            raise FormatParseError("(record)", f"not CSV: {bad}") from None
        if len(rows) > 1:
            raise FormatParseError("(record)", f"{len(rows)} CSV lines in one record")
        cells = rows[0] if rows else []
        columns = self._columns
        if len(cells) != len(columns.names):
            raise FormatParseError("(record)", f"{len(cells)} columns, the row type has "
                                   f"{len(columns.names)}")
        values = [self._cell(cell, name, field, is_string) for cell, name, field, is_string
                  in zip(cells, columns.names, columns.fields, columns.strings, strict=True)]
        return row_of(columns.names, values)

    def _cell(self, cell: str, name: str, field: Converter, is_string: bool) -> Any:
        null = self._dialect.null_literal
        if (null is not None and cell == null) or (null is None and cell == ""
                                                   and not is_string):
            return None
        assert field.from_text is not None
        try:
            return field.from_text(cell)
        except ValueError as bad:
            raise FormatParseError(name, str(bad)) from None


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError(f"{what} must be a non-empty str, got {value!r}")
    return value


class CsvRowSerializationSchema:
    """``Row``s (or tuples, lists) of the declared type to CSV lines."""

    def __init__(self, type_info: Any, dialect: _Dialect, line_delimiter: str) -> None:
        self._columns = _Columns(type_info, "CsvRowSerializationSchema",
                                 dialect.array_element_delimiter)
        self._dialect = dialect
        self._line_delimiter = line_delimiter

    class Builder:
        def __init__(self, type_info: Any) -> None:
            row_type(type_info, "CsvRowSerializationSchema")
            self._type_info = type_info
            self._dialect = _Dialect()
            self._line_delimiter = "\n"

        def set_field_delimiter(self, c: str) -> CsvRowSerializationSchema.Builder:
            self._dialect.field_delimiter = _one_char(c, "field delimiter")
            return self

        def set_line_delimiter(self, delimiter: str) -> CsvRowSerializationSchema.Builder:
            if delimiter not in ("\n", "\r", "\r\n", ""):
                raise ValueError(f"line delimiter must be \\n, \\r, \\r\\n or empty, got "
                                 f"{delimiter!r}")
            self._line_delimiter = delimiter
            return self

        def set_array_element_delimiter(self, delimiter: str
                                        ) -> CsvRowSerializationSchema.Builder:
            self._dialect.array_element_delimiter = _text(delimiter, "array element delimiter")
            return self

        def disable_quote_character(self) -> CsvRowSerializationSchema.Builder:
            self._dialect.quote_character = None
            return self

        def set_quote_character(self, c: str) -> CsvRowSerializationSchema.Builder:
            self._dialect.quote_character = _one_char(c, "quote character")
            return self

        def set_escape_character(self, c: str) -> CsvRowSerializationSchema.Builder:
            self._dialect.escape_character = _one_char(c, "escape character")
            return self

        def set_null_literal(self, s: str) -> CsvRowSerializationSchema.Builder:
            self._dialect.null_literal = _text(s, "null literal")
            return self

        def build(self) -> CsvRowSerializationSchema:
            return CsvRowSerializationSchema(self._type_info, self._dialect,
                                             self._line_delimiter)

    def serialize(self, row: Any) -> bytes:
        values = list(row)
        columns = self._columns
        if len(values) != len(columns.names):
            raise FormatParseError("(record)", f"{len(values)} fields, the row type has "
                                   f"{len(columns.names)}")
        cells = [self._cell(v, n, f) for v, n, f in zip(values, columns.names, columns.fields,
                                                         strict=True)]
        out = io.StringIO()
        try:
            csv.writer(out, **self._dialect.options()).writerow(cells)
        except csv.Error as bad:
            raise FormatParseError("(record)", f"cannot write as CSV: {bad}") from None
        return (out.getvalue()[:-2] + self._line_delimiter).encode()

    def _cell(self, value: Any, name: str, field: Converter) -> str:
        if value is None:
            return self._dialect.null_literal or ""
        assert field.to_text is not None
        try:
            return field.to_text(value)
        except (ValueError, TypeError, AttributeError) as bad:
            raise FormatParseError(name, f"cannot write {value!r}: {bad}") from None
