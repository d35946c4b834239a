# ruff: noqa: E501 - the oracle programs hold long SQL text
"""Oracle: TableResult.print() (tableau) and collect() on PyFlink, in streaming and batch mode.

Prints each case after a ``=== CASE name`` marker; the output is tests/table/fixtures/tableau.txt.
Every query is plain SQL so the column types are exact; each case runs in both modes.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import case, end
from pyflink.table import EnvironmentSettings, TableEnvironment

QUERIES = {
    "ints": """SELECT * FROM (VALUES
        (CAST(1 AS TINYINT), CAST(-2 AS SMALLINT), 3, CAST(-4 AS BIGINT)),
        (CAST(NULL AS TINYINT), CAST(NULL AS SMALLINT), CAST(NULL AS INT), CAST(NULL AS BIGINT)),
        (CAST(127 AS TINYINT), CAST(32767 AS SMALLINT), 2147483647, CAST(-9223372036854775808 AS BIGINT))
        ) AS T(ti, si, i, bi)""",
    "short_names": "SELECT * FROM (VALUES (1, 'Hi'), (2, 'Hello')) AS T(a, b)",
    "strings": """SELECT * FROM (VALUES
        ('a', CAST('ab' AS CHAR(5)), CAST('xyz' AS VARCHAR(10))),
        ('a string that is longer than thirty characters for sure', CAST(NULL AS CHAR(5)), CAST(NULL AS VARCHAR(10))),
        ('中文字符', CAST('中' AS CHAR(5)), CAST('' AS VARCHAR(10))),
        ('exactly thirty characters 1234', CAST('abcde' AS CHAR(5)), CAST('tab\there' AS VARCHAR(10))),
        ('exactly thirty-one characters 1', CAST('x' AS CHAR(5)), CAST('y' AS VARCHAR(10))),
        ('中文中文中文中文中文中文中文中文', CAST('x' AS CHAR(5)), CAST('y' AS VARCHAR(10)))
        ) AS T(s, c, v)""",
    "decimals": """SELECT * FROM (VALUES
        (CAST(1.5 AS DECIMAL(10, 2)), CAST(3 AS DECIMAL(5, 0)), CAST(0.0000001 AS DECIMAL(10, 8)), CAST(1.5 AS DECIMAL(38, 18))),
        (CAST(-12345678.9 AS DECIMAL(10, 2)), CAST(-99999 AS DECIMAL(5, 0)), CAST(0 AS DECIMAL(10, 8)), CAST(NULL AS DECIMAL(38, 18)))
        ) AS T(d1, d2, d3, d4)""",
    "booleans": "SELECT * FROM (VALUES (TRUE, 1), (FALSE, 2), (CAST(NULL AS BOOLEAN), 3)) AS T(b, n)",
    "temporal": """SELECT * FROM (VALUES
        (DATE '2023-01-02', TIME '10:00:00', TIMESTAMP '2023-01-01 10:00:00', CAST(TIMESTAMP '2023-01-01 10:00:00' AS TIMESTAMP(3)), CAST(TIMESTAMP '2023-01-01 10:00:00.123456' AS TIMESTAMP(6)), CAST(TIMESTAMP '2023-01-01 10:00:00.5' AS TIMESTAMP(9)), CAST(TIMESTAMP '2023-01-01 10:00:00' AS TIMESTAMP(0))),
        (DATE '0001-01-01', TIME '23:59:59', TIMESTAMP '2023-01-01 10:00:01.5', CAST(TIMESTAMP '2023-01-01 10:00:01.5' AS TIMESTAMP(3)), CAST(TIMESTAMP '2023-01-01 10:00:00' AS TIMESTAMP(6)), CAST(NULL AS TIMESTAMP(9)), CAST(NULL AS TIMESTAMP(0)))
        ) AS T(d, t, ts, ts3, ts6, ts9, ts0)""",
    "time3": """SELECT CAST(TIME '10:00:01' AS TIME(3)) AS t3, TIME '00:00:00' AS t0,
                      CAST(TIME '10:00:01.5' AS TIME(3)) AS t3b, CAST(TIME '10:00:01.123' AS TIME(3)) AS t3c,
                      CAST(TIME '10:00:00' AS TIME(3)) AS t3d""",
    "ts_fraction": """SELECT CAST(TIMESTAMP '2023-01-01 10:00:00.1' AS TIMESTAMP(2)) AS ts2,
                      CAST(TIMESTAMP '2023-01-01 10:00:00' AS TIMESTAMP(4)) AS ts4,
                      CAST(TIMESTAMP '2023-01-01 10:00:00.1234567' AS TIMESTAMP(7)) AS ts7,
                      CAST(TIMESTAMP '2023-01-01 10:00:00.12' AS TIMESTAMP(1)) AS ts1""",
    "ltz": """SELECT TO_TIMESTAMP_LTZ(1672567200123, 3) AS ltz3, TO_TIMESTAMP_LTZ(1672567200, 0) AS ltz0,
                     CAST(TO_TIMESTAMP_LTZ(1672567200123, 3) AS TIMESTAMP_LTZ(6)) AS ltz6""",
    "binary": """SELECT * FROM (VALUES
        (x'0102ff', CAST('abc' AS BYTES), CAST(x'00' AS BINARY(2))),
        (CAST(NULL AS BYTES), CAST('' AS BYTES), CAST(NULL AS BINARY(2)))
        ) AS T(b1, b2, b3)""",
    "collections": """SELECT ARRAY[1, 2, 3] AS arr, ARRAY['a', CAST(NULL AS STRING)] AS sarr,
                     MAP['k1', 1, 'k2', 2] AS m, ROW(1, 'a', TRUE) AS r,
                     ARRAY[ROW(1, 'x')] AS arow, MAP['a', ARRAY[1.5]] AS mnested,
                     ROW(CAST(NULL AS INT), ARRAY[DATE '2023-01-02']) AS rnested""",
    "empty": "SELECT * FROM (VALUES (1, 'a')) AS T(a, b) WHERE a > 5",
    "long_name": "SELECT 1 AS a_very_long_column_name_that_exceeds_thirty_chars, 'x' AS s",
    "single_row": "SELECT 42 AS answer",
    "group_by": """SELECT k, COUNT(*) AS cnt, SUM(v) AS total FROM (VALUES
        ('a', 1), ('b', 2), ('a', 3), ('a', 4)) AS T(k, v) GROUP BY k""",
    "distinct_count": """SELECT COUNT(DISTINCT k) AS c FROM (VALUES ('a'), ('b'), ('a')) AS T(k)""",
    "null_literal": "SELECT CAST(NULL AS STRING) AS s, CAST(NULL AS INT) AS i",
    "unicode_name": "SELECT 1 AS `中文列`, 'é' AS `é`",
    "wide_values_int": "SELECT 1234567890123 AS x, -1 AS y",
    "expr_names": "SELECT 1 + 1, UPPER('a'), 3",
}

FLOAT_VALUES = ["1.5", "0.1", "1e10", "1e7", "9999999", "0.001", "0.0001", "-0.0", "100",
                "1.0 / 3", "'NaN'", "'Infinity'", "'-Infinity'", "123456789.125", "1e-10",
                "3.4028235E38", "1e300", "NULL", "12345678.9", "0.00012345"]
for value in FLOAT_VALUES:
    QUERIES[f"float {value}"] = f"SELECT CAST({value} AS FLOAT) AS f, CAST({value} AS DOUBLE) AS d"

TIME_ZONES = {
    "ltz_shanghai": ("Asia/Shanghai", QUERIES["ltz"]),
    "ltz_utc": ("UTC", QUERIES["ltz"]),
}

for mode in ("streaming", "batch"):
    settings = (EnvironmentSettings.in_streaming_mode() if mode == "streaming"
                else EnvironmentSettings.in_batch_mode())
    t_env = TableEnvironment.create(settings)
    t_env.get_config().set("parallelism.default", "1")
    for name, query in QUERIES.items():
        case(f"{mode} {name}")
        try:
            t_env.execute_sql(query).print()
        except Exception as error:
            lines = [line for line in str(error).splitlines() if "Exception:" in line]
            print("ERROR", type(error).__name__, (lines or [str(error)])[-1][:400])
    for name, (zone, query) in TIME_ZONES.items():
        t_env.get_config().set("table.local-time-zone", zone)
        case(f"{mode} {name}")
        t_env.execute_sql(query).print()
    t_env.get_config().set("table.local-time-zone", "default")
    case(f"{mode} ddl_ok")
    t_env.execute_sql("CREATE TABLE bh (a INT, b STRING) WITH ('connector' = 'blackhole')").print()
    case(f"{mode} insert_result")
    result = t_env.execute_sql("INSERT INTO bh VALUES (1, 'a')")
    result.wait()
    result.print()
    case(f"{mode} show_tables")
    t_env.execute_sql("SHOW TABLES").print()
    case(f"{mode} drop_ok")
    t_env.execute_sql("DROP TABLE bh").print()
    case(f"{mode} from_elements")
    t_env.from_elements([(1, "Hi"), (2, "Hello")], ["a", "b"]).execute().print()
    case(f"{mode} collect")
    with t_env.execute_sql(QUERIES["group_by"]).collect() as rows:
        for row in rows:
            print(row.get_row_kind(), repr(row))
end()
