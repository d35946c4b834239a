"""Over windows in event time, in the manner of PyFlink's bundled ``windowing/over_window.py``:
the Table API's ``over_window`` with a ROWS frame (``row_interval``) and an unbounded RANGE
frame, and SQL ``OVER`` with a RANGE interval frame and a named ``WINDOW``. Rows behind the
last emitted time of their partition are dropped; each row comes out once the watermark
passes it. Prices are multiples of 0.25, so sums are exact whatever the order of additions.
"""

from pyflink.common import Types
from pyflink.common.time import Instant
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.table import DataTypes, Schema, StreamTableEnvironment, TableDescriptor
from pyflink.table.expressions import CURRENT_ROW, UNBOUNDED_RANGE, col, row_interval
from pyflink.table.window import Over

ORDERS = [
    (Instant.of_epoch_milli(1000), "apples", 4.5),
    (Instant.of_epoch_milli(2500), "pears", 2.25),
    (Instant.of_epoch_milli(2000), "apples", 3.0),
    (Instant.of_epoch_milli(4000), "apples", 1.75),
    (Instant.of_epoch_milli(3500), "pears", 6.0),
    (Instant.of_epoch_milli(6200), "pears", 0.5),
    (Instant.of_epoch_milli(5800), "apples", 2.0),
    (Instant.of_epoch_milli(9000), "apples", 7.25),
]


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    t_env = StreamTableEnvironment.create(stream_execution_environment=env)
    stream = env.from_collection(ORDERS, type_info=Types.ROW(
        [Types.INSTANT(), Types.STRING(), Types.DOUBLE()]))
    orders = t_env.from_data_stream(
        stream,
        Schema.new_builder()
        .column_by_expression("ordered", "CAST(f0 AS TIMESTAMP(3))")
        .column("f1", DataTypes.STRING())
        .column("f2", DataTypes.DOUBLE())
        .watermark("ordered", "ordered - INTERVAL '1' SECOND")
        .build()).alias("ordered", "fruit", "amount")

    t_env.create_temporary_table("running", TableDescriptor.for_connector("print").schema(
        Schema.new_builder()
        .column("fruit", DataTypes.STRING())
        .column("amount", DataTypes.DOUBLE())
        .column("largest_of_three", DataTypes.DOUBLE())
        .column("orders", DataTypes.BIGINT())
        .build()).build())
    orders.over_window(
        Over.partition_by(col("fruit")).order_by(col("ordered"))
        .preceding(row_interval(2)).following(CURRENT_ROW).alias("w")) \
        .select(col("fruit"), col("amount"), col("amount").max.over(col("w")),
                col("amount").count.over(col("w"))) \
        .execute_insert("running").wait()

    totals = orders.over_window(
        Over.partition_by(col("fruit")).order_by(col("ordered")).preceding(UNBOUNDED_RANGE)
        .alias("w")).select(col("fruit"), col("ordered"), col("amount").sum.over(col("w")))
    totals.print_schema()
    totals.execute().print()

    t_env.create_temporary_view("orders", orders)
    recent = t_env.sql_query("""
        SELECT fruit, ordered, amount,
               SUM(amount) OVER (PARTITION BY fruit ORDER BY ordered
                                 RANGE BETWEEN INTERVAL '2' SECOND PRECEDING AND CURRENT ROW)
                   AS last_two_seconds,
               COUNT(*) OVER (PARTITION BY fruit ORDER BY ordered
                              RANGE BETWEEN INTERVAL '2' SECOND PRECEDING AND CURRENT ROW)
        FROM orders""")
    recent.print_schema()
    recent.execute().print()

    t_env.execute_sql("""
        SELECT fruit, amount, MIN(amount) OVER w AS low, AVG(amount) OVER w AS mean
        FROM orders
        WINDOW w AS (ORDER BY ordered ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)""").print()


if __name__ == "__main__":
    main()
