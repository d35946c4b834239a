"""Oracle: where Flink 2.3's Top-N puts nulls (default and explicit NULLS FIRST/LAST, ASC and
DESC), append-only input, parallelism 1. Run on real PyFlink only:
``/tmp/pyflink-venv/bin/python tests/table/oracle/changelog_topn_nulls.py >
tests/table/fixtures/changelog_topn_nulls.txt``."""

from pyflink.common import Row, Types
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.table import StreamTableEnvironment

env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(1)
t_env = StreamTableEnvironment.create(env)
EVENTS = [("p", 5, "a"), ("p", None, "b"), ("p", 7, "c"), ("p", None, "d"), ("p", 1, "e")]
ds = env.from_collection([Row(*e) for e in EVENTS],
                         Types.ROW_NAMED(["p", "v", "s"], [Types.STRING(), Types.INT(),
                                                           Types.STRING()]))
t_env.create_temporary_view("t", t_env.from_data_stream(ds))
for name, order in [("asc", "v ASC"), ("desc", "v DESC"), ("asc nulls last", "v ASC NULLS LAST"),
                    ("desc nulls first", "v DESC NULLS FIRST")]:
    sql = (f"SELECT * FROM (SELECT p, v, s, ROW_NUMBER() OVER (PARTITION BY p ORDER BY {order}) "
           f"AS rn FROM t) WHERE rn <= 3")
    print(f"=== CASE {name}", flush=True)
    with t_env.execute_sql(sql).collect() as results:
        for row in results:
            print(f"{row.get_row_kind()}{list(row)}", flush=True)
print("=== END", flush=True)
