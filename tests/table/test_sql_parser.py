"""flintlock.table.sql: every statement form the front end parses, with the exact statement
objects and the sqlglot node types the binder relies on (dialect.py's docstring), and the
syntax errors with line, column and token in Flink's wording."""

from __future__ import annotations

import pickle

import pytest
from sqlglot import exp

from flintlock.table.errors import SqlParseError, UnsupportedFeatureError, ValidationError
from flintlock.table.sql import (
    ColumnSpec,
    CreateFunctionStatement,
    CreateTableStatement,
    CreateViewStatement,
    DescribeStatement,
    DropStatement,
    ExplainStatement,
    InsertStatement,
    LikeSpec,
    QueryStatement,
    ResetStatement,
    SetStatement,
    ShowStatement,
    StatementSetStatement,
    UseStatement,
    WatermarkSpec,
    parse_expression,
    parse_statement,
    parse_statements,
    type_text,
)
from flintlock.table.sql.nodes import TableArgument, TypedLiteral


def col(name: str, table: str | None = None, quoted: bool = False) -> exp.Column:
    return exp.Column(
        this=exp.Identifier(this=name, quoted=quoted),
        table=exp.Identifier(this=table, quoted=False) if table else None,
    )


def call(name: str, *args: exp.Expression) -> exp.Anonymous:
    return exp.Anonymous(this=name, expressions=list(args))


def num(value: int) -> exp.Literal:
    return exp.Literal.number(value)


def query(sql: str) -> exp.Query:
    statement = parse_statement(sql)
    assert isinstance(statement, QueryStatement)
    return statement.query


def select_items(sql: str) -> list[exp.Expression]:
    tree = query(sql)
    assert isinstance(tree, exp.Select)
    return list(tree.expressions)


# -- DDL -------------------------------------------------------------------------------------------

ORDERS_DDL = """
CREATE TEMPORARY TABLE IF NOT EXISTS `cat`.db.Orders (
  order_id BIGINT NOT NULL,
  `user` STRING COMMENT 'the user',
  price DECIMAL(10, 2),
  addr ROW<street STRING, zip INT NOT NULL>,
  tags MAP<STRING, ARRAY<INT>>,
  cost AS price * 2 COMMENT 'doubled',
  ts TIMESTAMP(3),
  part BIGINT METADATA FROM 'partition' VIRTUAL,
  `offset` BIGINT METADATA VIRTUAL,
  event_time TIMESTAMP_LTZ(3) METADATA FROM 'timestamp',
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND,
  CONSTRAINT pk PRIMARY KEY (order_id, `user`) NOT ENFORCED
) COMMENT 'orders' PARTITIONED BY (`user`, price) WITH (
  'connector' = 'kafka',
  'topic' = 'it''s'
)
"""


def test_create_table_with_every_kind_of_column() -> None:
    statement = parse_statement(ORDERS_DDL)
    assert isinstance(statement, CreateTableStatement)
    cost = exp.Mul(this=col("price"), expression=num(2))
    assert statement == CreateTableStatement(
        name=("cat", "db", "Orders"),
        columns=(
            ColumnSpec("order_id", "BIGINT", nullable=False),
            ColumnSpec("user", "STRING", comment="the user", nullable=False),
            ColumnSpec("price", "DECIMAL(10, 2)"),
            ColumnSpec("addr", "ROW<street STRING, zip INT NOT NULL>"),
            ColumnSpec("tags", "MAP<STRING, ARRAY<INT>>"),
            ColumnSpec("cost", None, cost, comment="doubled"),
            ColumnSpec("ts", "TIMESTAMP(3)"),
            ColumnSpec("part", "BIGINT", metadata_key="partition", virtual=True),
            ColumnSpec("offset", "BIGINT", metadata_key="offset", virtual=True),
            ColumnSpec("event_time", "TIMESTAMP_LTZ(3)", metadata_key="timestamp"),
        ),
        watermark=WatermarkSpec(
            "ts",
            exp.Sub(this=col("ts"), expression=exp.Interval(
                this=exp.Literal.string("5"), unit=exp.var("SECOND"))),
        ),
        primary_key=("order_id", "user"),
        partition_keys=("user", "price"),
        options=(("connector", "kafka"), ("topic", "it's")),
        temporary=True,
        if_not_exists=True,
        comment="orders",
        primary_key_name="pk",
    )
    assert statement.options_dict == {"connector": "kafka", "topic": "it's"}


