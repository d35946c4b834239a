"""Group aggregation over a changelog (``flintlock.datastream.changelog.group_agg``, issue 28):
the exact sequence Flink's ``GroupAggFunction`` emits without mini-batch — +I for a key's
first result, -U/+U (or +U alone) for a change, nothing for an unchanged result, -D when the
last row of a key is retracted — for every built-in, DISTINCT and FILTER."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flintlock.common.state import ValueStateDescriptor
from flintlock.datastream.changelog.aggregates import (
    Avg,
    Count,
    Count1,
    Max,
    Min,
    RetractionNotSupportedError,
    Sum,
    Sum0,
)
from flintlock.datastream.changelog.aggregates_retract import (
    FirstValueWithRetract,
    LastValueWithRetract,
    ListAgg,
    MaxWithRetract,
    MinWithRetract,
)
from flintlock.datastream.changelog.errors import InvalidOperatorArgumentError
from flintlock.datastream.changelog.group_agg import (
    ACC_STATE,
    AggregateCall,
    GlobalGroupAggFunction,
    GroupAggFunction,
)
from tests.table.changelog_harness import Harness, r, show


def _agg(calls, grouping=(0,), **options) -> Harness:
    function = GroupAggFunction(grouping, calls, **options)
    return Harness(function, [function.key_selector()])


COUNT_SUM = [AggregateCall(Count1()), AggregateCall(Sum(), (1,))]


@pytest.mark.parametrize("inline", [True, False])
def test_count_and_sum_emit_insert_then_update_pairs(inline) -> None:
    h = _agg(COUNT_SUM, inline=inline)
    assert h.feed(r("+I", "a", 1)) == ["+I[a, 1, 1]"]
    assert h.feed(r("+I", "b", 5)) == ["+I[b, 1, 5]"]
    assert h.feed(r("+I", "a", 2)) == ["-U[a, 1, 1]", "+U[a, 2, 3]"]
    assert h.feed(r("-D", "a", 1)) == ["-U[a, 2, 3]", "+U[a, 1, 2]"]
    assert h.feed(r("-U", "a", 2)) == ["-D[a, 1, 2]"]
    assert h.feed(r("+I", "a", 7)) == ["+I[a, 1, 7]"]


def test_without_update_before_only_update_after_is_emitted() -> None:
    h = _agg(COUNT_SUM, generate_update_before=False)
    assert h.feed(r("+I", "a", 1), r("+I", "a", 2), r("-D", "a", 2)) == [
        "+I[a, 1, 1]", "+U[a, 2, 3]", "+U[a, 1, 1]"]
    assert h.feed(r("-D", "a", 1)) == ["-D[a, 1, 1]"]


def test_a_retraction_for_a_key_without_state_is_dropped() -> None:
    h = _agg(COUNT_SUM)
    assert h.feed(r("-D", "a", 1), r("-U", "a", 1)) == []
    assert h.feed(r("+U", "a", 1)) == ["+I[a, 1, 1]"]


def test_an_unchanged_result_emits_nothing_unless_state_retention_is_set() -> None:
    calls = [AggregateCall(Max(), (1,))]
    h = _agg(calls)
    assert h.feed(r("+I", "a", 5), r("+I", "a", 3), r("+I", "a", 5)) == ["+I[a, 5]"]
    h = _agg(calls, state_retention_ms=60_000)
    assert h.feed(r("+I", "a", 5), r("+I", "a", 3)) == ["+I[a, 5]", "-U[a, 5]", "+U[a, 5]"]


def test_sum_is_null_without_non_null_values_and_after_retracting_them() -> None:
    h = _agg([AggregateCall(Count1()), AggregateCall(Sum(), (1,)), AggregateCall(Count(), (1,))])
    assert h.feed(r("+I", "a", None)) == ["+I[a, 1, null, 0]"]
    assert h.feed(r("+I", "a", 4)) == ["-U[a, 1, null, 0]", "+U[a, 2, 4, 1]"]
    assert h.feed(r("-D", "a", 4)) == ["-U[a, 2, 4, 1]", "+U[a, 1, null, 0]"]


def test_sum0_avg_integral_and_decimal() -> None:
    calls = [AggregateCall(Sum0(), (1,)), AggregateCall(Avg("integral"), (1,)),
             AggregateCall(Avg("float"), (1,))]
    h = _agg(calls)
    assert h.feed(r("+I", "a", None)) == ["+I[a, 0, null, null]"]
    assert h.feed(r("+I", "a", -3)) == ["-U[a, 0, null, null]", "+U[a, -3, -3, -3.0]"]
    assert h.feed(r("+I", "a", 2)) == ["-U[a, -3, -3, -3.0]", "+U[a, -1, 0, -0.5]"]
    d = _agg([AggregateCall(Avg("decimal", scale=6), (1,))])
    assert d.feed(r("+I", "a", Decimal("1.00")), r("+I", "a", Decimal("2.00")),
                  r("+I", "a", Decimal("2.00"))) == [
        "+I[a, 1.000000]", "-U[a, 1.000000]", "+U[a, 1.500000]",
        "-U[a, 1.500000]", "+U[a, 1.666667]"]


def test_sum_of_int_wraps_as_java_does() -> None:
    h = _agg([AggregateCall(Sum(bits=32), (1,))])
    assert h.feed(r("+I", "a", 2**31 - 1), r("+I", "a", 1)) == [
        f"+I[a, {2**31 - 1}]", f"-U[a, {2**31 - 1}]", f"+U[a, {-2**31}]"]


@pytest.mark.parametrize("inline", [True, False])
def test_count_distinct_counts_each_value_once_and_forgets_it_with_its_last_row(inline) -> None:
    h = _agg([AggregateCall(Count(), (1,), distinct=True),
              AggregateCall(Sum(), (1,), distinct=True)], inline=inline)
    assert h.feed(r("+I", "a", 1), r("+I", "a", 1), r("+I", "a", 2)) == [
        "+I[a, 1, 1]", "-U[a, 1, 1]", "+U[a, 2, 3]"]
    assert h.feed(r("-D", "a", 1)) == []
    assert h.feed(r("-D", "a", 1)) == ["-U[a, 2, 3]", "+U[a, 1, 2]"]
    assert h.feed(r("+I", "a", None)) == []


def test_filter_clause_skips_rows_in_both_directions() -> None:
    h = _agg([AggregateCall(Count1(), filter=lambda row: row[1] > 1),
              AggregateCall(Count1())])
    assert h.feed(r("+I", "a", 1), r("+I", "a", 2), r("-D", "a", 1)) == [
        "+I[a, 0, 1]", "-U[a, 0, 1]", "+U[a, 1, 2]", "-U[a, 1, 2]", "+U[a, 1, 1]"]


def test_min_max_with_retraction_rescan_when_the_extreme_goes() -> None:
    h = _agg([AggregateCall(MinWithRetract(), (1,)), AggregateCall(MaxWithRetract(), (1,))])
    h.feed(r("+I", "a", 3), r("+I", "a", 1), r("+I", "a", 5), r("+I", "a", 5))
    assert h.feed(r("-D", "a", 5)) == []
    assert h.feed(r("-D", "a", 5)) == ["-U[a, 1, 5]", "+U[a, 1, 3]"]
    assert h.feed(r("-D", "a", 1)) == ["-U[a, 1, 3]", "+U[a, 3, 3]"]


def test_first_last_value_and_listagg_with_retraction() -> None:
    h = _agg([AggregateCall(FirstValueWithRetract(), (1,)),
              AggregateCall(LastValueWithRetract(), (1,)), AggregateCall(ListAgg(), (1,))])
    assert h.feed(r("+I", "a", "x"), r("+I", "a", "y")) == [
        "+I[a, x, x, x]", "-U[a, x, x, x]", "+U[a, x, y, x,y]"]
    assert h.feed(r("-D", "a", "x")) == ["-U[a, x, y, x,y]", "+U[a, y, y, y]"]
    sep = _agg([AggregateCall(ListAgg(), (1, 2))])
    assert sep.feed(r("+I", "a", "x", ";"), r("+I", "a", "y", ";")) == [
        "+I[a, x]", "-U[a, x]", "+U[a, x;y]"]


def test_insert_only_functions_refuse_a_retraction() -> None:
    h = _agg([AggregateCall(Min(), (1,))])
    h.feed(r("+I", "a", 1), r("+I", "a", 2))
    with pytest.raises(RetractionNotSupportedError, match="MIN"):
        h.feed(r("-D", "a", 2))


def test_multiple_grouping_keys_and_arguments_computed_by_a_callable() -> None:
    function = GroupAggFunction(
        (1, 0), [AggregateCall(Sum(), lambda row: (row[2] * 10,))])
    h = Harness(function, [function.key_selector()])
    assert h.feed(r("+I", "x", "y", 1), r("+I", "x", "y", 2)) == [
        "+I[y, x, 10]", "-U[y, x, 10]", "+U[y, x, 30]"]


def test_global_aggregation_has_no_key_fields() -> None:
    function = GlobalGroupAggFunction([AggregateCall(Count1()), AggregateCall(Sum(), (0,))])
    h = Harness(function, [function.key_selector()])
    assert h.feed(r("+I", 1), r("+I", 2)) == ["+I[1, 1]", "-U[1, 1]", "+U[2, 3]"]
    assert h.feed(r("-D", 1), r("-D", 2)) == ["-U[2, 3]", "+U[1, 2]", "-D[1, 2]"]


def test_select_distinct_is_a_group_by_without_calls() -> None:
    h = _agg([], grouping=(0,))
    assert h.feed(r("+I", "a"), r("+I", "a"), r("-D", "a"), r("-D", "a")) == [
        "+I[a]", "-D[a]"]


def test_bad_arguments_are_typed_errors() -> None:
    with pytest.raises(InvalidOperatorArgumentError, match="AggregateCall"):
        GroupAggFunction((0,), [Count1()])
    with pytest.raises(InvalidOperatorArgumentError, match="has no create_accumulator"):
        GroupAggFunction((0,), [AggregateCall(object())])
    with pytest.raises(InvalidOperatorArgumentError, match="kind"):
        Avg("integer")


@st.composite
def _events(draw):
    events, present = [], []
    for _ in range(draw(st.integers(0, 40))):
        if present and draw(st.booleans()):
            key, value = present.pop(draw(st.integers(0, len(present) - 1)))
            events.append(r(draw(st.sampled_from(["-D", "-U"])), key, value))
        else:
            key, value = draw(st.sampled_from("abc")), draw(st.none() | st.integers(0, 3))
            present.append((key, value))
            events.append(r(draw(st.sampled_from(["+I", "+U"])), key, value))
    return events


@settings(max_examples=100, deadline=None)
@given(events=_events(), update_before=st.booleans(), cut=st.integers(1, 7))
def test_the_batch_step_emits_what_the_per_record_step_emits(events, update_before,
                                                            cut) -> None:
    calls = [AggregateCall(Count1()), AggregateCall(Sum(), (1,)),
             AggregateCall(MaxWithRetract(), (1,)), AggregateCall(Count(), (1,), distinct=True)]
    function = GroupAggFunction((0,), calls, generate_update_before=update_before)
    h = Harness(function, [function.key_selector()])
    expected = h.feed(*events)
    batch, table, got = function.batch_step(), {}, []
    for start in range(0, len(events), cut):
        got += [show(row) for row in batch(events[start:start + cut], table, None, None)]
    assert got == expected
    assert table == h.backend.direct_table(ValueStateDescriptor(ACC_STATE))


def test_the_batch_step_copies_an_accumulator_a_snapshot_shares() -> None:
    function = GroupAggFunction((0,), [AggregateCall(Count1())])
    batch, table = function.batch_step(), {}
    batch([r("+I", "a"), r("+I", "b")], table, None, None)
    shared, copied = table["a"], {"b"}
    batch([r("+I", "a"), r("+I", "b")], table, copied, list)
    assert shared == [1] and table["a"] == [2] and copied == {"a", "b"}
