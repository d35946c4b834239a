"""Joins in the logical plan: splitting an ON condition into equi-join keys and a residual
condition (``make_join``), finding the time bounds of an interval join in it (``time_bounded``,
below), and the joins that SQL's other constructs become — IN / EXISTS
subqueries as semi and anti joins (``semi_join``), INTERSECT / EXCEPT as semi and anti joins
on every column with NULL equal to NULL (``set_difference``) — plus ``coerce``, the cast of a
plan's fields to the types a set operation needs. Pure functions from plans to plans.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Sequence
from dataclasses import replace

from flintlock.table import types as t
from flintlock.table.errors import ValidationError
from flintlock.table.plan import nodes as n
from flintlock.table.plan import type_rules as tr
from flintlock.table.plan.resolver import ExpressionResolver, Scope, cast_to
from flintlock.table.plan.rewrite import identity
from flintlock.table.plan.rex import (
    Call,
    InputRef,
    Literal,
    Rex,
    UdfCall,
    input_refs,
    remap,
    shift,
)
from flintlock.table.plan.time_join_nodes import IntervalJoin
from flintlock.table.time_attributes import is_proctime, is_rowtime


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


def keyed_join(left: n.PlanNode, right: n.PlanNode, kind: n.JoinKind, condition: Rex | None,
               finish: Callable[[n.Join], n.PlanNode]) -> n.PlanNode:
    """``finish(make_join(...))``, with an equality between an expression of the left input
    and one of the right (``MOD(b.auction, 10000) = s.key``) made a join key as Flink's
    join-push-expressions rule makes it: each side computes its expression as an extra column
    below the join, the join is keyed on the extra columns, and a Calc above drops them."""
    offset = len(left.fields)
    pairs: list[tuple[Rex, Rex]] = []
    rest: list[Rex] = []
    for conjunct in conjuncts(condition):
        pair = _expression_pair(conjunct, offset)
        if pair is None:
            rest.append(conjunct)
        else:
            pairs.append(pair)
    if not pairs:
        return finish(make_join(left, right, kind, condition))
    extra, width = len(pairs), len(right.fields)
    left_keyed = _with_columns(left, [a for a, _ in pairs])
    right_keyed = _with_columns(right, [b for _, b in pairs])
    mapping: dict[int, Rex] = {i: InputRef(t, i if i < offset else i + extra)
               for i, t in enumerate([*left.types, *right.types])}
    parts = [ExpressionResolver(Scope()).call("=", [
        InputRef(left_keyed.types[offset + k], offset + k),
        InputRef(right_keyed.types[width + k], offset + extra + width + k)])
        for k in range(extra)]
    parts += [remap(r, mapping) for r in rest]
    joined = finish(make_join(left_keyed, right_keyed, kind, _all_of(parts)))
    keep = [*range(offset), *range(offset + extra, offset + extra + width)]
    return n.Calc(tuple(joined.fields[i] for i in keep), joined,
                  tuple(InputRef(joined.fields[i].type, i) for i in keep))


def _expression_pair(conjunct: Rex, offset: int) -> tuple[Rex, Rex] | None:
    """(left expression, right expression over the right input alone) of ``l = r`` where
    the two sides read one input each and one is more than a field."""
    if not (isinstance(conjunct, Call) and conjunct.function == "=") or _equi_pair(
            conjunct, offset) is not None or not _pushable(conjunct):
        return None
    a, b = conjunct.operands
    a_refs, b_refs = input_refs(a), input_refs(b)
    if not a_refs or not b_refs:
        return None
    if max(a_refs) < offset <= min(b_refs):
        return a, shift(b, -offset)
    if max(b_refs) < offset <= min(a_refs):
        return b, shift(a, -offset)
    return None


def _with_columns(plan: n.PlanNode, columns: list[Rex]) -> n.PlanNode:
    names = [f"$key{i}" for i in range(len(columns))]
    return n.Calc(plan.fields + n.fields_of(names, [c.type for c in columns]), plan,
                  identity(plan) + tuple(columns))


def time_bounded(plan: n.PlanNode) -> n.PlanNode:
    """A query's join (FROM / WHERE, ``Table.join``) once its kind is known: an
    ``IntervalJoin`` when the residual of its ON condition bounds the left input's time
    attribute by the right's from below and above (both rowtimes or both proctimes), as
    Flink's ``IntervalJoinUtil`` finds one; else the join as it is (a regular join's fields
    keep their time attribute marks, as Flink's validated schema shows them; Flink
    materializes them only when it optimizes the plan)."""
    if type(plan) is not n.Join or plan.kind in (n.JoinKind.SEMI, n.JoinKind.ANTI):
        return plan
    interval = _interval_join(plan)
    return plan if interval is None else interval


_NOT_PUSHED = frozenset({"RAND", "RAND_INTEGER", "UUID", "NOW", "CURRENT_TIMESTAMP",
                         "LOCALTIMESTAMP", "CURRENT_DATE", "CURRENT_TIME", "LOCALTIME",
                         "UNIX_TIMESTAMP", "PROCTIME", "CURRENT_ROW_TIMESTAMP"})
"""Functions whose value depends on when or how often they are called: a conjunct calling
one stays where the query wrote it (Flink pushes only deterministic filters)."""


def filtered_join(calc: n.Calc, below: Callable[[n.PlanNode], n.PlanNode] = lambda p: p
                  ) -> n.PlanNode:
    """A WHERE over an inner join (``FROM a, b WHERE ...``, ``a JOIN b ON ... WHERE ...``) with
    its conjuncts pushed into the join, as Flink's filter-into-join rule does: a conjunct on one
    input's fields becomes a filter below the join (``below`` finishes that filter, e.g. into
    a Top-N), one on both becomes part of the join's condition — its equalities the join's
    keys, the rest its residual, or its time bounds an ``IntervalJoin`` — and the rest
    (constants, non-deterministic calls, user functions) stays a filter above. Recursive, so
    ``FROM a, b, c WHERE ...`` keys both joins. ``calc`` as it is when nothing moves."""
    join = calc.input
    if (type(join) is not n.Join or join.kind is not n.JoinKind.INNER or join.null_safe
            or calc.condition is None or not _is_identity(calc)):
        return calc
    offset = len(join.left.fields)
    left_only: list[Rex] = []
    right_only: list[Rex] = []
    both: list[Rex] = []
    kept: list[Rex] = []
    for conjunct in conjuncts(calc.condition):
        refs = input_refs(conjunct)
        if not refs or not _pushable(conjunct):
            kept.append(conjunct)
        elif max(refs) < offset:
            left_only.append(conjunct)
        elif min(refs) >= offset:
            right_only.append(shift(conjunct, -offset))
        else:
            both.append(conjunct)
    if not (left_only or right_only or both):
        return calc
    parts = [ExpressionResolver(Scope()).call("=", [
        InputRef(join.left.types[a], a), InputRef(join.right.types[b], offset + b)])
        for a, b in zip(join.left_keys, join.right_keys, strict=True)]
    parts += [*conjuncts(join.condition), *both]
    pushed = keyed_join(_filtered_input(join.left, left_only, below),
                        _filtered_input(join.right, right_only, below), n.JoinKind.INNER,
                        _all_of(parts), time_bounded)
    if not kept:
        return pushed
    return n.Calc(pushed.fields, pushed, identity(pushed), _all_of(kept))


def _filtered_input(plan: n.PlanNode, condition: list[Rex],
                    below: Callable[[n.PlanNode], n.PlanNode]) -> n.PlanNode:
    if not condition:
        return plan
    return below(filtered_join(n.Calc(plan.fields, plan, identity(plan), _all_of(condition)),
                               below))


def _pushable(conjunct: Rex) -> bool:
    if isinstance(conjunct, UdfCall):
        return False
    if isinstance(conjunct, Call):
        return conjunct.function not in _NOT_PUSHED and all(
            _pushable(o) for o in conjunct.operands)
    return True


def _all_of(parts: Sequence[Rex]) -> Rex | None:
    if not parts:
        return None
    if len(parts) == 1:
        return parts[0]
    return Call(t.BooleanType(any(tr.is_nullable(p.type) for p in parts)), "AND", tuple(parts))


def join_scope(plan: n.PlanNode, scope: Scope) -> Scope:
    """``scope`` over a planned join with each field's type as the join node has it."""
    fields = plan.fields
    return Scope([replace(f, type=fields[f.index].type) if f.index < len(fields) else f
                  for f in scope.fields])


