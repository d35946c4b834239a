"""Interval joins in SQL over two CSV files with watermarks: an order joined with the
shipments within a time range of it — BETWEEN, strict and non-strict comparisons, bounds on
either side, an extra non-equi condition, and the LEFT, RIGHT and FULL OUTER joins that emit
an order or shipment without a match, padded with NULLs, once the watermark passes its bound.
The join keeps both rowtime attributes (print_schema). Rows are in order within each file's
watermark delay, so the joined rows are the same however the two inputs interleave; the
program prints them sorted (their arrival order depends on that interleaving).
"""

import os
import tempfile

from pyflink.table import EnvironmentSettings, TableEnvironment

ORDERS = """1,apple,2024-01-01 00:00:01
2,pear,2024-01-01 00:00:03
3,apple,2024-01-01 00:00:04
4,plum,2024-01-01 00:00:10
5,pear,2024-01-01 00:00:09
6,apple,2024-01-01 00:00:20
7,fig,2024-01-01 00:00:21
"""

SHIPMENTS = """1,depot-a,2024-01-01 00:00:02
3,depot-a,2024-01-01 00:00:04
2,depot-b,2024-01-01 00:00:07
1,depot-c,2024-01-01 00:00:06
6,depot-c,2024-01-01 00:00:22
6,depot-a,2024-01-01 00:00:25
8,depot-b,2024-01-01 00:00:26
4,depot-b,2024-01-01 00:00:30
"""


def write(directory, name, text):
    path = os.path.join(directory, name)
    with open(path, "w") as out:
        out.write(text)
    return path


def show(title, table):
    print(title)
    rows = [(str(row.get_row_kind()), tuple(row)) for row in table.execute().collect()]
    for kind, values in sorted(rows, key=repr):
        print(" ", kind, values)


def main():
    directory = tempfile.mkdtemp()
    orders = write(directory, "orders.csv", ORDERS)
    shipments = write(directory, "shipments.csv", SHIPMENTS)
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", "1")
    t_env.execute_sql(f"""
        CREATE TABLE orders (
            id INT, item STRING, o_ts TIMESTAMP(3),
            WATERMARK FOR o_ts AS o_ts - INTERVAL '2' SECOND
        ) WITH ('connector' = 'filesystem', 'path' = '{orders}', 'format' = 'csv')""")
    t_env.execute_sql(f"""
        CREATE TABLE shipments (
            order_id INT, depot STRING, s_ts TIMESTAMP(3),
            WATERMARK FOR s_ts AS s_ts - INTERVAL '2' SECOND
        ) WITH ('connector' = 'filesystem', 'path' = '{shipments}', 'format' = 'csv')""")

    between = t_env.sql_query("""
        SELECT o.id, o.item, s.depot, o.o_ts, s.s_ts
        FROM orders o JOIN shipments s ON o.id = s.order_id
        AND s.s_ts BETWEEN o.o_ts AND o.o_ts + INTERVAL '5' SECOND""")
    between.print_schema()
    show("BETWEEN:", between)

    show("strict bounds, written the other way round:", t_env.sql_query("""
        SELECT o.id, s.depot, s.s_ts
        FROM orders o, shipments s
        WHERE o.id = s.order_id AND o.o_ts > s.s_ts - INTERVAL '5' SECOND
        AND o.o_ts < s.s_ts + INTERVAL '1' SECOND"""))

    show("non-strict bounds and another condition:", t_env.sql_query("""
        SELECT o.id, o.item, s.depot
        FROM orders o JOIN shipments s ON o.id = s.order_id
        AND s.s_ts >= o.o_ts - INTERVAL '1' SECOND AND s.s_ts <= o.o_ts + INTERVAL '4' SECOND
        AND s.depot <> 'depot-c'"""))

    show("LEFT JOIN:", t_env.sql_query("""
        SELECT o.id, o.item, s.depot, s.s_ts
        FROM orders o LEFT JOIN shipments s ON o.id = s.order_id
        AND s.s_ts BETWEEN o.o_ts AND o.o_ts + INTERVAL '5' SECOND"""))

    show("RIGHT JOIN:", t_env.sql_query("""
        SELECT o.id, o.item, s.order_id, s.depot
        FROM orders o RIGHT JOIN shipments s ON o.id = s.order_id
        AND s.s_ts BETWEEN o.o_ts AND o.o_ts + INTERVAL '5' SECOND"""))

    full = t_env.sql_query("""
        SELECT o.id, s.order_id, s.depot, o.o_ts, s.s_ts
        FROM orders o FULL OUTER JOIN shipments s ON o.id = s.order_id
        AND o.o_ts BETWEEN s.s_ts - INTERVAL '3' SECOND AND s.s_ts""")
    full.print_schema()
    show("FULL OUTER JOIN:", full)

    t_env.create_temporary_view("shipped", t_env.sql_query("""
        SELECT o.id, s.s_ts FROM orders o JOIN shipments s ON o.id = s.order_id
        AND s.s_ts BETWEEN o.o_ts AND o.o_ts + INTERVAL '5' SECOND"""))
    windowed = t_env.sql_query("""
        SELECT window_start, window_end, COUNT(*) AS shipped
        FROM TABLE(TUMBLE(TABLE shipped, DESCRIPTOR(s_ts), INTERVAL '10' SECOND))
        GROUP BY window_start, window_end""")
    show("a window over the join's rowtime:", windowed)


if __name__ == "__main__":
    main()
