"""``TableResult.collect()`` with row kinds, and the other ways a program reads a result.

A streaming GROUP BY collected row by row: each ``Row``'s kind (``+I``, ``-U``, ``+U``), its
fields by position (a collected Row has no field names), ``repr`` and ``len``; a ``with``
block around the iterator; an append-only query collected into a list; ``get_result_kind``,
``get_table_schema`` names and types of a result; ``execute_sql`` of DDL (``OK``,
``SUCCESS``). Parallelism 1.
"""

from pyflink.table import EnvironmentSettings, TableEnvironment

CLICKS = [("mary", "/home"), ("bob", "/cart"), ("mary", "/prod?id=1"),
          ("liz", "/home"), ("bob", "/prod?id=3"), ("mary", "/home")]


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", "1")
    t_env.create_temporary_view("clicks", t_env.from_elements(CLICKS, ["user_name", "url"]))

    result = t_env.execute_sql(
        "SELECT user_name, COUNT(url) AS cnt FROM clicks GROUP BY user_name")
    print("result kind:", result.get_result_kind())
    schema = result.get_table_schema()
    print("columns:", schema.get_field_names())
    print("types:", [str(t) for t in schema.get_field_data_types()])
    with result.collect() as rows:
        for row in rows:
            print(row.get_row_kind(), row[0], row[1], repr(row), len(row))

    appended = t_env.sql_query(
        "SELECT url, CHAR_LENGTH(url) AS len FROM clicks WHERE url <> '/home'")
    rows = list(appended.execute().collect())
    print(len(rows), "rows")
    for row in rows:
        print(row.get_row_kind(), row, tuple(row), row[-1] * 2)

    ddl = t_env.execute_sql(
        "CREATE TEMPORARY VIEW heavy AS SELECT user_name FROM clicks GROUP BY user_name "
        "HAVING COUNT(*) > 1")
    print("ddl kind:", ddl.get_result_kind())
    ddl.print()
    print(sorted(str(row[0]) for row in t_env.from_path("heavy").execute().collect()
                 if str(row.get_row_kind()) == "+I"))


if __name__ == "__main__":
    main()