def test_column_types_become_data_types_through_from_sql_string() -> None:
    from flintlock.table.types import (
        BigIntType,
        DecimalType,
        LocalZonedTimestampType,
        RowType,
        TimestampType,
    )

    statement = parse_statement(ORDERS_DDL)
    assert isinstance(statement, CreateTableStatement)
    by_name = {column.name: column for column in statement.columns}
    order_id = by_name["order_id"].type
    assert isinstance(order_id, BigIntType) and order_id._nullable is False
    user = by_name["user"].type
    assert user is not None and user._nullable is False  # a primary-key column
    assert isinstance(by_name["price"].type, DecimalType)
    addr = by_name["addr"].type
    assert isinstance(addr, RowType) and addr.names == ["street", "zip"]
    assert isinstance(by_name["ts"].type, TimestampType)
    assert isinstance(by_name["event_time"].type, LocalZonedTimestampType)
    assert by_name["cost"].type is None and by_name["cost"].is_computed
    assert by_name["part"].is_metadata and not by_name["ts"].is_metadata


def test_primary_key_as_column_constraint() -> None:
    statement = parse_statement(
        "CREATE TABLE t (id INT PRIMARY KEY NOT ENFORCED, v STRING) WITH ('connector' = 'print')"
    )
    assert statement == CreateTableStatement(
        name=("t",),
        columns=(ColumnSpec("id", "INT", nullable=False), ColumnSpec("v", "STRING")),
        watermark=None, primary_key=("id",), partition_keys=(),
        options=(("connector", "print"),),
    )


@pytest.mark.parametrize("ddl", [
    "CREATE TABLE t (id INT PRIMARY KEY) WITH ('connector' = 'print')",
    "CREATE TABLE t (id INT, PRIMARY KEY (id)) WITH ('connector' = 'print')",
])
def test_enforced_primary_key_is_refused_with_flinks_reason(ddl: str) -> None:
    with pytest.raises(ValidationError, match="only supported mode is the NOT ENFORCED mode"):
        parse_statement(ddl)


def test_create_table_like() -> None:
    statement = parse_statement(
        "CREATE TABLE t2 (extra INT) WITH ('connector' = 'blackhole') "
        "LIKE t1 (EXCLUDING ALL, INCLUDING OPTIONS, OVERWRITING WATERMARKS)"
    )
    assert isinstance(statement, CreateTableStatement)
    assert statement.like == LikeSpec(
        ("t1",), (("EXCLUDING", "ALL"), ("INCLUDING", "OPTIONS"), ("OVERWRITING", "WATERMARKS"))
    )
    assert statement.columns == (ColumnSpec("extra", "INT"),)
    bare = parse_statement("CREATE TABLE t3 LIKE cat.db.t1")
    assert isinstance(bare, CreateTableStatement)
    assert bare.columns == () and bare.like == LikeSpec(("cat", "db", "t1"))


def test_type_text_is_kept_exactly_as_written() -> None:
    statement = parse_statement(
        "CREATE TABLE t (a ROW<`x y` INT 'a field', z ARRAY<MAP<STRING, BIGINT>>> NOT NULL, "
        "b TIMESTAMP(3) WITH LOCAL TIME ZONE, c DOUBLE PRECISION, d INTERVAL DAY(2) TO SECOND(3),"
        " e varchar(10) NULL) WITH ()"
    )
    assert isinstance(statement, CreateTableStatement)
    assert [(c.type_text, c.nullable) for c in statement.columns] == [
        ("ROW<`x y` INT 'a field', z ARRAY<MAP<STRING, BIGINT>>>", False),
        ("TIMESTAMP(3) WITH LOCAL TIME ZONE", True),
        ("DOUBLE PRECISION", True),
        ("INTERVAL DAY(2) TO SECOND(3)", True),
        ("varchar(10)", True),
    ]


def test_create_view() -> None:
    statement = parse_statement(
        "CREATE TEMPORARY VIEW IF NOT EXISTS v (a, b) COMMENT 'c' AS SELECT id, v FROM t"
    )
    assert isinstance(statement, CreateViewStatement)
    assert statement.name == ("v",)
    assert statement.columns == ("a", "b")
    assert (statement.temporary, statement.if_not_exists, statement.comment) == (True, True, "c")
    assert statement.query == query("SELECT id, v FROM t")
    union = parse_statement("CREATE VIEW v AS SELECT a FROM t UNION ALL SELECT a FROM u")
    assert isinstance(union, CreateViewStatement) and isinstance(union.query, exp.Union)


@pytest.mark.parametrize(("sql", "expected"), [
    ("CREATE TEMPORARY SYSTEM FUNCTION IF NOT EXISTS f AS 'm.F' LANGUAGE PYTHON",
     CreateFunctionStatement(("f",), "m.F", "PYTHON", True, True, True)),
    ("CREATE TEMPORARY FUNCTION cat.db.f AS 'm.F' language python",
     CreateFunctionStatement(("cat", "db", "f"), "m.F", "PYTHON", True, False, False)),
    ("CREATE FUNCTION f AS 'com.example.F'",
     CreateFunctionStatement(("f",), "com.example.F", "JAVA", False, False, False)),
    ("CREATE FUNCTION f AS 'com.example.F' LANGUAGE SCALA",
     CreateFunctionStatement(("f",), "com.example.F", "SCALA", False, False, False)),
])
def test_create_function(sql: str, expected: CreateFunctionStatement) -> None:
    assert parse_statement(sql) == expected


