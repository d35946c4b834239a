"""Table functions in SQL and outer joins beyond LEFT: LATERAL TABLE, LEFT JOIN LATERAL ...
ON TRUE, ``left_outer_join_lateral``, RIGHT and FULL OUTER JOIN.

A Python ``udtf`` with two result columns registered with ``create_temporary_function`` and
used with ``LATERAL TABLE`` (inner: rows without output vanish) and ``LEFT JOIN LATERAL
TABLE(...) ON TRUE`` (kept with NULLs), and through the Table API's ``join_lateral`` /
``left_outer_join_lateral``; these have one input, so their output order is the input's and
is printed with ``execute().print()``. RIGHT and FULL OUTER joins of two inputs print their
final rows sorted (the program applies the collected changelog). Parallelism 1.
"""

from collections import Counter

from pyflink.table import DataTypes, EnvironmentSettings, TableEnvironment
from pyflink.table.expressions import col
from pyflink.table.udf import udtf


@udtf(result_types=[DataTypes.STRING(), DataTypes.INT()])
def tokens(text):
    for position, word in enumerate(text.split()):
        if len(word) > 2:
            yield word, position


def final_rows(t_env, sql):
    counts = Counter()
    for row in t_env.execute_sql(sql).collect():
        counts[tuple(row)] += 1 if str(row.get_row_kind()) in ("+I", "+U") else -1
    return sorted((values for values, n in counts.items() for _ in range(n)), key=repr)


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", "1")
    t_env.create_temporary_function("tokens", tokens)
    lines = t_env.from_elements([(1, "the quick fox"), (2, "a b"), (3, "jumps over it")],
                                ["id", "line"])
    t_env.create_temporary_view("lines", lines)

    t_env.execute_sql(
        "SELECT id, word, pos FROM lines, LATERAL TABLE(tokens(line)) AS t(word, pos)").print()
    t_env.execute_sql(
        "SELECT id, word, pos FROM lines "
        "LEFT JOIN LATERAL TABLE(tokens(line)) AS t(word, pos) ON TRUE").print()
    lines.join_lateral(tokens(col("line")).alias("word", "pos")) \
        .select(col("id"), col("word")).execute().print()
    lines.left_outer_join_lateral(tokens(col("line")).alias("word", "pos")) \
        .select(col("id"), col("pos")).execute().print()

    t_env.create_temporary_view("left_side", t_env.from_elements(
        [(1, "a"), (2, "b"), (3, "c")], ["lk", "lv"]))
    t_env.create_temporary_view("right_side", t_env.from_elements(
        [(2, "x"), (3, "y"), (4, "z"), (3, "w")], ["rk", "rv"]))
    for kind in ("RIGHT", "FULL"):
        print(f"{kind} OUTER JOIN:")
        for row in final_rows(t_env, f"SELECT lk, lv, rk, rv FROM left_side {kind} OUTER JOIN "
                                     "right_side ON lk = rk"):
            print(" ", row)


if __name__ == "__main__":
    main()
