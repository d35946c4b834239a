"""CSV *files* (PyFlink's ``CsvSchema``, ``CsvReaderFormat`` and ``CsvBulkWriters`` of
``pyflink.datastream.formats.csv``), re-exported by ``formats.csv``::

    schema = (CsvSchema.builder()
              .add_number_column("id", number_type=Types.INT())
              .add_string_column("name")
              .add_array_column("tags", separator="|")
              .set_column_separator(";").set_use_header().build())
    source = FileSource.for_record_stream_format(CsvReaderFormat.for_schema(schema),
                                                 "/data/in").build()
    sink = FileSink.for_bulk_format("/data/out", CsvBulkWriters.for_schema(schema)).build()

Column types are flintlock ``Types`` (PyFlink takes Table API ``DataTypes`` here, which
flintlock does not have): ``add_number_column`` defaults to ``Types.LONG()``, array elements to
``Types.STRING()``. Records are ``Row``s named by the columns (``schema.row_type``). Columns are
matched by position; the text form of each type and the null rule (an empty column is null
except for a STRING, unless a null value is set) are those of the CSV row format (``_fields``).

**Reading** (``CsvFileReader``, the source task's thread): one split per file, read from start
to end by one reader; a split's position is the byte offset of the next record, so a restore
reopens the file there without repeating or skipping a record. Python's ``csv`` module parses,
pulling one line at a time, so a quoted column may span lines and the position after a record
is the end of the last line it took. Files are UTF-8; lines end with ``\\n`` or ``\\r\\n``.
With ``set_use_header`` (or ``set_skip_first_data_row``) the first record of a file is not
data (``set_strict_headers``: its names must be the columns'); with ``set_allow_comments`` a
record starting with ``#`` is skipped; blank lines are skipped. A record that does not parse
raises ``CsvFileParseError`` naming the file, the byte offset of the record and the field.

**Writing** (``CsvBulkWriter``, the sink task's thread): each part file gets the header line
first when the schema uses one, then one line per row ending with the line separator.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any, BinaryIO

import fsspec

from flintlock.common.typeinfo import BasicType, BasicTypeInfo, RowTypeInfo, Types
from flintlock.datastream.connectors._enumeration import SplitQueueReader
from flintlock.datastream.formats._fields import (
    Converter,
    FormatParseError,
    is_string_type,
    row_of,
    text_form,
)

__all__ = ["CsvBulkWriters", "CsvFileParseError", "CsvReaderFormat", "CsvSchema",
           "CsvSchemaBuilder"]

_NUMBERS = frozenset({BasicType.BYTE, BasicType.SHORT, BasicType.INT, BasicType.LONG,
                      BasicType.FLOAT, BasicType.DOUBLE, BasicType.BIG_INT, BasicType.BIG_DEC})


class CsvFileParseError(FormatParseError):
    """A record of a CSV file that does not fit the schema: names the file, the byte offset
    where the record starts, the field and the reason."""

    def __init__(self, path: str, offset: int, field: str, reason: str) -> None:
        FormatParseError.__init__(self, field, reason)
        self.args = (path, offset, field, reason)
        self.path, self.offset = path, offset

    def __reduce__(self) -> Any:
        return type(self), self.args

    def __str__(self) -> str:
        return f"{self.path} at byte {self.offset}: field {self.field!r}: {self.reason}"


def _char(value: Any, what: str) -> str:
    if not isinstance(value, str) or len(value) != 1:
        raise ValueError(f"{what} must be a single character, got {value!r}")
    return value


@dataclass(frozen=True, slots=True)
class _Column:
    name: str
    type_info: Any
    separator: str | None = None  # arrays: this column's element separator (None: global)


@dataclass(frozen=True, slots=True)
class _Options:
    column_separator: str = ","
    quote_char: str | None = '"'
    escape_char: str | None = None
    array_separator: str = ";"
    null_value: str | None = None
    line_separator: str = "\n"
    allow_comments: bool = False
    use_header: bool = False
    skip_first_data_row: bool = False
    strict_headers: bool = False

    def dialect(self) -> dict[str, Any]:
        quoted = self.quote_char is not None
        return {"delimiter": self.column_separator, "quotechar": self.quote_char,
                "escapechar": self.escape_char, "doublequote": self.escape_char is None,
                "quoting": csv.QUOTE_MINIMAL if quoted else csv.QUOTE_NONE, "strict": True,
                # \r\n: the writer then quotes a column holding either character.
                "lineterminator": "\r\n"}


class CsvSchema:
    """The columns of a CSV file and how it is written (``CsvSchema.builder()``)."""

    def __init__(self, columns: tuple[_Column, ...], options: _Options) -> None:
        self._columns = columns
        self._options = options
        self.row_type: RowTypeInfo = Types.ROW_NAMED([c.name for c in columns],
                                                     [c.type_info for c in columns])
        self._forms = [text_form(c.type_info, self._separator(c)) for c in columns]

    @staticmethod
    def builder() -> CsvSchemaBuilder:
        return CsvSchemaBuilder()

    def _separator(self, column: _Column) -> str:
        return column.separator if column.separator is not None else \
            self._options.array_separator

    @property
    def names(self) -> list[str]:
        return [c.name for c in self._columns]

    @property
    def options(self) -> _Options:
        return self._options

    @property
    def forms(self) -> list[Converter]:
        return self._forms

    @property
    def strings(self) -> list[bool]:
        return [is_string_type(c.type_info) for c in self._columns]

    def size(self) -> int:
        return len(self._columns)

    def __len__(self) -> int:
        return self.size()

    def __str__(self) -> str:
        columns = ", ".join(f"{c.name} {c.type_info!r}" for c in self._columns)
        return f"CsvSchema({columns}; separator {self._options.column_separator!r})"

    __repr__ = __str__


class CsvSchemaBuilder:
    """PyFlink's ``CsvSchemaBuilder``: columns in order, then the file's conventions."""

    def __init__(self) -> None:
        self._columns: list[_Column] = []
        self._options = _Options()

    def build(self) -> CsvSchema:
        if not self._columns:
            raise ValueError("a CsvSchema needs at least one column")
        names = [c.name for c in self._columns]
        if len(set(names)) != len(names):
            raise ValueError(f"CsvSchema column names must differ, got {names}")
        return CsvSchema(tuple(self._columns), self._options)

    def _add(self, name: str, type_info: Any, separator: str | None = None) -> CsvSchemaBuilder:
        if not isinstance(name, str) or not name:
            raise ValueError(f"a column name must be a non-empty str, got {name!r}")
        self._columns.append(_Column(name, type_info, separator))
        return self

    def add_array_column(self, name: str, separator: str = ";",
                         element_type: Any = None) -> CsvSchemaBuilder:
        """An array of scalars (``element_type``, default ``Types.STRING()``) joined by
        ``separator``."""
        if not isinstance(separator, str):
            raise TypeError(f"separator must be a str, got {separator!r}")
        column = Types.LIST(Types.STRING() if element_type is None else element_type)
        text_form(column, separator)  # a type CSV cannot hold fails here
        return self._add(name, column, separator)

    def add_boolean_column(self, name: str) -> CsvSchemaBuilder:
        return self._add(name, Types.BOOLEAN())

    def add_number_column(self, name: str, number_type: Any = None) -> CsvSchemaBuilder:
        """A number column of ``number_type`` (a numeric ``Types``; default ``Types.LONG()``)."""
        chosen = Types.LONG() if number_type is None else number_type
        if not (isinstance(chosen, BasicTypeInfo) and chosen.basic_type in _NUMBERS):
            raise TypeError(f"number_type must be a numeric Types (e.g. Types.INT()), got "
                            f"{number_type!r}")
        return self._add(name, chosen)

    def add_string_column(self, name: str) -> CsvSchemaBuilder:
        return self._add(name, Types.STRING())

    def add_columns_from(self, schema: CsvSchema) -> CsvSchemaBuilder:
        self._columns.extend(schema._columns)
        return self

    def clear_columns(self) -> CsvSchemaBuilder:
        self._columns.clear()
        return self

    def _set(self, **changes: Any) -> CsvSchemaBuilder:
        self._options = replace(self._options, **changes)
        return self

    def set_allow_comments(self, allow: bool = True) -> CsvSchemaBuilder:
        """Skip records whose first character is ``#`` when reading."""
        return self._set(allow_comments=bool(allow))

    def set_any_property_name(self, name: str) -> CsvSchemaBuilder:
        raise ValueError("set_any_property_name (Jackson's catch-all column) is not "
                         "supported: declare every column")

    def disable_array_element_separator(self) -> CsvSchemaBuilder:
        return self._set(array_separator="")

    def remove_array_element_separator(self, index: int) -> CsvSchemaBuilder:
        self._columns[index] = replace(self._columns[index], separator="")
        return self

    def set_array_element_separator(self, separator: str) -> CsvSchemaBuilder:
        """The separator of array columns that do not set their own."""
        if not isinstance(separator, str):
            raise TypeError(f"separator must be a str, got {separator!r}")
        return self._set(array_separator=separator)

    def set_column_separator(self, char: str) -> CsvSchemaBuilder:
        return self._set(column_separator=_char(char, "column separator"))

    def disable_escape_char(self) -> CsvSchemaBuilder:
        return self._set(escape_char=None)

    def set_escape_char(self, char: str) -> CsvSchemaBuilder:
        return self._set(escape_char=_char(char, "escape char"))

    def set_line_separator(self, separator: str) -> CsvSchemaBuilder:
        """The end of each written line (reading takes ``\\n`` and ``\\r\\n``)."""
        if separator not in ("\n", "\r\n", "\r"):
            raise ValueError(f"line separator must be \\n, \\r\\n or \\r, got {separator!r}")
        return self._set(line_separator=separator)

    def set_null_value(self, null_value: str) -> CsvSchemaBuilder:
        if not isinstance(null_value, str):
            raise TypeError(f"null value must be a str, got {null_value!r}")
        return self._set(null_value=null_value)

    def disable_quote_char(self) -> CsvSchemaBuilder:
        return self._set(quote_char=None)

    def set_quote_char(self, char: str) -> CsvSchemaBuilder:
        return self._set(quote_char=_char(char, "quote char"))

    def set_skip_first_data_row(self, skip: bool = True) -> CsvSchemaBuilder:
        return self._set(skip_first_data_row=bool(skip))

    def set_strict_headers(self, strict: bool = True) -> CsvSchemaBuilder:
        """The header's names must be the columns' names, in order."""
        return self._set(strict_headers=bool(strict))

    def set_use_header(self, use: bool = True) -> CsvSchemaBuilder:
        """Files start with a header line (skipped when reading, written by the writer)."""
        return self._set(use_header=bool(use))

    def size(self) -> int:
        return len(self._columns)

    def __len__(self) -> int:
        return self.size()


