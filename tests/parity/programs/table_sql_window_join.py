"""Window joins in SQL: two CSV tables with watermarks, each windowed by TUMBLE, joined on a
key and on window_start and window_end — INNER, FULL (unmatched rows of both sides padded
with NULLs) and LEFT with a further condition. Each window's joined rows come out when both
inputs' watermarks pass its end; several keys end a window together and Flink emits them in
its timer heap's order, so the lines are compared as a set.
"""

import os
import tempfile

from pyflink.table import EnvironmentSettings, TableEnvironment

ORDERS = """1,alice,1.5,2024-01-01 00:00:01
2,bob,2.5,2024-01-01 00:00:03
3,alice,3.0,2024-01-01 00:00:03
4,carol,4.0,2024-01-01 00:00:08
5,bob,5.5,2024-01-01 00:00:09
6,alice,6.0,2024-01-01 00:00:11
7,bob,7.0,2024-01-01 00:00:12
8,carol,0.5,2024-01-01 00:00:12
9,bob,1.0,2024-01-01 00:00:25
"""
SHIPMENTS = """10,alice,1,2024-01-01 00:00:02
11,bob,2,2024-01-01 00:00:04
12,alice,3,2024-01-01 00:00:07
13,dave,1,2024-01-01 00:00:11
14,bob,5,2024-01-01 00:00:13
15,alice,2,2024-01-01 00:00:27
"""


def _file(directory, name, text):
    path = os.path.join(directory, name)
    with open(path, "w") as out:
        out.write(text)
    return path


def main():
    directory = tempfile.mkdtemp()
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", "1")
    t_env.execute_sql(f"""
        CREATE TABLE orders (id INT, customer STRING, price DOUBLE, ordered TIMESTAMP(3),
                             WATERMARK FOR ordered AS ordered - INTERVAL '1' SECOND)
        WITH ('connector' = 'filesystem', 'format' = 'csv',
              'path' = '{_file(directory, "orders.csv", ORDERS)}')""")
    t_env.execute_sql(f"""
        CREATE TABLE shipments (sid INT, receiver STRING, parcels INT, shipped TIMESTAMP(3),
                                WATERMARK FOR shipped AS shipped - INTERVAL '1' SECOND)
        WITH ('connector' = 'filesystem', 'format' = 'csv',
              'path' = '{_file(directory, "shipments.csv", SHIPMENTS)}')""")
    windowed_orders = """(SELECT * FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(ordered),
                                                   INTERVAL '10' SECOND))) o"""
    windowed_shipments = """(SELECT * FROM TABLE(TUMBLE(TABLE shipments, DESCRIPTOR(shipped),
                                                      INTERVAL '10' SECOND))) s"""
    same_window = ("o.customer = s.receiver AND o.window_start = s.window_start "
                   "AND o.window_end = s.window_end")

    inner = t_env.sql_query(f"""
        SELECT o.id, o.customer, s.sid, s.parcels, o.window_start, o.window_end
        FROM {windowed_orders} JOIN {windowed_shipments} ON {same_window}""")
    inner.print_schema()
    inner.execute().print()

    t_env.execute_sql(f"""
        SELECT o.id, o.customer, s.sid, s.receiver,
               COALESCE(o.window_start, s.window_start) AS window_from
        FROM {windowed_orders} FULL JOIN {windowed_shipments} ON {same_window}""").print()

    t_env.execute_sql(f"""
        SELECT o.id, o.customer, s.sid, o.window_end
        FROM {windowed_orders} LEFT JOIN {windowed_shipments}
        ON {same_window} AND s.parcels > 1""").print()


if __name__ == "__main__":
    main()
