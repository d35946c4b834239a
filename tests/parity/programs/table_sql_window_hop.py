"""HOP windows in SQL over rows with a watermark (a ``from_elements``-free VALUES view is not
a time attribute, so the rows come from a CSV file): each row in two windows, a HOP
aggregation per buyer, and the same rows aggregated per minute-aligned TUMBLE with an offset.
Several buyers' windows end together; Flink fires them in its timer heap's order, so the
lines are compared as a set.
"""

import os
import tempfile

from pyflink.table import EnvironmentSettings, TableEnvironment

CLICKS = """alice,/home,2024-03-01 12:00:01
bob,/cart,2024-03-01 12:00:04
alice,/cart,2024-03-01 12:00:07
carol,/home,2024-03-01 12:00:09
bob,/pay,2024-03-01 12:00:13
alice,/pay,2024-03-01 12:00:21
"""


def main():
    path = os.path.join(tempfile.mkdtemp(), "clicks.csv")
    with open(path, "w") as out:
        out.write(CLICKS)
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", "1")
    t_env.execute_sql(f"""
        CREATE TABLE clicks (
            username STRING, url STRING, click_time TIMESTAMP(3),
            WATERMARK FOR click_time AS click_time - INTERVAL '5' SECOND
        ) WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'csv')""")

    t_env.execute_sql("""
        SELECT username, url, window_start, window_end
        FROM TABLE(HOP(TABLE clicks, DESCRIPTOR(click_time), INTERVAL '5' SECOND,
                       INTERVAL '10' SECOND))""").print()

    t_env.execute_sql("""
        SELECT username, window_start, window_end, COUNT(url) AS clicks
        FROM TABLE(HOP(TABLE clicks, DESCRIPTOR(click_time), INTERVAL '5' SECOND,
                       INTERVAL '10' SECOND))
        GROUP BY window_start, window_end, username""").print()

    t_env.execute_sql("""
        SELECT window_start, window_end, COUNT(DISTINCT username) AS users
        FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(click_time), INTERVAL '10' SECOND,
                          INTERVAL '3' SECOND))
        GROUP BY window_start, window_end""").print()


if __name__ == "__main__":
    main()
