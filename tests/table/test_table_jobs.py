"""Table API and SQL jobs end to end on TaskManager threads: the exact changelogs Flink's
operators produce, the Table API and SQL giving one plan, and the errors Flink gives."""

import pytest

from flintlock.common.typeinfo import Types
from flintlock.common.types import RowKind
from flintlock.datastream import StreamExecutionEnvironment
from flintlock.table import (
    DataTypes,
    EnvironmentSettings,
    StreamTableEnvironment,
    TableEnvironment,
)
from flintlock.table.errors import (
    SqlParseError,
    TableException,
    UnsupportedFeatureError,
    ValidationError,
)
from flintlock.table.expressions import call, col, concat, lit
from flintlock.table.result_kind import ResultKind
from flintlock.table.udf import AggregateFunction, udaf, udf, udtf
from flintlock.testing.executor import use_thread_executor

I, UB, UA, D = RowKind.INSERT, RowKind.UPDATE_BEFORE, RowKind.UPDATE_AFTER, RowKind.DELETE  # noqa: E741  (the short names Flink prints)


@pytest.fixture
def t_env(monkeypatch):
    use_thread_executor(monkeypatch)
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.get_config().set("parallelism.default", "1")
    return env


def changelog(table_or_result):
    result = table_or_result.execute() if hasattr(table_or_result, "execute") else (
        table_or_result)
    return [(r.get_row_kind(), tuple(r)) for r in result.collect()]


@pytest.fixture
def orders(t_env):
    table = t_env.from_elements(
        [(1, "apple", 3), (2, "pear", 1), (3, "apple", 2), (4, "fig", 5), (5, "pear", 4)],
        ["id", "fruit", "qty"])
    t_env.create_temporary_view("orders", table)
    return table


def test_group_by_emits_flinks_update_sequence(t_env, orders):
    rows = changelog(t_env.sql_query(
        "SELECT fruit, COUNT(*) AS n, SUM(qty) AS total FROM orders GROUP BY fruit"))
    assert rows == [
        (I, ("apple", 1, 3)), (I, ("pear", 1, 1)),
        (UB, ("apple", 1, 3)), (UA, ("apple", 2, 5)),
        (I, ("fig", 1, 5)),
        (UB, ("pear", 1, 1)), (UA, ("pear", 2, 5)),
    ]


def test_an_aggregate_over_an_aggregate_consumes_retractions(t_env, orders):
    rows = changelog(t_env.sql_query(
        "SELECT n, COUNT(*) AS fruits FROM "
        "(SELECT fruit, COUNT(*) AS n FROM orders GROUP BY fruit) GROUP BY n"))
    final = {}
    for kind, (n, fruits) in rows:
        if kind in (I, UA):
            final[n] = fruits
        elif kind is D:
            del final[n]
    assert final == {2: 2, 1: 1}
    assert (D, (1, 1)) in rows or (UB, (1, 1)) in rows


def test_table_api_and_sql_give_the_same_result(t_env, orders):
    api = orders.filter(col("qty") > 1).group_by(col("fruit")).select(
        col("fruit"), col("qty").sum.alias("total"))
    sql = t_env.sql_query("SELECT fruit, SUM(qty) AS total FROM orders WHERE qty > 1 "
                          "GROUP BY fruit")
    assert changelog(api) == changelog(sql)
    assert api._plan.names == sql._plan.names == ["fruit", "total"]


def test_unnamed_expressions_are_named_as_flink_names_them(t_env, orders):
    api = orders.group_by(col("fruit")).select(col("fruit"), col("id").count,
                                               col("qty").max)
    assert api._plan.names == ["fruit", "EXPR$0", "EXPR$1"]
    sql = t_env.sql_query("SELECT fruit, COUNT(id), MAX(qty) FROM orders GROUP BY fruit")
    assert sql._plan.names == ["fruit", "EXPR$1", "EXPR$2"]


def test_distinct_and_count_distinct(t_env, orders):
    final = {}
    for kind, (fruit,) in changelog(orders.select(col("fruit")).distinct()):
        assert kind is I
        final[fruit] = True
    assert set(final) == {"apple", "pear", "fig"}
    rows = changelog(t_env.sql_query("SELECT COUNT(DISTINCT fruit) FROM orders"))
    assert rows[-1] == (UA, (3,))


