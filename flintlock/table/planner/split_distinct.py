"""Split distinct aggregation (``table.optimizer.distinct-agg.split.enabled``, issue 32): a
streaming GROUP BY with a DISTINCT aggregate runs in two levels, as Flink's
``SplitAggregateRule`` rewrites it (docs/table.md, "Split distinct aggregation").

* each DISTINCT call's argument fields (and MIN/MAX/FIRST_VALUE/LAST_VALUE's, which Flink
  splits too), when not grouping keys, get a bucket column ``MOD(HASH_CODE(x), bucket-num)``
  (Java's remainder, so negative buckets exist; HASH_CODE as Flink computes it for the type);
* each call's *group set* is the keys plus its arguments' buckets (the keys alone for the
  others); where more than one call adds a new group set, each row is expanded once per group
  set (Flink's Expand, in Calcite's order of the sets: a superset first, else by the lowest
  differing field), the buckets outside the set nulled, and every partial call filtered to the
  rows of its own set (and its own FILTER);
* the partial aggregation groups by the keys and all bucket columns: COUNT, SUM, SUM0, MIN,
  MAX, FIRST_VALUE, LAST_VALUE, LISTAGG as they were (DISTINCT kept), AVG as SUM0 and COUNT;
* the final aggregation groups by the keys: SUM0 of the partial counts, SUM of sums, MIN of
  minima...; AVG as the final sums divided (NULL over a count of 0).

Both levels are ordinary group aggregations planned by the translator (so mini-batch applies
to each); the rewrite itself is a pure function of the plan node.
"""

from __future__ import annotations

import datetime
import functools
import struct
from dataclasses import dataclass
from typing import Any

from flintlock.common.types import Row, row_of
from flintlock.datastream.functions import FlatMapFunction, MapFunction
from flintlock.table import types as t
from flintlock.table.codegen.sql_functions import java_hash_code
from flintlock.table.plan import functions
from flintlock.table.plan import nodes as n
from flintlock.table.plan import type_rules as tr
from flintlock.table.plan.resolver import aggregate_type
from flintlock.table.plan.rex import Call, InputRef, Literal, Rex

_PARTIAL_FINAL: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "AVG": (("SUM0", "COUNT"), ("SUM0", "SUM0")),
    "COUNT": (("COUNT",), ("SUM0",)),
    "MIN": (("MIN",), ("MIN",)),
    "MAX": (("MAX",), ("MAX",)),
    "SUM": (("SUM",), ("SUM",)),
    "SUM0": (("SUM0",), ("SUM0",)),
    "FIRST_VALUE": (("FIRST_VALUE",), ("FIRST_VALUE",)),
    "LAST_VALUE": (("LAST_VALUE",), ("LAST_VALUE",)),
    "LISTAGG": (("LISTAGG",), ("LISTAGG",)),
}
"""Flink's partial and final functions of each splittable aggregate."""

_HASHED_TOO = frozenset({"MIN", "MAX", "FIRST_VALUE", "LAST_VALUE"})
"""Non-distinct calls whose arguments Flink buckets as well (their retracting state would
otherwise sit in one instance per key)."""


@dataclass(frozen=True, eq=False)
class SplitInput(n.UnaryNode):
    """The partial aggregation's input: the input row, then one bucket column per hashed
    field, then (when expanding) one BOOLEAN per distinct (group set, FILTER) pair. Expanded,
    each input row appears once per group set, in ``group_sets`` order."""

    hashed: tuple[int, ...] = ()
    buckets: int = 1024
    group_sets: tuple[frozenset[int], ...] = ()
    filters: tuple[tuple[int, int | None], ...] = ()
    """Per filter column: (index into ``group_sets``, the call's own FILTER field or None)."""


def should_split(node: n.Aggregate, configuration: Any) -> bool:
    """Whether Flink's rule applies: enabled, a DISTINCT call, every call splittable."""
    if configuration is None or isinstance(node, n.TableAggregate):
        return False
    from flintlock.common.options import table_optimizer as options

    if not configuration.get(options.DISTINCT_AGG_SPLIT_ENABLED):
        return False
    if isinstance(node.input, SplitInput):  # a partial aggregation of an earlier split
        return False
    return any(call.distinct for call in node.calls) and all(
        call.function is None and call.name in _PARTIAL_FINAL
        and (call.name not in ("FIRST_VALUE", "LAST_VALUE") or len(call.args) == 1)
        for call in node.calls)


