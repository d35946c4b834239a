"""A corpus of realistic Flink SQL scripts (written for flintlock in the shape of Flink's
documentation and ordinary jobs) through flintlock.table.sql: every statement parses to the
expected statement type, and every query printed back by the Flink dialect parses to the same
tree (the generator and the parser agree)."""

from __future__ import annotations

import pytest
from sqlglot import exp

from flintlock.table.sql import (
    CreateTableStatement,
    CreateViewStatement,
    InsertStatement,
    QueryStatement,
    StatementSetStatement,
    parse_statement,
    parse_statements,
)

CORPUS: list[tuple[str, str]] = [
    ("datagen source", """
CREATE TEMPORARY TABLE orders (
    order_id BIGINT,
    price DECIMAL(32, 2),
    buyer ROW<first_name STRING, last_name STRING>,
    order_time TIMESTAMP(3),
    WATERMARK FOR order_time AS order_time - INTERVAL '5' SECOND
) WITH (
    'connector' = 'datagen',
    'rows-per-second' = '100',
    'fields.order_id.kind' = 'sequence',
    'fields.order_id.start' = '1',
    'fields.order_id.end' = '1000'
)"""),
    ("print sink", "CREATE TABLE print_sink (k BIGINT, cnt BIGINT, total BIGINT) "
                   "WITH ('connector' = 'print')"),
    ("blackhole like", "CREATE TABLE bh WITH ('connector' = 'blackhole') LIKE print_sink "
                       "(EXCLUDING ALL)"),
    ("kafka with metadata", """
CREATE TABLE kafka_events (
  `user_id` BIGINT,
  `item_id` BIGINT,
  `behavior` STRING,
  `event_time` TIMESTAMP_LTZ(3) METADATA FROM 'timestamp',
  `partition` BIGINT METADATA VIRTUAL,
  `offset` BIGINT METADATA VIRTUAL,
  `proc` AS PROCTIME()
) WITH (
  'connector' = 'kafka',
  'topic' = 'user_behavior',
  'properties.bootstrap.servers' = 'localhost:9092',
  'properties.group.id' = 'testGroup',
  'scan.startup.mode' = 'earliest-offset',
  'format' = 'json',
  'json.ignore-parse-errors' = 'true'
)"""),
    ("upsert filesystem", """
CREATE TABLE fs_sink (
  dt STRING,
  `hour` STRING,
  user_id BIGINT,
  pv BIGINT,
  PRIMARY KEY (dt, `hour`, user_id) NOT ENFORCED
) PARTITIONED BY (dt, `hour`) WITH (
  'connector' = 'filesystem',
  'path' = 'file:///tmp/fs_sink',
  'format' = 'canal-json',
  'sink.partition-commit.policy.kind' = 'success-file'
)"""),
    ("group by with updates", "INSERT INTO print_sink SELECT MOD(order_id, 100) AS k, "
                              "COUNT(*) AS cnt, SUM(order_id) AS total FROM orders "
                              "GROUP BY MOD(order_id, 100)"),
    ("having and count distinct", """
SELECT buyer.first_name, COUNT(DISTINCT order_id) AS orders, AVG(price) AS avg_price
FROM orders
WHERE price > 10 AND buyer.last_name IS NOT NULL
GROUP BY buyer.first_name
HAVING COUNT(DISTINCT order_id) > 3"""),
    ("top-n", """
SELECT product_id, category, product_name, sales
FROM (
  SELECT *,
    ROW_NUMBER() OVER (PARTITION BY category ORDER BY sales DESC) AS row_num
  FROM ShopSales)
WHERE row_num <= 5"""),
    ("deduplication", """
SELECT order_id, `user`, product, num
FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY order_id ORDER BY proctime ASC) AS row_num
  FROM Orders)
WHERE row_num = 1"""),
    ("regular joins", """
SELECT o.order_id, o.total, c.country, s.name
FROM Orders AS o
INNER JOIN Customers AS c ON o.customer_id = c.id
LEFT JOIN Shipments s ON o.order_id = s.order_id AND s.status <> 'CANCELLED'
FULL OUTER JOIN Returns r ON r.order_id = o.order_id"""),
    ("temporal join", """
SELECT order_id, price, orders.currency, conversion_rate, order_time
FROM orders
LEFT JOIN currency_rates FOR SYSTEM_TIME AS OF orders.order_time
ON orders.currency = currency_rates.currency"""),
    ("lookup join", """
SELECT o.order_id, o.total, c.country, c.zip
FROM Orders AS o
  JOIN Customers FOR SYSTEM_TIME AS OF o.proc_time AS c
    ON o.customer_id = c.id"""),
    ("interval join", """
SELECT * FROM Orders o, Shipments s
WHERE o.id = s.order_id
AND o.order_time BETWEEN s.ship_time - INTERVAL '4' HOUR AND s.ship_time"""),
    ("tumble window tvf", """
SELECT window_start, window_end, SUM(price) AS total_price
  FROM TABLE(
    TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))
  GROUP BY window_start, window_end"""),
    ("hop window tvf named", """
SELECT window_start, window_end, SUM(price)
  FROM TABLE(
    HOP(DATA => TABLE Bid, TIMECOL => DESCRIPTOR(bidtime), SLIDE => INTERVAL '5' MINUTES,
        SIZE => INTERVAL '10' MINUTES))
  GROUP BY window_start, window_end"""),
    ("cumulate window tvf", """
SELECT window_start, window_end, item, SUM(price) AS total
  FROM TABLE(CUMULATE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '2' MINUTES,
                      INTERVAL '10' MINUTES))
  GROUP BY window_start, window_end, GROUPING SETS ((item), ())"""),
    ("window top-n", """
SELECT * FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY price DESC) as rownum
  FROM (
    SELECT window_start, window_end, supplier_id, SUM(price) as price, COUNT(*) as cnt
    FROM TABLE(TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))
    GROUP BY window_start, window_end, supplier_id
  )
) WHERE rownum <= 3"""),
    ("over aggregation", """
SELECT order_id, order_time, amount,
  SUM(amount) OVER (
    PARTITION BY product
    ORDER BY order_time
    RANGE BETWEEN INTERVAL '1' HOUR PRECEDING AND CURRENT ROW
  ) AS one_hour_prod_amount_sum
FROM Orders"""),
    ("udtf lateral", """
SELECT a, word, length
FROM MyTable, LATERAL TABLE(split_words(a)) AS T(word, length)"""),
    ("udtf left lateral", """
SELECT a, word, length
FROM MyTable
LEFT JOIN LATERAL TABLE(split_words(a)) AS T(word, length) ON TRUE"""),
    ("python udf ddl", "CREATE TEMPORARY SYSTEM FUNCTION add_one AS 'udfs.add_one' "
                       "LANGUAGE PYTHON"),
    ("strings and conditionals", """
SELECT
  UPPER(name) || '-' || CAST(id AS STRING) AS label,
  CASE WHEN score >= 90 THEN 'A' WHEN score >= 80 THEN 'B' ELSE 'C' END AS grade,
  COALESCE(nickname, name) AS shown,
  IF(active, 'yes', 'no') AS active_text,
  CHAR_LENGTH(TRIM(BOTH ' ' FROM name)) AS len,
  SUBSTRING(name FROM 1 FOR 3) AS prefix,
  REGEXP_REPLACE(email, '@.*', '') AS mailbox,
  POSITION('@' IN email) AS at_pos
FROM users
WHERE name LIKE 'A%' OR name SIMILAR TO '[BC]%'"""),
    ("temporal functions", """
SELECT
  DATE_FORMAT(order_time, 'yyyy-MM-dd HH:mm') AS minute_str,
  EXTRACT(HOUR FROM order_time) AS h,
  TIMESTAMPADD(DAY, 1, order_time) AS tomorrow,
  TIMESTAMPDIFF(MINUTE, order_time, CURRENT_TIMESTAMP) AS age,
  FLOOR(order_time TO HOUR) AS hour_start,
  TO_TIMESTAMP_LTZ(epoch_ms, 3) AS ltz,
  TIMESTAMP '2024-01-01 00:00:00' AS epoch_start,
  CURRENT_DATE, LOCALTIMESTAMP
FROM orders"""),
    ("json", """
SELECT
  JSON_VALUE(payload, '$.user.id' RETURNING BIGINT) AS uid,
  JSON_VALUE(payload, '$.amount' RETURNING DOUBLE DEFAULT 0.0 ON EMPTY) AS amount,
  JSON_VALUE(payload, '$.tag') AS tag
FROM raw_events
WHERE JSON_VALUE(payload, '$.type') = 'click'"""),
    ("in and exists subqueries", """
SELECT user_id FROM Orders
WHERE product IN (SELECT product FROM NewProducts)
  AND NOT EXISTS (SELECT 1 FROM Blocked b WHERE b.user_id = Orders.user_id)"""),
    ("with and union", """
WITH recent AS (
  SELECT * FROM Orders WHERE order_time > TIMESTAMP '2024-01-01 00:00:00'
), big AS (
  SELECT * FROM recent WHERE amount > 1000
)
SELECT order_id, 'big' AS kind FROM big
UNION ALL
SELECT order_id, 'small' AS kind FROM recent WHERE amount <= 1000"""),
    ("values source", "SELECT * FROM (VALUES (1, 'Hi'), (2, 'Hello')) AS T(id, greeting)"),
    ("view", "CREATE TEMPORARY VIEW big_orders AS SELECT * FROM orders WHERE price > 100"),
    ("distinct and null-safe", """
SELECT DISTINCT a, b FROM t
WHERE a IS DISTINCT FROM b OR c IS NOT DISTINCT FROM d"""),
    ("constructors", """
SELECT ARRAY[a, b, c] AS arr, MAP['x', a, 'y', b] AS m, ROW(a, b) AS r, arr[1], m['x']
FROM t"""),
    ("query hint", "SELECT /*+ STATE_TTL('o' = '1d') */ o.id FROM orders AS o"),
    ("statement set", """
EXECUTE STATEMENT SET
BEGIN
INSERT INTO pageviews SELECT page_id, COUNT(*) FROM clicks GROUP BY page_id;
INSERT INTO uniq_visitors SELECT page_id, COUNT(DISTINCT user_id) FROM clicks GROUP BY page_id;
END"""),
    ("client statement set", """
BEGIN STATEMENT SET;
INSERT INTO a SELECT * FROM src WHERE kind = 'a';
INSERT INTO b SELECT * FROM src WHERE kind = 'b';
END"""),
    ("insert overwrite static partition",
     "INSERT OVERWRITE fs_sink PARTITION (dt = '2024-01-01', `hour` = '10') "
     "SELECT user_id, COUNT(*) FROM logs GROUP BY user_id"),
    ("insert column list", "INSERT INTO print_sink (k, cnt) SELECT id, 1 FROM orders"),
]

