"""A projection heavy in CASE, CAST and string functions, in SQL and in the Table API.

Rows with NULLs through ``UPPER``, ``LOWER``, ``INITCAP``, ``CHAR_LENGTH``, ``SUBSTRING``,
``TRIM``, ``LPAD``/``RPAD``, ``REPLACE``, ``POSITION``, ``CONCAT``, ``CONCAT_WS``, ``||``,
``LIKE``, ``COALESCE``, ``NULLIF``, ``IF``, searched and simple ``CASE``; ``CAST`` between
INT, BIGINT, DOUBLE, DECIMAL, STRING, BOOLEAN and DATE; arithmetic (integer division, ``MOD``,
``ABS``, ``ROUND``, ``FLOOR``, ``CEIL``, ``POWER``); comparisons and ``IN``/``BETWEEN``; the
same kinds of expressions in the Table API (``upper_case``, ``char_length``, ``cast``,
``if_then_else``, ``concat``, ``substring``, ``trim``, ``like``, ``is_null``, ``in_``,
arithmetic). Printed with ``execute().print()``; one source, parallelism 1.
"""

from pyflink.table import DataTypes, EnvironmentSettings, TableEnvironment
from pyflink.table.expressions import col, concat, if_then_else, lit

PRODUCTS = [
    (1, "  red apple ", 120, 0.5, "2024-03-01", True),
    (2, "green pear", 75, 1.25, "2024-12-31", False),
    (3, None, 7, None, "1999-01-15", None),
    (4, "Blue-Berry", -42, 10.0, None, True),
]


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", "1")
    products = t_env.from_elements(
        PRODUCTS,
        DataTypes.ROW([DataTypes.FIELD("id", DataTypes.INT()),
                       DataTypes.FIELD("name", DataTypes.STRING()),
                       DataTypes.FIELD("stock", DataTypes.INT()),
                       DataTypes.FIELD("weight", DataTypes.DOUBLE()),
                       DataTypes.FIELD("since", DataTypes.STRING()),
                       DataTypes.FIELD("active", DataTypes.BOOLEAN())]))
    t_env.create_temporary_view("products", products)

    t_env.execute_sql("""
        SELECT id,
               UPPER(TRIM(name)) AS upper_name,
               LOWER(name) AS lower_name,
               INITCAP(TRIM(name)) AS title,
               CHAR_LENGTH(name) AS len,
               SUBSTRING(TRIM(name) FROM 2 FOR 3) AS part,
               LPAD(CAST(id AS STRING), 4, '0') AS padded,
               RPAD(TRIM(name), 12, '.') AS dotted,
               REPLACE(name, 'e', 'E') AS replaced,
               POSITION('e' IN name) AS first_e,
               CONCAT(TRIM(name), '#', CAST(stock AS STRING)) AS tagged,
               CONCAT_WS('-', TRIM(name), since) AS joined,
               'id:' || CAST(id AS VARCHAR) AS piped
        FROM products""").print()

    t_env.execute_sql("""
        SELECT id,
               CASE WHEN stock > 100 THEN 'plenty' WHEN stock > 0 THEN 'some'
                    ELSE 'none' END AS level,
               CASE id WHEN 1 THEN 'one' WHEN 2 THEN 'two' END AS word,
               COALESCE(name, 'unknown') AS known_name,
               NULLIF(stock, 7) AS not_seven,
               IF(active, 'yes', 'no') AS is_active,
               name LIKE '%e%' AS has_e,
               stock IN (7, 75) AS listed,
               stock BETWEEN 0 AND 100 AS in_range,
               name IS NULL AS no_name,
               NOT active AS inactive
        FROM products""").print()

    t_env.execute_sql("""
        SELECT id,
               CAST(stock AS BIGINT) * 1000000000 AS big,
               CAST(stock AS DOUBLE) / 8 AS ratio,
               stock / 8 AS int_div,
               MOD(stock, 8) AS remainder,
               ABS(stock) AS magnitude,
               ROUND(weight * 3, 1) AS rounded,
               FLOOR(weight) AS floored,
               CEIL(weight) AS ceiled,
               POWER(stock, 2) AS squared,
               CAST(weight AS DECIMAL(10, 3)) AS exact,
               CAST(stock AS DECIMAL(6, 2)) / 3 AS dec_div,
               CAST(since AS DATE) AS since_date,
               CAST(CAST(since AS DATE) AS STRING) AS since_text,
               CAST(active AS STRING) AS active_text,
               CAST('42' AS INT) + id AS parsed
        FROM products""").print()

    products.select(
        col("id"),
        col("name").upper_case.alias("upper"),
        col("name").char_length.alias("len"),
        col("name").trim().substring(1, 4).alias("first4"),
        concat(col("name").trim(), lit("!")).alias("excited"),
        col("name").like("%e%").alias("has_e"),
        col("name").is_null.alias("missing"),
        col("stock").in_(7, 75).alias("listed"),
        if_then_else(col("stock") > 50, "many", "few").alias("amount"),
        (col("stock") * 2 + 1).alias("odd"),
        (col("stock") % 5).alias("mod5"),
        col("weight").cast(DataTypes.DECIMAL(8, 2)).alias("w"),
        col("stock").cast(DataTypes.STRING()).alias("stock_text"),
    ).execute().print()


if __name__ == "__main__":
    main()