@pytest.mark.parametrize(("sql", "expected"), [
    ("DROP TABLE t", DropStatement("TABLE", ("t",))),
    ("DROP TEMPORARY TABLE IF EXISTS cat.db.t",
     DropStatement("TABLE", ("cat", "db", "t"), temporary=True, if_exists=True)),
    ("DROP VIEW IF EXISTS v", DropStatement("VIEW", ("v",), if_exists=True)),
    ("DROP TEMPORARY VIEW v", DropStatement("VIEW", ("v",), temporary=True)),
    ("DROP FUNCTION f", DropStatement("FUNCTION", ("f",))),
    ("DROP TEMPORARY SYSTEM FUNCTION IF EXISTS f",
     DropStatement("FUNCTION", ("f",), temporary=True, system=True, if_exists=True)),
    ("DROP DATABASE IF EXISTS db RESTRICT", DropStatement("DATABASE", ("db",), if_exists=True)),
])
def test_drop(sql: str, expected: DropStatement) -> None:
    assert parse_statement(sql) == expected


# -- DML and statement sets ------------------------------------------------------------------------


def test_insert_forms() -> None:
    into, overwrite, partitioned = parse_statements(
        "INSERT INTO cat.db.sink SELECT * FROM src;"
        "INSERT OVERWRITE sink (a, `B`) SELECT 1, 2;"
        "INSERT INTO t PARTITION (dt = '2020-01-01') VALUES (1, 'a')"
    )
    assert into == InsertStatement(("cat", "db", "sink"), query("SELECT * FROM src"), None, False)
    assert overwrite == InsertStatement(("sink",), query("SELECT 1, 2"), ("a", "B"), True)
    assert isinstance(partitioned, InsertStatement)
    assert partitioned.partition == (("dt", exp.Literal.string("2020-01-01")),)
    values = partitioned.query
    assert isinstance(values, exp.Select) and isinstance(values.args["from_"].this, exp.Values)


def test_insert_with_parenthesized_query_is_not_a_column_list() -> None:
    statement = parse_statement("INSERT INTO sink (SELECT a FROM t)")
    assert isinstance(statement, InsertStatement)
    assert statement.columns is None
    assert statement.query == query("SELECT a FROM t")


def test_both_statement_set_forms() -> None:
    a = InsertStatement(("a",), query("SELECT * FROM s"))
    b = InsertStatement(("b",), query("SELECT x FROM s WHERE x > 1"))
    assert parse_statements(
        "EXECUTE STATEMENT SET BEGIN\n"
        "INSERT INTO a SELECT * FROM s;\n"
        "INSERT INTO b SELECT x FROM s WHERE x > 1;\n"
        "END;"
    ) == [StatementSetStatement((a, b))]
    assert parse_statements(
        "BEGIN STATEMENT SET;\nINSERT INTO a SELECT * FROM s;\n"
        "INSERT INTO b SELECT x FROM s WHERE x > 1;\nEND;\nSELECT 1"
    ) == [StatementSetStatement((a, b)), QueryStatement(query("SELECT 1"))]


def test_statement_set_without_end_fails_at_the_end() -> None:
    with pytest.raises(SqlParseError) as caught:
        parse_statements("BEGIN STATEMENT SET;\nINSERT INTO a SELECT * FROM s;\n")
    assert caught.value.token == "<EOF>"
    assert "INSERT" in str(caught.value) and "END" in str(caught.value)


def test_execute_insert() -> None:
    assert parse_statement("EXECUTE INSERT INTO a SELECT 1") == InsertStatement(
        ("a",), query("SELECT 1")
    )


# -- commands --------------------------------------------------------------------------------------


def test_set_and_reset() -> None:
    assert parse_statements(
        "SET; SET 'parallelism.default' = '2'; SET execution.runtime-mode = batch; "
        "RESET; RESET 'table.local-time-zone'"
    ) == [
        SetStatement(), SetStatement("parallelism.default", "2"),
        SetStatement("execution.runtime-mode", "batch"), ResetStatement(),
        ResetStatement("table.local-time-zone"),
    ]


