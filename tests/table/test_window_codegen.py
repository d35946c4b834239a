"""The aligned window aggregation's compiled calls (``changelog.window_codegen``, issue 32)
give what the generic ``CallAccumulators`` gives, for built-ins with inline templates, a
function without one, FILTER, DISTINCT and callable arguments; and its compiled per-row step
gives what the general ``process_element`` gives (windows, late rows, time zone shift,
errors)."""

from __future__ import annotations

import datetime
import random

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from flintlock.datastream.changelog.aggregates import Count, Count1, Max, Min, Sum, Sum0
from flintlock.datastream.changelog.aggregates_retract import ListAgg
from flintlock.datastream.changelog.errors import NotInsertOnlyError
from flintlock.datastream.changelog.group_agg import AggregateCall
from flintlock.datastream.changelog.rows import INSERT, new_row
from flintlock.datastream.changelog.window_agg import CallAccumulators, WindowAggFunction
from flintlock.datastream.changelog.window_assigners import field_millis, to_millis
from flintlock.datastream.changelog.window_codegen import compile_window_calls
from flintlock.runtime.state.keygroups import KeyGroupRange
from flintlock.runtime.state.rocksdb import RocksDBKeyedStateBackend
from flintlock.table.planner.windows import RowtimeNullError, RowtimeOf
from tests.table.changelog_harness import Harness, r


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


class _General(WindowAggFunction):
    """The same aggregation through the general ``process_element`` (no compiled step)."""

    def open(self, runtime_context):
        super().open(runtime_context)
        self.__dict__.pop("process_element", None)
        self.__dict__.pop("process_keyed_batch", None)


class _PerRow(WindowAggFunction):
    """The compiled per-row step, a record at a time (no batch step)."""

    def open(self, runtime_context):
        super().open(runtime_context)
        self.__dict__.pop("process_keyed_batch", None)


_WINDOWS = st.sampled_from([("TUMBLE", 10, 0, 0), ("TUMBLE", 7, 0, 3), ("HOP", 10, 5, 0),
                            ("HOP", 9, 3, 1), ("CUMULATE", 12, 4, 0)])
_ROWS = st.lists(st.tuples(st.sampled_from("abc"), st.integers(-30, 60), st.integers(0, 9)),
                min_size=1, max_size=8)
_EVENTS = st.lists(st.one_of(st.tuples(st.just("rows"), _ROWS),
                             st.tuples(st.just("watermark"), st.integers(-40, 70))), max_size=20)


def _run(function, events) -> list[str]:
    """Each ``rows`` event one batch, each watermark after the batch before it."""
    h = Harness(function, [function.key_selector()])
    out = []
    for event in events:
        if event[0] == "rows":
            out += h.feed(*[r("+I", key, datetime.datetime(1970, 1, 1)
                              + datetime.timedelta(milliseconds=time), value)
                            for key, time, value in event[1]])
        else:
            out += h.watermark(event[1])
    return out + h.watermark(2**63 - 1)


@settings(max_examples=60, deadline=None)
@given(_WINDOWS, _EVENTS, st.sampled_from([0, 4]), st.booleans())
@example(("TUMBLE", 10, 0, 0), [("rows", [("a", 5, 1)]), ("watermark", 9),
                                ("rows", [("b", 5, 2), ("a", 15, 1)])],
         0, False)  # a row of a window that fired at exactly this watermark is late
@example(("TUMBLE", 10, 0, 0), [("rows", [("a", 9, 1), ("a", 9, 2), ("b", 10, 3)])],
         0, False)  # equal times in a row (converted once) at a window's last millisecond
def test_the_compiled_steps_equal_the_general_path(window, events, shift, ltz) -> None:
    """The batch step (whole batches), the per-row step and the general method: the same
    rows in the same order (so timers registered and windows fired in the same order)."""
    def make(cls):
        calls = [AggregateCall(Count1()), AggregateCall(Sum(), (2,)),
                 AggregateCall(Max(), (2,), filter=lambda row: row._values[2] > 2),
                 AggregateCall(Count(), (2,), distinct=True)]
        return cls((0,), calls, window, RowtimeOf(1), shift, ltz)

    expected = _run(make(_General), events)
    assert _run(make(_PerRow), events) == expected
    assert _run(make(WindowAggFunction), events) == expected


def test_the_compiled_steps_are_what_runs_and_keep_the_rowtime_errors() -> None:
    function = WindowAggFunction((0,), [AggregateCall(Count1())], ("TUMBLE", 10, 0, 0),
                                 RowtimeOf(1))
    h = Harness(function, [function.key_selector()])
    assert "EPOCH" in function.process_element.__source__
    assert type(h.operator).__name__ == "KeyedRowsOperator"
    assert "groups" in function.process_keyed_batch.__source__
    with pytest.raises(RowtimeNullError):
        h.feed(r("+I", "a", None))
    with pytest.raises(NotInsertOnlyError):
        h.feed(r("-U", "a", datetime.datetime(2024, 1, 1)))
    h.feed(r("+I", "a", 25))  # epoch milliseconds are read as the general path reads them
    assert h.watermark(2**63 - 1) == [
        "+I[a, 1, 1970-01-01 00:00:00.020000, 1970-01-01 00:00:00.030000, "
        "1970-01-01 00:00:00.029000]"]


@given(st.lists(st.one_of(st.integers(-10**6, 10**6), st.sampled_from([0, 1, 999]))))
def test_field_millis_is_to_millis_of_each_field(millis) -> None:
    epoch = datetime.datetime(1970, 1, 1)
    rows = [new_row([epoch + datetime.timedelta(milliseconds=m)], INSERT) for m in millis]
    assert field_millis(rows, 0) == [to_millis(row._values[0]) for row in rows] == millis


def test_field_millis_refuses_what_is_not_a_naive_datetime() -> None:
    epoch = datetime.datetime(1970, 1, 1)
    for odd in (None, 5, epoch.replace(tzinfo=datetime.UTC)):
        with pytest.raises(TypeError):
            field_millis([new_row([epoch], INSERT), new_row([odd], INSERT)], 0)


def test_the_batch_step_on_rocksdb_gives_what_it_gives_on_the_heap(tmp_path) -> None:
    events = [("rows", [("a", 1, 1), ("b", 3, 2), ("a", 12, 3), ("a", 2, 4)]),
              ("watermark", 9), ("rows", [("a", 5, 5), ("b", 14, 6), ("a", 13, 7)])]

    def make():
        return WindowAggFunction((0,), [AggregateCall(Count1()), AggregateCall(Sum(), (2,))],
                                 ("HOP", 10, 5, 0), RowtimeOf(1))

    rocks = RocksDBKeyedStateBackend(KeyGroupRange(0, 127), 128, local_dir=str(tmp_path))
    function = make()
    h = Harness(function, [function.key_selector()], state=rocks)
    out = []
    for kind, item in events:
        out += (h.feed(*[r("+I", k, datetime.datetime(1970, 1, 1)
                           + datetime.timedelta(milliseconds=t), v) for k, t, v in item])
                if kind == "rows" else h.watermark(item))
    assert type(h.operator).__name__ == "KeyedRowsOperator"
    assert out + h.watermark(2**63 - 1) == _run(make(), events)
