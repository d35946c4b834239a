"""The computed event time of a window job's source, compiled cheaper (issue 32's speed work):
an integer divided by a positive constant and FLOOR/CEIL of an integer compile inline, and a
column loop computes TIMESTAMPADD once for a run of equal amounts. Same values as the general
functions and as the row-at-a-time Calc, NULLs included."""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flintlock.common.types import RowKind, row_of
from flintlock.table import types as t
from flintlock.table.codegen import sql_functions
from flintlock.table.codegen.compiler import compile_column_calc, compile_projection
from flintlock.table.plan.rex import Call, InputRef, Literal

BIG = t.BigIntType(True)
ID = InputRef(BIG, 0)
START = Literal(t.TimestampType(3, False), datetime.datetime(2024, 1, 1))


def _division(divisor: int) -> Call:
    return Call(BIG, "/", (ID, Literal(t.IntType(False), divisor)))


def _event_time(unit: str = "SECOND") -> Call:
    seconds = Call(t.IntType(True), "CAST", (Call(BIG, "FLOOR", (_division(100),)),))
    return Call(t.TimestampType(3, True), "TIMESTAMPADD", (seconds, START), (unit,))


DIVISIONS = {d: compile_projection([_division(d)]) for d in (1, 7, 100, 1000)}
UNITS = ("SECOND", "MINUTE", "DAY", "MONTH", "MILLISECOND")
CALCS = {u: (compile_column_calc([ID, _event_time(u)], None),
             compile_projection([ID, _event_time(u)])) for u in UNITS}


@settings(deadline=None)
@given(st.lists(st.one_of(st.none(), st.integers(-(2**62), 2**62)), max_size=30),
       st.sampled_from(sorted(DIVISIONS)))
def test_division_by_a_positive_constant_inline_truncates_as_java(values: list[Any],
                                                                  divisor: int) -> None:
    divide = DIVISIONS[divisor]
    assert "int_div" not in divide.source
    for value in values:
        expected = None if value is None else sql_functions.int_div(value, divisor)
        assert divide(row_of([value]))._values[0] == expected


def test_floor_and_ceil_of_an_integer_are_the_integer() -> None:
    for function in ("FLOOR", "CEIL"):
        compiled = compile_projection([Call(BIG, function, (ID,))])
        assert "sql_floor" not in compiled.source and "sql_ceil" not in compiled.source
        assert [compiled(row_of([v]))._values[0] for v in (-7, 0, 7, None)] == [-7, 0, 7, None]
    decimal_floor = compile_projection([Call(t.DoubleType(True), "FLOOR",
                                             (InputRef(t.DoubleType(True), 0),))])
    assert decimal_floor(row_of([-1.5]))._values[0] == -2.0


@settings(deadline=None)
@given(st.lists(st.one_of(st.none(), st.integers(-10**6, 10**6), st.sampled_from([0, 99, 100])),
                max_size=60),
       st.sampled_from(UNITS))
def test_the_column_loop_computes_timestamp_add_once_a_run_same_rows(
        values: list[Any], unit: str) -> None:
    column_calc, row_calc = CALCS[unit]
    assert "_m0a" in column_calc.source
    got = column_calc([list(values)], len(values), RowKind.INSERT)
    assert [list(r) for r in got] == [list(row_calc(row_of([v]))) for v in values]


def test_a_run_of_equal_amounts_calls_timestamp_add_once(monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    calls: list[int] = []
    original = sql_functions.timestamp_add

    def counting(unit: str, amount: int, value: Any) -> Any:
        calls.append(amount)
        return original(unit, amount, value)

    monkeypatch.setattr(sql_functions, "timestamp_add", counting)
    calc = compile_column_calc([_event_time()], None)
    ids = [*range(1, 250), None, 250, 251, 99]
    rows = calc([ids], len(ids), RowKind.INSERT)
    assert calls == [0, 1, 2, 0]  # runs 1-99, 100-199, 200-251 (a NULL between); then 99
    assert rows[-1][0] == datetime.datetime(2024, 1, 1) and rows[249][0] is None
    assert rows[150][0] == datetime.datetime(2024, 1, 1, 0, 0, 1)
