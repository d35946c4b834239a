"""TableResult.print()'s tableau text against PyFlink 2.3.0, byte for byte
(tests/table/fixtures/tableau.txt, captured by tests/table/oracle/tableau.py).

Each case below is the Python form of one oracle query: column names, their Flink types and
the rows the query produces; the test renders them in streaming and in batch mode and compares
with what PyFlink printed for the same query in that mode."""

from __future__ import annotations

import datetime
import struct
import zoneinfo
from decimal import Decimal
from typing import Any

import pytest

from flintlock.common.types import Row, RowKind
from flintlock.table.formatting.tableau import (
    StreamingTableau,
    display_width,
    render,
    render_cells,
    render_ok,
    render_raw,
    truncate,
    type_width,
)
from flintlock.table.types import DataTypes, from_sql_string
from tests.table.oracle.cases import load_cases

CASES = load_cases("tableau.txt")
D = datetime.date
T = datetime.time
TS = datetime.datetime
UTC = datetime.UTC
LTZ_VALUE = TS(2023, 1, 1, 10, 0, 0, 123000, tzinfo=UTC)


def f32(value: float) -> float:
    return float(struct.unpack("<f", struct.pack("<f", value))[0])


def kind(row_kind: RowKind, *values: Any) -> Row:
    return Row.of_kind(row_kind, *values)


INS, UB, UA = RowKind.INSERT, RowKind.UPDATE_BEFORE, RowKind.UPDATE_AFTER

