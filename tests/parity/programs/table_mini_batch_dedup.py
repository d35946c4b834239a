"""Deduplication with mini-batch (``table.exec.mini-batch.*``): ROW_NUMBER over processing
time keeping the first or the last row per key, as Flink's documentation writes it, over a
``datagen`` sequence with a ``PROCTIME()`` column. A mini-batch keeps one row per key (the
first, or the last of the batch) and emits the keys in the order Flink's buffer (a Java
HashMap of the keys as BinaryRowData) walks them: once per key for one batch of the whole
input, per batch of 4 rows with the smaller size. ``allow-latency`` is an hour, so only the
size and the end of the input end a mini-batch. One source, parallelism 1."""

from pyflink.table import EnvironmentSettings, TableEnvironment

KEEP = """
    SELECT id, device, reading FROM (
        SELECT *, ROW_NUMBER() OVER (PARTITION BY device ORDER BY proc {order}) AS row_num
        FROM events)
    WHERE row_num = 1"""


def main():
    for size in ("1000", "4"):
        print(f"mini-batch size {size}")
        t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
        config = t_env.get_config()
        config.set("parallelism.default", "1")
        config.set("table.exec.mini-batch.enabled", "true")
        config.set("table.exec.mini-batch.allow-latency", "1 h")
        config.set("table.exec.mini-batch.size", size)
        t_env.execute_sql("""
            CREATE TABLE events (
                id BIGINT,
                device AS CONCAT('dev-', CAST(MOD(id * 7, 11) AS STRING)),
                reading AS MOD(id, 4) * 10,
                proc AS PROCTIME()
            ) WITH (
                'connector' = 'datagen',
                'number-of-rows' = '30',
                'fields.id.kind' = 'sequence',
                'fields.id.start' = '1',
                'fields.id.end' = '30'
            )""")
        t_env.execute_sql(KEEP.format(order="ASC")).print()
        t_env.execute_sql(KEEP.format(order="DESC")).print()


if __name__ == "__main__":
    main()
