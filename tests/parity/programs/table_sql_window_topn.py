"""Window Top-N and window deduplication in SQL: ROW_NUMBER() over the rows of a TUMBLE
window (the two dearest bids of each window), over a window aggregation's results (the best
bidder of each window), and the last / first row of each bidder and window (TUMBLE, HOP).
Each window's rows come out once, when the watermark passes the window's end.
"""

import os
import tempfile

from pyflink.table import EnvironmentSettings, TableEnvironment

BIDS = """1,alice,1.5,2024-01-01 00:00:01
2,bob,2.5,2024-01-01 00:00:03
3,alice,3.0,2024-01-01 00:00:03
4,carol,4.0,2024-01-01 00:00:08
5,bob,5.5,2024-01-01 00:00:09
6,alice,6.0,2024-01-01 00:00:11
7,bob,7.0,2024-01-01 00:00:12
8,carol,0.5,2024-01-01 00:00:12
9,bob,1.0,2024-01-01 00:00:25
"""


def main():
    path = os.path.join(tempfile.mkdtemp(), "bids.csv")
    with open(path, "w") as out:
        out.write(BIDS)
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", "1")
    t_env.execute_sql(f"""
        CREATE TABLE bids (id INT, bidder STRING, price DOUBLE, bid_time TIMESTAMP(3),
                           WATERMARK FOR bid_time AS bid_time - INTERVAL '1' SECOND)
        WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'csv')""")

    top = t_env.sql_query("""
        SELECT * FROM (
            SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end
                                         ORDER BY price DESC) AS rownum
            FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(bid_time), INTERVAL '10' SECOND)))
        WHERE rownum <= 2""")
    top.print_schema()
    top.execute().print()

    t_env.execute_sql("""
        SELECT window_start, window_end, bidder, total, rownum FROM (
            SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end
                                         ORDER BY total DESC) AS rownum
            FROM (SELECT window_start, window_end, bidder, SUM(price) AS total
                  FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(bid_time), INTERVAL '10' SECOND))
                  GROUP BY window_start, window_end, bidder))
        WHERE rownum <= 1""").print()

    t_env.execute_sql("""
        SELECT id, bidder, bid_time, window_start FROM (
            SELECT *, ROW_NUMBER() OVER (PARTITION BY bidder, window_start, window_end
                                         ORDER BY bid_time DESC) AS rownum
            FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(bid_time), INTERVAL '10' SECOND)))
        WHERE rownum <= 1""").print()

    t_env.execute_sql("""
        SELECT id, bidder, bid_time, window_end FROM (
            SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end, bidder
                                         ORDER BY bid_time ASC) AS rownum
            FROM TABLE(HOP(TABLE bids, DESCRIPTOR(bid_time), INTERVAL '5' SECOND,
                           INTERVAL '10' SECOND)))
        WHERE rownum = 1""").print()


if __name__ == "__main__":
    main()