class _Cursor:
    """Records of one open CSV file from a byte offset; task thread."""

    def __init__(self, file: BinaryIO, path: str, position: int, options: _Options) -> None:
        self._file = file
        self._path = path
        self.position = position  # end of the last line the csv reader took
        self._record_start = position
        self._comments = options.allow_comments
        self._at_record_start = True
        file.seek(position)
        self._reader = csv.reader(self._lines(), **options.dialect())

    def _lines(self) -> Iterator[str]:
        for raw in iter(self._file.readline, b""):
            start, self.position = self.position, self.position + len(raw)
            if self._at_record_start and (raw.startswith(b"#") and self._comments):
                self._record_start = self.position
                continue
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as bad:
                raise CsvFileParseError(self._path, start, "(record)",
                                        f"not UTF-8: {bad}") from None
            self._at_record_start = False
            yield line

    def next_record(self) -> tuple[list[str], int] | None:
        """The next non-blank record's columns and its start offset; None at the end."""
        while True:
            self._at_record_start, self._record_start = True, self.position
            try:
                cells = next(self._reader)
            except StopIteration:
                return None
            except csv.Error as bad:
                raise CsvFileParseError(self._path, self._record_start, "(record)",
                                        f"not CSV: {bad}") from None
            if cells:
                return cells, self._record_start


