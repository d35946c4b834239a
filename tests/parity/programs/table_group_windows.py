"""The Table API's group windows over a DataStream with event time, in the manner of PyFlink's
bundled windowing examples: sensor readings with Instant timestamps become a table whose
schema declares the rowtime column and a watermark two seconds behind it; tumbling, sliding
(a size that is not a multiple of the slide) and session windows aggregate them, written to a
print table and printed as query results.
"""

from pyflink.common import Types
from pyflink.common.time import Instant
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.table import DataTypes, Schema, StreamTableEnvironment, TableDescriptor
from pyflink.table.expressions import col, lit
from pyflink.table.window import Session, Slide, Tumble

READINGS = [
    (Instant.of_epoch_milli(500), "kitchen", 21.5),
    (Instant.of_epoch_milli(2500), "hall", 18.0),
    (Instant.of_epoch_milli(1500), "kitchen", 22.0),
    (Instant.of_epoch_milli(4200), "kitchen", 23.5),
    (Instant.of_epoch_milli(3100), "hall", 18.5),
    (Instant.of_epoch_milli(9000), "hall", 17.0),
    (Instant.of_epoch_milli(8000), "kitchen", 24.0),
    (Instant.of_epoch_milli(15000), "kitchen", 22.5),
]


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
        .watermark("read_at", "read_at - INTERVAL '2' SECOND")
        .build()).alias("read_at", "room", "celsius")
    readings.print_schema()

    t_env.create_temporary_table("room_stats", TableDescriptor.for_connector("print").schema(
        Schema.new_builder()
        .column("room", DataTypes.STRING())
        .column("readings", DataTypes.BIGINT())
        .column("warmest", DataTypes.DOUBLE())
        .column("window_from", DataTypes.TIMESTAMP(3))
        .column("window_to", DataTypes.TIMESTAMP(3))
        .build()).build())
    tumbling = readings.window(Tumble.over(lit(5).seconds).on(col("read_at")).alias("w")) \
        .group_by(col("w"), col("room")) \
        .select(col("room"), col("celsius").count, col("celsius").max, col("w").start,
                col("w").end)
    tumbling.print_schema()
    tumbling.execute_insert("room_stats").wait()

    sliding = readings.window(
        Slide.over(lit(6).seconds).every(lit(4).seconds).on(col("read_at")).alias("w")) \
        .group_by(col("w")) \
        .select(col("w").start.alias("from_ts"), col("w").end.alias("to_ts"),
                col("celsius").avg.alias("mean"), col("room").count)
    sliding.execute().print()

    sessions = readings.window(Session.with_gap(lit(3).seconds).on(col("read_at")).alias("s")) \
        .group_by(col("room"), col("s")) \
        .select(col("room"), col("s").start, col("s").end, col("s").rowtime,
                col("celsius").min.alias("coolest"))
    sessions.print_schema()
    sessions.execute().print()


if __name__ == "__main__":
    main()
