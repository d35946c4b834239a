"""Oracle: the changelogs Flink 2.3's group aggregation and Top-N emit for a given input
changelog (parallelism 1, no mini-batch). Run on real PyFlink only:
``/tmp/pyflink-venv/bin/python tests/table/oracle/changelog_ops.py``
``> tests/table/fixtures/changelog_ops.txt``
(the dedup cases are uninformative: every row gets the same PROCTIME() millisecond)."""

from pyflink.common import Row, Types
from pyflink.common.types import RowKind
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.table import Schema, StreamTableEnvironment

env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(1)
t_env = StreamTableEnvironment.create(env)
K = {"+I": RowKind.INSERT, "-U": RowKind.UPDATE_BEFORE, "+U": RowKind.UPDATE_AFTER,
     "-D": RowKind.DELETE}


def table(name, events, proctime=False):
    rows = []
    for kind, *values in events:
        row = Row(*values)
        row.set_row_kind(K[kind])
        rows.append(row)
    ds = env.from_collection(rows, Types.ROW_NAMED(["k", "v"], [Types.STRING(), Types.INT()]))
    if proctime:
        schema = Schema.new_builder().column("k", "STRING").column("v", "INT") \
            .column_by_expression("pt", "PROCTIME()").build()
        t = t_env.from_changelog_stream(ds, schema)
    else:
        t = t_env.from_changelog_stream(ds)
    t_env.create_temporary_view(name, t)


def case(name, sql):
    print(f"=== CASE {name}", flush=True)
    with t_env.execute_sql(sql).collect() as results:
        for row in results:
            print(f"{row.get_row_kind()}{list(row)}", flush=True)


table("g", [("+I", "a", 1), ("+I", "a", 2), ("-D", "a", 1), ("+I", "b", 5), ("+I", "a", 2),
            ("-U", "a", 2), ("+U", "a", 3), ("-D", "a", 2), ("-D", "a", 3), ("+I", "a", None)])
case("group", "SELECT k, COUNT(*), SUM(v), MAX(v), COUNT(DISTINCT v), AVG(v), "
              "FIRST_VALUE(v), LAST_VALUE(v) FROM g GROUP BY k")
case("global", "SELECT COUNT(*), SUM(v) FROM g")
table("ins", [("+I", "p", 10), ("+I", "p", 5), ("+I", "p", 20), ("+I", "p", 7), ("+I", "p", 1),
              ("+I", "p", 7), ("+I", "q", 3), ("+I", "p", 30)])
case("append topn rn", "SELECT * FROM (SELECT k, v, ROW_NUMBER() OVER (PARTITION BY k "
     "ORDER BY v DESC) AS rn FROM ins) WHERE rn <= 3")
case("append topn no rn", "SELECT k, v FROM (SELECT k, v, ROW_NUMBER() OVER (PARTITION BY k "
     "ORDER BY v DESC) AS rn FROM ins) WHERE rn <= 2")
case("append topn offset", "SELECT * FROM (SELECT k, v, ROW_NUMBER() OVER (PARTITION BY k "
     "ORDER BY v DESC) AS rn FROM ins) WHERE rn >= 2 AND rn <= 3")
table("upd", [("+I", "p", 10), ("+I", "p", 5), ("+I", "p", 3), ("-D", "p", 10),
              ("-U", "p", 5), ("+U", "p", 6), ("+I", "p", 8), ("-D", "p", 3), ("-D", "p", 8)])
case("retract topn rn", "SELECT * FROM (SELECT k, v, ROW_NUMBER() OVER (PARTITION BY k "
     "ORDER BY v DESC) AS rn FROM upd) WHERE rn <= 2")
case("retract topn no rn", "SELECT k, v FROM (SELECT k, v, ROW_NUMBER() OVER (PARTITION BY k "
     "ORDER BY v DESC) AS rn FROM upd) WHERE rn <= 2")
table("d", [("+I", "a", 1), ("+I", "b", 2), ("+I", "a", 3), ("+I", "a", 3)], proctime=True)
case("dedup last", "SELECT k, v FROM (SELECT k, v, ROW_NUMBER() OVER (PARTITION BY k "
     "ORDER BY pt DESC) AS rn FROM d) WHERE rn = 1")
case("dedup first", "SELECT k, v FROM (SELECT k, v, ROW_NUMBER() OVER (PARTITION BY k "
     "ORDER BY pt ASC) AS rn FROM d) WHERE rn = 1")
print("=== END", flush=True)
