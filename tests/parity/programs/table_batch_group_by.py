"""A GROUP BY in batch mode (``EnvironmentSettings.in_batch_mode()``): final results only.

Batch mode prints no ``op`` column and no updates: one row per group. GROUP BY with COUNT,
SUM, AVG, MIN, MAX, COUNT(DISTINCT) and HAVING, ORDER BY with LIMIT, a GROUP BY over an
expression, a global aggregate, an empty result (``Empty set``), the Table API's
``group_by``/``select``/``order_by``, and ``collect()`` of a batch result. Every printed query
has an ORDER BY, so the output order is defined; parallelism 1.
"""

from pyflink.table import EnvironmentSettings, TableEnvironment
from pyflink.table.expressions import col

SCORES = [
    ("ann", "math", 81), ("ben", "math", 67), ("ann", "art", 95), ("cid", "math", 72),
    ("ben", "art", 58), ("dee", "bio", 88), ("cid", "art", 77), ("ann", "bio", 90),
    ("dee", "math", 99), ("ben", "bio", 61),
]


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t_env.get_config().set("parallelism.default", "1")
    scores = t_env.from_elements(SCORES, ["student", "subject", "score"])
    t_env.create_temporary_view("scores", scores)

    t_env.execute_sql("""
        SELECT subject, COUNT(*) AS n, SUM(score) AS total, AVG(score) AS mean,
               MIN(score) AS low, MAX(score) AS high, COUNT(DISTINCT student) AS students
        FROM scores GROUP BY subject ORDER BY subject""").print()

    t_env.execute_sql("""
        SELECT student, SUM(score) AS total FROM scores
        GROUP BY student HAVING SUM(score) > 200 ORDER BY total DESC""").print()

    t_env.execute_sql("""
        SELECT score / 10 * 10 AS band, COUNT(*) AS n FROM scores
        GROUP BY score / 10 * 10 ORDER BY band DESC LIMIT 3""").print()

    t_env.execute_sql(
        "SELECT COUNT(*) AS n, MAX(score) AS best, AVG(CAST(score AS DOUBLE)) AS mean "
        "FROM scores").print()

    t_env.execute_sql(
        "SELECT subject, COUNT(*) AS n FROM scores WHERE score > 100 "
        "GROUP BY subject ORDER BY subject").print()

    scores.group_by(col("student")) \
        .select(col("student"), col("score").max.alias("best"), col("subject").count.alias("n")) \
        .order_by(col("student").desc) \
        .execute().print()

    rows = t_env.sql_query(
        "SELECT subject, MAX(score) AS best FROM scores GROUP BY subject").execute().collect()
    for row in sorted(rows, key=lambda r: r[0]):
        print(row.get_row_kind(), row)


if __name__ == "__main__":
    main()
