"""Regular joins in SQL and the Table API: inner and left outer, streaming and batch.

Streaming: an inner join of two append-only tables emits only ``+I`` rows, in the order its two
inputs happen to interleave, so those results are printed sorted by the program. A streaming
left outer join may emit a NULL-padded row and retract it (``-D``) when the match arrives
later, depending on that interleaving too; the program applies the collected changelog
(``+I``/``+U`` add a row, ``-U``/``-D`` remove it) and prints the final result sorted, which is
defined. Inner join with an extra predicate, join with a GROUP BY result on one side (an
updating input), ``Table.join`` / ``left_outer_join`` with a predicate. Batch mode prints a
left outer join and an inner join with ``execute().print()`` (compared as sorted lines, the
program's output order being undefined there). Parallelism 1.
"""

from collections import Counter

from pyflink.table import EnvironmentSettings, TableEnvironment
from pyflink.table.expressions import col

CUSTOMERS = [(1, "alice", "DE"), (2, "bob", "FR"), (3, "carol", "DE"), (4, "dave", "IT")]
ORDERS = [(100, 1, 30), (101, 2, 12), (102, 1, 7), (103, 3, 55), (104, 9, 5), (105, 3, 1)]


def final_rows(table):
    """The final result of a changelog: the rows inserted and not retracted."""
    counts = Counter()
    for row in table.execute().collect():
        kind = str(row.get_row_kind())
        values = tuple(row)
        counts[values] += 1 if kind in ("+I", "+U") else -1
    return sorted((values for values, n in counts.items() for _ in range(n)),
                  key=repr)


def show(title, rows):
    print(title)
    for row in rows:
        print(" ", row)


def register(t_env):
    t_env.create_temporary_view(
        "customers", t_env.from_elements(CUSTOMERS, ["cid", "name", "country"]))
    t_env.create_temporary_view(
        "orders", t_env.from_elements(ORDERS, ["oid", "customer_id", "amount"]))


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", "1")
    register(t_env)

    show("inner join:", final_rows(t_env.sql_query(
        "SELECT o.oid, c.name, o.amount FROM orders AS o "
        "JOIN customers AS c ON o.customer_id = c.cid")))
    show("inner join with a predicate:", final_rows(t_env.sql_query(
        "SELECT c.name, o.amount FROM customers c, orders o "
        "WHERE c.cid = o.customer_id AND o.amount > 10 AND c.country = 'DE'")))
    show("left outer join:", final_rows(t_env.sql_query(
        "SELECT c.name, o.oid, o.amount FROM customers c "
        "LEFT JOIN orders o ON c.cid = o.customer_id")))
    show("left outer join with an aggregate:", final_rows(t_env.sql_query(
        "SELECT c.name, t.total FROM customers c LEFT OUTER JOIN "
        "(SELECT customer_id, SUM(amount) AS total FROM orders GROUP BY customer_id) t "
        "ON c.cid = t.customer_id")))

    customers = t_env.from_path("customers")
    orders = t_env.from_path("orders")
    show("Table.join:", final_rows(
        orders.join(customers, col("customer_id") == col("cid"))
        .select(col("oid"), col("name"))))
    show("Table.left_outer_join:", final_rows(
        customers.left_outer_join(orders, (col("cid") == col("customer_id"))
                                  & (col("amount") >= 10))
        .select(col("name"), col("amount"))))

    b_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    b_env.get_config().set("parallelism.default", "1")
    register(b_env)
    b_env.execute_sql(
        "SELECT c.name, o.oid, o.amount FROM customers c "
        "LEFT JOIN orders o ON c.cid = o.customer_id").print()
    b_env.execute_sql(
        "SELECT c.country, COUNT(*) AS orders, SUM(o.amount) AS total FROM customers c "
        "JOIN orders o ON c.cid = o.customer_id GROUP BY c.country").print()


if __name__ == "__main__":
    main()
