"""Parquet for ``FileSink`` (PyFlink's ``pyflink.datastream.formats.parquet``): rows of a
declared ``Types.ROW_NAMED(...)`` written as Parquet part files that other engines read
(``spark.read.parquet(path)``)::

    row = Types.ROW_NAMED(["id", "name"], [Types.LONG(), Types.STRING()])
    sink = FileSink.for_bulk_format("/data/out", ParquetBulkWriters.for_row_type(row)).build()

A bulk format cannot be appended to after it is closed, so a part file is written from its
first record to the checkpoint that closes it (bulk part files roll on every checkpoint and
only then, as in Flink), and is committed with the checkpoint like any part file
(``_file_sink``). Rows are buffered and written as one row group per ``row_group_size`` rows
(and at the close). Written with pyarrow (the ``parquet`` extra).

Types: BOOLEAN, BYTE, SHORT, INT, LONG (Parquet INT8..INT64), FLOAT, DOUBLE, STRING, CHAR,
SQL_DATE / LOCAL_DATE (DATE), SQL_TIMESTAMP / LOCAL_DATE_TIME (TIMESTAMP in microseconds,
without time zone; ``utc_timestamp=True``: adjusted to UTC), SQL_TIME / LOCAL_TIME, LIST and
arrays, nested ROW (a group), MAP. BIG_DEC and BIG_INT are refused (Parquet's DECIMAL needs a
precision and scale the type does not carry). A value that does not fit its column raises
``FormatParseError``.
"""

from __future__ import annotations

import dataclasses
from typing import Any, BinaryIO

import fsspec

from flintlock.common.errors import FlintlockError
from flintlock.common.typeinfo import (
    BasicType,
    BasicTypeInfo,
    MapTypeInfo,
    RowTypeInfo,
    SqlTimeType,
    SqlTimeTypeInfo,
    TypeInformation,
)
from flintlock.datastream.connectors._enumeration import SplitQueueReader
from flintlock.datastream.formats._fields import FormatParseError, row_of, row_type

__all__ = ["FormatParseError", "ParquetBulkWriterFactory", "ParquetBulkWriters",
           "ParquetColumnarRowInputFormat", "ParquetFileError", "ParquetSchemaError"]

DEFAULT_ROW_GROUP_SIZE = 128 * 1024


def _pyarrow() -> Any:
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:
        raise FlintlockError("the Parquet format needs pyarrow: pip install "
                             "'flintlock[parquet]'") from None
    return pyarrow


_BASIC = {BasicType.BOOLEAN: "bool_", BasicType.BYTE: "int8", BasicType.SHORT: "int16",
          BasicType.INT: "int32", BasicType.LONG: "int64", BasicType.FLOAT: "float32",
          BasicType.DOUBLE: "float64", BasicType.STRING: "string", BasicType.CHAR: "string"}


def arrow_type(type_info: TypeInformation, utc: bool = False) -> Any:
    """The Arrow type Parquet stores ``type_info`` as (TypeError where there is none)."""
    pa = _pyarrow()
    if isinstance(type_info, BasicTypeInfo) and type_info.basic_type in _BASIC:
        return getattr(pa, _BASIC[type_info.basic_type])()
    if isinstance(type_info, SqlTimeTypeInfo):
        kind = type_info.time_type
        if kind in (SqlTimeType.DATE, SqlTimeType.LOCAL_DATE):
            return pa.date32()
        if kind in (SqlTimeType.TIME, SqlTimeType.LOCAL_TIME):
            return pa.time64("us")
        return pa.timestamp("us", tz="UTC" if utc else None)
    if isinstance(type_info, RowTypeInfo):
        return pa.struct([pa.field(n, arrow_type(t, utc)) for n, t in
                          zip(type_info.get_field_names(), type_info.get_field_types(),
                              strict=True)])
    if isinstance(type_info, MapTypeInfo):
        return pa.map_(arrow_type(type_info.key_type, utc), arrow_type(type_info.value_type, utc))
    element = getattr(type_info, "element_type", None)
    if element is not None:
        return pa.list_(arrow_type(element, utc))
    raise TypeError(f"Parquet cannot hold {type_info!r} fields here (BIG_DEC and BIG_INT have "
                    "no precision; declare DOUBLE, LONG or STRING)")


def _plain(value: Any, type_info: TypeInformation) -> Any:
    """A value as pyarrow takes it: Rows become dicts, maps lists of pairs."""
    if value is None:
        return None
    if isinstance(type_info, RowTypeInfo):
        return {n: _plain(v, t) for n, t, v in zip(type_info.get_field_names(),
                                                   type_info.get_field_types(), list(value),
                                                   strict=True)}
    if isinstance(type_info, MapTypeInfo):
        return [(_plain(k, type_info.key_type), _plain(v, type_info.value_type))
                for k, v in value.items()]
    element = getattr(type_info, "element_type", None)
    if element is not None:
        return [_plain(v, element) for v in value]
    return value


