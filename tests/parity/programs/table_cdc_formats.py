"""Change-data-capture formats as sources: ``debezium-json`` and ``canal-json`` files read
through the ``filesystem`` connector, the changelog rows they produce (+I, -U/+U, -D) shown by
``TableResult.print()`` and by the print connector, and an aggregate over a CDC table.

The program writes the change events itself (Flink's documentation's ``products`` example:
snapshot reads, an insert, updates, a delete), into a temporary directory. Parallelism 1, so
the order of every line is defined.
"""

import json
import os
import tempfile

from pyflink.table import EnvironmentSettings, TableEnvironment


def debezium(op, before=None, after=None):
    return json.dumps({"before": before, "after": after, "op": op, "ts_ms": 1589362330904,
                       "source": {"db": "inventory", "table": "products"}})


def product(pid, name, description, weight):
    return {"id": pid, "name": name, "description": description, "weight": weight}


DEBEZIUM_EVENTS = [
    debezium("r", after=product(101, "scooter", "Small 2-wheel scooter", 3.14)),
    debezium("r", after=product(102, "car battery", "12V car battery", 8.1)),
    debezium("c", after=product(103, "hammer", "12oz carpenter's hammer", 0.75)),
    debezium("u", before=product(101, "scooter", "Small 2-wheel scooter", 3.14),
             after=product(101, "scooter", "Small 2-wheel scooter", 5.18)),
    debezium("u", before=product(103, "hammer", "12oz carpenter's hammer", 0.75),
             after=product(103, "hammer", "14oz carpenter's hammer", 0.875)),
    debezium("d", before=product(102, "car battery", "12V car battery", 8.1)),
    debezium("c", after=product(104, "rocks", "box of assorted rocks", 5.3)),
]

CANAL_EVENTS = [
    {"data": [{"id": "1", "city": "Berlin", "visits": "3"},
              {"id": "2", "city": "Paris", "visits": "5"}],
     "database": "web", "table": "visits", "type": "INSERT", "old": None},
    {"data": [{"id": "1", "city": "Berlin", "visits": "4"}],
     "old": [{"visits": "3"}], "database": "web", "table": "visits", "type": "UPDATE"},
    {"data": None, "database": "web", "table": "visits", "type": "CREATE",
     "sql": "CREATE TABLE visits (id INT)", "old": None},
    {"data": [{"id": "2", "city": "Paris", "visits": "5"}],
     "database": "web", "table": "visits", "type": "DELETE", "old": None},
    {"data": [{"id": "3", "city": "Rome", "visits": "1"}],
     "database": "web", "table": "visits", "type": "INSERT", "old": None},
]


def write_lines(directory, name, lines):
    os.makedirs(directory)
    with open(os.path.join(directory, name), "w", encoding="utf-8") as handle:
        handle.write("".join(line + "\n" for line in lines))


def main():
    work = tempfile.mkdtemp(prefix="table-cdc-")
    products_dir = os.path.join(work, "products")
    visits_dir = os.path.join(work, "visits")
    write_lines(products_dir, "products.json", DEBEZIUM_EVENTS)
    write_lines(visits_dir, "visits.json", [json.dumps(e) for e in CANAL_EVENTS])

    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", "1")
    t_env.execute_sql(f"""
        CREATE TABLE products (
            id BIGINT,
            name STRING,
            description STRING,
            weight DECIMAL(10, 3)
        ) WITH (
            'connector' = 'filesystem',
            'path' = '{products_dir}',
            'format' = 'debezium-json'
        )""")
    t_env.execute_sql(f"""
        CREATE TABLE visits (
            id INT,
            city STRING,
            visits BIGINT
        ) WITH (
            'connector' = 'filesystem',
            'path' = '{visits_dir}',
            'format' = 'canal-json'
        )""")

    print("debezium-json changelog:")
    t_env.execute_sql("SELECT id, name, description, weight FROM products").print()

    print("canal-json changelog:")
    t_env.execute_sql("SELECT * FROM visits").print()

    print("total weight over the CDC table:")
    t_env.execute_sql(
        "SELECT COUNT(*) AS products, SUM(weight) AS total FROM products").print()

    t_env.execute_sql("""
        CREATE TABLE heavy (name STRING, weight DECIMAL(10, 3))
        WITH ('connector' = 'print', 'print-identifier' = 'heavy')""")
    t_env.execute_sql("INSERT INTO heavy SELECT name, weight FROM products WHERE weight > 1").wait()


if __name__ == "__main__":
    main()