class CsvFileReader(SplitQueueReader):
    """Reads whole CSV files (``FileSplit`` s) as ``Row``s; see the module docstring."""

    def __init__(self, schema: CsvSchema) -> None:
        super().__init__()
        self._schema = schema
        self._names = schema.names
        self._forms = schema.forms
        self._strings = schema.strings
        self._null = schema.options.null_value
        self._file: BinaryIO | None = None  # the head split's file and cursor; task thread
        self._cursor: _Cursor | None = None
        self._cursor_path: str | None = None

    def read_split(self, split: Any, budget: int, out: list[Any]) -> tuple[Any, bool]:
        cursor = self._cursor_for(split)
        for _ in range(budget):
            found = cursor.next_record()
            if found is None:
                return split, True
            out.append(self._row(*found, split.path))
        return replace(split, position=cursor.position), False

    def split_finished(self, split: Any) -> None:
        self._close_file()

    def close(self) -> None:
        self._close_file()

    def _cursor_for(self, split: Any) -> _Cursor:
        if self._cursor is None or self._cursor_path != split.path:
            self._close_file()
            self._file = fsspec.open(split.path, "rb").open()
            self._cursor = _Cursor(self._file, split.path, split.position,
                                   self._schema.options)
            self._cursor_path = split.path
            if split.position == 0:
                self._skip_header(self._cursor, split.path)
        return self._cursor

    def _skip_header(self, cursor: _Cursor, path: str) -> None:
        options = self._schema.options
        if not (options.use_header or options.skip_first_data_row):
            return
        found = cursor.next_record()
        if found is not None and options.use_header and options.strict_headers \
                and found[0] != self._names:
            raise CsvFileParseError(path, found[1], "(header)", f"the header names "
                                    f"{found[0]}, the schema's columns are {self._names}")

    def _row(self, cells: list[str], offset: int, path: str) -> Any:
        if len(cells) != len(self._names):
            raise CsvFileParseError(path, offset, "(record)", f"{len(cells)} columns, the "
                                    f"schema has {len(self._names)}")
        values: list[Any] = []
        null = self._null
        for cell, name, form, is_string in zip(cells, self._names, self._forms, self._strings,
                                               strict=True):
            if (null is not None and cell == null) or (null is None and cell == ""
                                                       and not is_string):
                values.append(None)
                continue
            assert form.from_text is not None
            try:
                values.append(form.from_text(cell))
            except ValueError as bad:
                raise CsvFileParseError(path, offset, name, str(bad)) from None
        return row_of(self._names, values)

    def _close_file(self) -> None:
        if self._file is not None:
            self._file.close()
        self._file, self._cursor, self._cursor_path = None, None, None


