"""PyFlink's ``pyflink.table.window``: the group windows (``Tumble``, ``Slide``, ``Session``) and
over windows (``Over``) of the Table API, and how a group-windowed table is bound (issue 32).

``table.window(Tumble.over(lit(10).minutes).on(col('ts')).alias('w')).group_by(col('w'), ...)
.select(col('w').start, col('w').end, col('w').rowtime, ...)`` is the window table function
TUMBLE (HOP for ``Slide.over(size).every(slide)``, SESSION for ``Session.with_gap(gap)``) on
the rowtime column, grouped by the other keys and ``window_start``, ``window_end``,
``window_time``: the same window aggregation as SQL's (``plan.windows``). ``w.start``,
``w.end`` and ``w.rowtime`` are those columns (``w.proctime`` the window_time of a window on a
processing-time attribute).
``table.over_window(Over.partition_by(..).order_by(col('ts')).preceding(..).alias('w'))
.select(col('x').sum.over(col('w')), ...)`` is the over aggregation of SQL's
``OVER`` (``plan.over``), ordered by a rowtime or a processing-time attribute.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from flintlock.table.errors import UnsupportedFeatureError, ValidationError

if TYPE_CHECKING:
    from flintlock.table.table import Table

__all__ = ["GroupWindow", "Over", "OverWindow", "Session", "Slide", "Tumble"]


@dataclass(frozen=True)
class GroupWindow:
    """A described group window: its kind, size/slide/gap, time field and alias."""

    kind: str
    size: Any = None
    slide: Any = None
    gap: Any = None
    time_field: Any = None
    name: str | None = None

    def on(self, time_field: Any) -> GroupWindow:
        return replace(self, time_field=time_field)

    def every(self, slide: Any) -> GroupWindow:
        return replace(self, slide=slide)

    def alias(self, alias: str) -> GroupWindow:
        return replace(self, name=alias)


class Tumble:
    @classmethod
    def over(cls, size: Any) -> GroupWindow:
        return GroupWindow("TUMBLE", size=size)


class Slide:
    @classmethod
    def over(cls, size: Any) -> GroupWindow:
        return GroupWindow("SLIDE", size=size)


class Session:
    @classmethod
    def with_gap(cls, gap: Any) -> GroupWindow:
        return GroupWindow("SESSION", gap=gap)


@dataclass(frozen=True)
class OverWindow:
    partition_by: tuple[Any, ...] = ()
    order_by: Any = None
    preceding_: Any = None
    following_: Any = None
    name: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def preceding(self, preceding: Any) -> OverWindow:
        return replace(self, preceding_=preceding)

    def following(self, following: Any) -> OverWindow:
        return replace(self, following_=following)

    def alias(self, alias: str) -> OverWindow:
        return replace(self, name=alias)


class Over:
    @classmethod
    def order_by(cls, order_by: Any) -> OverWindow:
        return OverWindow(order_by=order_by)

    @classmethod
    def partition_by(cls, *partition_by: Any) -> _Partitioned:
        return _Partitioned(tuple(partition_by))


@dataclass(frozen=True)
class _Partitioned:
    keys: tuple[Any, ...]

    def order_by(self, order_by: Any) -> OverWindow:
        return OverWindow(partition_by=self.keys, order_by=order_by)


# -- binding a group-windowed select ------------------------------------------------------------

_PROPERTIES = {"$WINDOW_START": "window_start", "$WINDOW_END": "window_end",
               "$WINDOW_ROWTIME": "window_time", "$WINDOW_PROCTIME": "window_time"}


def _window_name(window: GroupWindow) -> str:
    if not window.name:
        raise ValidationError("A group window needs an alias: .alias('w')")
    return window.name


def is_window_reference(node: exp.Expression, name: str) -> bool:
    """Whether ``node`` is ``col(name)`` (the window's alias among the group keys)."""
    return isinstance(node, exp.Column) and node.name == name and not node.table


def _properties(node: exp.Expression, name: str, proctime: bool) -> exp.Expression:
    """``w.start`` / ``w.end`` / ``w.rowtime`` (``w.proctime`` on a ``proctime`` window) of
    the window ``name`` as its columns."""
    def replace_property(inner: exp.Expression) -> exp.Expression:
        if isinstance(inner, exp.Anonymous) and str(inner.this).startswith("$WINDOW_"):
            operands = list(inner.expressions)
            if len(operands) != 1 or not is_window_reference(operands[0], name):
                raise ValidationError(f"{inner.this[8:].lower()} is a property of the group "
                                      f"window '{name}': col('{name}').start")
            wrong = "$WINDOW_ROWTIME" if proctime else "$WINDOW_PROCTIME"
            if inner.this == wrong:
                raise ValidationError(
                    f"The window '{name}' is on {'processing' if proctime else 'event'} "
                    f"time: it has no {wrong[8:].lower()} property")
            return exp.column(_PROPERTIES[str(inner.this)])
        if is_window_reference(inner, name):
            raise ValidationError(f"The window '{name}' can only be read through its "
                                  f"properties: col('{name}').start, .end, .rowtime")
        return inner
    return node.transform(replace_property)


def group_window_select(table: Table, window: GroupWindow, keys: list[exp.Expression],
                        fields: list[exp.Expression]) -> Any:
    """The plan of ``table.window(window).group_by(*keys).select(*fields)``."""
    from flintlock.table.plan.sql_binder import Relation
    from flintlock.table.plan.windows import group_window_input
    from flintlock.table.time_attributes import is_proctime

    name = _window_name(window)
    if not any(is_window_reference(k, name) for k in keys):
        raise ValidationError(f"A group window must be grouped by: group_by(col('{name}'))")
    relation = table._relation()
    plan, scope = group_window_input(relation.plan, relation.scope, window, table._t_env)
    group = [k for k in keys if not is_window_reference(k, name)] + [
        exp.column(c) for c in ("window_start", "window_end", "window_time")]
    proctime = is_proctime(plan.fields[-1].type)
    items = [_properties(item, name, proctime) for item in _named(fields, table._t_env)]
    return table._binder()._aggregate(Relation(plan, scope), exp.Group(expressions=group), items,
                                      None)


def _named(fields: list[exp.Expression], functions: Any) -> list[exp.Expression]:
    """Flink's names for a group-windowed select: an unnamed aggregate call or window
    property is ``EXPR$<n>``, n counting the select's aggregate calls and properties."""
    from flintlock.table.plan.resolver import is_aggregate_call

    named = []
    counted = 0
    for item in fields:
        inner = item.this if isinstance(item, exp.Alias) else item
        is_property = isinstance(inner, exp.Anonymous) and str(inner.this).startswith(
            "$WINDOW_")
        if is_property or is_aggregate_call(inner, functions):
            if not isinstance(item, exp.Alias):
                item = exp.Alias(this=item, alias=exp.to_identifier(f"EXPR${counted}",
                                                                    quoted=True))
            counted += 1
        named.append(item)
    return named


# -- over windows -------------------------------------------------------------------------------

def over_definition(window: OverWindow) -> exp.Window:
    """An ``Over...alias('w')`` as the SQL window it stands for (``plan.over`` binds it):
    ``preceding`` is ``row_interval(n)``/``UNBOUNDED_ROW`` (a ROWS frame), an interval or
    ``UNBOUNDED_RANGE`` (RANGE; the default), ``CURRENT_ROW``/``CURRENT_RANGE`` (0)."""
    from flintlock.table.expression import to_node
    from flintlock.table.expressions import OverOffset

    if window.following_ is not None:
        following = to_node(window.following_)
        if not (isinstance(following, OverOffset) and following.this in ("CURRENT_ROW",
                                                                           "CURRENT_RANGE")):
            raise UnsupportedFeatureError("an over window ending after the current row")
    preceding = to_node(window.preceding_) if window.preceding_ is not None else OverOffset(
        this="UNBOUNDED_RANGE")
    if isinstance(preceding, OverOffset):
        kind = "ROWS" if preceding.this in ("ROWS", "UNBOUNDED_ROW", "CURRENT_ROW") else "RANGE"
        start: Any = {"UNBOUNDED_ROW": "UNBOUNDED", "UNBOUNDED_RANGE": "UNBOUNDED",
                      "CURRENT_ROW": "CURRENT ROW", "CURRENT_RANGE": "CURRENT ROW"}.get(
            str(preceding.this), preceding.args.get("expression"))
    else:
        kind, start = "RANGE", preceding
    spec = exp.WindowSpec(kind=kind, start=start, start_side="PRECEDING", end="CURRENT ROW")
    order = exp.Order(expressions=[exp.Ordered(this=to_node(window.order_by))])
    return exp.Window(this=exp.to_identifier(window.name or ""),
                      partition_by=[to_node(k) for k in window.partition_by], order=order,
                      spec=spec)


def over_window_select(table: Table, windows: tuple[OverWindow, ...],
                       fields: list[exp.Expression]) -> Any:
    """The plan of ``table.over_window(*windows).select(*fields)``."""
    from flintlock.table.plan.over import bind_over
    from flintlock.table.plan.sql_binder import Relation

    named = {}
    for window in windows:
        if not window.name:
            raise ValidationError("An over window needs an alias: .alias('w')")
        named[window.name] = over_definition(window)
    binder = table._binder()
    relation = table._relation()
    plan, scope, items = bind_over(relation.plan, relation.scope, fields, binder._names(fields),
                                   table._t_env, named)
    return binder._project(Relation(plan, scope), items)