def test_projection_functions_and_a_python_udf(t_env, orders):
    @udf(result_type=DataTypes.STRING())
    def shout(text):
        return text.upper() + "!"

    t_env.create_temporary_function("shout", shout)
    rows = changelog(t_env.sql_query(
        "SELECT id, shout(fruit) AS s, CASE WHEN qty > 2 THEN 'many' ELSE 'few' END AS q, "
        "CAST(qty AS STRING) || 'x' AS t FROM orders WHERE id <= 2"))
    assert rows == [(I, (1, "APPLE!", "many", "3x")), (I, (2, "PEAR!", "few", "1x"))]
    api = changelog(orders.select(call(shout, col("fruit")), concat(col("fruit"), "-", lit("z")))
                    .limit(1))
    assert api == [(I, ("APPLE!", "apple-z"))]


def test_join_lateral_with_a_table_function(t_env, orders):
    @udtf(result_types=[DataTypes.STRING(), DataTypes.INT()])
    def letters(word):
        for index, letter in enumerate(word[:2]):
            yield letter, index

    t_env.create_temporary_function("letters", letters)
    rows = changelog(t_env.sql_query(
        "SELECT id, l, i FROM orders, LATERAL TABLE(letters(fruit)) AS T(l, i) WHERE id = 2"))
    assert rows == [(I, (2, "p", 0)), (I, (2, "e", 1))]


def test_regular_joins(t_env, orders):
    prices = t_env.from_elements([("apple", 2.5), ("fig", 4.0)], ["name", "price"])
    t_env.create_temporary_view("prices", prices)
    inner = changelog(t_env.sql_query(
        "SELECT o.id, p.price * o.qty AS cost FROM orders o JOIN prices p ON o.fruit = p.name"))
    assert sorted(r for _, r in inner) == [(1, 7.5), (3, 5.0), (4, 20.0)]
    assert {k for k, _ in inner} == {I}
    left = changelog(t_env.sql_query(
        "SELECT o.id, p.price FROM orders o LEFT JOIN prices p ON o.fruit = p.name "
        "WHERE o.fruit = 'pear'"))
    assert left == [(I, (2, None)), (I, (5, None))]


def test_top_n(t_env, orders):
    rows = changelog(t_env.sql_query(
        "SELECT id, qty FROM (SELECT *, ROW_NUMBER() OVER (ORDER BY qty DESC) AS rn "
        "FROM orders) WHERE rn <= 2"))
    final = []
    for kind, row in rows:
        if kind in (I, UA):
            final.append(row)
        else:
            final.remove(row)
    assert sorted(final) == [(4, 5), (5, 4)]


