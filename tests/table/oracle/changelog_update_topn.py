"""Oracle: Flink 2.3's UpdateFastStrategy Top-N (UpdatableTopNFunction) over a GROUP BY COUNT,
with and without the row number, parallelism 1. Run on real PyFlink only:
``/tmp/pyflink-venv/bin/python tests/table/oracle/changelog_update_topn.py >
tests/table/fixtures/changelog_update_topn.txt``."""

from pyflink.common import Row, Types
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.table import StreamTableEnvironment

env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(1)
t_env = StreamTableEnvironment.create(env)
events = [("p", "a"), ("p", "b"), ("p", "b"), ("p", "c"), ("p", "c"), ("p", "c"), ("p", "a"),
          ("p", "a"), ("q", "x"), ("p", "d"), ("p", "b"), ("p", "b")]
ds = env.from_collection([Row(*e) for e in events],
                         Types.ROW_NAMED(["p", "k"], [Types.STRING(), Types.STRING()]))
t_env.create_temporary_view("t", t_env.from_data_stream(ds))
agg = "(SELECT p, k, COUNT(*) AS c FROM t GROUP BY p, k)"
for name, sql in [
        ("update topn rn", f"SELECT * FROM (SELECT p, k, c, ROW_NUMBER() OVER (PARTITION BY p "
                           f"ORDER BY c DESC) AS rn FROM {agg}) WHERE rn <= 2"),
        ("update topn no rn", f"SELECT p, k, c FROM (SELECT p, k, c, ROW_NUMBER() OVER "
                              f"(PARTITION BY p ORDER BY c DESC) AS rn FROM {agg}) WHERE rn <= 2")]:
    print(f"=== CASE {name}", flush=True)
    print(t_env.explain_sql(sql).split("== Optimized Execution Plan ==")[-1].strip(), flush=True)
    print("--- rows", flush=True)
    with t_env.execute_sql(sql).collect() as results:
        for row in results:
            print(f"{row.get_row_kind()}{list(row)}", flush=True)
print("=== END", flush=True)