@pytest.mark.parametrize(("sql", "expected"), [
    ("SHOW TABLES", ShowStatement("TABLES")),
    ("SHOW VIEWS", ShowStatement("VIEWS")),
    ("SHOW FUNCTIONS", ShowStatement("FUNCTIONS")),
    ("SHOW USER FUNCTIONS", ShowStatement("USER FUNCTIONS")),
    ("SHOW CATALOGS", ShowStatement("CATALOGS")),
    ("SHOW DATABASES", ShowStatement("DATABASES")),
    ("SHOW CURRENT CATALOG", ShowStatement("CURRENT CATALOG")),
    ("SHOW CURRENT DATABASE", ShowStatement("CURRENT DATABASE")),
    ("SHOW CREATE TABLE cat.db.t", ShowStatement("CREATE TABLE", ("cat", "db", "t"))),
    ("SHOW CREATE VIEW v", ShowStatement("CREATE VIEW", ("v",))),
    ("SHOW COLUMNS FROM t LIKE '%id'", ShowStatement("COLUMNS", ("t",), "%id")),
    ("SHOW TABLES FROM db NOT LIKE 'tmp%'", ShowStatement("TABLES", ("db",), "tmp%", True)),
    ("show tables", ShowStatement("TABLES")),
])
def test_show(sql: str, expected: ShowStatement) -> None:
    assert parse_statement(sql) == expected


def test_describe_explain_use() -> None:
    assert parse_statements("DESCRIBE t; DESC cat.db.`T`; DESCRIBE EXTENDED t") == [
        DescribeStatement(("t",)), DescribeStatement(("cat", "db", "T")),
        DescribeStatement(("t",), extended=True),
    ]
    assert parse_statements("USE CATALOG c; USE db; USE c.db") == [
        UseStatement("c", None), UseStatement(None, "db"), UseStatement("c", "db"),
    ]


def test_explain_forms() -> None:
    select = QueryStatement(query("SELECT a FROM t"))
    assert parse_statement("EXPLAIN SELECT a FROM t") == ExplainStatement(select)
    assert parse_statement("EXPLAIN PLAN FOR SELECT a FROM t") == ExplainStatement(select)
    assert parse_statement(
        "EXPLAIN ESTIMATED_COST, CHANGELOG_MODE, JSON_EXECUTION_PLAN SELECT a FROM t"
    ) == ExplainStatement(select, ("ESTIMATED_COST", "CHANGELOG_MODE", "JSON_EXECUTION_PLAN"))
    insert = parse_statement("EXPLAIN CHANGELOG_MODE INSERT INTO s SELECT a FROM t")
    assert insert == ExplainStatement(
        InsertStatement(("s",), query("SELECT a FROM t")), ("CHANGELOG_MODE",)
    )
    statement_set = parse_statement(
        "EXPLAIN STATEMENT SET BEGIN INSERT INTO s SELECT a FROM t; END"
    )
    assert isinstance(statement_set, ExplainStatement)
    assert isinstance(statement_set.statement, StatementSetStatement)


def test_script_with_comments_and_empty_statements() -> None:
    statements = parse_statements(
        "-- a leading comment\n;;\nSET 'a' = 'b'; /* block\n comment */ SHOW TABLES;\n-- end\n"
    )
    assert statements == [SetStatement("a", "b"), ShowStatement("TABLES")]
    assert parse_statements("") == []
    assert parse_statements("-- only a comment") == []


def test_statements_are_frozen_and_picklable() -> None:
    statement = parse_statement(ORDERS_DDL)
    with pytest.raises(AttributeError):
        statement.name = ("x",)  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(statement)) == statement


# -- queries ---------------------------------------------------------------------------------------


def test_select_clauses() -> None:
    tree = query(
        "SELECT DISTINCT a, COUNT(DISTINCT b) AS c, COUNT(*) FROM t WHERE a > 1 "
        "GROUP BY a HAVING COUNT(*) > 2 ORDER BY a DESC LIMIT 10"
    )
    assert isinstance(tree, exp.Select)
    assert tree.args["distinct"] is not None
    assert tree.expressions == [
        col("a"),
        exp.Alias(this=call("COUNT", exp.Distinct(expressions=[col("b")])),
                  alias=exp.Identifier(this="c", quoted=False)),
        call("COUNT", exp.Star()),
    ]
    assert tree.args["where"].this == exp.GT(this=col("a"), expression=num(1))
    assert tree.args["group"].expressions == [col("a")]
    assert isinstance(tree.args["having"].this, exp.GT)
    assert tree.args["order"].expressions[0].args["desc"] is True
    assert tree.args["limit"].expression == num(10)


def test_identifiers_keep_their_case_and_backticks_quote() -> None:
    items = select_items("SELECT MyCol, `select`, `Weird Col`, t.`Value` FROM `my-cat`.db.T1")
    assert items == [col("MyCol"), col("select", quoted=True), col("Weird Col", quoted=True),
                     exp.Column(this=exp.Identifier(this="Value", quoted=True),
                                table=exp.Identifier(this="t", quoted=False))]
    table = query("SELECT a FROM `my-cat`.db.T1").args["from_"].this
    assert isinstance(table, exp.Table)
    assert (table.catalog, table.db, table.name) == ("my-cat", "db", "T1")


