"""Oracle: Flink 2.3's regular joins (INNER, LEFT, RIGHT, FULL) over two changelogs cut from
one stream, parallelism 1. Run on real PyFlink only:
``/tmp/pyflink-venv/bin/python tests/table/oracle/changelog_join.py >
tests/table/fixtures/changelog_join.txt``. The two join inputs arrive in an order of the
engine's choosing (and rows of one key in its hash map's order), so the test replays the
arrival order each recorded output shows."""

import time

from pyflink.common import Configuration, Row, Types
from pyflink.common.types import RowKind
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.table import StreamTableEnvironment

config = Configuration()
config.set_string("execution.buffer-timeout", "0 ms")
env = StreamExecutionEnvironment.get_execution_environment(config)
env.set_parallelism(1)
env.set_buffer_timeout(0)
t_env = StreamTableEnvironment.create(env)
K = {"+I": RowKind.INSERT, "-U": RowKind.UPDATE_BEFORE, "+U": RowKind.UPDATE_AFTER,
     "-D": RowKind.DELETE}
EVENTS = [("+I", "L", 1, "l1"), ("+I", "R", 1, "r1"), ("+I", "R", 1, "r2"), ("+I", "L", 1, "l2"),
          ("-D", "R", 1, "r1"), ("-U", "R", 1, "r2"), ("+U", "R", 1, "r3"), ("-D", "L", 1, "l1"),
          ("+I", "R", 2, "r4"), ("+I", "L", 2, "l3"), ("-D", "R", 1, "r3"), ("-D", "R", 2, "r4")]
TYPE = Types.ROW_NAMED(["side", "k", "v"], [Types.STRING(), Types.INT(), Types.STRING()])


def slow(row):
    time.sleep(0.4)
    return row


rows = []
for kind, *values in EVENTS:
    row = Row(*values)
    row.set_row_kind(K[kind])
    rows.append(row)
ds = env.from_collection(rows, TYPE).map(slow, output_type=TYPE)
t_env.create_temporary_view("t", t_env.from_changelog_stream(ds))
t_env.create_temporary_view("l", t_env.sql_query("SELECT k AS lk, v AS lv FROM t WHERE side = 'L'"))
t_env.create_temporary_view("r", t_env.sql_query("SELECT k AS rk, v AS rv FROM t WHERE side = 'R'"))
for join in ["INNER", "LEFT", "RIGHT", "FULL"]:
    print(f"=== CASE {join}", flush=True)
    with t_env.execute_sql(f"SELECT * FROM l {join} JOIN r ON lk = rk").collect() as results:
        for row in results:
            print(f"{row.get_row_kind()}{list(row)}", flush=True)
print("=== END", flush=True)
