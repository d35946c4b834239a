# ruff: noqa: E501 - the oracle programs hold long SQL text
"""Oracle: the print connector's lines on PyFlink (values per type, row kinds, prefixes).

Prints each case after a ``=== CASE name`` marker; the output is
tests/table/fixtures/print_connector.txt. Every INSERT is waited for before the next marker.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import case, end
from pyflink.table import EnvironmentSettings, TableEnvironment

t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
t_env.get_config().set("parallelism.default", "1")

SELECTS = {
    "ints": ("a TINYINT, b SMALLINT, c INT, d BIGINT", """SELECT * FROM (VALUES
        (CAST(1 AS TINYINT), CAST(-2 AS SMALLINT), 3, CAST(-4 AS BIGINT)),
        (CAST(NULL AS TINYINT), CAST(NULL AS SMALLINT), CAST(NULL AS INT), CAST(NULL AS BIGINT)))"""),
    "strings": ("s STRING, c CHAR(5), v VARCHAR(10)", """SELECT * FROM (VALUES
        ('abc', CAST('ab' AS CHAR(5)), CAST('x y' AS VARCHAR(10))),
        ('', CAST(NULL AS CHAR(5)), CAST('中文' AS VARCHAR(10))),
        ('with, comma', CAST('x' AS CHAR(5)), CAST(NULL AS VARCHAR(10))))"""),
    "decimals": ("d1 DECIMAL(10, 2), d2 DECIMAL(10, 8), d3 DECIMAL(5, 0), d4 DECIMAL(38, 18)", """SELECT * FROM (VALUES
        (CAST(1.5 AS DECIMAL(10, 2)), CAST(0.0000001 AS DECIMAL(10, 8)), CAST(3 AS DECIMAL(5, 0)), CAST(1.5 AS DECIMAL(38, 18))),
        (CAST(-12345678.9 AS DECIMAL(10, 2)), CAST(0 AS DECIMAL(10, 8)), CAST(NULL AS DECIMAL(5, 0)), CAST(0 AS DECIMAL(38, 18))))"""),
    "booleans": ("b BOOLEAN, n INT", "SELECT * FROM (VALUES (TRUE, 1), (FALSE, 2), (CAST(NULL AS BOOLEAN), 3))"),
    "temporal": ("d DATE, t TIME(0), t3 TIME(3), ts0 TIMESTAMP(0), ts3 TIMESTAMP(3), ts6 TIMESTAMP(6), ts9 TIMESTAMP(9)", """SELECT * FROM (VALUES
        (DATE '2023-01-02', TIME '10:00:00', CAST(TIME '10:00:01.5' AS TIME(3)), CAST(TIMESTAMP '2023-01-01 10:00:00' AS TIMESTAMP(0)),
         CAST(TIMESTAMP '2023-01-01 10:00:00' AS TIMESTAMP(3)), CAST(TIMESTAMP '2023-01-01 10:00:00.123456' AS TIMESTAMP(6)), CAST(TIMESTAMP '2023-01-01 10:00:00.5' AS TIMESTAMP(9))),
        (DATE '0001-01-01', TIME '23:59:59', CAST(TIME '10:00:00' AS TIME(3)), CAST(TIMESTAMP '2023-01-01 10:00:01' AS TIMESTAMP(0)),
         CAST(TIMESTAMP '2023-01-01 10:00:00.12' AS TIMESTAMP(3)), CAST(TIMESTAMP '2023-01-01 10:00:00' AS TIMESTAMP(6)), CAST(NULL AS TIMESTAMP(9))))"""),
    "ltz": ("l3 TIMESTAMP_LTZ(3), l0 TIMESTAMP_LTZ(3)", "SELECT TO_TIMESTAMP_LTZ(1672567200123, 3), TO_TIMESTAMP_LTZ(1672567200, 0)"),
    "binary": ("b1 BYTES, b2 BINARY(2)", "SELECT * FROM (VALUES (x'0102ff', CAST(x'00' AS BINARY(2))), (CAST('' AS BYTES), CAST(NULL AS BINARY(2))))"),
    "collections": ("arr ARRAY<INT>, sarr ARRAY<STRING>, m MAP<STRING, INT>, r ROW<a INT, b STRING, c BOOLEAN>, arow ARRAY<ROW<x INT, y STRING>>, rn ROW<a INT, b ARRAY<DATE>>, ma MAP<STRING, ARRAY<DOUBLE>>, mo MAP<STRING, INT>, mi MAP<INT, STRING>",
                    """SELECT ARRAY[1, 2, 3], ARRAY['a', CAST(NULL AS STRING)], MAP['k1', 1, 'k2', 2], ROW(1, 'a', TRUE),
                              ARRAY[ROW(1, 'x')], ROW(CAST(NULL AS INT), ARRAY[DATE '2023-01-02']), MAP['a', ARRAY[1.5]],
                              MAP['b', 1, 'a', 2, 'zz', 3, 'hello', 4], MAP[100, 'x', 3, 'y', 17, 'z']"""),
    "group_by": ("k STRING, cnt BIGINT, total INT", """SELECT k, COUNT(*), SUM(v) FROM (VALUES
        ('a', 1), ('b', 2), ('a', 3), ('a', 4)) AS T(k, v) GROUP BY k"""),
}
FLOATS = ["1.5", "0.1", "1e10", "1e7", "9999999", "0.001", "0.0001", "-0.0", "100", "1.0 / 3",
          "123456789.125", "1e-10", "3.4028235E38", "1e300", "12345678.9", "0.00012345"]
SELECTS["floats"] = ("f FLOAT, d DOUBLE", " UNION ALL ".join(
    f"SELECT CAST({value} AS FLOAT), CAST({value} AS DOUBLE)" for value in FLOATS))
SELECTS["float_specials"] = ("f FLOAT, d DOUBLE", " UNION ALL ".join(
    f"SELECT CAST({value} AS FLOAT), CAST({value} AS DOUBLE)" for value in ["'NaN'", "'Infinity'", "'-Infinity'"]))


def run(name, columns, query, options=""):
    case(name)
    try:
        t_env.execute_sql(f"CREATE TEMPORARY TABLE sink_{abs(hash(name))} ({columns}) WITH ('connector' = 'print'{options})")
        t_env.execute_sql(f"INSERT INTO sink_{abs(hash(name))} {query}").wait()
    except Exception as error:
        lines = [line for line in str(error).splitlines() if "Exception:" in line]
        print("ERROR", type(error).__name__, (lines or [str(error)])[-1][:400])


for name, (columns, query) in SELECTS.items():
    run(name, columns, query)
t_env.get_config().set("table.local-time-zone", "Asia/Shanghai")
run("ltz_shanghai", *SELECTS["ltz"])
t_env.get_config().set("table.local-time-zone", "UTC")
ONE_TO_SIX = "SELECT * FROM (VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd'), (5, 'e'), (6, 'f'))"
run("identifier p1", "a INT, b STRING", ONE_TO_SIX, ", 'print-identifier' = 'sink1'")
run("no identifier p2", "a INT, b STRING", ONE_TO_SIX, ", 'sink.parallelism' = '2'")
run("identifier p2", "a INT, b STRING", ONE_TO_SIX, ", 'print-identifier' = 'sink2', 'sink.parallelism' = '2'")
run("empty identifier p1", "a INT, b STRING", ONE_TO_SIX, ", 'print-identifier' = ''")
end()