#: The statement type each corpus entry must become.
EXPECTED_TYPE = {
    "datagen source": CreateTableStatement, "print sink": CreateTableStatement,
    "blackhole like": CreateTableStatement, "kafka with metadata": CreateTableStatement,
    "upsert filesystem": CreateTableStatement, "view": CreateViewStatement,
    "group by with updates": InsertStatement, "statement set": StatementSetStatement,
    "client statement set": StatementSetStatement,
    "insert overwrite static partition": InsertStatement,
    "insert column list": InsertStatement,
}


def _queries(statement: object) -> list[exp.Query]:
    if isinstance(statement, QueryStatement | InsertStatement | CreateViewStatement):
        return [statement.query]
    if isinstance(statement, StatementSetStatement):
        return [insert.query for insert in statement.inserts]
    return []


@pytest.mark.parametrize(("name", "sql"), CORPUS, ids=[name for name, _ in CORPUS])
def test_corpus_statement_parses_to_its_type(name: str, sql: str) -> None:
    statement = parse_statement(sql)
    expected = EXPECTED_TYPE.get(name, QueryStatement)
    if name == "python udf ddl":
        expected = type(statement)
        assert expected.__name__ == "CreateFunctionStatement"
    assert isinstance(statement, expected)


@pytest.mark.parametrize(("name", "sql"), CORPUS, ids=[name for name, _ in CORPUS])
def test_corpus_queries_print_back_to_the_same_tree(name: str, sql: str) -> None:
    for tree in _queries(parse_statement(sql)):
        printed = tree.sql(dialect="flink")
        again = parse_statement(printed)
        assert isinstance(again, QueryStatement), printed
        assert again.query == tree, printed


def test_corpus_as_one_script() -> None:
    script = ";\n".join(sql for _, sql in CORPUS) + ";"
    assert len(parse_statements(script)) == len(CORPUS)


def test_corpus_ddl_details() -> None:
    kafka = parse_statement(dict(CORPUS)["kafka with metadata"])
    assert isinstance(kafka, CreateTableStatement)
    assert [(c.name, c.metadata_key, c.virtual) for c in kafka.columns if c.is_metadata] == [
        ("event_time", "timestamp", False), ("partition", "partition", True),
        ("offset", "offset", True),
    ]
    assert kafka.options_dict["scan.startup.mode"] == "earliest-offset"
    sink = parse_statement(dict(CORPUS)["upsert filesystem"])
    assert isinstance(sink, CreateTableStatement)
    assert sink.primary_key == ("dt", "hour", "user_id")
    assert sink.partition_keys == ("dt", "hour")
    assert all(not c.nullable for c in sink.columns if c.name in sink.primary_key)
