"""Oracle: what a primary-key sink receives from Flink 2.3's SinkUpsertMaterializer
(``table.exec.sink.upsert-materialize`` = FORCE, print connector), parallelism 1. Run on real
PyFlink only: ``/tmp/pyflink-venv/bin/python tests/table/oracle/changelog_upsert_materialize.py
> tests/table/fixtures/changelog_upsert_materialize.txt``."""

from pyflink.common import Row, Types
from pyflink.common.types import RowKind
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.table import StreamTableEnvironment

env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(1)
t_env = StreamTableEnvironment.create(env)
t_env.get_config().set("table.exec.sink.upsert-materialize", "FORCE")
K = {"+I": RowKind.INSERT, "-U": RowKind.UPDATE_BEFORE, "+U": RowKind.UPDATE_AFTER,
     "-D": RowKind.DELETE}
EVENTS = [("+I", 1, "a"), ("+I", 1, "b"), ("-D", 1, "a"), ("+I", 1, "c"), ("-D", 1, "c"),
          ("-D", 1, "x"), ("-D", 1, "b"), ("+I", 1, "d")]
rows = []
for kind, *values in EVENTS:
    row = Row(*values)
    row.set_row_kind(K[kind])
    rows.append(row)
ds = env.from_collection(rows, Types.ROW_NAMED(["id", "v"], [Types.INT(), Types.STRING()]))
t_env.create_temporary_view("src", t_env.from_changelog_stream(ds))
t_env.execute_sql("CREATE TABLE snk (id INT, v STRING, PRIMARY KEY (id) NOT ENFORCED) "
                  "WITH ('connector' = 'print')")
print(t_env.explain_sql("INSERT INTO snk SELECT id, v FROM src"), flush=True)
t_env.execute_sql("INSERT INTO snk SELECT id, v FROM src").wait()
print("=== END", flush=True)
