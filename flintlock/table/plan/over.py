"""Binding over aggregations (issue 32): ``agg(x) OVER (PARTITION BY k ORDER BY rowtime
[ROWS|RANGE BETWEEN n|INTERVAL ..|UNBOUNDED PRECEDING AND CURRENT ROW])`` in a SELECT list,
``OVER w`` with ``WINDOW w AS (...)``, and the Table API's ``over_window(Over.partition_by(..)
.order_by(..).preceding(..).alias('w'))`` with ``agg.over(col('w'))``.

``bind_over(plan, scope, items, names, functions, windows)`` resolves every over call of the
items (all must share one window, as Flink requires in streaming), builds an
``OverAggregate`` over a pre-projection (the input's fields, then the calls' arguments) and
returns the items with each call replaced by a column ``$over<i>`` of its result, unnamed
items named as SQL or the Table API names them. The order must be one rowtime attribute,
ascending; the frame ends at the current row (a default frame is RANGE UNBOUNDED
PRECEDING). Pure functions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlglot import exp

from flintlock.table.errors import UnsupportedFeatureError, ValidationError
from flintlock.table.plan import nodes as n
from flintlock.table.plan.resolver import (
    AggregatePlan,
    AggregateResolver,
    ExpressionResolver,
    FunctionCatalog,
    Scope,
    is_aggregate_call,
)
from flintlock.table.plan.rex import InputRef, Literal
from flintlock.table.plan.window_nodes import OverAggregate
from flintlock.table.time_attributes import is_proctime, is_rowtime

__all__ = ["bind_over", "has_over_aggregates"]

Frame = tuple[tuple[int, ...], int, bool, int | None]
"""(partition, order field, ROWS, preceding)."""


def _over_calls(node: exp.Expression, functions: FunctionCatalog) -> list[exp.Window]:
    return [w for w in node.find_all(exp.Window)
            if is_aggregate_call(w.this, functions)]


def has_over_aggregates(items: Sequence[exp.Expression], functions: FunctionCatalog) -> bool:
    return any(_over_calls(item, functions) for item in items)


def bind_over(plan: n.PlanNode, scope: Scope, items: Sequence[exp.Expression],
              names: Sequence[str], functions: FunctionCatalog,
              windows: Mapping[str, exp.Expression]
              ) -> tuple[n.PlanNode, Scope, list[exp.Expression]]:
    width = len(plan.fields)
    aggregates = AggregatePlan([InputRef(f.type, i) for i, f in enumerate(plan.fields)])
    resolver = AggregateResolver(scope, aggregates, functions, True)
    frames: list[Frame] = []
    result_types: list[Any] = []
    rewritten = []
    for position, item in enumerate(items):
        calls = _over_calls(item, functions)
        if not calls:
            rewritten.append(item)
            continue

        def replace(node: exp.Expression) -> exp.Expression:
            if not (isinstance(node, exp.Window) and is_aggregate_call(node.this, functions)):
                return node
            frames.append(_frame(_definition(node, windows), scope, plan, functions))
            result = resolver.resolve(node.this)
            if not isinstance(result, InputRef) or result.index < width:
                raise UnsupportedFeatureError("an expression around an over aggregate's call")
            result_types.append(result.type)
            return exp.column(f"$over{result.index - width}", quoted=True)

        inner = item.this if isinstance(item, exp.Alias) else item
        alias = item.args["alias"] if isinstance(item, exp.Alias) else exp.to_identifier(
            names[position], quoted=True)
        rewritten.append(exp.Alias(this=inner.transform(replace), alias=alias))
    if any(frame != frames[0] for frame in frames):
        raise UnsupportedFeatureError("over aggregates with different windows in one SELECT",
                                      "Flink computes all of a SELECT's over aggregates on "
                                      "one window")
    pre_fields = n.fields_of([*plan.names, *(f"$arg{i}" for i in range(
        len(aggregates.pre_projection) - width))], [r.type for r in aggregates.pre_projection])
    pre = n.Calc(pre_fields, plan, tuple(aggregates.pre_projection))
    call_fields = n.fields_of([f"$over{i}" for i in range(len(aggregates.calls))],
                              [c.type for c in aggregates.calls])
    partition, order, rows, preceding = frames[0]
    over = OverAggregate(pre.fields + call_fields, pre, partition, order, rows, preceding,
                         tuple(aggregates.calls))
    offset = len(pre.fields)
    over_scope = scope.merged(Scope.of([f.name for f in call_fields],
                                       [f.type for f in call_fields], None, offset))
    return over, over_scope, rewritten


def _definition(window: exp.Window, windows: Mapping[str, exp.Expression]) -> exp.Window:
    """The window a call is over: its own, or the named one (``OVER w``)."""
    name = window.args.get("alias")
    if name is not None and not window.args.get("partition_by") and not window.args.get(
            "order") and not window.args.get("spec"):
        found = windows.get(name.name)
        if found is None:
            raise ValidationError(f"Window '{name.name}' not found")
        return found  # type: ignore[return-value]
    return window


def _frame(window: exp.Window, scope: Scope, plan: n.PlanNode,
           functions: FunctionCatalog) -> Frame:
    resolver = ExpressionResolver(scope, functions)
    partition = []
    for expression in window.args.get("partition_by") or []:
        ref = resolver.resolve(expression)
        if not isinstance(ref, InputRef):
            raise UnsupportedFeatureError("PARTITION BY an expression in an over window")
        partition.append(ref.index)
    order = window.args.get("order")
    keys = list(order.expressions) if order is not None else []
    if len(keys) != 1:
        raise ValidationError("An over window in streaming mode must be ordered by one time "
                              "attribute")
    key = keys[0]
    if isinstance(key, exp.Ordered) and key.args.get("desc"):
        raise ValidationError("An over window must be ordered by its time attribute "
                              "ascending")
    ref = resolver.resolve(key.this if isinstance(key, exp.Ordered) else key)
    if not isinstance(ref, InputRef) or not (is_rowtime(plan.fields[ref.index].type)
                                             or is_proctime(plan.fields[ref.index].type)):
        raise ValidationError("OVER windows' ordering in stream mode must be defined on a "
                              "time attribute.")
    rows, preceding = _bounds(window.args.get("spec"), resolver)
    return tuple(partition), ref.index, rows, preceding


def _bounds(spec: exp.Expression | None, resolver: ExpressionResolver
            ) -> tuple[bool, int | None]:
    if spec is None:
        return False, None  # RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
    rows = str(spec.args.get("kind") or "RANGE").upper() == "ROWS"
    end = str(spec.args.get("end") or "CURRENT ROW").upper()
    if end != "CURRENT ROW":
        raise UnsupportedFeatureError("an over window ending after the current row "
                                      "(FOLLOWING)")
    start = spec.args.get("start")
    side = str(spec.args.get("start_side") or "PRECEDING").upper()
    if isinstance(start, str) and start.upper() == "UNBOUNDED":
        return rows, None
    if isinstance(start, str) and start.upper() == "CURRENT ROW":
        return rows, 0
    if side != "PRECEDING":
        raise UnsupportedFeatureError("an over window starting after the current row")
    value = resolver.resolve(start) if isinstance(start, exp.Expression) else None
    if not isinstance(value, Literal):
        raise ValidationError("An over window's bound must be a literal")
    if rows:
        if not isinstance(value.value, int):
            raise ValidationError("A ROWS frame's bound is a number of rows")
        return True, value.value
    if not hasattr(value.value, "total_seconds"):
        raise ValidationError("A RANGE frame's bound is an interval such as "
                              "INTERVAL '1' HOUR")
    return False, round(value.value.total_seconds() * 1000)
