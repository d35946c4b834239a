"""Joins in the logical plan: splitting an ON condition into equi-join keys and a residual
condition (``make_join``), and the joins that SQL's other constructs become — IN / EXISTS
subqueries as semi and anti joins (``semi_join``), INTERSECT / EXCEPT as semi and anti joins
on every column with NULL equal to NULL (``set_difference``) — plus ``coerce``, the cast of a
plan's fields to the types a set operation needs. Pure functions from plans to plans.
"""

from __future__ import annotations

from collections.abc import Sequence

from flintlock.table import types as t
from flintlock.table.errors import ValidationError
from flintlock.table.plan import nodes as n
from flintlock.table.plan import type_rules as tr
from flintlock.table.plan.resolver import ExpressionResolver, Scope, cast_to
from flintlock.table.plan.rewrite import identity
from flintlock.table.plan.rex import Call, InputRef, Literal, Rex


def make_join(left: n.PlanNode, right: n.PlanNode, kind: n.JoinKind, condition: Rex | None
              ) -> n.Join:
    """A join node with its equi-join keys split from the rest of the condition."""
    offset = len(left.fields)
    left_keys: list[int] = []
    right_keys: list[int] = []
    residual: list[Rex] = []
    for conjunct in conjuncts(condition):
        pair = _equi_pair(conjunct, offset)
        if pair is not None:
            left_keys.append(pair[0])
            right_keys.append(pair[1])
        else:
            residual.append(conjunct)
    rest = None
    if residual:
        rest = residual[0] if len(residual) == 1 else Call(
            t.BooleanType(any(tr.is_nullable(r.type) for r in residual)), "AND",
            tuple(residual))
    right_types = right.types
    left_types = left.types
    if kind in (n.JoinKind.LEFT, n.JoinKind.FULL):
        right_types = [tr.with_nullability(dt, True) for dt in right_types]
    if kind in (n.JoinKind.RIGHT, n.JoinKind.FULL):
        left_types = [tr.with_nullability(dt, True) for dt in left_types]
    fields = n.fields_of(left.names + right.names, left_types + right_types)
    return n.Join(fields, left, right, kind, tuple(left_keys), tuple(right_keys), rest)


def _equi_pair(condition: Rex, offset: int) -> tuple[int, int] | None:
    if not (isinstance(condition, Call) and condition.function == "="):
        return None
    a, b = condition.operands
    a = _strip_cast(a)
    b = _strip_cast(b)
    if isinstance(a, InputRef) and isinstance(b, InputRef):
        if a.index < offset <= b.index:
            return a.index, b.index - offset
        if b.index < offset <= a.index:
            return b.index, a.index - offset
    return None


def _strip_cast(rex: Rex) -> Rex:
    if isinstance(rex, Call) and rex.function == "CAST" and tr.family(rex.type) == tr.family(
            rex.operands[0].type):
        return rex.operands[0]
    return rex


def conjuncts(condition: Rex | None) -> list[Rex]:
    if condition is None:
        return []
    if isinstance(condition, Call) and condition.function == "AND":
        found: list[Rex] = []
        for operand in condition.operands:
            found.extend(conjuncts(operand))
        return found
    return [condition]


