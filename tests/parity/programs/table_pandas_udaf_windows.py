"""A pandas (vectorized) aggregate function in streaming event-time windows: the Table API's
tumbling group window over a DataStream of sensor
readings whose schema declares the rowtime column and a watermark one second behind it. The
function gets each window's readings of a room as a ``pandas.Series``. (PyFlink 2.3.0 refuses
one in SQL's TUMBLE window table function aggregation; flintlock runs it: docs/table.md.)
Parallelism 1.
"""

from pyflink.common import Types
from pyflink.common.time import Instant
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.table import DataTypes, Schema, StreamTableEnvironment
from pyflink.table.expressions import col, lit
from pyflink.table.udf import udaf
from pyflink.table.window import Tumble

READINGS = [
    (Instant.of_epoch_milli(500), "kitchen", 21.5),
    (Instant.of_epoch_milli(2500), "hall", 18.0),
    (Instant.of_epoch_milli(1500), "kitchen", 22.0),
    (Instant.of_epoch_milli(4200), "kitchen", 23.5),
    (Instant.of_epoch_milli(6100), "hall", 18.5),
    (Instant.of_epoch_milli(9000), "hall", 17.0),
    (Instant.of_epoch_milli(12000), "kitchen", 24.0),
]


def spread(celsius):
    return float(celsius.max() - celsius.min())


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    t_env = StreamTableEnvironment.create(stream_execution_environment=env)
    stream = env.from_collection(READINGS, type_info=Types.ROW(
        [Types.INSTANT(), Types.STRING(), Types.DOUBLE()]))
    readings = t_env.from_data_stream(
        stream,
        Schema.new_builder()
        .column_by_expression("read_at", "CAST(f0 AS TIMESTAMP(3))")
        .column("f1", DataTypes.STRING())
        .column("f2", DataTypes.DOUBLE())
        .watermark("read_at", "read_at - INTERVAL '1' SECOND")
        .build()).alias("read_at", "room", "celsius")
    spread_udaf = udaf(spread, result_type=DataTypes.DOUBLE(), func_type="pandas")
    readings.window(Tumble.over(lit(5).seconds).on(col("read_at")).alias("w")) \
        .group_by(col("w"), col("room")) \
        .select(col("room"), col("w").start.alias("ws"), spread_udaf(col("celsius")).alias("s")) \
        .execute().print()


if __name__ == "__main__":
    main()
