"""Vectorized (pandas) Python functions in the Table API and SQL.

A pandas scalar function (``func_type="pandas"``) gets a ``pandas.Series`` per argument for a
batch of rows and returns a Series as long; one that normalises by its batch's mean shows the
batch is all of the (small) input. A pandas aggregate function gets a group's values as a
Series in a batch-mode GROUP BY; a streaming GROUP BY refuses it (PyFlink 2.3.0's planner
does). One source, parallelism 1.
"""

from pyflink.table import DataTypes, EnvironmentSettings, TableEnvironment
from pyflink.table.expressions import col
from pyflink.table.udf import udaf, udf


@udf(result_type=DataTypes.BIGINT(), func_type="pandas")
def add(i, j):
    return i + j


@udf(result_type=DataTypes.DOUBLE(), func_type="pandas")
def share(v):
    return v / v.sum()


@udf(result_type=DataTypes.STRING(), func_type="pandas")
def shout(s):
    return s.str.upper() + "!"


def mean_of(v):
    return v.mean()


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", "1")
    items = t_env.from_elements(
        [(1, "ant", 2), (2, "bee", 6), (3, "cat", 4), (4, "dog", 8)],
        DataTypes.ROW([DataTypes.FIELD("id", DataTypes.BIGINT()),
                       DataTypes.FIELD("name", DataTypes.STRING()),
                       DataTypes.FIELD("qty", DataTypes.BIGINT())]))
    items.select(col("id"), add(col("id"), col("qty")), share(col("qty")),
                 shout(col("name"))).execute().print()
    items.where(col("qty") > 3).select(col("name"), share(col("qty")).alias("s")) \
        .execute().print()
    t_env.create_temporary_function("add", add)
    t_env.create_temporary_view("items", items)
    t_env.execute_sql("SELECT name, add(id, 10) AS a FROM items WHERE add(id, qty) > 5") \
        .print()

    batch_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    batch_env.get_config().set("parallelism.default", "1")
    mean_udaf = udaf(mean_of, result_type=DataTypes.DOUBLE(), func_type="pandas")
    rows = batch_env.from_elements(
        [("a", 1), ("b", 2), ("a", 3), ("b", 5), ("a", 8)],
        DataTypes.ROW([DataTypes.FIELD("k", DataTypes.STRING()),
                       DataTypes.FIELD("v", DataTypes.BIGINT())]))
    rows.group_by(col("k")).select(col("k"), mean_udaf(col("v")).alias("m")) \
        .execute().print()
    batch_env.create_temporary_function("mean_udaf", mean_udaf)
    batch_env.create_temporary_view("rows_t", rows)
    batch_env.execute_sql("SELECT k, mean_udaf(v) AS m FROM rows_t GROUP BY k").print()

    events = t_env.from_elements(
        [("a", 1, "2024-01-01 00:00:01"), ("a", 3, "2024-01-01 00:00:04"),
         ("b", 4, "2024-01-01 00:00:06"), ("a", 6, "2024-01-01 00:00:12")],
        DataTypes.ROW([DataTypes.FIELD("k", DataTypes.STRING()),
                       DataTypes.FIELD("v", DataTypes.BIGINT()),
                       DataTypes.FIELD("ts", DataTypes.STRING())]))
    t_env.create_temporary_view("events_raw", events)
    timed = t_env.sql_query(
        "SELECT k, v, TO_TIMESTAMP(ts) AS rt FROM events_raw")
    try:
        timed.group_by(col("k")).select(col("k"), mean_udaf(col("v"))).execute().print()
    except Exception as e:
        # PyFlink's message starts with the Java class name; the planner's words follow it
        print(type(e).__name__, str(e).splitlines()[0].split("TableException: ")[-1])


if __name__ == "__main__":
    main()