def semi_join(plan: n.PlanNode, operands: list[Rex], subquery: n.PlanNode, anti: bool
              ) -> n.PlanNode:
    """``plan``'s rows with (``anti``: without) a match among ``subquery``'s DISTINCT rows on
    ``operands`` = its columns: IN / EXISTS (NOT IN / NOT EXISTS). The anti join is a left join
    keeping the rows whose match is NULL, so a match arriving later retracts the row."""
    width = len(plan.fields)
    if all(isinstance(o, InputRef) for o in operands):
        left = plan
        key_refs = list(operands)
    else:
        extra = [o for o in operands if not isinstance(o, InputRef)]
        left = n.Calc(plan.fields + n.fields_of([f"$in{i}" for i in range(len(extra))],
                                                [e.type for e in extra]),
                      plan, identity(plan) + tuple(extra))
        key_refs = []
        position = width
        for operand in operands:
            if isinstance(operand, InputRef):
                key_refs.append(operand)
            else:
                key_refs.append(InputRef(operand.type, position))
                position += 1
    distinct = n.Aggregate(subquery.fields, subquery, tuple(range(len(subquery.fields))), ())
    offset = len(left.fields)
    condition_parts = []
    for index, ref in enumerate(key_refs):
        right = InputRef(distinct.fields[index].type, offset + index)
        condition_parts.append(ExpressionResolver(Scope()).call("=", [ref, right]))
    condition = condition_parts[0] if len(condition_parts) == 1 else Call(
        t.BooleanType(True), "AND", tuple(condition_parts))
    joined = make_join(left, distinct, n.JoinKind.LEFT if anti else n.JoinKind.INNER,
                       condition)
    keep = None
    if anti:
        keep = ExpressionResolver(Scope()).call(
            "IS NULL", [InputRef(tr.with_nullability(distinct.fields[0].type, True),
                                 offset)])
    return n.Calc(plan.fields, joined, identity(plan), keep)


def set_difference(left: n.PlanNode, right: n.PlanNode, except_: bool) -> n.PlanNode:
    """INTERSECT (``except_`` False) or EXCEPT of two queries, as SQL defines them: the
    DISTINCT rows of ``left`` that are (not) in ``right``, NULL equal to NULL — a semi (anti)
    join on every column against ``right``'s DISTINCT rows."""
    if len(left.fields) != len(right.fields):
        raise ValidationError(
            "Set operator cannot combine queries with different numbers of columns: "
            f"{len(left.fields)} and {len(right.fields)}")
    types = [tr.common_type([a, b], "INTERSECT") for a, b in zip(left.types, right.types,
                                                                  strict=True)]
    width = len(types)
    everything = tuple(range(width))
    distinct_left = n.Aggregate(n.fields_of(left.names, types), coerce(left, types), everything,
                                ())
    distinct_right = n.Aggregate(n.fields_of(right.names, types), coerce(right, types),
                                 everything, ())
    if not except_:
        join = n.Join(n.fields_of(left.names + [f"$r{i}" for i in everything], types + types),
                      distinct_left, distinct_right, n.JoinKind.INNER, everything, everything,
                      None, (True,) * width)
        return n.Calc(distinct_left.fields, join, identity(distinct_left))
    # EXCEPT keeps the left rows whose match is missing; a marker column tells a missing match
    # from a matching right row of NULLs
    marker = n.Calc((*distinct_right.fields, n.Field("$m", t.BooleanType(False))),
                    distinct_right, (*identity(distinct_right), _true()))
    padded = [tr.with_nullability(dt, True) for dt in types]
    join = n.Join(n.fields_of([*left.names, *(f"$r{i}" for i in everything), "$m"],
                              [*types, *padded, t.BooleanType(True)]),
                  distinct_left, marker, n.JoinKind.LEFT, everything, everything, None,
                  (True,) * width)
    keep = Call(t.BooleanType(False), "IS NULL", (InputRef(t.BooleanType(True), 2 * width),))
    return n.Calc(distinct_left.fields, join, identity(distinct_left), keep)


def _true() -> Rex:
    return Literal(t.BooleanType(False), True)


def coerce(plan: n.PlanNode, types: Sequence[t.DataType]) -> n.PlanNode:
    """``plan`` with its fields cast to ``types`` where they differ."""
    if all(tr.type_key(a) == tr.type_key(b) for a, b in zip(plan.types, types, strict=True)):
        return plan
    projections = tuple(cast_to(InputRef(f.type, i), dt)
                        for i, (f, dt) in enumerate(zip(plan.fields, types, strict=True)))
    return n.Calc(n.fields_of(plan.names, list(types)), plan, projections)
