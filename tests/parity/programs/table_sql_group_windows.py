"""The legacy SQL group windows: GROUP BY TUMBLE / HOP / SESSION of a rowtime column with
TUMBLE_START, TUMBLE_END, TUMBLE_ROWTIME (and the HOP_ and SESSION_ forms), over a view of a
DataStream whose schema declares the watermark.
"""

from pyflink.common import Types
from pyflink.common.time import Instant
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.table import Schema, StreamTableEnvironment

TRADES = [
    (Instant.of_epoch_milli(60_000), "ACME", 10),
    (Instant.of_epoch_milli(75_000), "INIT", 5),
    (Instant.of_epoch_milli(119_000), "ACME", 7),
    (Instant.of_epoch_milli(121_000), "ACME", 3),
    (Instant.of_epoch_milli(100_000), "INIT", 8),
    (Instant.of_epoch_milli(250_000), "INIT", 1),
]


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    t_env = StreamTableEnvironment.create(stream_execution_environment=env)
    stream = env.from_collection(TRADES, type_info=Types.ROW_NAMED(
        ["traded", "symbol", "shares"], [Types.INSTANT(), Types.STRING(), Types.INT()]))
    t_env.create_temporary_view("trades", t_env.from_data_stream(
        stream,
        Schema.new_builder()
        .column_by_expression("ts", "CAST(traded AS TIMESTAMP(3))")
        .watermark("ts", "ts - INTERVAL '30' SECOND")
        .build()))

    per_minute = t_env.sql_query("""
        SELECT symbol, TUMBLE_START(ts, INTERVAL '1' MINUTE),
               TUMBLE_END(ts, INTERVAL '1' MINUTE) AS minute_end,
               TUMBLE_ROWTIME(ts, INTERVAL '1' MINUTE), SUM(shares) AS volume
        FROM trades GROUP BY symbol, TUMBLE(ts, INTERVAL '1' MINUTE)""")
    per_minute.print_schema()
    per_minute.execute().print()

    t_env.execute_sql("""
        SELECT HOP_START(ts, INTERVAL '30' SECOND, INTERVAL '1' MINUTE) AS hop_start,
               COUNT(*) AS trades, MAX(shares) AS biggest
        FROM trades GROUP BY HOP(ts, INTERVAL '30' SECOND, INTERVAL '1' MINUTE)""").print()

    t_env.execute_sql("""
        SELECT symbol, SESSION_START(ts, INTERVAL '40' SECOND) AS opened,
               SESSION_END(ts, INTERVAL '40' SECOND) AS closed, COUNT(*) AS trades
        FROM trades GROUP BY SESSION(ts, INTERVAL '40' SECOND), symbol""").print()


if __name__ == "__main__":
    main()
