"""DataStream ↔ Table conversions with a ``StreamTableEnvironment``.

``from_data_stream`` of a ``ROW_NAMED`` stream (columns named after the fields) and of a
``TUPLE`` stream (``f0``, ``f1``), with a ``Schema`` adding a ``column_by_expression``;
``create_temporary_view`` of a DataStream; ``to_data_stream`` of an append-only query into a
``map``; ``to_changelog_stream`` of an updating GROUP BY (each record a ``Row`` with its
kind), printed by the DataStream print sink and collected with ``execute_and_collect``.
Parallelism 1; one print sink per job, so each job's lines come in the input's order.
"""

from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.table import DataTypes, Schema, StreamTableEnvironment
from pyflink.table.expressions import col

SCORES = [("alice", 12), ("bob", 10), ("alice", 100), ("carol", 7), ("bob", 5)]


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    t_env = StreamTableEnvironment.create(env)

    named = env.from_collection(
        SCORES, type_info=Types.ROW_NAMED(["name", "score"], [Types.STRING(), Types.INT()]))
    table = t_env.from_data_stream(named)
    table.print_schema()
    t_env.create_temporary_view("scores", table)

    pairs = env.from_collection([(1, "x"), (2, "y")],
                                type_info=Types.TUPLE([Types.INT(), Types.STRING()]))
    t_env.from_data_stream(pairs).print_schema()

    with_expression = t_env.from_data_stream(
        named,
        Schema.new_builder()
        .column("name", DataTypes.STRING())
        .column("score", DataTypes.INT())
        .column_by_expression("doubled", "score * 2")
        .build())
    with_expression.print_schema()
    with_expression.where(col("doubled") > 20).execute().print()

    t_env.create_temporary_view("raw_scores", named)
    totals = t_env.sql_query("SELECT name, SUM(score) AS total FROM raw_scores GROUP BY name")
    t_env.to_changelog_stream(totals).print()
    env.execute("changelog")

    appended = t_env.sql_query("SELECT name, score + 1 AS next_score FROM scores WHERE score > 6")
    t_env.to_data_stream(appended) \
        .map(lambda row: f"{row[0]} -> {row[1]}", output_type=Types.STRING()) \
        .print()
    env.execute("appended")

    with t_env.to_changelog_stream(totals).execute_and_collect() as rows:
        for row in rows:
            print(row.get_row_kind(), row[0], row[1])


if __name__ == "__main__":
    main()