class CsvReaderFormat:
    """Reads CSV files as ``Row``s for ``FileSource.for_record_stream_format``."""

    def __init__(self, schema: CsvSchema) -> None:
        if not isinstance(schema, CsvSchema):
            raise TypeError(f"CsvReaderFormat needs a CsvSchema (CsvSchema.builder()...build()),"
                            f" got {schema!r}")
        self._schema = schema

    @staticmethod
    def for_schema(schema: CsvSchema) -> CsvReaderFormat:
        return CsvReaderFormat(schema)

    def create_split_reader(self) -> CsvFileReader:
        return CsvFileReader(self._schema)

    def __repr__(self) -> str:
        return f"CsvReaderFormat.for_schema({self._schema})"


class CsvBulkWriter:
    """Writes the rows of one part file as CSV lines (``FileSink.for_bulk_format``)."""

    def __init__(self, stream: BinaryIO, schema: CsvSchema) -> None:
        self._stream = stream
        self._schema = schema
        self._names = schema.names
        self._forms = schema.forms
        options = schema.options
        self._null = options.null_value or ""
        self._end = options.line_separator
        self._dialect = options.dialect()
        if options.use_header:
            self._stream.write(self._line(list(self._names)).encode())

    def _line(self, cells: list[str]) -> str:
        out = io.StringIO()
        try:
            csv.writer(out, **self._dialect).writerow(cells)
        except csv.Error as bad:
            raise FormatParseError("(record)", f"cannot write as CSV: {bad}") from None
        return out.getvalue()[:-2] + self._end

    def add_elements(self, records: list[Any]) -> None:
        lines = [self._line(self._cells(record)) for record in records]
        self._stream.write("".join(lines).encode())

    def _cells(self, record: Any) -> list[str]:
        values = list(record)
        if len(values) != len(self._names):
            raise FormatParseError("(record)", f"{len(values)} fields, the schema has "
                                   f"{len(self._names)}")
        cells = []
        for value, name, form in zip(values, self._names, self._forms, strict=True):
            if value is None:
                cells.append(self._null)
                continue
            assert form.to_text is not None
            try:
                cells.append(form.to_text(value))
            except (ValueError, TypeError, AttributeError) as bad:
                raise FormatParseError(name, f"cannot write {value!r}: {bad}") from None
        return cells

    def finish(self) -> None:
        self._stream.flush()

    def discard(self) -> None:
        """The part file is abandoned: nothing more is written to it."""


class CsvBulkWriterFactory:
    """One ``CsvBulkWriter`` per part file."""

    def __init__(self, schema: CsvSchema) -> None:
        self._schema = schema

    def create(self, stream: BinaryIO) -> CsvBulkWriter:
        return CsvBulkWriter(stream, self._schema)

    def __repr__(self) -> str:
        return f"CsvBulkWriters.for_schema({self._schema})"


class CsvBulkWriters:
    """PyFlink's entry point for CSV part files: ``CsvBulkWriters.for_schema(schema)``."""

    @staticmethod
    def for_schema(schema: CsvSchema) -> CsvBulkWriterFactory:
        if not isinstance(schema, CsvSchema):
            raise TypeError(f"CsvBulkWriters.for_schema needs a CsvSchema, got {schema!r}")
        return CsvBulkWriterFactory(schema)