def test_string_literals_escape_quotes_with_quotes_and_keep_backslashes() -> None:
    assert select_items(r"SELECT 'it''s', 'a\nb'") == [
        exp.Literal.string("it's"), exp.Literal.string("a\\nb")
    ]


def test_set_operations_and_with() -> None:
    assert isinstance(query("SELECT a FROM t UNION ALL SELECT a FROM u"), exp.Union)
    assert query("SELECT a FROM t UNION ALL SELECT a FROM u").args["distinct"] is False
    assert query("SELECT a FROM t UNION SELECT a FROM u").args["distinct"] is True
    assert isinstance(query("SELECT a FROM t INTERSECT SELECT a FROM u"), exp.Intersect)
    assert isinstance(query("SELECT a FROM t EXCEPT SELECT a FROM u"), exp.Except)
    with_query = query("WITH x AS (SELECT 1 AS a), y AS (SELECT a FROM x) SELECT a FROM y")
    assert [cte.alias for cte in with_query.args["with_"].expressions] == ["x", "y"]
    values = query("VALUES (1, 'a'), (2, 'b')")
    assert isinstance(values, exp.Select)
    rows = values.args["from_"].this
    assert isinstance(rows, exp.Values) and len(rows.expressions) == 2


def test_function_calls_are_anonymous_with_names_as_written() -> None:
    items = select_items(
        "SELECT split(a), `myUdf`(a), IF(a > 1, 'x', 'y'), MOD(id, 100), LEFT(s, 2), "
        "REPLACE(s, 'a', 'b'), PROCTIME(), DATE_FORMAT(ts, 'yyyy'), cat.db.f(a), ROW(a, b) "
        "FROM t"
    )
    assert [item.name if isinstance(item, exp.Anonymous) else type(item) for item in items] == [
        "split", "myUdf", "IF", "MOD", "LEFT", "REPLACE", "PROCTIME", "DATE_FORMAT", exp.Dot,
        "ROW",
    ]
    assert items[0] == call("split", col("a"))
    assert items[8].expression == call("f", col("a"))


def test_niladic_keyword_functions() -> None:
    items = select_items(
        "SELECT CURRENT_TIMESTAMP, LOCALTIMESTAMP, CURRENT_DATE, CURRENT_TIME, LOCALTIME, "
        "CURRENT_ROW_TIMESTAMP(), NOW(), `localtime`"
    )
    assert items[:7] == [
        call("CURRENT_TIMESTAMP"), call("LOCALTIMESTAMP"), call("CURRENT_DATE"),
        call("CURRENT_TIME"), call("LOCALTIME"), call("CURRENT_ROW_TIMESTAMP"), call("NOW"),
    ]
    assert items[7] == col("localtime", quoted=True)


def test_cast_keeps_flinks_type_text() -> None:
    casts = select_items(
        "SELECT CAST(a AS BIGINT), CAST(b AS DECIMAL(10, 2)), CAST(c AS ROW<x INT, y STRING>), "
        "CAST(d AS ARRAY<ARRAY<INT>>), CAST(e AS MAP<STRING, INT>), "
        "CAST(f AS TIMESTAMP(3) WITH LOCAL TIME ZONE), TRY_CAST(g AS INT), "
        "CAST(h AS VARCHAR(10) NOT NULL) FROM t"
    )
    assert [type(node) for node in casts] == [exp.Cast] * 6 + [exp.TryCast, exp.Cast]
    assert [type_text(node.args["to"]) for node in casts] == [
        "BIGINT", "DECIMAL(10, 2)", "ROW<x INT, y STRING>", "ARRAY<ARRAY<INT>>",
        "MAP<STRING, INT>", "TIMESTAMP(3) WITH LOCAL TIME ZONE", "INT", "VARCHAR(10) NOT NULL",
    ]
    assert casts[0].this == col("a")


def test_subqueries_and_predicates() -> None:
    where = query(
        "SELECT a FROM t WHERE a IN (SELECT b FROM u) AND EXISTS (SELECT 1 FROM v) "
        "AND c IN (1, 2) AND a IS DISTINCT FROM b AND a IS NOT DISTINCT FROM c "
        "AND s SIMILAR TO 'x%' AND s LIKE 'x!%' ESCAPE '!' AND s NOT LIKE 'y' "
        "AND x BETWEEN 1 AND 2 AND y IS NOT NULL AND z IS TRUE"
    ).args["where"].this
    kinds = [type(node) for node in where.flatten()]
    assert kinds == [exp.In, exp.Exists, exp.In, exp.NullSafeNEQ, exp.NullSafeEQ,
                     exp.SimilarTo, exp.Escape, exp.Not, exp.Between, exp.Not, exp.Is]
    in_query = next(where.flatten())
    assert isinstance(in_query.args["query"], exp.Subquery)
    escape, not_like = list(where.flatten())[6:8]
    assert isinstance(escape.this, exp.Like)
    assert escape.expression == exp.Literal.string("!")
    assert isinstance(not_like.this, exp.Like) and not not_like.this.args.get("negate")


