"""Values of every common SQL type, printed by ``execute().print()`` and by the ``print``
connector.

Literals and CASTs make one row of TINYINT, SMALLINT, INT, BIGINT, FLOAT, DOUBLE,
DECIMAL(10, 2), DECIMAL(38, 18), BOOLEAN, CHAR, VARCHAR, STRING, BYTES, DATE, TIME,
TIMESTAMP(3), TIMESTAMP(6), ARRAY, MAP and ROW values, plus a row of NULLs of the same types;
the same rows go through a ``print`` table (Java's value formatting) and come back to Python
through ``collect()`` (the Python values). Parallelism 1.
"""

from pyflink.table import EnvironmentSettings, TableEnvironment

COLUMNS = """
    CAST(1 AS TINYINT) AS tiny,
    CAST(-300 AS SMALLINT) AS small,
    2147483647 AS i,
    CAST(9007199254740993 AS BIGINT) AS big,
    CAST(1.5 AS FLOAT) AS f,
    CAST(0.1 AS DOUBLE) AS d,
    CAST(12.345 AS DECIMAL(10, 2)) AS dec2,
    CAST(1 AS DECIMAL(38, 18)) AS dec18,
    TRUE AS b,
    CAST('ab' AS CHAR(4)) AS c,
    CAST('varchar' AS VARCHAR(10)) AS vc,
    'string' AS s,
    CAST('hi' AS BYTES) AS bin,
    DATE '2024-02-29' AS dt,
    TIME '13:45:01' AS tm,
    TIMESTAMP '2024-02-29 13:45:01.123' AS ts3,
    CAST(TIMESTAMP '2024-02-29 13:45:01.123456' AS TIMESTAMP(6)) AS ts6,
    ARRAY[1, 2, 3] AS arr,
    MAP['k', 1] AS m,
    ROW(1, 'x') AS r
"""

NULLS = """
    CAST(NULL AS TINYINT), CAST(NULL AS SMALLINT), CAST(NULL AS INT), CAST(NULL AS BIGINT),
    CAST(NULL AS FLOAT), CAST(NULL AS DOUBLE), CAST(NULL AS DECIMAL(10, 2)),
    CAST(NULL AS DECIMAL(38, 18)), CAST(NULL AS BOOLEAN), CAST(NULL AS CHAR(4)),
    CAST(NULL AS VARCHAR(10)), CAST(NULL AS STRING), CAST(NULL AS BYTES), CAST(NULL AS DATE),
    CAST(NULL AS TIME), CAST(NULL AS TIMESTAMP(3)), CAST(NULL AS TIMESTAMP(6)),
    CAST(NULL AS ARRAY<INT>), CAST(NULL AS MAP<STRING, INT>),
    CAST(NULL AS ROW<a INT, b STRING>)
"""


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", "1")
    values = t_env.sql_query(f"SELECT {COLUMNS}")
    values.print_schema()
    values.execute().print()
    t_env.sql_query(f"SELECT {NULLS}").execute().print()

    t_env.execute_sql("""
        CREATE TABLE shown (
            tiny TINYINT, small SMALLINT, i INT, big BIGINT, f FLOAT, d DOUBLE,
            dec2 DECIMAL(10, 2), dec18 DECIMAL(38, 18), b BOOLEAN, c CHAR(4),
            vc VARCHAR(10), s STRING, bin BYTES, dt DATE, tm TIME(0), ts3 TIMESTAMP(3),
            ts6 TIMESTAMP(6), arr ARRAY<INT>, m MAP<STRING, INT>, r ROW<a INT, b STRING>
        ) WITH ('connector' = 'print')""")
    values.execute_insert("shown").wait()
    t_env.sql_query(f"SELECT {NULLS}").execute_insert("shown").wait()

    for row in values.execute().collect():
        for value in row:
            print(type(value).__name__, repr(value))


if __name__ == "__main__":
    main()
