"""The logical plan: one small frozen class per relational operator, each carrying its output
schema (``fields``: names and SQL types).

Both front ends build these nodes — the SQL binder from syntax trees, the Table API from its
calls — and the planner turns them into DataStream transformations. A node never changes; a
rewrite is a function from plan to plan. What changes each node's output emits (inserts only,
or updates too) is derived in ``changelog``, never stored here.

Leaves: ``Scan`` (a catalog table read through its connector), ``Values`` (rows given in the
program: ``from_elements``, SQL ``VALUES``), ``StreamScan`` (a DataStream turned into a table).
Inner nodes: ``Calc`` (projection and filter in one), ``Aggregate`` (GROUP BY, DISTINCT),
``Join`` (equi-join keys plus a residual condition), ``Correlate`` (a table function applied
to each row: ``join_lateral``, ``LATERAL TABLE``), ``Union`` (UNION ALL), ``Rank`` (Top-N by
``ROW_NUMBER``), ``Deduplicate``, ``Limit``, ``Sort``, ``TableFunctionScan`` (a UDTF over one
row of literals), ``Sink`` (the root of an INSERT).
"""

from __future__ import annotations

import enum
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from flintlock.table import types as t
from flintlock.table.plan.rex import Rex


@dataclass(frozen=True, slots=True)
class Field:
    name: str
    type: t.DataType


@dataclass(frozen=True, eq=False)
class PlanNode:
    """Base of the plan nodes; ``fields`` is the output schema."""

    fields: tuple[Field, ...]

    @property
    def inputs(self) -> tuple[PlanNode, ...]:
        return ()

    @property
    def names(self) -> list[str]:
        return [f.name for f in self.fields]

    @property
    def types(self) -> list[t.DataType]:
        return [f.type for f in self.fields]

    def row_type(self) -> t.RowType:
        return t.RowType([t.RowField(f.name, f.type) for f in self.fields])

    def walk(self) -> Iterator[PlanNode]:
        yield self
        for node in self.inputs:
            yield from node.walk()


@dataclass(frozen=True, eq=False)
class UnaryNode(PlanNode):
    """A node over one input."""

    input: PlanNode = field(default=None)  # type: ignore[assignment]

    @property
    def inputs(self) -> tuple[PlanNode, ...]:
        return (self.input,)


@dataclass(frozen=True, eq=False)
class TableSpec:
    """What the catalog knows of a connector table: its path, schema and options."""

    path: tuple[str, ...]
    physical: tuple[Field, ...]
    options: dict[str, str]
    computed: tuple[tuple[str, Any], ...] = ()
    """(name, resolved expression over the physical fields) for computed columns, in order."""
    primary_key: tuple[str, ...] | None = None
    watermark: tuple[str, Any] | None = None
    partition_keys: tuple[str, ...] = ()
    columns_order: tuple[str, ...] = ()
    comments: tuple[tuple[str, str], ...] = ()
    """(column, comment) of the columns the DDL commented."""
    computed_sql: tuple[tuple[str, str], ...] = ()
    """(column, the computed column's expression as Flink prints it: identifiers quoted)."""

    @property
    def name(self) -> str:
        return ".".join(self.path)


@dataclass(frozen=True, eq=False)
class Scan(PlanNode):
    table: TableSpec = field(default=None)  # type: ignore[assignment]


@dataclass(frozen=True, eq=False)
class Values(PlanNode):
    rows: tuple[tuple[Any, ...], ...] = ()
    label: str = "Values"


@dataclass(frozen=True, eq=False)
class StreamScan(PlanNode):
    """A DataStream as a table; ``convert`` turns one of its records into a row's value list."""

    stream: Any = None
    convert: Any = None
    changelog: bool = False
    """True for ``from_changelog_stream``: the records are Rows whose kinds are kept."""


@dataclass(frozen=True, eq=False)
class Calc(UnaryNode):
    projections: tuple[Rex, ...] = ()
    condition: Rex | None = None


