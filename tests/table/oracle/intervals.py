# ruff: noqa: E501 - the oracle programs hold long SQL text
"""Oracle: INTERVAL and MULTISET values in the tableau and the print connector on PyFlink.

Prints each case after a ``=== CASE name`` marker; the output is tests/table/fixtures/intervals.txt.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import case, end
from pyflink.table import EnvironmentSettings, TableEnvironment

t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
t_env.get_config().set("parallelism.default", "1")

QUERY = """SELECT INTERVAL '1' DAY AS d, INTERVAL '3' SECOND AS s, INTERVAL '1 02:03:04.5' DAY TO SECOND AS dts,
  INTERVAL '-90' MINUTE AS m, INTERVAL '1-2' YEAR TO MONTH AS ym, INTERVAL '5' MONTH AS mo, INTERVAL '-3' YEAR AS y"""
case("tableau intervals")
try:
    t_env.execute_sql(QUERY).print()
except Exception as error:
    print("ERROR", [line for line in str(error).splitlines() if "Exception" in line][:1])
case("print_schema intervals")
t_env.sql_query(QUERY).print_schema()
MULTISET = "SELECT k, COLLECT(v) AS vs FROM (VALUES ('a', 'x'), ('a', 'y'), ('a', 'x')) AS T(k, v) GROUP BY k"
case("tableau multiset")
try:
    t_env.execute_sql(MULTISET).print()
except Exception as error:
    print("ERROR", [line for line in str(error).splitlines() if "Exception" in line][:1])
case("print multiset")
try:
    t_env.execute_sql("CREATE TEMPORARY TABLE ms (k STRING, vs MULTISET<STRING>) WITH ('connector' = 'print')")
    t_env.execute_sql(f"INSERT INTO ms {MULTISET}").wait()
except Exception as error:
    print("ERROR", [line for line in str(error).splitlines() if "Exception" in line][:1])
case("print intervals")
try:
    t_env.execute_sql("CREATE TEMPORARY TABLE iv (d INTERVAL DAY, s INTERVAL SECOND(3)) WITH ('connector' = 'print')")
    t_env.execute_sql("INSERT INTO iv SELECT INTERVAL '1' DAY, INTERVAL '3' SECOND").wait()
except Exception as error:
    print("ERROR", [line for line in str(error).splitlines() if "Exception" in line][:1])
end()