def _needs_buckets(call: n.AggregateCall) -> bool:
    return call.distinct or call.name in _HASHED_TOO


def _set_order(first: frozenset[int], second: frozenset[int]) -> int:
    """Calcite's ``ImmutableBitSet.COMPARATOR``: a superset first, else the set whose sorted
    fields differ first by a lower field (a shorter prefix first)."""
    if first == second:
        return 0
    if first > second:
        return -1
    if second > first:
        return 1
    a, b = sorted(first), sorted(second)
    for x, y in zip(a, b, strict=False):
        if x != y:
            return -1 if x < y else 1
    return -1 if len(a) < len(b) else 1


def _over_projected_fields(node: n.Aggregate) -> n.Aggregate:
    """``node`` reading through a projection of plain fields straight from the fields under
    it (Calcite's AggregateProjectMergeRule, which Flink applies first): the bucket columns
    and group sets then follow the order of those fields, as in Flink's plan."""
    calc = node.input
    if not isinstance(calc, n.Calc):
        return node
    used = set(node.group) | {a for c in node.calls for a in c.args} | {
        c.filter for c in node.calls if c.filter is not None}
    if not all(isinstance(calc.projections[i], InputRef) for i in used):
        return node
    origin = {i: calc.projections[i].index for i in used}  # type: ignore[attr-defined]
    below: n.PlanNode = calc.input
    if calc.condition is not None:
        below = n.Calc(calc.input.fields, calc.input, tuple(
            InputRef(f.type, i) for i, f in enumerate(calc.input.fields)), calc.condition)
    calls = tuple(n.AggregateCall(
        c.name, tuple(origin[a] for a in c.args), c.type, c.distinct,
        origin[c.filter] if c.filter is not None else None, c.function, c.options)
        for c in node.calls)
    return n.Aggregate(node.fields, below, tuple(origin[g] for g in node.group), calls)


def split(node: n.Aggregate, buckets: int) -> n.PlanNode:
    """The two-level plan computing ``node``'s rows (``should_split(node)`` must hold)."""
    node = _over_projected_fields(node)
    group = frozenset(node.group)
    width = len(node.input.fields)
    hashed = sorted({a for call in node.calls if _needs_buckets(call) for a in call.args}
                    - group)
    bucket_of = {field: width + i for i, field in enumerate(hashed)}
    call_sets: list[frozenset[int]] = []
    new_sets = 0
    for call in node.calls:
        if _needs_buckets(call):
            call_set = frozenset(bucket_of.get(a, a) for a in call.args) | group
            new_sets += call_set not in call_sets
        else:
            call_set = group
        call_sets.append(call_set)
    group_sets = tuple(sorted(set(call_sets), key=functools.cmp_to_key(_set_order)))
    full = tuple(sorted(frozenset().union(*group_sets)))
    expand = new_sets > 1
    partial_calls, filters = _partial_calls(node, call_sets, group_sets, expand)
    input_fields = list(node.input.fields) + [
        n.Field(f"$f{width + i}", t.IntType(True)) for i in range(len(hashed))] + [
        n.Field(f"$g_{i}", t.BooleanType(True)) for i in range(len(filters))]
    split_input = SplitInput(tuple(input_fields), node.input, tuple(hashed), buckets,
                             group_sets if expand else (), tuple(filters))
    partial = n.Aggregate(
        tuple(input_fields[i] for i in full) + tuple(
            n.Field(f"$p{i}", call.type) for i, call in enumerate(partial_calls)),
        split_input, full, tuple(partial_calls))
    return _final(node, partial, len(full))