class ParquetBulkWriter:
    """Writes the rows of one part file (``add_elements``, then ``finish`` once)."""

    def __init__(self, stream: BinaryIO, row: RowTypeInfo, schema: Any,
                 row_group_size: int) -> None:
        pa = _pyarrow()
        self._row = row
        self._schema = schema
        self._names = row.get_field_names()
        self._types = row.get_field_types()
        self._row_group_size = row_group_size
        self._columns: list[list[Any]] = [[] for _ in self._names]
        self._writer = pa.parquet.ParquetWriter(stream, schema)

    def add_elements(self, records: list[Any]) -> None:
        columns, types = self._columns, self._types
        for record in records:
            values = list(record)
            if len(values) != len(columns):
                raise FormatParseError("(record)", f"{len(values)} fields, the row type has "
                                       f"{len(columns)}")
            for column, value, kind in zip(columns, values, types, strict=True):
                column.append(_plain(value, kind))
        if len(columns[0]) >= self._row_group_size:
            self.flush()

    def flush(self) -> None:
        if not self._columns or not self._columns[0]:
            return
        pa = _pyarrow()
        arrays = []
        for name, column, field in zip(self._names, self._columns, self._schema, strict=True):
            try:
                arrays.append(pa.array(column, type=field.type))
            except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError,
                    OverflowError) as bad:
                raise FormatParseError(name, f"does not fit {field.type}: {bad}") from None
        self._writer.write_batch(pa.record_batch(arrays, schema=self._schema))
        self._columns = [[] for _ in self._names]

    def finish(self) -> None:
        """Writes the buffered rows and the file's footer (the stream stays open)."""
        self.flush()
        self._writer.close()

    def discard(self) -> None:
        """The part file is abandoned: drops the buffered rows and closes the writer."""
        self._columns = [[] for _ in self._names]
        self._writer.close()


class ParquetBulkWriterFactory:
    """Makes one ``ParquetBulkWriter`` per part file (what ``FileSink.for_bulk_format``
    takes); immutable and picklable."""

    def __init__(self, row: RowTypeInfo, utc_timestamp: bool = False,
                 row_group_size: int = DEFAULT_ROW_GROUP_SIZE) -> None:
        self._row = row_type(row, "ParquetBulkWriters.for_row_type")
        self._utc = bool(utc_timestamp)
        if isinstance(row_group_size, bool) or not isinstance(row_group_size, int) or (
                row_group_size < 1):
            raise ValueError(f"row_group_size must be a positive int, got {row_group_size!r}")
        self._row_group_size = row_group_size
        self.schema()  # a type Parquet cannot hold fails here, in the user's program

    def schema(self) -> Any:
        pa = _pyarrow()
        return pa.schema([pa.field(n, arrow_type(t, self._utc)) for n, t in
                          zip(self._row.get_field_names(), self._row.get_field_types(),
                              strict=True)])

    def create(self, stream: BinaryIO) -> ParquetBulkWriter:
        return ParquetBulkWriter(stream, self._row, self.schema(), self._row_group_size)

    def __repr__(self) -> str:
        return f"ParquetBulkWriters.for_row_type({self._row!r})"


class ParquetBulkWriters:
    """PyFlink's entry point for Parquet bulk writers."""

    @staticmethod
    def for_row_type(row_type: RowTypeInfo, hadoop_config: Any = None,
                     utc_timestamp: bool = False) -> ParquetBulkWriterFactory:
        if hadoop_config is not None:
            raise ValueError("hadoop_config is not supported: flintlock writes through fsspec")
        return ParquetBulkWriterFactory(row_type, utc_timestamp)


class ParquetFileError(FlintlockError):
    """A file the Parquet reader cannot read (not Parquet, truncated, corrupt)."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(path, reason)
        self.path, self.reason = path, reason

    def __str__(self) -> str:
        return f"{self.path}: not a readable Parquet file: {self.reason}"


class ParquetSchemaError(FlintlockError):
    """A Parquet file lacks a column the declared row type reads."""

    def __init__(self, path: str, column: str) -> None:
        super().__init__(path, column)
        self.path, self.column = path, column

    def __str__(self) -> str:
        return f"{self.path}: no column {self.column!r}"


def _python(value: Any, type_info: TypeInformation) -> Any:
    """A value pyarrow read, as the declared type's Python value (structs become Rows)."""
    if value is None:
        return None
    if isinstance(type_info, RowTypeInfo):
        names, types = type_info.get_field_names(), type_info.get_field_types()
        return row_of(names, [_python(value.get(n), t) for n, t in zip(names, types,
                                                                        strict=True)])
    if isinstance(type_info, MapTypeInfo):
        return {_python(k, type_info.key_type): _python(v, type_info.value_type)
                for k, v in value}
    element = getattr(type_info, "element_type", None)
    if element is not None:
        return [_python(v, element) for v in value]
    return value


