# ruff: noqa: E501 - the oracle programs hold long SQL text
"""Oracle: the deprecated TableSchema's text and the Python values collect() returns per type.

Prints each case after a ``=== CASE name`` marker; the output is tests/table/fixtures/misc.txt.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import case, end
from pyflink.table import DataTypes, EnvironmentSettings, TableEnvironment
from pyflink.table.table_schema import TableSchema

t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
t_env.get_config().set("parallelism.default", "1")

case("table_schema builder")
print(repr(TableSchema.builder().field("a", DataTypes.BIGINT()).field("b", DataTypes.STRING(False)).build()), end="|\n")
case("get_schema")
print(repr(t_env.from_elements([(1, "a", 1.5)], ["x", "y", "z"]).get_schema()), end="|\n")
case("get_schema fields")
schema = t_env.from_elements([(1, "a", 1.5)], ["x", "y", "z"]).get_schema()
print(schema.get_field_names(), [repr(t) for t in schema.get_field_data_types()], repr(schema.to_row_data_type()))

VALUES = ["CAST(1 AS TINYINT)", "2", "CAST(1.5 AS FLOAT)", "CAST(1.5 AS DOUBLE)", "CAST(1.50 AS DECIMAL(10, 2))",
          "TRUE", "'abc'", "CAST('ab' AS CHAR(5))", "x'0102'", "DATE '2023-01-02'", "TIME '10:00:01'",
          "CAST(TIME '10:00:01.5' AS TIME(3))", "CAST(TIMESTAMP '2023-01-01 10:00:00.123456789' AS TIMESTAMP(9))",
          "CAST(TIMESTAMP '2023-01-01 10:00:00.5' AS TIMESTAMP(3))", "TO_TIMESTAMP_LTZ(1672567200123, 3)",
          "ARRAY[1, 2]", "MAP['a', 1]", "ROW(1, 'x')", "CAST(NULL AS INT)"]
for value in VALUES:
    case(f"collect {value}")
    try:
        with t_env.execute_sql(f"SELECT {value}").collect() as rows:
            for row in rows:
                print(type(row[0]).__name__, repr(row[0]))
    except Exception as error:
        lines = [line for line in str(error).splitlines() if "Exception" in line]
        print("ERROR", (lines or [str(error)])[0][:300])
case("collect values shanghai")
t_env.get_config().set("table.local-time-zone", "Asia/Shanghai")
try:
    with t_env.execute_sql("SELECT TO_TIMESTAMP_LTZ(1672567200123, 3)").collect() as rows:
        for row in rows:
            print(repr(row[0]))
except Exception as error:
    lines = [line for line in str(error).splitlines() if "Exception" in line]
    print("ERROR", (lines or [str(error)])[0][:300])
end()