def _is_identity(calc: n.Calc) -> bool:
    return all(isinstance(p, InputRef) and p.index == i for i, p in enumerate(calc.projections)
               ) and len(calc.projections) == len(calc.input.fields)


_FLIPPED = {">": "<", ">=": "<=", "<": ">", "<=": ">="}


def _interval_join(join: n.Join) -> IntervalJoin | None:
    """The join as an interval join, or None when its condition has no time bounds."""
    offset = len(join.left.fields)
    types = [*join.left.types, *join.right.types]  # the inputs' own, time attributes marked
    lower: int | None = None
    upper: int | None = None
    times: set[tuple[int, int]] = set()
    rest: list[Rex] = []
    for conjunct in conjuncts(join.condition):
        bounds = _time_bounds(conjunct, offset, types)
        if bounds is None:
            rest.append(conjunct)
            continue
        for pair, low, high in bounds:
            times.add(pair)
            if low is not None:
                if lower is not None:
                    return None
                lower = low
            if high is not None:
                if upper is not None:
                    return None
                upper = high
    if lower is None or upper is None or len(times) != 1:
        return None
    ((left_time, right_time),) = times
    if any(is_rowtime(types[i]) or is_proctime(types[i]) for r in rest for i in input_refs(r)):
        return None  # Flink: the remaining condition may not read a time attribute
    residual = None
    if rest:
        residual = rest[0] if len(rest) == 1 else Call(
            t.BooleanType(any(tr.is_nullable(r.type) for r in rest)), "AND", tuple(rest))
    return IntervalJoin(join.fields, join.left, join.right, join.kind, join.left_keys,
                        join.right_keys, residual, left_time, right_time - offset, lower, upper,
                        is_proctime(types[left_time]))


