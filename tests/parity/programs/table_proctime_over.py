"""Over aggregation ordered by a processing-time attribute: ``SUM(...) OVER (PARTITION BY k
ORDER BY pt ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)``, a ``ROWS BETWEEN 1 PRECEDING``
frame, the default (RANGE UNBOUNDED PRECEDING) frame, and the Table API's
``Over.partition_by(...).order_by(col('pt')).preceding(UNBOUNDED_ROW)``. On processing time a
row comes out at once, aggregated over the rows of its partition that arrived before it; one
source subtask emitting a sequence in order makes the arrival order, and so the output, fixed.
The rows are printed sorted. Parallelism 1.
"""

from pyflink.table import EnvironmentSettings, TableEnvironment
from pyflink.table.expressions import UNBOUNDED_ROW, col
from pyflink.table.window import Over


def print_sorted(title, table):
    print(title)
    for row in sorted(str(row) for row in table.execute().collect()):
        print("  " + row)


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", "1")
    t_env.execute_sql("""
        CREATE TABLE orders (
            id INT,
            amount INT,
            pt AS PROCTIME()
        ) WITH (
            'connector' = 'datagen',
            'fields.id.kind' = 'sequence',
            'fields.id.start' = '1',
            'fields.id.end' = '8',
            'fields.amount.kind' = 'sequence',
            'fields.amount.start' = '10',
            'fields.amount.end' = '17'
        )""")
    t_env.create_temporary_view(
        "keyed", t_env.sql_query("SELECT id, amount, MOD(id, 3) AS k, pt FROM orders"))

    print_sorted("running totals per key (ROWS UNBOUNDED PRECEDING):", t_env.sql_query("""
        SELECT k, id, amount,
               SUM(amount) OVER w AS total,
               COUNT(*) OVER w AS n
        FROM keyed
        WINDOW w AS (PARTITION BY k ORDER BY pt
                     ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)"""))

    print_sorted("with the row before (ROWS 1 PRECEDING):", t_env.sql_query("""
        SELECT k, id, MAX(amount) OVER w AS top, MIN(id) OVER w AS first_id
        FROM keyed
        WINDOW w AS (PARTITION BY k ORDER BY pt ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)"""))

    print_sorted("default frame, no partition:", t_env.sql_query(
        "SELECT id, SUM(amount) OVER (ORDER BY pt) AS total FROM keyed"))

    table = (t_env.from_path("keyed")
             .over_window(Over.partition_by(col("k")).order_by(col("pt"))
                          .preceding(UNBOUNDED_ROW).alias("w"))
             .select(col("k"), col("id"), col("amount").sum.over(col("w"))))
    table.print_schema()
    print_sorted("Table API over window:", table)


if __name__ == "__main__":
    main()
