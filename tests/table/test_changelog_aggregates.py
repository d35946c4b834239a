"""The built-in aggregate functions (``flintlock.datastream.changelog.aggregates`` and
``aggregates_retract``, issue 28): SQL null semantics and Flink's result values through the
object protocol, merge, and (hypothesis) the two laws the group aggregation relies on — the
compiled inline templates agree with the methods, and the changelog a GROUP BY emits, applied
to an empty table, is the aggregate computed from scratch over the net input."""

from __future__ import annotations

from collections import Counter
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flintlock.datastream.changelog.aggregates import (
    Avg,
    Count,
    Count1,
    FirstValue,
    LastValue,
    Max,
    Min,
    Sum,
    Sum0,
    wrap_integer,
)
from flintlock.datastream.changelog.aggregates_retract import (
    Collect,
    FirstValueWithRetract,
    LastValueWithRetract,
    ListAgg,
    MaxWithRetract,
    MinWithRetract,
)
from flintlock.datastream.changelog.group_agg import AggregateCall, GroupAggFunction
from tests.table.changelog_harness import Harness, apply_changelog, apply_upserts, freeze, r, show


def _fold(function, *steps):
    acc = function.create_accumulator()
    for op, *args in steps:
        (function.accumulate if op == "+" else function.retract)(acc, *args)
    return function.get_value(acc)


def test_null_semantics_of_the_simple_builtins() -> None:
    assert _fold(Count1(), ("+", None), ("+", 1)) == 2
    assert _fold(Count(), ("+", None), ("+", 1)) == 1
    assert _fold(Count(), ("+", 1, None), ("+", 1, 2)) == 1
    assert _fold(Sum(), ("+", None)) is None
    assert _fold(Sum(), ("+", 3), ("-", 3)) is None
    assert _fold(Sum0(Decimal(0)), ("+", None)) == Decimal(0)
    assert _fold(Avg("integral"), ("+", -7), ("+", 0)) == -3
    assert _fold(Avg("int"), ("+", 7), ("+", 0)) == 3 and Avg("double").kind == "float"
    assert _fold(Avg("decimal", 2), ("+", Decimal("1")), ("+", Decimal("0.5"))) == Decimal("0.75")
    assert _fold(Min(), ("+", None)) is None and _fold(Max(), ("+", 2), ("+", 9)) == 9
    assert _fold(FirstValue(), ("+", None), ("+", 2), ("+", 3)) == 2
    assert _fold(LastValue(), ("+", 2), ("+", 3), ("+", None)) == 3
    assert wrap_integer(2**63, 64) == -2**63


def test_retracting_builtins() -> None:
    assert _fold(MaxWithRetract(), ("+", 1), ("+", 5), ("-", 5)) == 1
    assert _fold(MinWithRetract(), ("+", 1), ("-", 1)) is None
    assert _fold(FirstValueWithRetract(), ("+", 1), ("+", 2), ("+", 1), ("-", 1)) == 2
    assert _fold(LastValueWithRetract(), ("+", 1), ("+", 2), ("+", 1), ("-", 1)) == 1
    assert _fold(ListAgg("|"), ("+", "a"), ("+", None), ("+", "b"), ("-", "a")) == "b"
    assert _fold(ListAgg(), ("+", "a", "-"), ("+", "b", "-")) == "a-b"
    assert _fold(ListAgg(), ("+", "a")) == "a" and _fold(ListAgg(), ("-", "a")) is None
    assert _fold(Collect(), ("+", "a"), ("+", "a"), ("+", "b"), ("-", "b")) == {"a": 2}


@pytest.mark.parametrize("function", [Count1(), Count(), Sum(), Sum0(), Avg(), Min(), Max(),
                                      MaxWithRetract(), MinWithRetract(), Collect(), ListAgg()])
def test_merge_equals_accumulating_everything_into_one(function) -> None:
    values = [3, 1, None, 4]
    one, two, both = (function.create_accumulator() for _ in range(3))
    for value in values[:2]:
        function.accumulate(one, value if not isinstance(function, ListAgg) else str(value))
    for value in values[2:]:
        function.accumulate(two, value if not isinstance(function, ListAgg) else str(value))
    for value in values:
        function.accumulate(both, value if not isinstance(function, ListAgg) else str(value))
    function.merge(one, [two])
    assert function.get_value(one) == function.get_value(both)