def test_a_user_aggregate_function(t_env, orders):
    class Weighted(AggregateFunction):
        def create_accumulator(self):
            return [0, 0]

        def accumulate(self, acc, qty, id_):
            acc[0] += qty * id_
            acc[1] += 1

        def get_value(self, acc):
            return acc[0] // acc[1]

    weighted = udaf(Weighted(), result_type=DataTypes.BIGINT())
    rows = changelog(orders.group_by(col("fruit")).select(
        col("fruit"), weighted(col("qty"), col("id")).alias("w")))
    # a Python aggregate function runs a bundle at a time, as in PyFlink: the bounded input
    # is one bundle, so each key emits once (test_changelog_bundled_agg.py)
    assert rows == [(I, ("apple", (3 + 6) // 2)), (I, ("pear", (2 + 20) // 2)),
                    (I, ("fig", 20))]


def test_row_based_map_gets_the_row_with_names(t_env, orders):
    @udf(result_type=DataTypes.ROW([DataTypes.FIELD("id", DataTypes.BIGINT()),
                                    DataTypes.FIELD("label", DataTypes.STRING())]))
    def label(row):
        return (row.id, f"{row.fruit}:{row.qty}")

    table = orders.map(label)
    assert table._plan.names == ["id", "label"]
    assert changelog(table.limit(1)) == [(I, (1, "apple:3"))]


def test_statement_results_of_ddl_and_commands(t_env, orders):
    assert t_env.execute_sql("CREATE TEMPORARY VIEW big AS SELECT * FROM orders WHERE qty > 2"
                             ).get_result_kind() == ResultKind.SUCCESS
    assert t_env.list_tables() == ["big", "orders"]
    shown = [tuple(r) for r in t_env.execute_sql("SHOW TABLES").collect()]
    assert shown == [("big",), ("orders",)]
    assert [r for _, r in changelog(t_env.sql_query("SELECT id FROM big"))] == [
        (1,), (4,), (5,)]
    t_env.execute_sql("DROP TEMPORARY VIEW big")
    assert t_env.list_tables() == ["orders"]


def test_errors_name_what_is_wrong(t_env, orders):
    with pytest.raises(ValidationError, match="Column 'qtty' not found in any table; did you "
                                              "mean 'qty'"):
        t_env.sql_query("SELECT qtty FROM orders")
    with pytest.raises(ValidationError, match="Object 'order' not found; did you mean"):
        t_env.sql_query("SELECT * FROM order")
    with pytest.raises(ValidationError, match="is not being grouped"):
        t_env.sql_query("SELECT fruit, qty, COUNT(*) FROM orders GROUP BY fruit")
    with pytest.raises(ValidationError, match="Cannot apply '\\+' to arguments of type"):
        t_env.sql_query("SELECT fruit + 1 FROM orders")
    with pytest.raises(ValidationError, match="No match found for function signature "
                                              "UPPPER"):
        t_env.sql_query("SELECT UPPPER(fruit) FROM orders")
    with pytest.raises(SqlParseError) as parse_error:
        t_env.sql_query("SELECT fruit FORM orders")
    assert (parse_error.value.line, parse_error.value.column) == (1, 19)
    with pytest.raises(UnsupportedFeatureError, match="INTERSECT ALL"):
        t_env.sql_query("SELECT id FROM orders INTERSECT ALL SELECT id FROM orders")


def test_an_update_stream_into_an_append_only_stream_is_refused(monkeypatch):
    use_thread_executor(monkeypatch)
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    t_env = StreamTableEnvironment.create(env)
    words = env.from_collection(["a", "b", "a"], Types.STRING())
    counts = t_env.from_data_stream(words).group_by(col("f0")).select(col("f0"),
                                                                      col("f0").count)
    with pytest.raises(TableException, match="doesn't support consuming update changes which "
                                             "is produced by node GroupAggregate"):
        t_env.to_data_stream(counts)
    changes = t_env.to_changelog_stream(counts)
    seen = [(r.get_row_kind(), tuple(r)) for r in changes.execute_and_collect()]
    assert seen == [(I, ("a", 1)), (I, ("b", 1)), (UB, ("a", 1)), (UA, ("a", 2))]


def test_a_datastream_becomes_a_table_and_back(monkeypatch):
    use_thread_executor(monkeypatch)
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    t_env = StreamTableEnvironment.create(env)
    stream = env.from_collection([(1, "x"), (2, "y")], Types.ROW_NAMED(
        ["id", "name"], [Types.INT(), Types.STRING()]))
    table = t_env.from_data_stream(stream)
    assert table._plan.names == ["id", "name"]
    t_env.create_temporary_view("things", table)
    result = t_env.to_data_stream(t_env.sql_query("SELECT id * 10 AS id, name FROM things"))
    rows = list(result.execute_and_collect())
    assert [r.as_dict() for r in rows] == [{"id": 10, "name": "x"}, {"id": 20, "name": "y"}]


def test_in_and_exists_subqueries_are_semi_and_anti_joins(t_env, orders):
    liked = t_env.from_elements([("apple",), ("fig",), ("apple",)], ["name"])
    t_env.create_temporary_view("liked", liked)

    def final(query):
        table = []
        for kind, row in changelog(t_env.sql_query(query)):
            if kind in (I, UA):
                table.append(row)
            else:
                table.remove(row)
        return sorted(table)

    assert final("SELECT id FROM orders WHERE fruit IN (SELECT name FROM liked)") == [
        (1,), (3,), (4,)]
    assert final("SELECT id FROM orders WHERE fruit NOT IN (SELECT name FROM liked)") == [
        (2,), (5,)]
    assert final("SELECT id FROM orders o WHERE EXISTS (SELECT * FROM liked l WHERE "
                 "l.name = o.fruit) AND qty > 2") == [(1,), (4,)]
    assert final("SELECT id FROM orders o WHERE NOT EXISTS (SELECT * FROM liked l WHERE "
                 "l.name = o.fruit)") == [(2,), (5,)]
    assert final("SELECT id FROM orders WHERE UPPER(fruit) IN (SELECT UPPER(name) FROM liked)"
                 ) == [(1,), (3,), (4,)]


def test_intersect_and_except_treat_null_as_equal(t_env):
    a = t_env.from_elements([(1, "x"), (2, None), (2, None), (3, "z")], ["n", "s"])
    b = t_env.from_elements([(2, None), (3, "q"), (4, "w")], ["n", "s"])
    t_env.create_temporary_view("a", a)
    t_env.create_temporary_view("b", b)

    def final(table):
        rows = []
        for kind, row in changelog(table):
            if kind in (I, UA):
                rows.append(row)
            else:
                rows.remove(row)
        return sorted(rows, key=repr)

    assert final(t_env.sql_query("SELECT * FROM a INTERSECT SELECT * FROM b")) == [(2, None)]
    assert final(t_env.sql_query("SELECT * FROM a EXCEPT SELECT * FROM b")) == [
        (1, "x"), (3, "z")]
    assert final(a.intersect(b)) == [(2, None)]
    assert final(a.minus(b)) == [(1, "x"), (3, "z")]


def test_pandas_round_trip(t_env):
    import pandas as pd

    frame = pd.DataFrame({"a": [1, 2, 3], "b": ["x", "y", "z"]})
    table = t_env.from_pandas(frame)
    assert table._plan.names == ["a", "b"]
    out = table.filter(col("a") > 1).to_pandas()
    assert out.to_dict("list") == {"a": [2, 3], "b": ["y", "z"]}


def test_batch_mode_gives_final_rows_to_results_and_append_only_sinks(monkeypatch, tmp_path):
    use_thread_executor(monkeypatch)
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t_env.get_config().set("parallelism.default", "2")
    t_env.create_temporary_view("orders", t_env.from_elements(
        [(1, "apple", 3), (2, "pear", 1), (3, "apple", 2)], ["id", "fruit", "qty"]))
    query = "SELECT fruit, SUM(qty) AS total FROM orders GROUP BY fruit"
    rows = changelog(t_env.sql_query(query))
    assert sorted(rows) == [(I, ("apple", 5)), (I, ("pear", 1))]
    out = tmp_path / "out"
    t_env.execute_sql(f"CREATE TABLE totals (fruit STRING, total BIGINT) WITH ("
                      f"'connector' = 'filesystem', 'path' = '{out}', 'format' = 'csv')")
    t_env.execute_sql(f"INSERT INTO totals {query}").wait()
    from flintlock.testing.files import committed_lines

    assert sorted(committed_lines(out)) == ["apple,5", "pear,1"]


def test_batch_order_by_prints_sorted_final_rows(monkeypatch, capsys):
    use_thread_executor(monkeypatch)
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t_env.get_config().set("parallelism.default", "2")
    t_env.create_temporary_view("orders", t_env.from_elements(
        [(1, "fig", 3), (2, "pear", 1), (3, "apple", 2), (4, "pear", 9)],
        ["id", "fruit", "qty"]))
    rows = [tuple(r) for r in t_env.sql_query(
        "SELECT fruit, SUM(qty) AS total FROM orders GROUP BY fruit ORDER BY total DESC"
        ).execute().collect()]
    assert rows == [("pear", 10), ("fig", 3), ("apple", 2)]
    limited = [tuple(r) for r in t_env.sql_query(
        "SELECT id FROM orders ORDER BY id DESC LIMIT 2 OFFSET 1").execute().collect()]
    assert limited == [(3,), (2,)]


def test_the_table_default_parallelism_sets_the_jobs_parallelism():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", "1")
    assert t_env._job_environment().get_parallelism() == 1
    t_env.get_config().set("table.exec.resource.default-parallelism", "3")
    assert t_env._job_environment().get_parallelism() == 3


def test_python_dependencies_reach_the_jobs_of_a_table_environment(tmp_path):
    module = tmp_path / "helpers_for_sql.py"
    module.write_text("X = 1\n")
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.add_python_file(str(module))
    job_env = t_env._job_environment()
    assert job_env.get_configuration().get_string("python.files") == str(module)
