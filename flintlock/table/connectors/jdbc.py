"""The ``jdbc`` table connector (Flink's ``JdbcDynamicTableFactory``) on PostgreSQL: a bounded
scan source, an append sink, an upsert sink by the table's PRIMARY KEY, and the lookup side of
a lookup join (``_jdbc_lookup``).

Options (Flink's names and defaults): ``url`` (``jdbc:postgresql://host:port/db``) and
``table-name`` (required); ``driver`` (recorded, unused), ``username``, ``password``,
``connection.max-retry-timeout`` (accepted); ``scan.partition.column`` / ``.num`` /
``.lower-bound`` / ``.upper-bound`` (all four or none), ``scan.fetch-size`` (0: psycopg's
default of 100 rows a round trip), ``scan.auto-commit``; ``sink.buffer-flush.max-rows`` (100),
``sink.buffer-flush.interval`` (1 s; 0 turns it off), ``sink.max-retries`` (3),
``sink.parallelism``; the lookup options of ``_jdbc_lookup``. Column types are checked against
the PostgreSQL dialect (``_jdbc_dialect``) when the table is planned.

**Scan.** ``SELECT <columns> FROM <table>``, read through a server-side cursor. With
``scan.partition.*`` the range ``lower..upper`` of the numeric partition column is cut into
``num`` contiguous ranges (sizes differing by at most one, as Flink's
``JdbcNumericBetweenParametersProvider``), each a split ``... WHERE col BETWEEN ? AND ?``
dealt to the source subtasks; rows outside the range (or with a NULL there) are not read, as
in Flink. A split's position (rows emitted) is checkpointed; a restore runs the split's query
again and skips that many rows — exact when the table did not change meanwhile (the query has
no ORDER BY, as Flink's; ``synchronize_seqscans`` is turned off for the session so a scan of an
unchanged table returns its rows in the same order).

**Sink.** Without a primary key every row is an ``INSERT``; an updating query into such a
table is refused by the planner. With one, the sink is an upsert sink (Flink's
``TableBufferReducedStatementExecutor``): per buffered key the last change wins (+I/+U upsert
with ``INSERT ... ON CONFLICT (key) DO UPDATE``, -U/-D delete by key), executed and committed
when ``sink.buffer-flush.max-rows`` rows are buffered, when the interval passed (checked as
rows arrive), at every checkpoint and at the end of the input: at-least-once, as Flink's
(``flintlock.datastream.connectors._jdbc_sink.BatchWriter``); replayed upserts are idempotent.

The factory runs on the driver; reading and writing on task threads.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from flintlock.common.types import RowKind, row_of
from flintlock.common.watermark_strategy import WatermarkStrategy
from flintlock.datastream.connectors._enumeration import (
    DealingEnumerator,
    EnumeratorSnapshot,
    FixedSplits,
    SplitQueueReader,
)
from flintlock.datastream.connectors._jdbc import (
    BatchStatement,
    ConnectionSpec,
    JdbcConnectionError,
    connect,
    parse_url,
    to_psycopg,
)
from flintlock.datastream.connectors._jdbc_sink import BatchWriter, ExecutionSettings
from flintlock.datastream.connectors.base import Sink, Source
from flintlock.datastream.connectors.number_seq import split_range
from flintlock.datastream.data_stream import DataStream
from flintlock.table.connectors import _jdbc_dialect as dialect
from flintlock.table.connectors import registry
from flintlock.table.connectors._jdbc_lookup import (
    LOOKUP_OPTIONS,
    JdbcLookupFunction,
    cache_settings,
)
from flintlock.table.connectors._options import Options
from flintlock.table.connectors._sinks import sink_fields, sink_parallelism
from flintlock.table.errors import ValidationError
from flintlock.table.plan.nodes import Field, TableSpec

REQUIRED = {"url", "table-name"}
OPTIONAL = {
    "driver", "username", "password", "connection.max-retry-timeout", "scan.partition.column",
    "scan.partition.num", "scan.partition.lower-bound", "scan.partition.upper-bound",
    "scan.fetch-size", "scan.auto-commit", "sink.buffer-flush.max-rows",
    "sink.buffer-flush.interval", "sink.max-retries", "sink.parallelism",
} | LOOKUP_OPTIONS
_PARTITION = ("scan.partition.column", "scan.partition.num", "scan.partition.lower-bound",
              "scan.partition.upper-bound")


def connection_spec(options: Options) -> ConnectionSpec:
    url = options.get_str("url") or ""
    try:
        parse_url(url)
    except JdbcConnectionError as failed:  # the table's option is wrong
        raise ValidationError(f"Invalid 'url' for the jdbc table: {failed}") from failed
    return ConnectionSpec(url, options.get_str("username"), options.get_str("password"))


# -- scan ----------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class ScanSplit:
    """One query of the scan and how many of its rows were emitted."""

    split_id: str
    bounds: tuple[int, int] | None  # the partition column's BETWEEN bounds
    emitted: int = 0


class JdbcScanReader(SplitQueueReader):
    """Reads its splits through server-side cursors, ``budget`` rows at a time."""

    def __init__(self, spec: ConnectionSpec, sql: str, fields: Sequence[Field],
                 fetch_size: int) -> None:
        super().__init__()
        self._spec = spec
        self._sql = sql
        self._row = dialect.row_reader(fields)
        self._fetch_size = fetch_size
        self._connection: Any = None
        self._cursor: Any = None
        self._cursor_split: str | None = None

    def read_split(self, split: Any, budget: int, out: list[Any]) -> tuple[Any, bool]:
        if self._cursor_split != split.split_id:
            self._open(split)
        fetched = self._cursor.fetchmany(budget)
        convert = self._row
        out.extend(row_of(convert(values)) for values in fetched)
        advanced = ScanSplit(split.split_id, split.bounds, split.emitted + len(fetched))
        return advanced, len(fetched) < budget

    def _open(self, split: ScanSplit) -> None:
        self._close_cursor()
        if self._connection is None:
            self._connection = connect(self._spec, autocommit=False)
            self._connection.execute("SET synchronize_seqscans = off")
        self._cursor = self._connection.cursor(name=f"flintlock_scan_{split.split_id}")
        if self._fetch_size > 0:
            self._cursor.itersize = self._fetch_size
        self._cursor.execute(self._sql, split.bounds or ())
        if split.emitted:
            self._cursor.scroll(split.emitted)  # rows emitted before the restore
        self._cursor_split = split.split_id

    def split_finished(self, split: Any) -> None:
        self._close_cursor()

    def _close_cursor(self) -> None:
        if self._cursor is not None:
            self._cursor.close()
            self._connection.rollback()
            self._cursor = None
            self._cursor_split = None

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None
            self._cursor = None


class JdbcScanSource(Source):
    def __init__(self, spec: ConnectionSpec, sql: str, fields: Sequence[Field],
                 splits: list[ScanSplit], fetch_size: int) -> None:
        self._spec = spec
        self._sql = to_psycopg(sql)
        self._fields = tuple(fields)
        self._splits = splits
        self._fetch_size = fetch_size

    def is_bounded(self) -> bool:
        return True

    def create_enumerator(self, parallelism: int,
                          restored_state: EnumeratorSnapshot | None) -> DealingEnumerator:
        return DealingEnumerator(parallelism, restored_state, FixedSplits(self._splits),
                                 bounded=True)

    def create_reader(self, subtask_index: int, parallelism: int) -> JdbcScanReader:
        return JdbcScanReader(self._spec, self._sql, self._fields, self._fetch_size)


def _scan_splits(options: Options, names: list[str]) -> tuple[str, list[ScanSplit]]:
    """The WHERE clause the splits fill in, and the splits."""
    given = [k for k in _PARTITION if options.has(k)]
    if not given:
        return "", [ScanSplit("0", None)]
    if len(given) != len(_PARTITION):
        raise ValidationError(
            "Either all or none of the following options should be provided:\n"
            + "\n".join(_PARTITION))
    column = options.get_str("scan.partition.column") or ""
    if column not in names:
        raise ValidationError(f"The partition column '{column}' is not a column of the table "
                              f"({', '.join(names)}).")
    num = options.get_int("scan.partition.num") or 0
    lower = options.get_int("scan.partition.lower-bound") or 0
    upper = options.get_int("scan.partition.upper-bound") or 0
    if lower > upper:
        raise ValidationError(f"'scan.partition.lower-bound'='{lower}' must not be larger than "
                              f"'scan.partition.upper-bound'='{upper}'.")
    if num < 1:
        raise ValidationError(f"'scan.partition.num' must be positive, got {num}.")
    ranges = split_range(lower, upper, num)
    splits = [ScanSplit(str(i), (r.current, r.to)) for i, r in enumerate(ranges)]
    return f" WHERE {column} BETWEEN ? AND ?", splits


def create_source(spec: TableSpec, context: registry.ConnectorContext) -> DataStream:
    options = Options(spec.options)
    dialect.check_types(spec.physical)
    names = [f.name for f in spec.physical]
    where, splits = _scan_splits(options, names)
    sql = dialect.select(options.get_str("table-name") or "", names) + where
    source = JdbcScanSource(connection_spec(options), sql, spec.physical, splits,
                            options.get_int("scan.fetch-size", 0) or 0)
    return context.env.from_source(source, WatermarkStrategy.no_watermarks(),
                                   f"jdbc[{spec.name}]")


def lookup_function(spec: TableSpec, keys: Sequence[str]) -> JdbcLookupFunction:
    """The lookup join's function for ``keys`` (columns of the table), with the table's cache."""
    options = Options(spec.options)
    dialect.check_types(spec.physical)
    return JdbcLookupFunction(connection_spec(options), options.get_str("table-name") or "",
                              spec.physical, keys, cache_settings(options),
                              options.get_int("lookup.max-retries", 3) or 0)


# -- sink ----------------------------------------------------------------------------------------

class UpsertStatements:
    """Buffered changes reduced per key; flushed as one batch of upserts and one of deletes."""

    def __init__(self, table: str, fields: Sequence[Field], key: Sequence[str]) -> None:
        names = [f.name for f in fields]
        self._key_indexes = [names.index(k) for k in key]
        self._upsert = BatchStatement(to_psycopg(dialect.upsert(table, names, key)),
                                      unique_rows=True)  # one row per key after the reduction
        self._delete = to_psycopg(dialect.delete(table, key))
        self._row_params = dialect.params_writer([f.type for f in fields])
        self._key_params = dialect.params_writer([fields[i].type for i in self._key_indexes])
        self._buffer: dict[tuple[Any, ...], tuple[bool, Any]] = {}

    def add(self, record: Any) -> None:
        values = list(record)
        key = tuple(values[i] for i in self._key_indexes)
        kind = record.get_row_kind()
        self._buffer[key] = (kind in (RowKind.INSERT, RowKind.UPDATE_AFTER), values)

    def pending(self) -> int:
        return len(self._buffer)

    def execute(self, connection: Any) -> None:
        upserts = [self._row_params(v) for put, v in self._buffer.values() if put]
        deletes = [self._key_params(k) for k, (put, _) in self._buffer.items() if not put]
        with connection.cursor() as cursor:
            if upserts:
                self._upsert.execute(cursor, upserts)
            if deletes:
                cursor.executemany(self._delete, deletes)

    def clear(self) -> None:
        self._buffer = {}


class InsertStatements:
    """Every row an INSERT (a table without a primary key takes inserts only)."""

    def __init__(self, table: str, fields: Sequence[Field]) -> None:
        names = [f.name for f in fields]
        self._statement = BatchStatement(to_psycopg(dialect.insert(table, names)))
        self._params = dialect.params_writer([f.type for f in fields])
        self._buffer: list[tuple[Any, ...]] = []

    def add(self, record: Any) -> None:
        self._buffer.append(self._params(list(record)))

    def pending(self) -> int:
        return len(self._buffer)

    def execute(self, connection: Any) -> None:
        with connection.cursor() as cursor:
            self._statement.execute(cursor, self._buffer)

    def clear(self) -> None:
        self._buffer = []


class JdbcTableSink(Sink):
    def __init__(self, spec: ConnectionSpec, table: str, fields: Sequence[Field],
                 key: Sequence[str] | None, settings: ExecutionSettings) -> None:
        self._spec = spec
        self._table = table
        self._fields = tuple(fields)
        self._key = tuple(key) if key else None
        self._settings = settings

    def create_writer(self, subtask_index: int, parallelism: int) -> BatchWriter:
        statements: Any = (UpsertStatements(self._table, self._fields, self._key) if self._key
                           else InsertStatements(self._table, self._fields))
        return BatchWriter(self._spec, statements, self._settings)


def create_sink(stream: DataStream, spec: TableSpec, fields: tuple[Field, ...],
                context: registry.ConnectorContext) -> Any:
    options = Options(spec.options)
    columns = sink_fields(spec, fields)
    dialect.check_types(columns)
    max_rows = options.get_int("sink.buffer-flush.max-rows", 100) or 0
    settings = ExecutionSettings(
        batch_size=max_rows if max_rows > 0 else 2**62,
        batch_interval_ms=options.get_duration_ms("sink.buffer-flush.interval", 1000) or 0,
        max_retries=options.get_int("sink.max-retries", 3) or 0)
    sink = JdbcTableSink(connection_spec(options), options.get_str("table-name") or "",
                         columns, spec.primary_key, settings)
    return stream._add_sink(f"Sink: jdbc[{spec.name}]", sink,
                            parallelism=sink_parallelism(spec))


class JdbcFactory:
    identifier = "jdbc"

    def required_options(self) -> set[str]:
        return set(REQUIRED)

    def optional_options(self) -> set[str]:
        return set(OPTIONAL)

    def create_source(self, spec: TableSpec, context: registry.ConnectorContext) -> DataStream:
        return create_source(spec, context)

    def create_sink(self, stream: DataStream, spec: TableSpec, fields: tuple[Field, ...],
                    context: registry.ConnectorContext) -> Any:
        return create_sink(stream, spec, fields, context)

    def accepts_updates(self, spec: TableSpec) -> bool:
        return bool(spec.primary_key)

    def lookup_function(self, spec: TableSpec, keys: Sequence[str]) -> JdbcLookupFunction:
        return lookup_function(spec, keys)


FACTORY = JdbcFactory()
registry.FACTORIES[FACTORY.identifier] = FACTORY

__all__ = ["JdbcFactory", "JdbcScanSource", "JdbcTableSink", "UpsertStatements",
           "lookup_function"]
