"""Top-N with ROW_NUMBER, as Flink's documentation writes it, printed with ``execute().print()``.

The top 2 sales per category by amount, with and without the row number in the output (with
it, a new leader moves every row below it: ``-U``/``+U`` for each rank; without it, only the
row that enters and the row that leaves: ``-D`` and ``+I``); the top 1 (deduplication by the
largest amount) and a Top-N over an aggregate (an updating input). One source, parallelism 1:
the changelog's order is the input's.
"""

from pyflink.table import EnvironmentSettings, TableEnvironment

SALES = [
    (1, "fruit", "apple", 30),
    (2, "fruit", "pear", 20),
    (3, "veg", "kale", 15),
    (4, "fruit", "plum", 50),
    (5, "veg", "leek", 25),
    (6, "fruit", "fig", 10),
    (7, "veg", "corn", 40),
    (8, "fruit", "kiwi", 35),
    (9, "veg", "kale", 30),
]


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", "1")
    t_env.create_temporary_view(
        "sales", t_env.from_elements(SALES, ["id", "category", "item", "amount"]))

    t_env.execute_sql("""
        SELECT category, item, amount, rn FROM (
            SELECT *, ROW_NUMBER() OVER (PARTITION BY category ORDER BY amount DESC) AS rn
            FROM sales)
        WHERE rn <= 2""").print()

    t_env.execute_sql("""
        SELECT category, item, amount FROM (
            SELECT *, ROW_NUMBER() OVER (PARTITION BY category ORDER BY amount DESC) AS rn
            FROM sales)
        WHERE rn <= 2""").print()

    t_env.execute_sql("""
        SELECT id, category, item FROM (
            SELECT *, ROW_NUMBER() OVER (PARTITION BY category ORDER BY amount DESC) AS row_num
            FROM sales)
        WHERE row_num = 1""").print()

    t_env.execute_sql("""
        SELECT item, total, rk FROM (
            SELECT item, total,
                   ROW_NUMBER() OVER (ORDER BY total DESC) AS rk
            FROM (SELECT item, SUM(amount) AS total FROM sales GROUP BY item))
        WHERE rk <= 3""").print()


if __name__ == "__main__":
    main()
