"""Aggregate functions whose accumulators hold a ``ListView`` or a ``MapView``.

A list-concatenating aggregate (a ``ListView`` in a ROW accumulator) and a distinct counter
with retraction (a ``MapView`` of value -> count) in a streaming GROUP BY over an updating
input, through the Table API and SQL; the MapView's dict-style access (``[]``, ``in``,
``del``) and iteration. Each query prints its final rows: how many updates come before them
depends on where PyFlink's bundles end, which its bundle timer decides. One source,
parallelism 1.
"""

from pyflink.common import Row
from pyflink.table import DataTypes, EnvironmentSettings, TableEnvironment
from pyflink.table.data_view import ListView, MapView
from pyflink.table.expressions import col
from pyflink.table.udf import AggregateFunction, udaf


class ConcatWith(AggregateFunction):
    def create_accumulator(self):
        return Row(ListView(), "")

    def accumulate(self, accumulator, value, separator):
        accumulator[0].add(value)
        accumulator[1] = separator

    def get_value(self, accumulator):
        return accumulator[1].join(sorted(accumulator[0]))

    def get_accumulator_type(self):
        return DataTypes.ROW([DataTypes.FIELD("f0", DataTypes.LIST_VIEW(DataTypes.STRING())),
                              DataTypes.FIELD("f1", DataTypes.STRING())])

    def get_result_type(self):
        return DataTypes.STRING()


class DistinctCount(AggregateFunction):
    def create_accumulator(self):
        return Row(MapView(), 0)

    def accumulate(self, accumulator, value):
        seen = accumulator[0]
        if value in seen:
            seen[value] = seen[value] + 1
        else:
            seen.put(value, 1)
            accumulator[1] += 1

    def retract(self, accumulator, value):
        seen = accumulator[0]
        if seen.contains(value):
            left = seen.get(value) - 1
            if left == 0:
                del seen[value]
                accumulator[1] -= 1
            else:
                seen[value] = left

    def get_value(self, accumulator):
        names = ",".join(sorted(k for k in accumulator[0]))
        return f"{accumulator[1]}:{names}"

    def get_accumulator_type(self):
        return DataTypes.ROW([
            DataTypes.FIELD("f0", DataTypes.MAP_VIEW(DataTypes.STRING(), DataTypes.BIGINT())),
            DataTypes.FIELD("f1", DataTypes.BIGINT())])

    def get_result_type(self):
        return DataTypes.STRING()


def final_rows(table_result):
    """The rows the changelog leaves, sorted (+I/+U add a row, -U/-D remove one)."""
    rows = []
    with table_result.collect() as results:
        for row in results:
            values = tuple(row)
            if row.get_row_kind().name in ("INSERT", "UPDATE_AFTER"):
                rows.append(values)
            else:
                rows.remove(values)
    for values in sorted(rows):
        print(values)


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", "1")
    concat = udaf(ConcatWith())
    distinct = udaf(DistinctCount())
    orders = t_env.from_elements(
        [("ann", "tea"), ("bob", "cake"), ("ann", "cake"), ("ann", "tea"), ("bob", "pie")],
        DataTypes.ROW([DataTypes.FIELD("who", DataTypes.STRING()),
                       DataTypes.FIELD("what", DataTypes.STRING())]))
    all_of = orders.group_by(col("who")) \
        .select(col("who"), concat(col("what"), ";").alias("all")) \
        .execute()
    final_rows(all_of)
    t_env.create_temporary_function("distinct_count", distinct)
    t_env.create_temporary_view("orders", orders)
    # the inner GROUP BY updates its rows: the outer aggregate retracts through the MapView
    final_rows(t_env.execute_sql("""
        SELECT n, distinct_count(who) AS people
        FROM (SELECT who, COUNT(*) AS n FROM orders GROUP BY who)
        GROUP BY n"""))


if __name__ == "__main__":
    main()
