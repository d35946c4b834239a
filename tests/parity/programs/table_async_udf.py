"""Async scalar functions (``AsyncScalarFunction`` and ``async def``) in the Table API and SQL.

A subclass with ``open``, a coroutine function used in the Table API and in SQL, one nested in
a regular function and one in a WHERE clause. One row per query: PyFlink 2.3.0's worker reads
a call's arguments from an input row object it reuses for the next row, so with several rows
in flight its results depend on timing (docs/table.md, "User-defined functions"); the
concurrency and order of many rows are unit-tested (tests/table/test_udf_vectorized.py).
One source, parallelism 1.
"""

import asyncio

from pyflink.table import DataTypes, EnvironmentSettings, TableEnvironment
from pyflink.table.expressions import col
from pyflink.table.udf import AsyncScalarFunction, udf


class Lookup(AsyncScalarFunction):
    def open(self, function_context):
        self.table = {1: "one", 2: "two", 3: "three", 4: "four"}

    async def eval(self, key):
        await asyncio.sleep(0.01 * (5 - key))
        return self.table.get(key, "many")


@udf(result_type=DataTypes.BIGINT())
async def double_later(v):
    await asyncio.sleep(0.001)
    return v * 2


@udf(result_type=DataTypes.STRING())
def bracket(s):
    return "[" + s + "]"


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", "1")
    lookup = udf(Lookup(), result_type=DataTypes.STRING())
    for key in (2, 5):
        one = t_env.from_elements(
            [(key, key * 10)],
            DataTypes.ROW([DataTypes.FIELD("id", DataTypes.BIGINT()),
                           DataTypes.FIELD("v", DataTypes.BIGINT())]))
        one.select(col("id"), lookup(col("id")).alias("name"),
                   double_later(col("v")).alias("d")).execute().print()
        one.select(bracket(lookup(col("id"))).alias("b")).execute().print()
        t_env.create_temporary_view(f"item{key}", one)
    t_env.create_temporary_function("double_later", double_later)
    for key in (2, 5):
        t_env.execute_sql(f"SELECT id, double_later(v) + 1 AS d FROM item{key} "
                          "WHERE double_later(v) > 50").print()

if __name__ == "__main__":
    main()
