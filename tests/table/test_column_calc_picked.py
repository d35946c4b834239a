"""A Calc fused into a source that only picks columns (issue 33: q0's ``SELECT auction,
bidder, price, dateTime, extra FROM bid``) builds its rows from the columns with no loop
(``compiler.picked_rows``): the same rows, kinds and values as the row-at-a-time projection,
columns named twice, reordered, as ranges and one-pass iterators, of other lengths."""

from __future__ import annotations

from typing import Any

import pytest

from flintlock.common.types import Row, RowKind
from flintlock.table import types as t
from flintlock.table.codegen.compiler import compile_column_calc, compile_projection
from flintlock.table.connectors._file_rows import calc_columns
from flintlock.table.plan.rex import Call, InputRef, Literal

BIG = t.BigIntType(False)
TEXT = t.VarCharType(100)
PICKS = [InputRef(TEXT, 2), InputRef(BIG, 0), InputRef(TEXT, 2)]


def test_a_calc_that_only_picks_columns_has_no_loop_and_says_what_it_reads() -> None:
    calc = compile_column_calc(PICKS, None)
    assert "for " not in calc.source and "PICKED_ROWS" in calc.source
    assert calc_columns(calc) == frozenset({0, 2})  # the source reads only these columns
    computed = compile_column_calc([Call(BIG, "+", (InputRef(BIG, 0), Literal(BIG, 1)))], None)
    assert "for " in computed.source  # a computed value has its loop (issue 28: one column)


@pytest.mark.parametrize("kind", [RowKind.INSERT, RowKind.UPDATE_BEFORE, RowKind.DELETE])
def test_picked_rows_are_the_projections_rows(kind: RowKind) -> None:
    columns: list[Any] = [list(range(30)), list(range(100, 130)),
                          [None if i % 4 == 0 else f"x{i}" for i in range(30)]]
    row_projection = compile_projection(PICKS)
    rows = [Row(*values) for values in zip(*columns, strict=True)]
    for row in rows:
        row.set_row_kind(kind)
    expected = [row_projection(row) for row in rows]
    got = compile_column_calc(PICKS, None)(columns, 30, kind)
    assert [list(r) for r in got] == [list(r) for r in expected]
    assert {r.get_row_kind() for r in got} == {kind}
    assert got[1]._values is not got[2]._values  # each row its own list


def test_ranges_iterators_and_short_columns() -> None:
    calc = compile_column_calc([InputRef(BIG, 0), InputRef(BIG, 0), InputRef(BIG, 1)], None)
    once = calc([iter(range(5)), range(10, 15)], 5, RowKind.INSERT)  # one-pass, named twice
    assert [list(r) for r in once] == [[i, i, 10 + i] for i in range(5)]
    short = calc([list(range(3)), list(range(10, 15))], 5, RowKind.INSERT)
    assert [list(r) for r in short] == [[i, i, 10 + i] for i in range(3)]
    assert calc([[], []], 0, RowKind.INSERT) == []


TS = t.TimestampType(3)
DATE = t.DateType()


def test_date_functions_of_a_run_of_equal_timestamps_are_computed_once_and_equal() -> None:
    """DATE_FORMAT, HOUR, EXTRACT over a TIMESTAMP or DATE column keep the last argument and
    result in a column loop (event times read in order repeat): same values as the
    row-at-a-time projection, NULLs, runs and changes included."""
    import datetime
    import random

    rng = random.Random(7)
    base = datetime.datetime(2015, 7, 15, 7, 59, 59, 998000)
    stamps: list[Any] = []
    while len(stamps) < 200:
        value = None if rng.random() < 0.1 else base + datetime.timedelta(
            milliseconds=rng.randint(0, 5) * 700)
        stamps.extend([value] * rng.randint(1, 4))
    days = [None if s is None else s.date() for s in stamps]
    columns: list[Any] = [stamps, days]
    expressions = [Call(t.VarCharType(20), "DATE_FORMAT",
                        (InputRef(TS, 0), Literal(t.VarCharType(20), "yyyy-MM-dd HH:mm"))),
                   Call(BIG, "HOUR", (InputRef(TS, 0),)),
                   Call(BIG, "SECOND", (InputRef(TS, 0),)),
                   Call(BIG, "EXTRACT", (InputRef(TS, 0),), ("MINUTE",)),
                   Call(BIG, "DAYOFMONTH", (InputRef(DATE, 1),))]
    calc = compile_column_calc(expressions, None)
    assert calc.source.count("NO_VALUE") == len(expressions)  # each one memoised
    row_projection = compile_projection(expressions)
    got = calc(columns, len(stamps), RowKind.INSERT)
    expected = [row_projection(Row(*values)) for values in zip(*columns, strict=True)]
    assert [list(r) for r in got] == [list(r) for r in expected]


def test_a_cast_of_a_number_literal_to_decimal_is_computed_once() -> None:
    """q14's ``0.908 * price > 1000000``: the literal's CAST to DECIMAL is a constant of the
    function, not a call per row; a literal that does not fit stays a call (NULL per row)."""
    import decimal

    dec = t.DecimalType(22, 3)
    fits = Call(dec, "CAST", (Literal(BIG, 1000000),))
    too_big = Call(t.DecimalType(4, 3), "CAST", (Literal(BIG, 1000000),))
    above = Call(t.BooleanType(), ">", (Call(dec, "CAST", (InputRef(BIG, 0),)), fits))
    calc = compile_column_calc([above, too_big], None)
    assert "cast_to_decimal(1000000, 22, 3)" not in calc.source
    assert "cast_to_decimal(1000000, 4, 3)" in calc.source
    got = calc([[999999, 1000000, 1000001]], 3, RowKind.INSERT)
    assert [list(r) for r in got] == [[False, None], [False, None], [True, None]]
    assert decimal.Decimal("1000000.000") in calc.constants.values()