QUERIES: dict[str, tuple[list[str], list[str], list[tuple[Any, ...] | Row]]] = {
    "ints": (["ti", "si", "i", "bi"], ["TINYINT", "SMALLINT", "INT", "BIGINT"], [
        (1, -2, 3, -4), (None, None, None, None),
        (127, 32767, 2147483647, -9223372036854775808)]),
    "short_names": (["a", "b"], ["INT NOT NULL", "VARCHAR(5) NOT NULL"],
                    [(1, "Hi"), (2, "Hello")]),
    "strings": (["s", "c", "v"], ["VARCHAR(55)", "CHAR(5)", "VARCHAR(10)"], [
        ("a", "ab", "xyz"),
        ("a string that is longer than thirty characters for sure", None, None),
        ("中文字符", "中", ""),
        ("exactly thirty characters 1234", "abcde", "tab\there"),
        ("exactly thirty-one characters 1", "x", "y"),
        ("中文中文中文中文中文中文中文中文", "x", "y")]),
    "decimals": (["d1", "d2", "d3", "d4"],
                 ["DECIMAL(10, 2)", "DECIMAL(5, 0)", "DECIMAL(10, 8)", "DECIMAL(38, 18)"], [
                     (Decimal("1.5"), Decimal(3), Decimal("0.0000001"), Decimal("1.5")),
                     (Decimal("-12345678.9"), Decimal(-99999), Decimal(0), None)]),
    "booleans": (["b", "n"], ["BOOLEAN", "INT NOT NULL"], [(True, 1), (False, 2), (None, 3)]),
    "temporal": (["d", "t", "ts", "ts3", "ts6", "ts9", "ts0"],
                 ["DATE", "TIME(0)", "TIMESTAMP(1)", "TIMESTAMP(3)", "TIMESTAMP(6)",
                  "TIMESTAMP(9)", "TIMESTAMP(0)"], [
                     (D(2023, 1, 2), T(10), TS(2023, 1, 1, 10), TS(2023, 1, 1, 10),
                      TS(2023, 1, 1, 10, 0, 0, 123456), TS(2023, 1, 1, 10, 0, 0, 500000),
                      TS(2023, 1, 1, 10)),
                     (D(1, 1, 1), T(23, 59, 59), TS(2023, 1, 1, 10, 0, 1, 500000),
                      TS(2023, 1, 1, 10, 0, 1, 500000), TS(2023, 1, 1, 10), None, None)]),
    "time3": (["t3", "t0", "t3b", "t3c", "t3d"],
              ["TIME(3)", "TIME(0)", "TIME(3)", "TIME(3)", "TIME(3)"],
              [(T(10, 0, 1), T(0), T(10, 0, 1, 500000), T(10, 0, 1, 123000), T(10))]),
    "ts_fraction": (["ts2", "ts4", "ts7", "ts1"],
                    ["TIMESTAMP(2)", "TIMESTAMP(4)", "TIMESTAMP(7)", "TIMESTAMP(1)"],
                    [(TS(2023, 1, 1, 10, 0, 0, 100000), TS(2023, 1, 1, 10),
                      TS(2023, 1, 1, 10, 0, 0, 123456), TS(2023, 1, 1, 10, 0, 0, 100000))]),
    "ltz": (["ltz3", "ltz0", "ltz6"],
            ["TIMESTAMP_LTZ(3)", "TIMESTAMP_LTZ(3)", "TIMESTAMP_LTZ(6)"],
            [(LTZ_VALUE, LTZ_VALUE.replace(microsecond=0), LTZ_VALUE)]),
    "binary": (["b1", "b2", "b3"], ["VARBINARY(3)", "BYTES", "BINARY(2)"], [
        (b"\x01\x02\xff", b"abc", b"\x00\x00"), (None, b"", None)]),
    "collections": (["arr", "sarr", "m", "r", "arow", "mnested", "rnested"], [
        "ARRAY<INT NOT NULL>", "ARRAY<STRING>", "MAP<CHAR(2), INT>",
        "ROW<EXPR$0 INT, EXPR$1 CHAR(1), EXPR$2 BOOLEAN>", "ARRAY<ROW<EXPR$0 INT, EXPR$1 CHAR(1)>>",
        "MAP<CHAR(1), ARRAY<DECIMAL(2, 1)>>", "ROW<EXPR$0 INT, EXPR$1 ARRAY<DATE>>"], [
        ([1, 2, 3], ["a", None], {"k1": 1, "k2": 2}, Row(1, "a", True), [Row(1, "x")],
         {"a": [Decimal("1.5")]}, Row(None, [D(2023, 1, 2)]))]),
    "empty": (["a", "b"], ["INT", "CHAR(1)"], []),
    "long_name": (["a_very_long_column_name_that_exceeds_thirty_chars", "s"],
                  ["INT NOT NULL", "CHAR(1) NOT NULL"], [(1, "x")]),
    "single_row": (["answer"], ["INT NOT NULL"], [(42,)]),
    "group_by": (["k", "cnt", "total"], ["CHAR(1)", "BIGINT", "INT"], [
        kind(INS, "a", 1, 1), kind(INS, "b", 1, 2), kind(UB, "a", 1, 1), kind(UA, "a", 2, 4),
        kind(UB, "a", 2, 4), kind(UA, "a", 3, 8)]),
    "distinct_count": (["c"], ["BIGINT"], [kind(INS, 1), kind(UB, 1), kind(UA, 2)]),
    "null_literal": (["s", "i"], ["STRING", "INT"], [(None, None)]),
    "unicode_name": (["中文列", "é"], ["INT", "CHAR(1)"], [(1, "é")]),
    "wide_values_int": (["x", "y"], ["BIGINT", "INT"], [(1234567890123, -1)]),
    "expr_names": (["EXPR$0", "EXPR$1", "EXPR$2"], ["INT", "CHAR(1)", "INT"], [(2, "A", 3)]),
    "ltz_shanghai": (["ltz3", "ltz0", "ltz6"],
                     ["TIMESTAMP_LTZ(3)", "TIMESTAMP_LTZ(3)", "TIMESTAMP_LTZ(6)"],
                     [(LTZ_VALUE, LTZ_VALUE.replace(microsecond=0), LTZ_VALUE)]),
    "from_elements": (["a", "b"], ["BIGINT", "STRING"], [(1, "Hi"), (2, "Hello")]),
}
ZONES = {"ltz_shanghai": zoneinfo.ZoneInfo("Asia/Shanghai")}
QUERIES["ltz_utc"] = QUERIES["ltz"]
FLOATS: dict[str, tuple[float | None, float | None]] = {
    "1.5": (1.5, 1.5), "0.1": (0.1, 0.1), "1e10": (1e10, 1e10), "1e7": (1e7, 1e7),
    "9999999": (9999999.0, 9999999.0), "0.001": (0.001, 0.001), "0.0001": (0.0001, 0.0001),
    "-0.0": (0.0, 0.0), "100": (100.0, 100.0),  # the literal -0.0 is DECIMAL zero
    # CAST(1.0 / 3 AS FLOAT) is folded by the planner at FLOAT's 7 digits
    "1.0 / 3": (f32(0.3333333), 0.333333333333), "123456789.125": (123456789.125, 123456789.125),
    "1e-10": (1e-10, 1e-10), "3.4028235E38": (3.4028235e38, 3.4028235e38),
    "1e300": (float("inf"), 1e300), "NULL": (None, None), "12345678.9": (12345678.9, 12345678.9),
    "0.00012345": (0.00012345, 0.00012345),
}
for _text, (_f, _d) in FLOATS.items():
    QUERIES[f"float {_text}"] = (["f", "d"], ["FLOAT", "DOUBLE"], [(_f, _d)])


