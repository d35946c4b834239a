"""What ``TableResult.get_result_kind()`` returns, and the rest of a result's metadata.

A query's result (``SUCCESS_WITH_CONTENT``), a DDL statement's (``SUCCESS``), a ``DROP``'s and a
``SHOW``'s; printed as returned, compared with ``ResultKind``'s members, and alongside
``get_table_schema().get_field_names()`` and ``get_job_client() is None`` for statements that
run no job. Nothing runs a job but the query, which is collected.
"""

from pyflink.table import EnvironmentSettings, ResultKind, TableEnvironment


def describe(title, result):
    kind = result.get_result_kind()
    print(title, kind, kind == ResultKind.SUCCESS, kind == ResultKind.SUCCESS_WITH_CONTENT,
          result.get_table_schema().get_field_names())


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", "1")
    t_env.create_temporary_view("t", t_env.from_elements([(1, "a"), (2, "b")], ["k", "v"]))

    query = t_env.execute_sql("SELECT k, v FROM t")
    describe("query:", query)
    print(sorted(tuple(row) for row in query.collect()))

    ddl = t_env.execute_sql("CREATE TEMPORARY VIEW u AS SELECT v FROM t")
    describe("ddl:", ddl)
    print("ddl job client:", ddl.get_job_client() is None)

    describe("drop:", t_env.execute_sql("DROP TEMPORARY VIEW u"))
    describe("show:", t_env.execute_sql("SHOW TABLES"))
    print("members:", ResultKind.SUCCESS, ResultKind.SUCCESS_WITH_CONTENT)


if __name__ == "__main__":
    main()
