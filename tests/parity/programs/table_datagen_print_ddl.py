"""DDL with the ``datagen``, ``print`` and ``blackhole`` connectors, as Flink's SQL documentation
writes it.

``CREATE TABLE ... WITH ('connector' = 'datagen')`` with sequence fields (``fields.x.kind``,
``start``, ``end``), ``number-of-rows`` and a computed column; ``print`` tables with and
without ``print-identifier``; ``INSERT INTO`` from a query with a WHERE, a CASE and a string
function, and an updating GROUP BY into a print table (``+I``/``-U``/``+U`` lines); an INSERT
into ``blackhole``; ``TableDescriptor`` for the same connectors. Each INSERT waits for its
job; parallelism 1, so no subtask prefix and the sequence's order.
"""

from pyflink.table import DataTypes, EnvironmentSettings, Schema, TableDescriptor, TableEnvironment
from pyflink.table.expressions import col


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", "1")

    t_env.execute_sql("""
        CREATE TABLE orders (
            order_id BIGINT,
            quantity INT,
            price DOUBLE,
            total AS quantity * price
        ) WITH (
            'connector' = 'datagen',
            'number-of-rows' = '8',
            'fields.order_id.kind' = 'sequence',
            'fields.order_id.start' = '1',
            'fields.order_id.end' = '8',
            'fields.quantity.kind' = 'sequence',
            'fields.quantity.start' = '10',
            'fields.quantity.end' = '17',
            'fields.price.kind' = 'sequence',
            'fields.price.start' = '1',
            'fields.price.end' = '8'
        )""")
    t_env.execute_sql("""
        CREATE TABLE big_orders (
            order_id BIGINT,
            size_class STRING,
            total DOUBLE
        ) WITH ('connector' = 'print')""")
    t_env.execute_sql("""
        CREATE TABLE order_stats (
            parity STRING,
            orders BIGINT,
            quantity INT
        ) WITH ('connector' = 'print', 'print-identifier' = 'stats')""")
    t_env.execute_sql(
        "CREATE TABLE nowhere (order_id BIGINT) WITH ('connector' = 'blackhole')")

    t_env.execute_sql("""
        INSERT INTO big_orders
        SELECT order_id,
               CASE WHEN total >= 50 THEN 'LARGE' WHEN total >= 20 THEN 'MEDIUM'
                    ELSE 'SMALL' END,
               total
        FROM orders WHERE MOD(order_id, 3) <> 0""").wait()

    t_env.execute_sql("""
        INSERT INTO order_stats
        SELECT CASE WHEN MOD(order_id, 2) = 0 THEN 'even' ELSE 'odd' END AS parity,
               COUNT(*), SUM(quantity)
        FROM orders
        GROUP BY CASE WHEN MOD(order_id, 2) = 0 THEN 'even' ELSE 'odd' END""").wait()

    t_env.execute_sql("INSERT INTO nowhere SELECT order_id FROM orders").wait()
    print("blackhole done")

    t_env.create_temporary_table(
        "numbers",
        TableDescriptor.for_connector("datagen")
        .schema(Schema.new_builder()
                .column("n", DataTypes.INT())
                .column("label", DataTypes.STRING())
                .build())
        .option("number-of-rows", "5")
        .option("fields.n.kind", "sequence")
        .option("fields.n.start", "100")
        .option("fields.n.end", "104")
        .option("fields.label.length", "3")
        .build())
    t_env.create_temporary_table(
        "shown",
        TableDescriptor.for_connector("print")
        .schema(Schema.new_builder()
                .column("n", DataTypes.INT())
                .column("label_length", DataTypes.INT())
                .build())
        .option("print-identifier", "numbers")
        .build())
    t_env.from_path("numbers") \
        .select(col("n"), col("label").char_length) \
        .execute_insert("shown").wait()


if __name__ == "__main__":
    main()
