"""Oracle: Flink 2.3's event-time deduplication (keep last row, keep first row), parallelism 1,
bounded input (the final watermark fires the keep-first timers). Run on real PyFlink only:
``/tmp/pyflink-venv/bin/python tests/table/oracle/changelog_dedup_rowtime.py >
tests/table/fixtures/changelog_dedup_rowtime.txt``."""

from pyflink.common import Row, Types
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.table import Schema, StreamTableEnvironment

env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(1)
t_env = StreamTableEnvironment.create(env)
EVENTS = [("a", 1, 1000), ("b", 2, 1000), ("a", 3, 3000), ("a", 4, 2000), ("a", 5, 3000),
          ("b", 6, 500), ("a", 7, 9000), ("b", 8, 9000)]
ds = env.from_collection([Row(*e) for e in EVENTS],
                         Types.ROW_NAMED(["k", "v", "ts"], [Types.STRING(), Types.INT(),
                                                            Types.LONG()]))
schema = (Schema.new_builder().column("k", "STRING").column("v", "INT").column("ts", "BIGINT")
          .column_by_expression("rt", "TO_TIMESTAMP_LTZ(ts, 3)")
          .watermark("rt", "rt - INTERVAL '10' SECOND").build())
t_env.create_temporary_view("t", t_env.from_data_stream(ds, schema))
for name, order in [("rowtime last", "DESC"), ("rowtime first", "ASC")]:
    sql = (f"SELECT k, v, ts FROM (SELECT k, v, ts, ROW_NUMBER() OVER (PARTITION BY k ORDER BY "
           f"rt {order}) AS rn FROM t) WHERE rn = 1")
    print(f"=== CASE {name}", flush=True)
    print(t_env.explain_sql(sql).split("== Optimized Execution Plan ==")[-1].strip(), flush=True)
    print("--- rows", flush=True)
    with t_env.execute_sql(sql).collect() as results:
        for row in results:
            print(f"{row.get_row_kind()}{list(row)}", flush=True)
print("=== END", flush=True)
