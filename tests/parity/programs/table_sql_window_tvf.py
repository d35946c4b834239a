"""Window table functions in SQL over a CSV file with a watermark: the rowtime and PROCTIME()
columns as print_schema and DESCRIBE show them, TUMBLE on its own and aggregated, CUMULATE
and SESSION (PARTITION BY) aggregations. The watermark trails the largest time by one
second, so some rows arrive after their window fired and are dropped, as Flink drops them.
"""

import os
import tempfile

from pyflink.table import EnvironmentSettings, TableEnvironment

ORDERS = """1,alice,1.5,2024-01-01 00:00:01
2,bob,2.5,2024-01-01 00:00:03
3,alice,3.0,2024-01-01 00:00:04
4,carol,4.0,2024-01-01 00:00:12
5,bob,5.5,2024-01-01 00:00:02
6,alice,6.0,2024-01-01 00:00:11
7,bob,7.0,2024-01-01 00:00:25
8,alice,8.0,2024-01-01 00:00:09
"""


def main():
    path = os.path.join(tempfile.mkdtemp(), "orders.csv")
    with open(path, "w") as out:
        out.write(ORDERS)
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", "1")
    t_env.execute_sql(f"""
        CREATE TABLE orders (
            id INT, buyer STRING, price DOUBLE, ts TIMESTAMP(3),
            seen AS PROCTIME(),
            WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
        ) WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'csv')""")
    t_env.from_path("orders").print_schema()
    t_env.execute_sql("DESCRIBE orders").print()

    windowed = t_env.sql_query("""
        SELECT id, buyer, ts, window_start, window_end, window_time
        FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(ts), INTERVAL '10' SECOND))""")
    windowed.print_schema()
    windowed.execute().print()

    totals = t_env.sql_query("""
        SELECT window_start, window_end, window_time, buyer, COUNT(*) AS n, SUM(price) AS total
        FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(ts), INTERVAL '10' SECOND))
        GROUP BY window_start, window_end, window_time, buyer""")
    totals.print_schema()
    totals.execute().print()

    t_env.execute_sql("""
        SELECT window_start, window_end, SUM(price) AS running_total, MAX(id) AS last_id
        FROM TABLE(CUMULATE(DATA => TABLE orders, TIMECOL => DESCRIPTOR(ts),
                            STEP => INTERVAL '5' SECOND, SIZE => INTERVAL '15' SECOND))
        GROUP BY window_start, window_end""").print()

    t_env.execute_sql("""
        SELECT buyer, window_start, window_end, COUNT(*) AS n, MIN(price) AS cheapest
        FROM TABLE(SESSION(TABLE orders PARTITION BY buyer, DESCRIPTOR(ts),
                           INTERVAL '3' SECOND))
        GROUP BY buyer, window_start, window_end""").print()

    t_env.execute_sql("""
        SELECT id, buyer, window_start, window_end
        FROM TABLE(SESSION(TABLE orders PARTITION BY buyer, DESCRIPTOR(ts),
                           INTERVAL '3' SECOND))""").print()


if __name__ == "__main__":
    main()