def _partial_calls(node: n.Aggregate, call_sets: list[frozenset[int]],
                   group_sets: tuple[frozenset[int], ...], expand: bool
                   ) -> tuple[list[n.AggregateCall], list[tuple[int, int | None]]]:
    filters: list[tuple[int, int | None]] = []
    calls: list[n.AggregateCall] = []
    width = len(node.input.fields) + len({
        a for c in node.calls if _needs_buckets(c) for a in c.args} - set(node.group))
    for call, call_set in zip(node.calls, call_sets, strict=True):
        filter_field = call.filter
        if expand:
            key = (group_sets.index(call_set), call.filter)
            if key not in filters:
                filters.append(key)
            filter_field = width + filters.index(key)
        argument_types = [node.input.fields[a].type for a in call.args]
        for name in _PARTIAL_FINAL[call.name][0]:
            data_type = call.type if name == call.name else aggregate_type(
                name, argument_types, True)
            calls.append(n.AggregateCall(name, call.args, data_type, call.distinct,
                                         filter_field, None, call.options))
    return calls, filters


def _final(node: n.Aggregate, partial: n.Aggregate, keys: int) -> n.PlanNode:
    """The final aggregation over ``partial`` (and AVG's division, when there is one)."""
    full = partial.group
    final_group = tuple(full.index(g) for g in node.group)
    calls: list[n.AggregateCall] = []
    offset = keys
    for call in node.calls:
        for name in _PARTIAL_FINAL[call.name][1]:
            partial_type = partial.fields[offset].type
            data_type = call.type if call.name != "AVG" else aggregate_type(
                name, [partial_type], True)
            calls.append(n.AggregateCall(name, (offset,), data_type))
            offset += 1
    key_fields = tuple(node.fields[:len(node.group)])
    if not any(call.name == "AVG" for call in node.calls):
        return n.Aggregate(node.fields, partial, final_group, tuple(calls))
    final = n.Aggregate(key_fields + tuple(
        n.Field(f"$r{i}", call.type) for i, call in enumerate(calls)),
        partial, final_group, tuple(calls))
    projections: list[Rex] = [InputRef(f.type, i) for i, f in enumerate(key_fields)]
    position = len(key_fields)
    for call in node.calls:
        if call.name == "AVG":
            projections.append(_average(final, position, call.type))
            position += 2
        else:
            projections.append(InputRef(final.fields[position].type, position))
            position += 1
    return n.Calc(node.fields, final, tuple(projections))


def _average(final: n.Aggregate, position: int, result: t.DataType) -> Rex:
    """``CAST(sum / NULLIF(count, 0) AS result)``: Flink's IF(count = 0, NULL, sum / count)."""
    total = InputRef(final.fields[position].type, position)
    count = InputRef(final.fields[position + 1].type, position + 1)
    zero = Literal(t.BigIntType(False), 0)
    nullif = Call(tr.with_nullability(count.type, True), "NULLIF", (count, zero))
    divide = functions.lookup("/")
    quotient = Call(divide.infer([total.type, nullif.type], ()), "/", (total, nullif))
    return Call(result, "CAST", (quotient,))


# -- the bucket column: Flink's HASH_CODE ---------------------------------------------------

_MASK = 0xFFFFFFFF
_EPOCH = datetime.date(1970, 1, 1)


def _signed(value: int) -> int:
    value &= _MASK
    return value - (1 << 32) if value >= (1 << 31) else value


def _long_hash(value: int) -> int:
    value &= 0xFFFFFFFFFFFFFFFF
    return _signed(value ^ (value >> 32))


def _double_hash(value: float) -> int:
    if value != value:
        return _long_hash(0x7FF8000000000000)
    (bits,) = struct.unpack("<q", struct.pack("<d", value))
    return _long_hash(bits)


def _float_hash(value: float) -> int:
    if value != value:
        return 0x7FC00000
    (bits,) = struct.unpack("<i", struct.pack("<f", value))
    return int(bits)


