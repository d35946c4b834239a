"""The print connector's lines against PyFlink 2.3.0 (tests/table/fixtures/print_connector.txt,
captured by tests/table/oracle/print_connector.py): Java's value formatting per type, row
kinds and the ``N> `` prefixes. Each case is the Python form of one oracle INSERT: the sink's
row type and the rows the query produces."""

from __future__ import annotations

import datetime
import re
import struct
from collections import Counter
from decimal import Decimal
from typing import Any

import pytest

from flintlock.common.types import Row, RowKind
from flintlock.table.formatting.java_values import (
    java_big_decimal,
    java_double,
    java_float,
    java_local_time,
    print_value,
)
from flintlock.table.formatting.print_connector import print_connector_line, print_prefix
from flintlock.table.types import DataTypes, RowType, from_sql_string
from tests.table.oracle.cases import load_cases

CASES = load_cases("print_connector.txt")
D, T, TS = datetime.date, datetime.time, datetime.datetime
LTZ = TS(2023, 1, 1, 10, 0, 0, 123000, tzinfo=datetime.UTC)
INS, UB, UA = RowKind.INSERT, RowKind.UPDATE_BEFORE, RowKind.UPDATE_AFTER
SAME = [1.5, 0.1, 1e10, 1e7, 9999999.0, 0.001, 0.0001, 0.0, 100.0, 123456789.125, 1e-10,
        3.4028235e38, 12345678.9, 0.00012345]
FLOATS = [(value, value) for value in SAME] + [
    (struct.unpack("<f", struct.pack("<f", 0.3333333))[0], 0.333333333333),  # folded 1.0 / 3
    (float("inf"), 1e300)]  # 1e300 overflows FLOAT


def row_type(text: str) -> RowType:
    parsed = from_sql_string(f"ROW<{text}>")
    assert isinstance(parsed, RowType)
    return parsed


QUERIES: dict[str, tuple[str, list[Any]]] = {
    "ints": ("a TINYINT, b SMALLINT, c INT, d BIGINT",
             [(1, -2, 3, -4), (None, None, None, None)]),
    "strings": ("s STRING, c CHAR(5), v VARCHAR(10)",
                [("abc", "ab", "x y"), ("", None, "中文"), ("with, comma", "x", None)]),
    "decimals": ("d1 DECIMAL(10, 2), d2 DECIMAL(10, 8), d3 DECIMAL(5, 0), d4 DECIMAL(38, 18)",
                 [(Decimal("1.5"), Decimal("0.0000001"), Decimal(3), Decimal("1.5")),
                  (Decimal("-12345678.9"), Decimal(0), None, Decimal(0))]),
    "booleans": ("b BOOLEAN, n INT", [(True, 1), (False, 2), (None, 3)]),
    "temporal": ("d DATE, t TIME(0), t3 TIME(3), ts0 TIMESTAMP(0), ts3 TIMESTAMP(3), "
                 "ts6 TIMESTAMP(6), ts9 TIMESTAMP(9)", [
                     (D(2023, 1, 2), T(10), T(10, 0, 1, 500000), TS(2023, 1, 1, 10),
                      TS(2023, 1, 1, 10), TS(2023, 1, 1, 10, 0, 0, 123456),
                      TS(2023, 1, 1, 10, 0, 0, 500000)),
                     (D(1, 1, 1), T(23, 59, 59), T(10), TS(2023, 1, 1, 10, 0, 1),
                      TS(2023, 1, 1, 10, 0, 0, 120000), TS(2023, 1, 1, 10), None)]),
    "ltz": ("l3 TIMESTAMP_LTZ(3), l0 TIMESTAMP_LTZ(3)", [(LTZ, LTZ.replace(microsecond=0))]),
    "ltz_shanghai": ("l3 TIMESTAMP_LTZ(3), l0 TIMESTAMP_LTZ(3)",
                     [(LTZ, LTZ.replace(microsecond=0))]),
    "binary": ("b1 BYTES, b2 BINARY(2)", [(b"\x01\x02\xff", b"\x00\x00"), (b"", None)]),
    "collections": (
        "arr ARRAY<INT>, sarr ARRAY<STRING>, m MAP<STRING, INT>, r ROW<a INT, b STRING, "
        "c BOOLEAN>, arow ARRAY<ROW<x INT, y STRING>>, rn ROW<a INT, b ARRAY<DATE>>, "
        "ma MAP<STRING, ARRAY<DOUBLE>>, mo MAP<STRING, INT>, mi MAP<INT, STRING>",
        [([1, 2, 3], ["a", None], {"k1": 1, "k2": 2}, Row(1, "a", True), [Row(1, "x")],
          Row(None, [D(2023, 1, 2)]), {"a": [1.5]}, {"b": 1, "a": 2, "zz": 3, "hello": 4},
          {100: "x", 3: "y", 17: "z"})]),
    "group_by": ("k STRING, cnt BIGINT, total INT", [
        Row.of_kind(INS, "a", 1, 1), Row.of_kind(INS, "b", 1, 2), Row.of_kind(UB, "a", 1, 1),
        Row.of_kind(UA, "a", 2, 4), Row.of_kind(UB, "a", 2, 4), Row.of_kind(UA, "a", 3, 8)]),
    "floats": ("f FLOAT, d DOUBLE", FLOATS),
}
SIX = [(1, "a"), (2, "b"), (3, "c"), (4, "d"), (5, "e"), (6, "f")]
PREFIXED = {"identifier p1": ("sink1", 1), "no identifier p2": (None, 2),
            "identifier p2": ("sink2", 2), "empty identifier p1": ("", 1)}