def test_case_and_concatenation() -> None:
    case, concat = select_items(
        "SELECT CASE WHEN a > 1 THEN 'x' WHEN a > 0 THEN 'y' ELSE 'z' END, a || 'x' || b FROM t"
    )
    assert isinstance(case, exp.Case) and len(case.args["ifs"]) == 2
    assert case.args["default"] == exp.Literal.string("z")
    assert isinstance(concat, exp.DPipe) and isinstance(concat.this, exp.DPipe)


def test_top_n_with_row_number() -> None:
    tree = query(
        "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY cat ORDER BY sales DESC) "
        "AS rn FROM t) WHERE rn <= 3"
    )
    inner = tree.args["from_"].this
    assert isinstance(inner, exp.Subquery)
    window = inner.this.expressions[1].this
    assert isinstance(window, exp.Window)
    assert window.this == call("ROW_NUMBER")
    assert window.args["partition_by"] == [col("cat")]
    assert window.args["order"].expressions[0].this == col("sales")


def test_joins() -> None:
    joins = query(
        "SELECT * FROM a INNER JOIN b ON a.x = b.x LEFT JOIN c ON a.y = c.y "
        "RIGHT OUTER JOIN d ON d.k = a.k FULL OUTER JOIN e ON e.k = a.k CROSS JOIN f, g"
    ).args["joins"]
    assert [(j.args.get("side"), j.args.get("kind")) for j in joins] == [
        (None, "INNER"), ("LEFT", None), ("RIGHT", "OUTER"), ("FULL", "OUTER"),
        (None, "CROSS"), (None, None),
    ]
    assert joins[0].args["on"] == exp.EQ(this=col("x", "a"), expression=col("x", "b"))
    assert joins[5].this == exp.Table(this=exp.Identifier(this="g", quoted=False))


def test_lateral_table_forms() -> None:
    comma, left = query(
        "SELECT * FROM t, LATERAL TABLE(split(a)) AS T(s, l) "
        "LEFT JOIN LATERAL TABLE(explode(b)) U(x) ON TRUE"
    ).args["joins"]
    assert comma.args.get("side") is None and comma.args.get("on") is None
    assert comma.this == exp.Lateral(
        this=call("split", col("a")),
        alias=exp.TableAlias(this=exp.Identifier(this="T", quoted=False), columns=[
            exp.Identifier(this="s", quoted=False), exp.Identifier(this="l", quoted=False)]),
    )
    assert left.args["side"] == "LEFT" and left.args["on"] == exp.true()
    assert isinstance(left.this, exp.Lateral) and left.this.this == call("explode", col("b"))


def test_window_table_valued_functions() -> None:
    positional = query(
        "SELECT window_start, SUM(price) FROM TABLE(TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), "
        "INTERVAL '10' MINUTES)) GROUP BY window_start, window_end"
    ).args["from_"].this
    assert isinstance(positional, exp.TableFromRows)
    minutes = exp.Interval(this=exp.Literal.string("10"), unit=exp.var("MINUTES"))
    bid = TableArgument(this=exp.Table(this=exp.Identifier(this="Bid", quoted=False)))
    assert positional.this == call("TUMBLE", bid, call("DESCRIPTOR", col("bidtime")), minutes)
    named = query(
        "SELECT * FROM TABLE(TUMBLE(DATA => TABLE Bid, TIMECOL => DESCRIPTOR(bidtime), "
        "SIZE => INTERVAL '10' MINUTES)) AS w"
    ).args["from_"].this
    assert [arg.this.name for arg in named.this.expressions] == ["DATA", "TIMECOL", "SIZE"]
    assert all(isinstance(arg, exp.Kwarg) for arg in named.this.expressions)
    assert named.this.expressions[0].expression == bid
    assert named.alias == "w"
    session = query(
        "SELECT * FROM TABLE(SESSION(TABLE Bid PARTITION BY item, DESCRIPTOR(bidtime), "
        "INTERVAL '5' MINUTES))"
    ).args["from_"].this.this
    assert session.name == "SESSION"
    assert session.expressions[0].args["partition_by"] == [col("item")]


