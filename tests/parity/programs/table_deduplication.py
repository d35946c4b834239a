"""Deduplication with ROW_NUMBER over processing time, as Flink's documentation writes it.

Keep the first row per key (``ORDER BY proctime ASC``, ``row_num = 1``: an append-only
result) and the last row per key (``ORDER BY proctime DESC``: each new row for a key replaces
the previous one with ``-U``/``+U``), over a table with a ``PROCTIME()`` computed column
declared in DDL (``datagen`` sequences, so the input is known); and ``SELECT DISTINCT`` over
the same rows. One source, parallelism 1: the changelog's order is the input's, whatever the
processing times are.
"""

from pyflink.table import EnvironmentSettings, TableEnvironment


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", "1")
    t_env.execute_sql("""
        CREATE TABLE events (
            id BIGINT,
            device AS CAST(MOD(id, 3) AS INT),
            reading AS id * 10,
            proc AS PROCTIME()
        ) WITH (
            'connector' = 'datagen',
            'number-of-rows' = '7',
            'fields.id.kind' = 'sequence',
            'fields.id.start' = '1',
            'fields.id.end' = '7'
        )""")

    t_env.execute_sql("""
        SELECT id, device, reading FROM (
            SELECT *, ROW_NUMBER() OVER (PARTITION BY device ORDER BY proc ASC) AS row_num
            FROM events)
        WHERE row_num = 1""").print()

    t_env.execute_sql("""
        SELECT id, device, reading FROM (
            SELECT *, ROW_NUMBER() OVER (PARTITION BY device ORDER BY proc DESC) AS row_num
            FROM events)
        WHERE row_num = 1""").print()

    t_env.execute_sql("SELECT DISTINCT device FROM events").print()


if __name__ == "__main__":
    main()
