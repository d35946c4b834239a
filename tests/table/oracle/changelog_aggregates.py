"""Oracle: the results Flink 2.3 gives the built-in aggregate functions over a changelog with
retractions (COUNT(x), SUM(DISTINCT), MIN, LISTAGG with and without a separator, AVG of DOUBLE
and DECIMAL, SUM of DECIMAL, FILTER, COUNT(DISTINCT)), parallelism 1. Run on real PyFlink only:
``/tmp/pyflink-venv/bin/python tests/table/oracle/changelog_aggregates.py >
tests/table/fixtures/changelog_aggregates.txt``."""

from decimal import Decimal

from pyflink.common import Row, Types
from pyflink.common.types import RowKind
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.table import StreamTableEnvironment

env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(1)
t_env = StreamTableEnvironment.create(env)
K = {"+I": RowKind.INSERT, "-U": RowKind.UPDATE_BEFORE, "+U": RowKind.UPDATE_AFTER,
     "-D": RowKind.DELETE}
EVENTS = [("+I", "a", 1, 1.5, "1.10", "x"), ("+I", "a", 2, 2.0, "2.25", "y"),
          ("+I", "a", 2, None, None, "x"), ("-D", "a", 1, 1.5, "1.10", "x"),
          ("+I", "a", None, 4.0, "0.01", None), ("-U", "a", 2, 2.0, "2.25", "y"),
          ("+U", "a", 5, 1.0, "3.00", "z"), ("-D", "a", 2, None, None, "x"),
          ("+I", "b", 3, 0.5, "1.00", "w")]
rows = []
for kind, *values in EVENTS:
    values[3] = None if values[3] is None else Decimal(values[3])
    row = Row(*values)
    row.set_row_kind(K[kind])
    rows.append(row)
TYPE = Types.ROW_NAMED(["k", "v", "d", "m", "s"], [Types.STRING(), Types.INT(), Types.DOUBLE(),
                                                   Types.BIG_DEC(), Types.STRING()])
t_env.create_temporary_view("src", t_env.from_changelog_stream(env.from_collection(rows, TYPE)))
t_env.create_temporary_view("g", t_env.sql_query(
    "SELECT k, v, d, CAST(m AS DECIMAL(10, 2)) AS m, s FROM src"))
QUERIES = {
    "aggs": "SELECT k, COUNT(v), SUM(DISTINCT v), MIN(v), LISTAGG(s), LISTAGG(s, '|'), "
            "AVG(d), AVG(m), SUM(m), COUNT(*) FILTER (WHERE v > 1), COUNT(DISTINCT s), "
            "SUM(v) FILTER (WHERE s <> 'x') FROM g GROUP BY k",
}
for name, sql in QUERIES.items():
    print(f"=== CASE {name}", flush=True)
    print(t_env.sql_query(sql).get_schema(), flush=True)
    print("--- rows", flush=True)
    with t_env.execute_sql(sql).collect() as results:
        for row in results:
            print(f"{row.get_row_kind()}{list(row)}", flush=True)
print("=== END", flush=True)
