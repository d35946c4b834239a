"""A SQL GROUP BY over an append-only table, printed with ``execute().print()``.

The documentation's first streaming aggregation: every input row updates its group's result,
so the printed changelog has ``+I`` for a group's first row and ``-U``/``+U`` pairs after
that. COUNT(*), SUM, MIN, MAX, AVG, COUNT(DISTINCT) and a HAVING clause (a group leaves the
result with ``-D`` and comes back with ``+I``); a GROUP BY over the GROUP BY's result (a
retracting input); the Table API's ``group_by`` with ``.sum``/``.count``/``.avg``. One
source, parallelism 1: the changelog's order is the input's.
"""

from pyflink.table import EnvironmentSettings, TableEnvironment
from pyflink.table.expressions import col

ORDERS = [
    ("alice", "book", 12, 3),
    ("bob", "pen", 2, 10),
    ("alice", "pen", 3, 1),
    ("carol", "book", 15, 2),
    ("bob", "book", 11, 1),
    ("alice", "lamp", 40, 1),
    ("carol", "pen", 2, 5),
    ("bob", "pen", 2, 3),
]


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", "1")
    orders = t_env.from_elements(ORDERS, ["customer", "product", "price", "quantity"])
    t_env.create_temporary_view("orders", orders)

    t_env.execute_sql(
        "SELECT customer, COUNT(*) AS cnt, SUM(price * quantity) AS total, "
        "MIN(price) AS cheapest, MAX(price) AS dearest, AVG(quantity) AS avg_qty, "
        "COUNT(DISTINCT product) AS products "
        "FROM orders GROUP BY customer").print()

    t_env.execute_sql(
        "SELECT product, SUM(quantity) AS units FROM orders "
        "GROUP BY product HAVING SUM(quantity) >= 4").print()

    t_env.execute_sql(
        "SELECT cnt, COUNT(*) AS customers FROM "
        "(SELECT customer, COUNT(*) AS cnt FROM orders GROUP BY customer) "
        "GROUP BY cnt").print()

    orders.group_by(col("product")) \
        .select(col("product"), col("quantity").sum.alias("units"),
                col("customer").count.alias("orders"), col("price").avg.alias("avg_price")) \
        .execute().print()


if __name__ == "__main__":
    main()
