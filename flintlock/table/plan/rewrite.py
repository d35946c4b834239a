"""Plan rewrites: functions from plan to plan, each a rule Flink's optimizer also applies.

* ``fuse_calcs``: a ``Calc`` over a ``Calc`` is one ``Calc`` (projections substituted into each
  other, conditions joined with AND), so a query compiles to one function per chain of
  projections and filters;
* ``identity`` / ``project_fields``: the projection that keeps or renames every field.

Pure functions; a rewritten plan shares the unchanged sub-plans with the original.
"""

from __future__ import annotations

from flintlock.table import types as t
from flintlock.table.plan import nodes as n
from flintlock.table.plan import type_rules as tr
from flintlock.table.plan.rex import Call, InputRef, Rex, remap


def identity(plan: n.PlanNode) -> tuple[Rex, ...]:
    return tuple(InputRef(f.type, i) for i, f in enumerate(plan.fields))


def project_fields(plan: n.PlanNode, names: list[str]) -> n.PlanNode:
    """``plan`` with its fields renamed."""
    fields = n.fields_of(names, plan.types)
    if isinstance(plan, n.Calc):
        return n.Calc(fields, plan.input, plan.projections, plan.condition)
    return n.Calc(fields, plan, identity(plan))


def _is_identity(calc: n.Calc) -> bool:
    return len(calc.projections) == len(calc.input.fields) and all(
        isinstance(p, InputRef) and p.index == i for i, p in enumerate(calc.projections))


def fuse_calcs(plan: n.PlanNode) -> n.PlanNode:
    """A Calc over a Calc as one Calc. Substitution may name an inner expression several
    times; the compiler computes equal expressions once per row, so no work is repeated."""
    if not isinstance(plan, n.Calc) or not isinstance(plan.input, n.Calc):
        return plan
    inner = plan.input
    mapping = dict(enumerate(inner.projections))
    projections = tuple(remap(p, mapping) for p in plan.projections)
    conditions = [c for c in (inner.condition,
                              remap(plan.condition, mapping) if plan.condition else None) if c]
    condition: Rex | None = None
    if len(conditions) == 1:
        condition = conditions[0]
    elif conditions:
        condition = Call(t.BooleanType(any(tr.is_nullable(c.type) for c in conditions)),
                         "AND", tuple(conditions))
    return fuse_calcs(n.Calc(plan.fields, inner.input, projections, condition))


def drop_unused_rank_number(plan: n.PlanNode) -> n.PlanNode:
    """A Top-N whose row number no one reads does not output it (Flink's rule): it then emits
    only the rows that enter and leave the top N, not an update of every rank that moves."""
    if not (isinstance(plan, n.Calc) and isinstance(plan.input, n.Rank)
            and plan.input.output_number):
        return plan
    rank = plan.input
    number = len(rank.fields) - 1
    used = any(_reads(p, number) for p in plan.projections) or (
        plan.condition is not None and _reads(plan.condition, number))
    if used:
        return plan
    without = n.Rank(rank.fields[:-1], rank.input, rank.partition, rank.order, rank.limit, False)
    return n.Calc(plan.fields, without, plan.projections, plan.condition)


def _reads(rex: Rex, index: int) -> bool:
    if isinstance(rex, InputRef):
        return rex.index == index
    return any(_reads(o, index) for o in getattr(rex, "operands", ()))
