"""Event-time temporal joins in SQL: orders joined with the currency rate valid at each
order's time, ``FOR SYSTEM_TIME AS OF o.o_ts``, against versioned tables — a CSV table with a
PRIMARY KEY and a watermark (every row a new version of its key), a ``debezium-json``
changelog with updates and a delete, and a view keeping each currency's latest row. Inner and
LEFT joins, an extra condition on the rate; rows come out once the watermark passes the
order's time, both rowtimes kept in the schema (print_schema). Rows are in order within each
file's watermark delay, so the joined rows are the same however the inputs interleave; the
program prints them sorted.
"""

import json
import os
import tempfile

from pyflink.table import EnvironmentSettings, TableEnvironment

ORDERS = """1,EUR,10,2024-01-01 00:00:02
2,GBP,20,2024-01-01 00:00:03
3,EUR,5,2024-01-01 00:00:05
4,USD,7,2024-01-01 00:00:06
5,JPY,100,2024-01-01 00:00:08
6,EUR,1,2024-01-01 00:00:07
7,GBP,3,2024-01-01 00:00:10
8,EUR,2,2024-01-01 00:00:13
9,CHF,1,2024-01-01 00:00:14
"""

RATES = """EUR,1.10,2024-01-01 00:00:00
GBP,1.30,2024-01-01 00:00:01
EUR,1.12,2024-01-01 00:00:05
JPY,0.007,2024-01-01 00:00:06
GBP,1.28,2024-01-01 00:00:09
EUR,1.15,2024-01-01 00:00:12
CHF,0.95,2024-01-01 00:00:20
"""


def rate(currency, value, time):
    return {"currency": currency, "rate": value, "r_ts": f"2024-01-01 00:00:{time:02d}"}


def debezium(op, before=None, after=None):
    return json.dumps({"before": before, "after": after, "op": op})


CHANGES = [
    debezium("c", after=rate("EUR", 1.10, 0)),
    debezium("c", after=rate("GBP", 1.30, 1)),
    debezium("u", before=rate("EUR", 1.10, 0), after=rate("EUR", 1.12, 5)),
    debezium("c", after=rate("JPY", 0.007, 6)),
    debezium("u", before=rate("GBP", 1.30, 1), after=rate("GBP", 1.28, 9)),
    debezium("d", before=rate("JPY", 0.007, 6)),
    debezium("u", before=rate("EUR", 1.12, 5), after=rate("EUR", 1.15, 12)),
    debezium("c", after=rate("CHF", 0.95, 20)),
]


def write(directory, name, text):
    path = os.path.join(directory, name)
    with open(path, "w") as out:
        out.write(text)
    return path


def show(title, table):
    print(title)
    rows = [(str(row.get_row_kind()), tuple(row)) for row in table.execute().collect()]
    for kind, values in sorted(rows, key=repr):
        print(" ", kind, values)


def main():
    directory = tempfile.mkdtemp()
    orders = write(directory, "orders.csv", ORDERS)
    rates = write(directory, "rates.csv", RATES)
    changes = write(directory, "changes.json", "\n".join(CHANGES) + "\n")
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", "1")
    t_env.execute_sql(f"""
        CREATE TABLE orders (
            id INT, currency STRING, amount INT, o_ts TIMESTAMP(3),
            WATERMARK FOR o_ts AS o_ts - INTERVAL '2' SECOND
        ) WITH ('connector' = 'filesystem', 'path' = '{orders}', 'format' = 'csv')""")
    t_env.execute_sql(f"""
        CREATE TABLE rates (
            currency STRING, rate DOUBLE, r_ts TIMESTAMP(3),
            WATERMARK FOR r_ts AS r_ts - INTERVAL '2' SECOND,
            PRIMARY KEY (currency) NOT ENFORCED
        ) WITH ('connector' = 'filesystem', 'path' = '{rates}', 'format' = 'csv')""")
    t_env.execute_sql(f"""
        CREATE TABLE rate_changes (
            currency STRING, rate DOUBLE, r_ts TIMESTAMP(3),
            WATERMARK FOR r_ts AS r_ts - INTERVAL '2' SECOND,
            PRIMARY KEY (currency) NOT ENFORCED
        ) WITH ('connector' = 'filesystem', 'path' = '{changes}',
                'format' = 'debezium-json')""")

    joined = t_env.sql_query("""
        SELECT o.id, o.currency, o.amount, r.rate, o.o_ts, r.r_ts
        FROM orders AS o
        JOIN rates FOR SYSTEM_TIME AS OF o.o_ts AS r ON o.currency = r.currency""")
    joined.print_schema()
    show("versioned CSV table, inner:", joined)

    show("versioned CSV table, LEFT JOIN with a condition on the rate:", t_env.sql_query("""
        SELECT o.id, o.currency, r.rate
        FROM orders AS o
        LEFT JOIN rates FOR SYSTEM_TIME AS OF o.o_ts AS r
        ON o.currency = r.currency AND r.rate > 1"""))

    t_env.execute_sql(f"""
        CREATE TABLE rate_log (
            currency STRING, rate DOUBLE, r_ts TIMESTAMP(3),
            WATERMARK FOR r_ts AS r_ts - INTERVAL '2' SECOND
        ) WITH ('connector' = 'filesystem', 'path' = '{rates}', 'format' = 'csv')""")
    t_env.execute_sql("""
        CREATE TEMPORARY VIEW latest_rates AS
        SELECT currency, rate, r_ts FROM (
            SELECT *, ROW_NUMBER() OVER (PARTITION BY currency ORDER BY r_ts DESC) AS rn
            FROM rate_log) WHERE rn = 1""")
    show("deduplicated view as the versioned table:", t_env.sql_query("""
        SELECT o.id, o.currency, r.rate
        FROM orders AS o
        JOIN latest_rates FOR SYSTEM_TIME AS OF o.o_ts AS r ON o.currency = r.currency"""))

    show("debezium changelog, inner:", t_env.sql_query("""
        SELECT o.id, o.currency, r.rate, r.r_ts
        FROM orders AS o
        JOIN rate_changes FOR SYSTEM_TIME AS OF o.o_ts AS r ON r.currency = o.currency"""))

    show("debezium changelog, LEFT JOIN:", t_env.sql_query("""
        SELECT o.id, o.currency, r.rate
        FROM orders AS o
        LEFT JOIN rate_changes FOR SYSTEM_TIME AS OF o.o_ts AS r ON r.currency = o.currency"""))


if __name__ == "__main__":
    main()