@dataclass(frozen=True, eq=False)
class AggregateCall:
    """One aggregate: a built-in by name or a user's ``AggregateFunction``; ``args`` are input
    field indexes; ``filter`` an input field holding a BOOLEAN (``FILTER (WHERE ...)``)."""

    name: str
    args: tuple[int, ...]
    type: t.DataType
    distinct: bool = False
    filter: int | None = None
    function: Any = None
    """A user-defined aggregate function object, for ``udaf`` calls."""
    options: tuple[Any, ...] = ()


@dataclass(frozen=True, eq=False)
class Aggregate(UnaryNode):
    group: tuple[int, ...] = ()
    calls: tuple[AggregateCall, ...] = ()


@dataclass(frozen=True, eq=False)
class TableAggregate(Aggregate):
    """``flat_aggregate`` with a table aggregate function (``udtaf``): ``calls`` holds its one
    call; each row it emits is the group's keys then the function's result fields."""


class JoinKind(enum.Enum):
    INNER = "INNER"
    LEFT = "LEFT"
    RIGHT = "RIGHT"
    FULL = "FULL"
    SEMI = "SEMI"
    ANTI = "ANTI"


@dataclass(frozen=True, eq=False)
class Join(PlanNode):
    left: PlanNode = field(default=None)  # type: ignore[assignment]
    right: PlanNode = field(default=None)  # type: ignore[assignment]
    kind: JoinKind = JoinKind.INNER
    left_keys: tuple[int, ...] = ()
    right_keys: tuple[int, ...] = ()
    condition: Rex | None = None
    """The rest of the ON condition, over the left fields followed by the right fields."""
    null_safe: tuple[bool, ...] = ()
    """Per key pair, whether NULL matches NULL (IS NOT DISTINCT FROM; set operations)."""

    @property
    def inputs(self) -> tuple[PlanNode, ...]:
        return (self.left, self.right)


@dataclass(frozen=True, eq=False)
class Correlate(UnaryNode):
    """Each input row joined with the rows a table function returns for it."""

    function: Any = None
    operands: tuple[Rex, ...] = ()
    left_outer: bool = False
    condition: Rex | None = None
    function_name: str = ""


@dataclass(frozen=True, eq=False)
class Union(PlanNode):
    members: tuple[PlanNode, ...] = ()

    @property
    def inputs(self) -> tuple[PlanNode, ...]:
        return self.members


@dataclass(frozen=True, slots=True)
class SortKey:
    index: int
    ascending: bool = True
    nulls_first: bool | None = None
    """None: SQL's default (NULLs first ascending, last descending, as Flink orders them)."""

    def effective_nulls_first(self) -> bool:
        return self.ascending if self.nulls_first is None else self.nulls_first


@dataclass(frozen=True, eq=False)
class Rank(UnaryNode):
    """Top-N: rows numbered by ``order`` within ``partition``; those numbered 1..``limit`` kept;
    with ``output_number`` the row number is the last field."""

    partition: tuple[int, ...] = ()
    order: tuple[SortKey, ...] = ()
    limit: int = 1
    output_number: bool = False


@dataclass(frozen=True, eq=False)
class Deduplicate(UnaryNode):
    partition: tuple[int, ...] = ()
    keep_last: bool = False


@dataclass(frozen=True, eq=False)
class Limit(UnaryNode):
    offset: int = 0
    fetch: int | None = None


@dataclass(frozen=True, eq=False)
class Sort(UnaryNode):
    """ORDER BY (with an optional OFFSET/FETCH); in streaming mode only with a LIMIT."""

    order: tuple[SortKey, ...] = ()
    offset: int = 0
    fetch: int | None = None


@dataclass(frozen=True, eq=False)
class Sink(UnaryNode):
    """Writes ``input`` into a catalog table (INSERT INTO)."""

    table: TableSpec = field(default=None)  # type: ignore[assignment]
    overwrite: bool = False


def fields_of(names: list[str], types: list[t.DataType]) -> tuple[Field, ...]:
    return tuple(Field(n, dt) for n, dt in zip(names, types, strict=True))
