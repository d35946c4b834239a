"""A window aggregation reads its input's fields through a projection that only reorders or
renames them (issue 32): the projection is no operator of its own (Calcite's
AggregateProjectMergeRule, which Flink applies before planning), so each row skips one map and
one row copy on its way to the window operator. A projection that narrows the rows (drops
fields) stays: it ships fewer fields to the keyed operator. Pure function of the plan."""

from __future__ import annotations

import dataclasses
from typing import Any

from flintlock.table.plan import nodes as n
from flintlock.table.plan.rex import InputRef


def window_aggregate_through_projection(node: Any) -> Any:
    """``node`` (a ``WindowAggregate``) over the fields under a reordering projection, or
    ``node`` itself where that does not apply."""
    calc = node.input
    if not isinstance(calc, n.Calc) or calc.condition is not None:
        return node
    if len(calc.input.fields) > len(calc.projections):
        return node
    used = {node.time_field, *node.group} | {a for c in node.calls for a in c.args} | {
        c.filter for c in node.calls if c.filter is not None}
    if not all(isinstance(calc.projections[i], InputRef) for i in used):
        return node
    origin = {i: calc.projections[i].index for i in used}
    calls = tuple(dataclasses.replace(
        c, args=tuple(origin[a] for a in c.args),
        filter=origin[c.filter] if c.filter is not None else None) for c in node.calls)
    return dataclasses.replace(node, input=calc.input, time_field=origin[node.time_field],
                               group=tuple(origin[g] for g in node.group), calls=calls)