def hash_code(value: Any, data_type: t.DataType) -> int | None:
    """Flink's ``HASH_CODE(value)`` for a value of ``data_type`` (None for NULL): a
    string's is the absolute value of Java's ``String.hashCode``, a number's Java's
    ``hashCode`` of the boxed value (both as PyFlink 2.3.0 prints them:
    tests/table/test_split_distinct.py); other types get a stable hash of their text, which
    changes only which values share a bucket (docs/table.md)."""
    if value is None:
        return None
    if isinstance(data_type, (t.VarCharType, t.CharType)):
        return abs(int(java_hash_code(str(value))))
    if isinstance(data_type, t.BooleanType):
        return 1231 if value else 1237
    if isinstance(data_type, t.BigIntType):
        return _long_hash(int(value))
    if isinstance(data_type, (t.IntType, t.SmallIntType, t.TinyIntType)):
        return int(value)
    if isinstance(data_type, t.DateType):
        return int((value - _EPOCH).days)
    if isinstance(data_type, t.DoubleType):
        return _double_hash(float(value))
    if isinstance(data_type, t.FloatType):
        return _float_hash(float(value))
    return int(java_hash_code(repr(value)))


def java_mod(value: int, divisor: int) -> int:
    """Java's ``%``: the remainder takes the dividend's sign."""
    remainder = abs(value) % divisor
    return -remainder if value < 0 else remainder


# -- the runtime side of SplitInput ----------------------------------------------------------

class BucketRows(MapFunction):
    """Appends each hashed field's bucket to the row (no expansion)."""

    def __init__(self, hashed: list[tuple[int, t.DataType]], buckets: int) -> None:
        self.hashed = hashed
        self.buckets = buckets

    def map(self, value: Row) -> Row:
        values = value._values
        return row_of(values + _buckets(values, self.hashed, self.buckets), value._row_kind)


class ExpandRows(FlatMapFunction):
    """Flink's Expand and the filter columns after it: one row per group set."""

    def __init__(self, hashed: list[tuple[int, t.DataType]], buckets: int,
                 masks: list[list[bool]], filters: list[tuple[int, int | None]],
                 sets: int) -> None:
        self.hashed = hashed
        self.buckets = buckets
        self.masks = masks  # per group set: whether each bucket column is in it
        self.filters = filters
        self.sets = sets

    def flat_map(self, value: Row) -> list[Row]:
        values = value._values
        buckets = _buckets(values, self.hashed, self.buckets)
        out = []
        for index in range(self.sets):
            mask = self.masks[index]
            kept = [b if keep else None for b, keep in zip(buckets, mask, strict=True)]
            flags = [owner == index and (own is None or values[own] is True)
                     for owner, own in self.filters]
            out.append(row_of(values + kept + flags, value._row_kind))
        return out


def _buckets(values: list[Any], hashed: list[tuple[int, t.DataType]], buckets: int
             ) -> list[Any]:
    out: list[Any] = []
    for index, data_type in hashed:
        code = hash_code(values[index], data_type)
        out.append(None if code is None else java_mod(code, buckets))
    return out


def translate_split_input(translator: Any, node: SplitInput) -> Any:
    """The DataStream of a ``SplitInput``: the bucket columns, expanded where it must."""
    from flintlock.common.changelog_rows import CHANGELOG_ROWS

    stream = translator.stream(node.input)
    hashed = [(i, node.input.fields[i].type) for i in node.hashed]
    if not node.group_sets:
        return stream.map(BucketRows(hashed, node.buckets), CHANGELOG_ROWS)
    width = len(node.input.fields)
    masks = [[width + i in group_set for i in range(len(hashed))]
             for group_set in node.group_sets]
    return stream.flat_map(ExpandRows(hashed, node.buckets, masks, list(node.filters),
                                      len(node.group_sets)), CHANGELOG_ROWS)


def plan_split(translator: Any, node: n.Aggregate) -> n.PlanNode | None:
    """The split plan of ``node`` where the configuration asks for it, else None."""
    if not translator.streaming:
        return None
    context = getattr(translator.connectors, "context", None)
    configuration = getattr(context, "configuration", None)
    if configuration is None or not should_split(node, configuration):
        return None
    from flintlock.common.options import table_optimizer as options

    plan = split(node, int(configuration.get(options.DISTINCT_AGG_SPLIT_BUCKET_NUM)))
    skipped: frozenset[int] = getattr(translator, "no_update_before", frozenset())
    if id(node) in skipped:  # an upsert consumer: the final level needs no -U rows either
        final = plan.input if isinstance(plan, n.Calc) else plan
        translator.no_update_before = skipped | {id(final)}
    return plan
