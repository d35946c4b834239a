"""The aligned window aggregation's compiled calls (``changelog.window_codegen``, issue 32)
give what the generic ``CallAccumulators`` gives, for built-ins with inline templates, a
function without one, FILTER, DISTINCT and callable arguments."""

from __future__ import annotations

import random

from flintlock.datastream.changelog.aggregates import Count, Count1, Max, Min, Sum, Sum0
from flintlock.datastream.changelog.aggregates_retract import ListAgg
from flintlock.datastream.changelog.group_agg import AggregateCall
from flintlock.datastream.changelog.rows import INSERT, new_row
from flintlock.datastream.changelog.window_agg import CallAccumulators
from flintlock.datastream.changelog.window_codegen import compile_window_calls


def _calls() -> list[AggregateCall]:
    return [
        AggregateCall(Count1()),
        AggregateCall(Sum(bits=64), (1,)),
        AggregateCall(Sum0(), (1,), filter=lambda row: row._values[0] % 2 == 0),
        AggregateCall(Count(), (2,), distinct=True),
        AggregateCall(Min(), (1,)), AggregateCall(Max(), (2,)),
        AggregateCall(ListAgg("|"), (3,)),
        AggregateCall(Sum(), lambda row: (row._values[0] % 3,), argument_count=1,
                      distinct=True),
    ]


def test_compiled_calls_give_the_generic_results() -> None:
    rng = random.Random(7)
    rows = [new_row([i, rng.choice([None, *range(5)]), rng.choice([None, "a", "b", "c"]),
                     rng.choice(["x", "y"])], INSERT) for i in range(200)]
    calls = _calls()
    compiled = compile_window_calls(calls)
    generic = CallAccumulators(calls)
    entry, expected = compiled.create(1000), generic.create()
    for count, row in enumerate(rows, 1):
        compiled.accumulate(entry, row._values, row)
        generic.accumulate(expected, row._values, row)
        if count in (1, 7, 200):
            assert compiled.results(entry) == generic.results(expected)
    assert entry[0] == 1000  # the window start leads the flat list


def test_no_calls_compile_to_an_empty_result() -> None:
    compiled = compile_window_calls([])
    entry = compiled.create(0)
    compiled.accumulate(entry, [1], new_row([1], INSERT))
    assert compiled.results(entry) == []
