"""CASE, IF and ``if_then_else`` choosing between string literals of different lengths.

Flink types such an expression with the longest literal's length and prints each value as it
was written (no padding): in a query printed with ``execute().print()``, in ``print_schema``,
in an INSERT into a ``print`` table's STRING column and as a GROUP BY key; also a CASE whose
branches have equal lengths and one with an ELSE NULL. One source, parallelism 1.
"""

from pyflink.table import EnvironmentSettings, TableEnvironment
from pyflink.table.expressions import col, if_then_else

READINGS = [(1, 3), (2, 48), (3, 120), (4, -5), (5, 60)]


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", "1")
    readings = t_env.from_elements(READINGS, ["id", "level"])
    t_env.create_temporary_view("readings", readings)

    query = t_env.sql_query("""
        SELECT id,
               CASE WHEN level > 100 THEN 'high' WHEN level > 10 THEN 'medium'
                    ELSE 'low' END AS band,
               IF(level >= 0, 'ok', 'negative') AS sign,
               CASE WHEN level > 50 THEN 'yes' ELSE 'no!' END AS same_length,
               CASE WHEN level > 50 THEN 'big' END AS or_null
        FROM readings""")
    query.print_schema()
    query.execute().print()

    readings.select(col("id"), if_then_else(col("level") > 50, "many", "few").alias("amount")) \
        .execute().print()

    t_env.execute_sql(
        "CREATE TABLE bands (band STRING, readings BIGINT) WITH ('connector' = 'print')")
    t_env.execute_sql("""
        INSERT INTO bands
        SELECT CASE WHEN level > 100 THEN 'high' WHEN level > 10 THEN 'medium' ELSE 'low' END,
               COUNT(*)
        FROM readings
        GROUP BY CASE WHEN level > 100 THEN 'high' WHEN level > 10 THEN 'medium'
                      ELSE 'low' END""").wait()


if __name__ == "__main__":
    main()