def _lines(name: str) -> list[str]:
    return [text for text in CASES[name].splitlines() if text]


@pytest.mark.parametrize("name", [name for name in QUERIES if name in CASES])
def test_values_print_as_pyflinks_print_connector(name: str) -> None:
    text, rows = QUERIES[name]
    kind = row_type(text)
    ours = [print_connector_line(row, kind) for row in rows]
    assert Counter(ours) == Counter(_lines(name))  # a VALUES' rows come in no fixed order


def test_every_oracle_case_is_modelled() -> None:
    errors = {name for name in CASES if CASES[name].startswith("ERROR")}
    assert set(CASES) - errors <= set(QUERIES) | set(PREFIXED)


PREFIX = re.compile(r"^(?:(?P<prefix>[^>]*)> )?(?P<row>[+-][IUD]\[.*\])$")


@pytest.mark.parametrize("name", sorted(PREFIXED))
def test_prefixes_follow_identifier_and_parallelism(name: str) -> None:
    identifier, parallelism = PREFIXED[name]
    kind = row_type("a INT, b STRING")
    seen = []
    for text in _lines(name):
        match = PREFIX.match(text)
        assert match is not None, text
        prefix = match["prefix"] or ""
        subtask = int(prefix.rsplit(":", 1)[-1]) - 1 if parallelism > 1 else 0
        row = next(Row(*values) for values in SIX
                   if print_connector_line(Row(*values), kind) == match["row"])
        assert print_connector_line(row, kind, identifier, subtask, parallelism) == text
        seen.append(tuple(row))
    assert sorted(seen) == SIX


def test_prefix_rules() -> None:
    assert print_prefix(None, 0, 1) == ""
    assert print_prefix("", 3, 1) == ""
    assert print_prefix("s", 0, 1) == "s> "
    assert print_prefix(None, 1, 4) == "2> "
    assert print_prefix("s", 1, 4) == "s:2> "
    line = print_connector_line(Row(1, "x"), row_type("a INT, b STRING"), "err", 0, 1, True)
    assert line == "err> +I[1, x]"


def test_java_number_and_time_formats() -> None:
    assert [java_double(v) for v in (float("nan"), float("inf"), -0.0, 2.82879384806159e17,
                                     1e-5, 1234567.0, 1e21)] == [
        "NaN", "Infinity", "-0.0", "2.82879384806159008E17", "1.0E-5", "1234567.0", "1.0E21"]
    assert java_float(0.1) == "0.1" and java_float(16777217.0) == "1.6777216E7"
    assert java_big_decimal(Decimal("0.00000010")) == "1.0E-7"
    assert java_big_decimal(Decimal("0E-8")) == "0E-8"
    assert java_big_decimal(Decimal("123.4500"), 2) == "123.45"
    assert java_local_time(T(10, 0, 0, 1)) == "10:00:00.000001"
    assert print_value(None, DataTypes.INT()) == "null"
    assert print_value({"a": 1}, DataTypes.MULTISET(DataTypes.STRING())) == "{a=1}"


def test_multisets_print_as_java_maps_of_counts() -> None:
    """tests/table/fixtures/intervals.txt, "print multiset" (COLLECT into a print table)."""
    expected = load_cases("intervals.txt")["print multiset"].splitlines()
    kind = row_type("k STRING, vs MULTISET<STRING>")
    rows = [Row.of_kind(INS, "a", ["x"]), Row.of_kind(UB, "a", ["x"]),
            Row.of_kind(UA, "a", {"x": 1, "y": 1}), Row.of_kind(UB, "a", ["y", "x"]),
            Row.of_kind(UA, "a", ["x", "y", "x"])]
    assert [print_connector_line(row, kind) for row in rows] == expected