def _cases(mode: str) -> list[str]:
    return [name for name in QUERIES if f"{mode} {name}" in CASES]


@pytest.mark.parametrize("mode", ["streaming", "batch"])
def test_every_oracle_query_case_is_modelled(mode: str) -> None:
    oracle = {name[len(mode) + 1:] for name in CASES if name.startswith(mode + " ")}
    not_queries = {"ddl_ok", "insert_result", "show_tables", "drop_ok", "collect"}
    errors = {name for name in oracle if CASES[f"{mode} {name}"].startswith("ERROR")}
    assert oracle - not_queries - errors <= set(QUERIES)


NANOS = {"ts_fraction": ("1234567", "1234560")}
"""Python's datetime holds microseconds: a TIMESTAMP(7) literal's seventh digit is lost."""


BATCH_ROWS: dict[str, list[tuple[Any, ...] | Row]] = {
    "group_by": [("a", 3, 8), ("b", 1, 2)], "distinct_count": [(2,)]}
"""Batch mode emits final results only."""


def _render(name: str, streaming: bool) -> str:
    names, types, rows = QUERIES[name]
    if not streaming:
        rows = BATCH_ROWS.get(name, rows)
    data_types = [from_sql_string(text) for text in types]
    return render(names, data_types, rows, streaming, ZONES.get(name, UTC))


def _expected(mode: str, name: str) -> str:
    text = CASES[f"{mode} {name}"]
    if name in NANOS:
        text = text.replace(*NANOS[name])
    return text


def _assert_same_table(actual: str, expected: str) -> None:
    """Equal text; rows of a multi-row VALUES come in an order Flink does not fix, so the
    row lines are compared as a multiset when the two differ only in their order."""
    if actual == expected:
        return
    ours, theirs = actual.splitlines(), expected.splitlines()
    assert ours[:3] == theirs[:3]
    assert ours[-2:] == theirs[-2:]
    assert sorted(ours[3:-2]) == sorted(theirs[3:-2])


@pytest.mark.parametrize("name", _cases("streaming"))
def test_streaming_print_is_pyflinks(name: str) -> None:
    _assert_same_table(_render(name, True), _expected("streaming", name))


@pytest.mark.parametrize("name", _cases("batch"))
def test_batch_print_is_pyflinks(name: str) -> None:
    _assert_same_table(_render(name, False), _expected("batch", name))


