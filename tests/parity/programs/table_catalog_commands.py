"""DDL and catalog commands and what their results print: DESCRIBE, SHOW, views, DROP.

``CREATE TABLE`` with a primary key, a computed column, NOT NULL and comments, then
``DESCRIBE`` (Flink's name/type/null/key/extras/watermark table); ``CREATE VIEW``,
``CREATE TEMPORARY VIEW``, ``SHOW TABLES``, ``SHOW VIEWS``, ``SHOW CATALOGS``,
``SHOW DATABASES``, ``SHOW CURRENT CATALOG`` / ``DATABASE``, ``get_config().set`` / ``get``
(PyFlink's ``execute_sql`` refuses ``SET``, a SQL client command), ``DROP TABLE`` /
``DROP VIEW``, ``list_tables``, ``list_temporary_views``; ``print_schema`` of a table, a view
and a query; each DDL's result printed (``OK``). Nothing runs a job.
"""

from pyflink.table import DataTypes, EnvironmentSettings, TableEnvironment
from pyflink.table.expressions import col


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())

    t_env.execute_sql("""
        CREATE TABLE accounts (
            account_id BIGINT NOT NULL COMMENT 'the key',
            owner VARCHAR(20),
            balance DECIMAL(12, 2),
            opened DATE,
            flags ARRAY<STRING>,
            balance_cents AS CAST(balance * 100 AS BIGINT),
            PRIMARY KEY (account_id) NOT ENFORCED
        ) COMMENT 'bank accounts' WITH (
            'connector' = 'datagen',
            'number-of-rows' = '1'
        )""").print()
    t_env.execute_sql("DESCRIBE accounts").print()
    t_env.from_path("accounts").print_schema()

    t_env.execute_sql(
        "CREATE TABLE payments (id INT, account_id BIGINT, amount DOUBLE) "
        "WITH ('connector' = 'datagen', 'number-of-rows' = '3')").print()
    t_env.execute_sql(
        "CREATE VIEW rich AS SELECT owner, balance FROM accounts WHERE balance > 1000").print()
    t_env.execute_sql(
        "CREATE TEMPORARY VIEW big_payments AS SELECT * FROM payments WHERE amount > 100"
    ).print()
    t_env.execute_sql("DESC rich").print()
    t_env.from_path("big_payments").print_schema()

    t_env.execute_sql("SHOW TABLES").print()
    t_env.execute_sql("SHOW VIEWS").print()
    t_env.execute_sql("SHOW CATALOGS").print()
    t_env.execute_sql("SHOW DATABASES").print()
    t_env.execute_sql("SHOW CURRENT CATALOG").print()
    t_env.execute_sql("SHOW CURRENT DATABASE").print()
    print(sorted(t_env.list_tables()), sorted(t_env.list_temporary_views()))

    t_env.get_config().set("table.local-time-zone", "Europe/Berlin")
    print(t_env.get_config().get("table.local-time-zone", "unset"))

    query = t_env.from_path("payments") \
        .group_by(col("account_id")) \
        .select(col("account_id"), col("amount").sum.alias("total"),
                col("id").count.alias("n"), col("amount").cast(DataTypes.INT()).max)
    query.print_schema()

    t_env.execute_sql("DROP VIEW rich").print()
    t_env.execute_sql("DROP TEMPORARY VIEW big_payments").print()
    t_env.execute_sql("DROP TABLE IF EXISTS nothing_here").print()
    t_env.execute_sql("SHOW TABLES").print()


if __name__ == "__main__":
    main()