def test_temporal_join_and_intervals_and_typed_literals() -> None:
    tree = query(
        "SELECT o.id, TIMESTAMP '2020-01-01 00:00:00', DATE '2020-01-01', TIME '10:00:00', "
        "o.ts + INTERVAL '1' DAY, INTERVAL '1 10' DAY TO HOUR "
        "FROM orders AS o JOIN rates FOR SYSTEM_TIME AS OF o.proc_time AS r ON o.cur = r.cur"
    )
    rates = tree.args["joins"][0].this
    assert rates.args["version"] == exp.Version(
        this="SYSTEM_TIME", kind="AS OF", expression=col("proc_time", "o")
    )
    assert rates.alias == "r"
    _, ts, date, time, plus, span = tree.expressions
    assert isinstance(ts, TypedLiteral)
    assert ts.this == exp.Literal.string("2020-01-01 00:00:00")
    assert [type_text(node.args["to"]) for node in (ts, date, time)] == [
        "TIMESTAMP", "DATE", "TIME"]
    assert plus.expression == exp.Interval(this=exp.Literal.string("1"), unit=exp.var("DAY"))
    assert isinstance(span.unit, exp.IntervalSpan)


def test_special_function_syntax() -> None:
    items = select_items(
        "SELECT EXTRACT(HOUR FROM ts), POSITION('a' IN s), TRIM(BOTH 'x' FROM s), TRIM(s), "
        "OVERLAY(s PLACING 'x' FROM 2 FOR 3), SUBSTRING(s FROM 1 FOR 2), SUBSTRING(s, 1, 2), "
        "TIMESTAMPADD(DAY, 1, ts), TIMESTAMPDIFF(HOUR, a, b), FLOOR(ts TO HOUR), CEIL(x) FROM t"
    )
    s = col("s")
    assert items[0] == exp.Extract(this=exp.var("HOUR"), expression=col("ts"))
    assert items[1] == exp.StrPosition(this=s, substr=exp.Literal.string("a"))
    assert items[2] == exp.Trim(this=s, expression=exp.Literal.string("x"), position="BOTH")
    assert items[3] == exp.Trim(this=s)
    assert items[4] == exp.Overlay(this=s, expression=exp.Literal.string("x"), from_=num(2),
                                   for_=num(3))
    assert items[5] == items[6] == exp.Substring(this=s, start=num(1), length=num(2))
    assert items[7] == call("TIMESTAMPADD", exp.var("DAY"), num(1), col("ts"))
    assert items[8] == call("TIMESTAMPDIFF", exp.var("HOUR"), col("a"), col("b"))
    assert items[9] == exp.Floor(this=col("ts"), to=exp.var("HOUR"))
    assert items[10] == exp.Ceil(this=col("x"))


def test_json_value_returning() -> None:
    plain, returning, handled = select_items(
        "SELECT JSON_VALUE(j, '$.a'), JSON_VALUE(j, '$.a' RETURNING INT), "
        "JSON_VALUE(j, '$.a' RETURNING DECIMAL(10, 2) DEFAULT 0 ON EMPTY ERROR ON ERROR) FROM t"
    )
    assert plain == exp.JSONValue(this=col("j"), path=exp.Literal.string("$.a"))
    assert type_text(returning.args["returning"]) == "INT"
    assert type_text(handled.args["returning"]) == "DECIMAL(10, 2)"
    condition = handled.args["on_condition"]
    assert condition.args["empty"] == num(0) and condition.args["error"] == "ERROR ON ERROR"


def test_constructors_and_access() -> None:
    array, map_, index, field = select_items(
        "SELECT ARRAY[1, 2], MAP['a', 1, 'b', 2], arr[1], r.f.g FROM t"
    )
    assert array == exp.Array(expressions=[num(1), num(2)])
    assert map_ == exp.VarMap(
        keys=exp.Array(expressions=[exp.Literal.string("a"), exp.Literal.string("b")]),
        values=exp.Array(expressions=[num(1), num(2)]),
    )
    assert isinstance(index, exp.Bracket) and index.expressions == [num(1)]
    assert isinstance(field, exp.Column) and field.parts[-1].name == "g"


def test_window_aggregates_and_filter() -> None:
    over, named, filtered = select_items(
        "SELECT SUM(b) OVER (PARTITION BY a ORDER BY proctime ROWS BETWEEN 2 PRECEDING AND "
        "CURRENT ROW), SUM(b) OVER w, COUNT(*) FILTER (WHERE a > 1) FROM t "
        "WINDOW w AS (PARTITION BY a ORDER BY proctime)"
    )
    assert isinstance(over, exp.Window) and isinstance(over.args["spec"], exp.WindowSpec)
    assert isinstance(named, exp.Window) and named.alias == "w"
    assert isinstance(filtered, exp.Filter) and filtered.this == call("COUNT", exp.Star())