class ParquetRowReader(SplitQueueReader):
    """Reads whole Parquet files (``FileSplit`` s) as ``Row``s of the declared type; a
    split's ``position`` is the number of rows of the file already read, so a restore resumes
    at the next row. One row group is held in memory at a time. Task thread only."""

    def __init__(self, row: RowTypeInfo, case_sensitive: bool) -> None:
        super().__init__()
        self._names = row.get_field_names()
        self._types = row.get_field_types()
        self._case_sensitive = case_sensitive
        self._path: str | None = None
        self._file: Any = None
        self._parquet: Any = None
        self._group: tuple[int, int, list[list[Any]]] | None = None  # (first row, rows, cols)

    def split_finished(self, split: Any) -> None:
        self._close_file()

    def close(self) -> None:
        self._close_file()

    def read_split(self, split: Any, budget: int, out: list[Any]) -> tuple[Any, bool]:
        parquet = self._open(split.path)
        total = parquet.metadata.num_rows
        position = split.position
        if position >= total:
            return split, True
        first, count, columns = self._group_of(parquet, position)
        start, stop = position - first, min(count, position - first + budget)
        for i in range(start, stop):
            out.append(self._to_row([column[i] for column in columns]))
        advanced = dataclasses.replace(split, position=first + stop)
        return advanced, first + stop >= total

    def _to_row(self, values: list[Any]) -> Any:
        return row_of(self._names, [_python(v, t) for v, t in zip(values, self._types,
                                                                   strict=True)])

    def _open(self, path: str) -> Any:
        if self._path != path:
            self._close_file()
            self._file = fsspec.open(path, "rb").open()
            self._path = path
            try:
                self._parquet = _pyarrow().parquet.ParquetFile(self._file)
            except (_pyarrow().ArrowException, OSError) as bad:
                raise ParquetFileError(path, str(bad)) from None
        return self._parquet

    def _group_of(self, parquet: Any, position: int) -> tuple[int, int, list[list[Any]]]:
        group = self._group
        if group is not None and group[0] <= position < group[0] + group[1]:
            return group
        first = 0
        for index in range(parquet.metadata.num_row_groups):
            rows = parquet.metadata.row_group(index).num_rows
            if position < first + rows:
                names = self._columns(parquet)
                try:
                    table = parquet.read_row_group(index, columns=names)
                except (_pyarrow().ArrowException, OSError) as bad:
                    raise ParquetFileError(self._path or "", f"row group {index}: "
                                           f"{bad}") from None
                group = (first, rows, [table.column(i).to_pylist()
                                       for i in range(table.num_columns)])
                self._group = group
                return group
            first += rows
        raise IndexError(f"row {position} is past the end of {self._path}")

    def _columns(self, parquet: Any) -> list[str]:
        present = parquet.schema_arrow.names
        lookup = {(n if self._case_sensitive else n.lower()): n for n in present}
        chosen = []
        for name in self._names:
            found = lookup.get(name if self._case_sensitive else name.lower())
            if found is None:
                raise ParquetSchemaError(self._path or "", name)
            chosen.append(found)
        return chosen

    def _close_file(self) -> None:
        if self._file is not None:
            self._file.close()
        self._path, self._file, self._parquet, self._group = None, None, None, None


_checked_row = row_type


class ParquetColumnarRowInputFormat:
    """Reads Parquet files as ``Row``s (``FileSource.for_bulk_file_format``): the columns
    named by the row type (``Types.ROW_NAMED``; PyFlink takes a Table API row type here), in
    its order; other columns are not read. Files are not split: one reader reads a file."""

    def __init__(self, row_type: RowTypeInfo, hadoop_config: Any = None, batch_size: int = 2048,
                 is_utc_timestamp: bool = False, is_case_sensitive: bool = True) -> None:
        self._row = _checked_row(row_type, "ParquetColumnarRowInputFormat")
        if hadoop_config is not None:
            raise ValueError("hadoop_config is not supported: flintlock reads through fsspec")
        self._case_sensitive = bool(is_case_sensitive)

    def create_split_reader(self) -> ParquetRowReader:
        return ParquetRowReader(self._row, self._case_sensitive)

    def __repr__(self) -> str:
        return f"ParquetColumnarRowInputFormat({self._row!r})"