_RETRACTING = [Count1, Count, Sum, Sum0, lambda: Avg("integral"), lambda: Avg("float"),
               MaxWithRetract, MinWithRetract, FirstValueWithRetract, LastValueWithRetract,
               Collect]


def _reference(function, values):
    """The function's result over ``values`` computed from scratch."""
    acc = function.create_accumulator()
    for value in values:
        function.accumulate(acc, value)
    return function.get_value(acc)


def _distinct_values_in_order(events):
    """Per key, the distinct values present at the end, in the order a DISTINCT call saw them
    arrive: a value joins when its count goes from 0 to 1 (again at the end if it had left),
    leaves when its count returns to 0 (what FIRST_VALUE/LAST_VALUE over DISTINCT see)."""
    counts: dict = {}
    order: dict = {}
    for kind, key, value in events:
        key_counts = counts.setdefault(key, Counter())
        key_order = order.setdefault(key, {})
        if kind in ("+I", "+U"):
            key_counts[value] += 1
            if key_counts[value] == 1:
                key_order[value] = None
        else:
            key_counts[value] -= 1
            if key_counts[value] == 0:
                del key_order[value]
    return {key: list(values) for key, values in order.items()}


@st.composite
def _changelog(draw):
    """(kind, key, value) events that never retract a row not present. Equal rows cannot be
    told apart, so a retraction removes the earliest equal one (what FIRST_VALUE/LAST_VALUE
    with retraction assume, as Flink's do)."""
    events, present = [], []
    for _ in range(draw(st.integers(0, 30))):
        if present and draw(st.booleans()):
            key, value = present[draw(st.integers(0, len(present) - 1))]
            present.remove((key, value))
            events.append((draw(st.sampled_from(["-D", "-U"])), key, value))
        else:
            key, value = draw(st.sampled_from("ab")), draw(st.none() | st.integers(-3, 3))
            present.append((key, value))
            events.append((draw(st.sampled_from(["+I", "+U"])), key, value))
    return events, present


@settings(max_examples=120, deadline=None)
@given(data=st.data(), picks=st.lists(st.integers(0, len(_RETRACTING) - 1), min_size=1,
                                      max_size=4),
       distinct=st.booleans(), inline=st.booleans())
def test_the_changelog_describes_the_aggregate_of_the_net_input(data, picks, distinct,
                                                                inline) -> None:
    functions = [_RETRACTING[i]() for i in picks]
    calls = [AggregateCall(f, (1,), distinct=distinct and i % 2 == 0)
             for i, f in enumerate(functions)]
    events, present = data.draw(_changelog())
    update_before = data.draw(st.booleans())
    function = GroupAggFunction((0,), calls, generate_update_before=update_before,
                                inline=inline)
    h = Harness(function, [function.key_selector()])
    for kind, key, value in events:
        h.feed(r(kind, key, value))
    distinct_order = _distinct_values_in_order(events)
    expected = {}
    for key in sorted({k for k, _ in present}):
        values = [v for k, v in present if k == key]
        results = []
        for call in calls:
            used = [v for v in distinct_order[key] if v is not None] if call.distinct else values
            results.append(_reference(call.function, used))
        expected[key] = (key, *results)
    assert apply_upserts(h.rows(), key=lambda values: values[0]) == expected
    if update_before:
        assert apply_changelog(h.rows()) == Counter(map(freeze, expected.values()))


@settings(max_examples=80, deadline=None)
@given(data=st.data(), picks=st.lists(st.integers(0, len(_RETRACTING) - 1), min_size=1,
                                      max_size=4))
def test_inline_templates_agree_with_the_methods(data, picks) -> None:
    events, _ = data.draw(_changelog())
    outputs = []
    for inline in (True, False):
        calls = [AggregateCall(_RETRACTING[i](), (1,), distinct=i % 3 == 0) for i in picks]
        function = GroupAggFunction((0,), calls, inline=inline)
        h = Harness(function, [function.key_selector()])
        for kind, key, value in events:
            h.feed(r(kind, key, value))
        outputs.append([show(row) for row in h.rows()])
    assert outputs[0] == outputs[1]
