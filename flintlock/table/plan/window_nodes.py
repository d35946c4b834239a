"""The plan nodes of event time and windows (issue 32), next to those of ``nodes``.

``WatermarkAssigner``: its input's rows unchanged, with the watermarks of the table's
``WATERMARK FOR rowtime AS expression`` (or, with ``source_watermark``, those the DataStream
already carries). ``WindowTableFunction``: ``TABLE(TUMBLE|HOP|CUMULATE|SESSION(TABLE t,
DESCRIPTOR(ts), ...))`` — the input's fields then ``window_start``, ``window_end``,
``window_time``; one row per window a row belongs to. ``WindowAggregate``: GROUP BY
``window_start, window_end[, keys]`` over a window table function, Flink's append-only window
aggregation — its fields are the keys, the aggregate results, then ``window_start``,
``window_end``, ``window_time``; its input is the window table function's input (the operator
assigns windows itself, as Flink's does).

Frozen, like every plan node; no behaviour beyond describing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from flintlock.table.plan import nodes as n
from flintlock.table.plan.rex import Rex


@dataclass(frozen=True, slots=True)
class WindowSpec:
    """A window kind and its sizes in milliseconds: TUMBLE(size), HOP(slide, size),
    CUMULATE(step, size), SESSION(gap); ``offset`` shifts the alignment of the first three."""

    kind: str
    size: int = 0
    slide: int = 0
    gap: int = 0
    offset: int = 0

    def describe(self) -> str:
        if self.kind == "TUMBLE":
            return f"TUMBLE(size=[{_interval(self.size)}])"
        if self.kind == "HOP":
            return f"HOP(size=[{_interval(self.size)}], slide=[{_interval(self.slide)}])"
        if self.kind == "CUMULATE":
            return f"CUMULATE(max_size=[{_interval(self.size)}], step=[{_interval(self.slide)}])"
        return f"SESSION(gap=[{_interval(self.gap)}])"


def _interval(millis: int) -> str:
    for unit, size in (("h", 3_600_000), ("min", 60_000), ("s", 1000)):
        if millis % size == 0:
            return f"{millis // size} {unit}"
    return f"{millis} ms"


@dataclass(frozen=True, eq=False)
class WatermarkAssigner(n.UnaryNode):
    rowtime: int = 0
    """The index of the rowtime field."""
    watermark: Rex | None = None
    """The watermark expression over the input's fields; None: the DataStream's own
    watermarks (``SOURCE_WATERMARK()``)."""

    def explain_summary(self) -> str:
        source = "SOURCE_WATERMARK()" if self.watermark is None else "expression"
        return (f"WatermarkAssigner(rowtime=[{self.names[self.rowtime]}], "
                f"watermark=[{source}])")


@dataclass(frozen=True, eq=False)
class WindowTableFunction(n.UnaryNode):
    window: WindowSpec = field(default=None)  # type: ignore[assignment]
    time_field: int = 0
    partition: tuple[int, ...] = ()
    """SESSION's PARTITION BY fields."""

    def explain_summary(self) -> str:
        return (f"WindowTableFunction(window=[{self.window.describe()}], "
                f"timecol=[{self.input.names[self.time_field]}])")


@dataclass(frozen=True, eq=False)
class WindowAggregate(n.UnaryNode):
    window: WindowSpec = field(default=None)  # type: ignore[assignment]
    time_field: int = 0
    group: tuple[int, ...] = ()
    """The grouping keys other than the window's, as input field indexes."""
    calls: tuple[n.AggregateCall, ...] = ()

    def explain_summary(self) -> str:
        keys = ", ".join(self.input.names[i] for i in self.group)
        return (f"WindowAggregate(groupBy=[{keys}], window=[{self.window.describe()}], "
                f"select=[{', '.join(self.names)}])")


@dataclass(frozen=True, eq=False)
class WindowRank(n.UnaryNode):
    """Window Top-N / deduplication: ``n.Rank``'s fields and meaning, per window, emitted when
    the window ends (``window_end``: the input field holding the window's end)."""

    partition: tuple[int, ...] = ()
    order: tuple[n.SortKey, ...] = ()
    limit: int = 1
    output_number: bool = False
    window_end: int = 0
    keep_last: bool = False
    """Deduplication keeping the last row: of equal rowtimes the later row wins."""
    ltz: bool = False
    """The window is on a TIMESTAMP_LTZ column (its bounds are session-zone wall clock)."""

    def explain_summary(self) -> str:
        kind = "WindowDeduplicate" if self.limit == 1 and not self.output_number else "WindowRank"
        keys = ", ".join(self.input.names[i] for i in self.partition)
        return f"{kind}(partitionBy=[{keys}], rankRange=[1..{self.limit}])"


@dataclass(frozen=True, eq=False)
class OverAggregate(n.UnaryNode):
    """``agg(...) OVER (PARTITION BY .. ORDER BY rowtime ROWS|RANGE BETWEEN .. PRECEDING AND
    CURRENT ROW)``: the input's fields, then one field per call (Flink's OverAggregate)."""

    partition: tuple[int, ...] = ()
    order: int = 0
    """The rowtime field the rows are ordered by."""
    rows: bool = False
    """A ROWS frame (else RANGE)."""
    preceding: int | None = None
    """Rows (ROWS) or milliseconds (RANGE) before the current row; None: UNBOUNDED."""
    calls: tuple[n.AggregateCall, ...] = ()

    def explain_summary(self) -> str:
        frame = "ROWS" if self.rows else "RANGE"
        bound = "UNBOUNDED" if self.preceding is None else str(self.preceding)
        keys = ", ".join(self.input.names[i] for i in self.partition)
        return (f"OverAggregate(partitionBy=[{keys}], orderBy=[{self.input.names[self.order]}],"
                f" window=[{frame} BETWEEN {bound} PRECEDING AND CURRENT ROW])")


@dataclass(frozen=True, eq=False)
class WindowJoin(n.PlanNode):
    """A join of two window table functions' rows on their keys and window bounds: ``n.Join``'s
    fields and meaning, per window, emitted when the window ends (Flink's WindowJoin; not an
    ``n.Join``: its outer joins emit no updates)."""

    left: n.PlanNode = field(default=None)  # type: ignore[assignment]
    right: n.PlanNode = field(default=None)  # type: ignore[assignment]
    kind: n.JoinKind = n.JoinKind.INNER
    left_keys: tuple[int, ...] = ()
    right_keys: tuple[int, ...] = ()
    condition: Rex | None = None
    left_end: int = 0
    right_end: int = 0
    """Each side's ``window_end`` field."""
    ltz: bool = False

    @property
    def inputs(self) -> tuple[n.PlanNode, ...]:
        return (self.left, self.right)

    def explain_summary(self) -> str:
        return f"WindowJoin(joinType=[{self.kind.value.title()}Join])"
