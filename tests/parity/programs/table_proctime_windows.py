"""Processing-time windows over a ``PROCTIME()`` column: the window table function TUMBLE, the
Table API's ``Tumble`` group window with ``w.proctime`` and the legacy ``GROUP BY TUMBLE(pt,
...)`` with ``TUMBLE_PROCTIME`` — their schemas, and what a bounded input gives: windows of a
day are still open when the input ends, and an open processing-time window never fires, so
the aggregations have no rows; the window table function alone passes every row on with its
day's window.

The window bounds depend on the clock, so the program prints counts and widths, never bounds
(a run that crosses midnight would see a window fire). Parallelism 1.
"""

import datetime

from pyflink.table import EnvironmentSettings, TableEnvironment
from pyflink.table.expressions import col, lit
from pyflink.table.window import Tumble


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", "1")
    t_env.execute_sql("""
        CREATE TABLE clicks (
            user_id INT,
            clicks INT,
            pt AS PROCTIME()
        ) WITH (
            'connector' = 'datagen',
            'number-of-rows' = '20',
            'fields.user_id.min' = '1',
            'fields.user_id.max' = '3',
            'fields.clicks.min' = '1',
            'fields.clicks.max' = '1'
        )""")
    t_env.from_path("clicks").print_schema()

    tvf = t_env.sql_query("""
        SELECT window_start, window_end, window_time, user_id, SUM(clicks) AS total
        FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(pt), INTERVAL '1' DAY))
        GROUP BY window_start, window_end, window_time, user_id""")
    tvf.print_schema()
    print("TUMBLE TVF aggregation rows:", len(list(tvf.execute().collect())))

    group = (t_env.from_path("clicks")
             .window(Tumble.over(lit(1).days).on(col("pt")).alias("w"))
             .group_by(col("w"), col("user_id"))
             .select(col("user_id"), col("w").start, col("w").end, col("w").proctime,
                     col("clicks").sum))
    group.print_schema()
    print("Tumble group window rows:", len(list(group.execute().collect())))

    legacy = t_env.sql_query("""
        SELECT TUMBLE_START(pt, INTERVAL '1' DAY) AS ws,
               TUMBLE_PROCTIME(pt, INTERVAL '1' DAY) AS wt,
               COUNT(*) AS n
        FROM clicks GROUP BY TUMBLE(pt, INTERVAL '1' DAY)""")
    legacy.print_schema()
    print("GROUP BY TUMBLE rows:", len(list(legacy.execute().collect())))

    rows = list(t_env.sql_query("""
        SELECT user_id, clicks, window_start, window_end
        FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(pt), INTERVAL '1' DAY))""")
        .execute().collect())
    print("TUMBLE TVF rows:", len(rows))
    print("every window is one day:",
          all(r[3] - r[2] == datetime.timedelta(days=1) for r in rows))
    print("clicks in windows:", sum(r[1] for r in rows))


if __name__ == "__main__":
    main()