def _time_bounds(conjunct: Rex, offset: int, types: Sequence[t.DataType]
                 ) -> list[tuple[tuple[int, int], int | None, int | None]] | None:
    """((left time, right time), lower, upper) bounds of ``left.time`` relative to
    ``right.time`` that a comparison (or BETWEEN) between the two sets; None if it is not
    one."""
    if not isinstance(conjunct, Call):
        return None
    if conjunct.function == "BETWEEN" and len(conjunct.operands) == 3:
        value, low, high = conjunct.operands
        first = _comparison(">=", value, low, offset, types)
        second = _comparison("<=", value, high, offset, types)
        if first is None or second is None:
            return None
        return [first, second]
    if conjunct.function in _FLIPPED and len(conjunct.operands) == 2:
        found = _comparison(conjunct.function, *conjunct.operands, offset, types)
        return None if found is None else [found]
    return None


def _comparison(operator: str, a: Rex, b: Rex, offset: int, types: Sequence[t.DataType]
                ) -> tuple[tuple[int, int], int | None, int | None] | None:
    first, second = _time_term(a, types), _time_term(b, types)
    if first is None or second is None or first[2] != second[2]:
        return None
    (a_index, a_shift, _), (b_index, b_shift, _) = first, second
    if a_index < offset <= b_index:  # left.t + a_shift OP right.t + b_shift
        difference = b_shift - a_shift
    elif b_index < offset <= a_index:
        operator = _FLIPPED[operator]
        a_index, b_index = b_index, a_index
        difference = a_shift - b_shift
    else:
        return None
    pair = (a_index, b_index)
    if operator == ">=":
        return pair, difference, None
    if operator == ">":
        return pair, difference + 1, None
    if operator == "<=":
        return pair, None, difference
    return pair, None, difference - 1


def _time_term(rex: Rex, types: Sequence[t.DataType]) -> tuple[int, int, str] | None:
    """(field, milliseconds added, "rowtime"/"proctime") of ``time_attribute [+|- interval]``."""
    shift = 0
    if isinstance(rex, Call) and rex.function in ("+", "-") and len(rex.operands) == 2:
        base, amount = rex.operands
        if rex.function == "+" and isinstance(base, Literal):
            base, amount = amount, base
        if not (isinstance(amount, Literal) and isinstance(amount.value, datetime.timedelta)):
            return None
        millis = amount.value // datetime.timedelta(milliseconds=1)
        shift = millis if rex.function == "+" else -millis
        rex = base
    if not isinstance(rex, InputRef):
        return None
    if is_rowtime(types[rex.index]):
        return rex.index, shift, "rowtime"
    if is_proctime(types[rex.index]):
        return rex.index, shift, "proctime"
    return None


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