@pytest.mark.parametrize("mode", ["streaming", "batch"])
def test_ddl_prints_ok(mode: str) -> None:
    assert render_ok() == CASES[f"{mode} ddl_ok"]
    assert render_ok() == CASES[f"{mode} drop_ok"]


@pytest.mark.parametrize("mode", ["streaming", "batch"])
def test_insert_results_are_raw_and_show_results_sized_by_their_values(mode: str) -> None:
    assert render_raw([[-1]]) == CASES[f"{mode} insert_result"]
    assert render_cells(["table name"], [["bh"]]) == CASES[f"{mode} show_tables"]


def test_streaming_rows_can_be_printed_as_they_arrive() -> None:
    table = StreamingTableau(["a"], [DataTypes.INT()])
    assert table.header()[1] == "| op |           a |"
    assert table.row(Row.of_kind(RowKind.DELETE, 5)) == "| -D |           5 |"
    assert table.footer(1) == ["+----+-------------+", "1 row in set"]


def test_widths_and_truncation_rules() -> None:
    assert display_width("中a") == 3
    assert truncate("abcdef", 5) == "ab..."
    assert truncate("中文中", 5) == "中..."
    assert truncate("abcde", 5) == "abcde"
    assert [type_width(from_sql_string(text)) for text in (
        "TIME(0)", "TIME(3)", "TIMESTAMP(2)", "TIMESTAMP(5)", "TIMESTAMP(8)", "DECIMAL(7, 2)",
        "STRING", "ARRAY<INT>")] == [8, 12, 23, 26, 29, 9, 30, 30]


INTERVALS = load_cases("intervals.txt")


def test_intervals_print_as_pyflink() -> None:
    """tests/table/fixtures/intervals.txt: interval literals are INTERVAL SECOND(3) and
    INTERVAL MONTH (Flink's literal types); values are timedeltas and numbers of months."""
    types = [from_sql_string("INTERVAL SECOND(3) NOT NULL")] * 4 + [
        from_sql_string("INTERVAL MONTH NOT NULL")] * 3
    row = (datetime.timedelta(days=1), datetime.timedelta(seconds=3),
           datetime.timedelta(days=1, hours=2, minutes=3, seconds=4.5),
           datetime.timedelta(minutes=-90), 14, 5, -36)
    names = ["d", "s", "dts", "m", "ym", "mo", "y"]
    assert render(names, types, [row], True) == INTERVALS["tableau intervals"]


def test_multisets_print_as_element_counts() -> None:
    types = [from_sql_string("STRING"), from_sql_string("MULTISET<STRING>")]
    rows = [kind(INS, "a", ["x"]), kind(UB, "a", {"x": 1}), kind(UA, "a", ["x", "y"]),
            kind(UB, "a", {"x": 1, "y": 1}), kind(UA, "a", ["x", "y", "x"])]
    assert render(["k", "vs"], types, rows, True) == INTERVALS["tableau multiset"]


WIDTHS = load_cases("tableau_config.txt")


@pytest.mark.parametrize("case", sorted(WIDTHS))
def test_max_column_width_caps_only_the_types_without_their_own_width(case: str) -> None:
    """tests/table/fixtures/tableau_config.txt: ``table.display.max-column-width`` 10 and 4;
    numbers, DECIMAL and TIMESTAMP keep their widths, and no column is narrower than
    ``<NULL>`` or its name."""
    mode, _, width = case.split(" ")
    names = ["a_long_column_name", "s", "ts", "d", "t"]
    types = [from_sql_string(text) for text in (
        "BIGINT", "VARCHAR(24) NOT NULL", "TIMESTAMP(3)", "DECIMAL(20, 2)", "VARCHAR(5)")]
    rows = [(1234567890123, "a string longer than ten", TS(2023, 1, 1, 10), Decimal("1.5"),
             "short"), (None, "中文中文中文中文", None, None, "x")]
    text = render(names, types, rows, mode == "streaming", UTC, int(width))
    _assert_same_table(text, WIDTHS[case])