def test_query_hint_is_kept() -> None:
    tree = query("SELECT /*+ STATE_TTL('t' = '1d') */ a FROM t")
    assert isinstance(tree.args["hint"], exp.Hint)


def test_match_recognize_is_a_typed_unsupported_feature() -> None:
    with pytest.raises(UnsupportedFeatureError, match="MATCH_RECOGNIZE"):
        parse_statement(
            "SELECT * FROM t MATCH_RECOGNIZE (PARTITION BY a ORDER BY ts MEASURES A.b AS ab "
            "PATTERN (A B+) DEFINE A AS A.x > 1) AS m"
        )


@pytest.mark.parametrize("sql", [
    "ALTER TABLE t RENAME TO u", "CREATE CATALOG c WITH ('type' = 'x')",
    "CREATE TABLE t (a INT) WITH ('connector' = 'x') AS SELECT 1",
    "CREATE FUNCTION f AS 'F' USING JAR 'x.jar'",
])
def test_statements_flintlock_does_not_have_yet(sql: str) -> None:
    with pytest.raises(UnsupportedFeatureError):
        parse_statement(sql)


def test_parse_expression() -> None:
    assert parse_expression("a + 1") == exp.Add(this=col("a"), expression=num(1))
    assert parse_expression("PROCTIME()") == call("PROCTIME")
    assert type_text(parse_expression("CAST(x AS STRING)").args["to"]) == "STRING"
    assert parse_expression("`my col` * 2").this == col("my col", quoted=True)


def test_generated_sql_is_flink_sql() -> None:
    sql = ("SELECT `a b`, CAST(x AS ROW<y INT>), MAP['k', 1], ARRAY[1], CURRENT_TIMESTAMP, "
           "POSITION('a' IN s), TRIM(LEADING 'x' FROM s), SUBSTRING(s FROM 2 FOR 3), "
           "TIMESTAMP '2020-01-01 00:00:00' FROM t, LATERAL TABLE(f(a)) AS T(c)")
    assert query(sql).sql(dialect="flink") == sql


# -- errors ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("sql", "token", "line", "column"), [
    ("SELECT * FORM t", "t", 1, 15),
    ("SELECT a,\n  b FROM t WHER a = 1", "a", 2, 17),
    ("SELECT a FROM t WHERE", "<EOF>", 1, 21),
    ("CREATE TABLE x (a INT,) WITH ('connector'='datagen')", ")", 1, 23),
    ("SELEC 1", "SELEC", 1, 1),
    ("SELECT CAST(a AS ) FROM t", ")", 1, 18),
    ("CREATE TABLE t (a INT) WITH ('k' = 1)", "1", 1, 36),
    ("SET 'a' = 'b';\nSHOW TABLS", "TABLS", 2, 6),
    ("DROP TABEL t", "TABEL", 1, 6),
    ("SELECT a FROM t;\n\n  INSERT t SELECT 1", "t", 3, 10),
])
def test_syntax_errors_name_line_column_and_token(
    sql: str, token: str, line: int, column: int
) -> None:
    with pytest.raises(SqlParseError) as caught:
        parse_statements(sql)
    error = caught.value
    assert (error.token, error.line, error.column) == (token, line, column)
    first, detail = str(error).split("\n", 1)
    assert first == (f'SQL parse failed. Encountered "{token}" at line {line}, '
                     f"column {column}.")
    assert detail.startswith("Was expecting")


def test_lexical_errors_name_the_unterminated_quote() -> None:
    for sql, column in (("SELECT 'abc FROM t", 8), ("SELECT `a FROM t", 8),
                        ("SELECT a /* never closed", 10)):
        with pytest.raises(SqlParseError) as caught:
            parse_statements(sql)
        assert (caught.value.line, caught.value.column) == (1, column)
        assert str(caught.value).startswith(f"SQL parse failed. Lexical error at line 1, "
                                            f"column {column}.")


def test_parse_error_survives_pickling() -> None:
    with pytest.raises(SqlParseError) as caught:
        parse_statement("SELECT * FORM t")
    copy = pickle.loads(pickle.dumps(caught.value))
    assert (copy.line, copy.column, copy.token, str(copy)) == (
        1, 15, "t", str(caught.value))


def test_parse_statement_takes_exactly_one() -> None:
    assert parse_statement("SELECT 1;") == QueryStatement(query("SELECT 1"))
    with pytest.raises(SqlParseError, match="only single statement supported"):
        parse_statement("SELECT 1; SELECT 2")
    with pytest.raises(SqlParseError):
        parse_statement("")


def test_expression_errors() -> None:
    with pytest.raises(SqlParseError) as caught:
        parse_expression("a +")
    assert caught.value.token == "<EOF>"
    with pytest.raises(SqlParseError) as trailing:
        parse_expression("a b c")
    assert (trailing.value.token, trailing.value.column) == ("b", 3)
