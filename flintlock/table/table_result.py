"""PyFlink's ``TableResult``: what ``execute_sql`` and ``Table.execute()`` return.

Three shapes: a statement that only changed the session (DDL, SET, ...: ``OK``), a query whose
rows stream back from its job (``collect()`` yields ``Row``s with their row kinds as they
arrive; ``print()`` writes them as Flink's tableau, updating rows included in streaming mode),
and an INSERT whose job runs on (``wait()`` waits for it; its one row holds ``-1`` per sink, as
Flink reports an unknown number of affected rows). ``collect()`` and ``print()`` consume the
result: calling either twice fails, as in PyFlink.

The tableau text is ``formatting.tableau``'s; this module only feeds it rows.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from flintlock.common.types import Row, RowKind, row_of
from flintlock.table import types as t
from flintlock.table.errors import TableException
from flintlock.table.result_kind import ResultKind

if TYPE_CHECKING:
    from flintlock.table.plan.nodes import PlanNode
    from flintlock.table.table_environment import TableEnvironment

__all__ = ["CloseableIterator", "TableResult"]


class CloseableIterator:
    """Rows of a result; closing it cancels the job that produces them."""

    def __init__(self, rows: Iterator[Row], close: Any = None) -> None:
        self._rows = rows
        self._close = close

    def __iter__(self) -> CloseableIterator:
        return self

    def __next__(self) -> Row:
        return next(self._rows)

    def next(self) -> Row:
        return self.__next__()

    def close(self) -> None:
        if self._close is not None:
            self._close()

    def __enter__(self) -> CloseableIterator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class TableResult:
    """The result of a statement (see the module docstring)."""

    def __init__(self, kind: int, names: Sequence[str], types: Sequence[t.DataType],
                 rows: Iterator[Row] | None, job_client: Any = None, streaming: bool = True,
                 closer: Any = None, is_query: bool = False) -> None:
        self._kind = kind
        self._names = list(names)
        self._types = list(types)
        self._rows = rows
        self._job_client = job_client
        self._streaming = streaming
        self._closer = closer
        self._is_query = is_query
        self._consumed = False
        self._renderer: Any = None
        """A statement whose text is not a plain table (DESCRIBE) renders itself."""
        self._zone: Any = _utc()
        self._max_column_width = 30

    # -- constructors ---------------------------------------------------------------------------

    @staticmethod
    def ok() -> TableResult:
        return TableResult(ResultKind.SUCCESS, ["result"], [t.DataTypes.STRING()],
                           iter([row_of(["OK"])]))

    @staticmethod
    def of_rows(names: Sequence[str], types: Sequence[t.DataType], rows: Sequence[Sequence[Any]]
                ) -> TableResult:
        return TableResult(ResultKind.SUCCESS_WITH_CONTENT, names, types,
                           iter([row_of(list(r)) for r in rows]), streaming=False)

    @staticmethod
    def for_query(t_env: TableEnvironment, plan: PlanNode, iterator: Any) -> TableResult:
        closer = getattr(iterator, "close", None)
        result = TableResult(ResultKind.SUCCESS_WITH_CONTENT, plan.names, plan.types,
                             iter(iterator), getattr(iterator, "job_client", None),
                             t_env._is_streaming(), closer, is_query=True)
        result._zone = zone_of(t_env.get_config().get_local_timezone())
        from flintlock.common.options import table as table_options

        result._max_column_width = int(t_env.get_config().get_configuration().get(
            table_options.MAX_COLUMN_WIDTH))
        return result

    @staticmethod
    def for_insert(sink_names: Sequence[str], job_client: Any) -> TableResult:
        types = [t.DataTypes.BIGINT().not_null() for _ in sink_names]
        return TableResult(ResultKind.SUCCESS_WITH_CONTENT, sink_names, types,
                           iter([row_of([-1] * len(sink_names))]), job_client, streaming=False)

    # -- PyFlink's methods ----------------------------------------------------------------------

    def get_job_client(self) -> Any:
        return self._job_client

    def wait(self, timeout_ms: int | None = None) -> None:
        if self._job_client is not None:
            result = self._job_client.get_job_execution_result()
            if timeout_ms is None:
                result.result()
            else:
                result.result(timeout_ms / 1000)

    def get_result_kind(self) -> int:
        return self._kind

    def get_table_schema(self) -> Any:
        from flintlock.table.table_schema import TableSchema

        return TableSchema(self._names, self._types)

    def get_resolved_schema(self) -> Any:
        from flintlock.table.resolved_schema import ResolvedSchema

        return ResolvedSchema.physical(self._names, self._types)

    def collect(self) -> CloseableIterator:
        """The rows, with values as PyFlink's ``collect()`` hands them to Python: BYTES as
        ``bytearray``, TIMESTAMP with milliseconds, a nested ROW positional."""
        rows = self._take()
        converters = [_collected_value(dt) for dt in self._types]
        if any(c is not None for c in converters):
            rows = (_converted(row, converters) for row in rows)
        return CloseableIterator(rows, self._closer)

    def print(self) -> None:
        from flintlock.table.formatting import tableau

        rows = self._take()
        out = sys.stdout
        if self._renderer is not None:
            out.write(self._renderer())
        elif self._kind == ResultKind.SUCCESS:
            out.write(tableau.render_ok())
        elif self._is_query:
            self._print_query(rows if self._streaming else iter(_materialized(rows)), out)
        elif self._job_client is not None:
            out.write(tableau.render_raw([list(row) for row in rows]))
        else:
            cells = [[_cell(value) for value in row] for row in rows]
            out.write(tableau.render_cells(self._names, cells))
        out.flush()

    def _print_query(self, rows: Iterator[Row], out: Any) -> None:
        """Rows as they arrive: the header with the first, each line flushed at once."""
        from flintlock.table.formatting import tableau

        table = tableau.TypedTableau(self._names, self._types, self._zone, self._streaming,
                                     self._max_column_width)
        count = 0
        for row in rows:
            if count == 0:
                out.write("".join(text + "\n" for text in table.header()))
            out.write(table.row(row) + "\n")
            out.flush()
            count += 1
        lines = table.footer(count) if count else [tableau.EMPTY_SET]
        out.write("".join(text + "\n" for text in lines))

    def _take(self) -> Iterator[Row]:
        if self._consumed:
            raise TableException("A TableResult can be printed or collected only once")
        self._consumed = True
        return self._rows if self._rows is not None else iter(())


def _collected_value(data_type: t.DataType) -> Any:
    """How ``collect()`` converts a value of ``data_type`` (None: as it is)."""
    if isinstance(data_type, (t.BinaryType, t.VarBinaryType)):
        return lambda v: v if v is None else bytearray(v)
    if isinstance(data_type, t.TimestampType):
        return lambda v: v if v is None else v.replace(microsecond=v.microsecond // 1000 * 1000)
    if isinstance(data_type, t.RowType):
        fields = [_collected_value(f.data_type) for f in data_type.fields]
        return lambda v: v if v is None else row_of(
            [c(x) if c is not None else x for c, x in zip(fields, list(v), strict=False)])
    return None


def _converted(row: Row, converters: list[Any]) -> Row:
    values = [c(v) if c is not None else v for c, v in zip(converters, row._values,
                                                             strict=True)]
    return row_of(values, row._row_kind)


def _cell(value: Any) -> str:
    if value is None:
        return "<NULL>"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    return str(value)


def _utc() -> Any:
    import datetime

    return datetime.UTC


def zone_of(name: str) -> Any:
    """The tzinfo of ``table.local-time-zone`` ('default' is the machine's own zone)."""
    import datetime
    import zoneinfo

    if name == "default":
        local = datetime.datetime.now().astimezone().tzinfo
        return local if local is not None else datetime.UTC
    return zoneinfo.ZoneInfo(name)


def _materialized(rows: Iterator[Row]) -> list[Row]:
    """A batch result: the final table of a changelog (a BATCH job emits only final rows;
    flintlock's operators emit changes, applied here in order)."""
    table: list[list[Any]] = []
    for row in rows:
        values = list(row)
        if row.get_row_kind() in (RowKind.INSERT, RowKind.UPDATE_AFTER):
            table.append(values)
        else:
            try:
                table.remove(values)
            except ValueError:
                raise TableException(f"retraction of a row never inserted: {row}") from None
    return [row_of(v) for v in table]
