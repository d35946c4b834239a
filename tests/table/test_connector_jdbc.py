"""The ``jdbc`` table connector against a real PostgreSQL started by the tests
(tests/unit/connectors/postgres_server.py), SQL jobs on TaskManager threads: a bounded scan
(whole table and partitioned), an append sink, an upsert sink by primary key fed by an updating
query (upserts and deletes), Flink's type mapping both ways, and the options Flink checks."""

import datetime
from decimal import Decimal

import pytest

from flintlock.table import EnvironmentSettings, TableEnvironment
from flintlock.table.errors import TableError, ValidationError
from flintlock.testing.executor import use_thread_executor
from tests.unit.connectors.postgres_server import postgres_server


@pytest.fixture(scope="module")
def postgres():
    with postgres_server() as server:
        yield server


@pytest.fixture
def db(postgres):
    with postgres.connect() as connection:
        for table in ("books", "counts", "typed", "out_append"):
            connection.execute(f"DROP TABLE IF EXISTS {table}")
        yield connection


@pytest.fixture
def t_env(monkeypatch):
    use_thread_executor(monkeypatch)
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.get_config().set("parallelism.default", "2")
    return env


def _ddl(name, columns, postgres, table=None, **options):
    options = {"connector": "jdbc", "url": postgres.jdbc_url, "table-name": table or name,
               "username": "postgres", **{k.replace("_", "."): v for k, v in options.items()}}
    rendered = ",\n".join(f"'{k}' = '{v}'" for k, v in options.items())
    return f"CREATE TABLE {name} ({columns}) WITH ({rendered})"


def _collect(t_env, query):
    with t_env.execute_sql(query).collect() as results:
        return [tuple(row) for row in results]


def _books(db, count=50):
    db.execute("CREATE TABLE books (id INT PRIMARY KEY, title VARCHAR(20), price NUMERIC(6,2))")
    with db.cursor() as cursor:
        cursor.executemany("INSERT INTO books VALUES (%s, %s, %s)",
                           [(i, f"b{i}", Decimal(i) / 4) for i in range(count)])


def test_scan_reads_the_whole_table(t_env, postgres, db):
    _books(db)
    t_env.execute_sql(_ddl("books", "id INT, title STRING, price DECIMAL(6, 2)", postgres))
    rows = _collect(t_env, "SELECT id, title, price FROM books")
    assert sorted(rows) == [(i, f"b{i}", Decimal(i) / 4) for i in range(50)]


def test_partitioned_scan_reads_each_range_once(t_env, postgres, db):
    _books(db)
    t_env.execute_sql(_ddl("books", "id INT, title STRING", postgres,
                           **{"scan.partition.column": "id", "scan.partition.num": "3",
                              "scan.partition.lower-bound": "5",
                              "scan.partition.upper-bound": "44"}))
    rows = _collect(t_env, "SELECT id, title FROM books")
    # rows outside lower..upper are not read, as in Flink
    assert sorted(rows) == [(i, f"b{i}") for i in range(5, 45)]


def test_append_sink_inserts_every_row(t_env, postgres, db):
    db.execute("CREATE TABLE out_append (id BIGINT, name TEXT)")
    t_env.execute_sql(_ddl("out_append", "id BIGINT, name STRING", postgres,
                           **{"sink.buffer-flush.max-rows": "7"}))
    t_env.execute_sql("INSERT INTO out_append VALUES (1, 'a'), (2, CAST(NULL AS STRING)), "
                      "(1, 'a')").wait()
    assert sorted(db.execute("SELECT id, name FROM out_append").fetchall(),
                  key=str) == [(1, "a"), (1, "a"), (2, None)]


def test_upsert_sink_keeps_the_last_value_per_key_and_deletes(t_env, postgres, db):
    db.execute("CREATE TABLE counts (word TEXT PRIMARY KEY, c BIGINT)")
    db.execute("INSERT INTO counts VALUES ('stale', 99)")
    t_env.execute_sql(_ddl("counts", "word STRING, c BIGINT, PRIMARY KEY (word) NOT ENFORCED",
                           postgres, **{"sink.buffer-flush.max-rows": "2"}))
    words = ", ".join(f"('{w}')" for w in "a b a c a b d".split())
    t_env.execute_sql(f"CREATE TEMPORARY VIEW words AS SELECT * FROM (VALUES {words}) AS t(w)")
    # counts per word, then a filter on the count: 'c' and 'd' reach 1 and stay, 'a' passes
    # through 1 and 2 to 3; rows with count 2 are retracted when the count moves on (-D)
    t_env.execute_sql("INSERT INTO counts SELECT w, cnt FROM (SELECT w, COUNT(*) AS cnt FROM "
                      "words GROUP BY w) WHERE cnt <> 2").wait()
    rows = sorted(db.execute("SELECT word, c FROM counts").fetchall())
    assert rows == [("a", 3), ("c", 1), ("d", 1), ("stale", 99)]


def test_upsert_sink_deletes_a_retracted_key(t_env, postgres, db):
    db.execute("CREATE TABLE counts (word TEXT PRIMARY KEY, c BIGINT)")
    t_env.execute_sql(_ddl("counts", "word STRING, c BIGINT, PRIMARY KEY (word) NOT ENFORCED",
                           postgres, **{"sink.buffer-flush.max-rows": "1"}))
    t_env.execute_sql("CREATE TEMPORARY VIEW words AS SELECT * FROM (VALUES ('a'), ('b'), "
                      "('b')) AS t(w)")
    # 'b' reaches count 1 (written), then 2: the filter retracts it (-D deletes the row)
    t_env.execute_sql("INSERT INTO counts SELECT w, cnt FROM (SELECT w, COUNT(*) AS cnt FROM "
                      "words GROUP BY w) WHERE cnt < 2").wait()
    assert db.execute("SELECT word, c FROM counts").fetchall() == [("a", 1)]


def test_types_round_trip_as_flink_maps_them(t_env, postgres, db):
    db.execute("CREATE TABLE typed (i SMALLINT, b BOOLEAN, f REAL, d DOUBLE PRECISION, "
               "n NUMERIC(10, 3), s VARCHAR(10), y BYTEA, dt DATE, tm TIME, "
               "ts TIMESTAMP(3), tz TIMESTAMPTZ, a INTEGER[])")
    columns = ("i SMALLINT, b BOOLEAN, f FLOAT, d DOUBLE, n DECIMAL(10, 3), s VARCHAR(10), "
               "y BYTES, dt DATE, tm TIME, ts TIMESTAMP(3), tz TIMESTAMP_LTZ(3), a ARRAY<INT>")
    t_env.execute_sql(_ddl("typed", columns, postgres))
    t_env.execute_sql(
        "INSERT INTO typed SELECT CAST(7 AS SMALLINT), TRUE, CAST(1.5 AS FLOAT), 2.25, "
        "CAST(3.125 AS DECIMAL(10, 3)), 'héllo', CAST(NULL AS BYTES), DATE '2024-02-29', "
        "TIME '12:34:56', "
        "TIMESTAMP '2024-01-02 03:04:05.678', CAST(NULL AS TIMESTAMP_LTZ(3)), "
        "ARRAY[1, 2]").wait()
    # (flintlock's SQL has no X'..' literal nor TO_TIMESTAMP_LTZ yet)
    db.execute("UPDATE typed SET y = '\\x0102', tz = '2023-11-14 22:13:20.123+00'")
    stored = db.execute("SELECT tz AT TIME ZONE 'UTC', a FROM typed").fetchone()
    assert stored == (datetime.datetime(2023, 11, 14, 22, 13, 20, 123000), [1, 2])
    [row] = _collect(t_env, "SELECT * FROM typed")
    assert row[:9] == (7, True, 1.5, 2.25, Decimal("3.125"), "héllo", bytearray(b"\x01\x02"),
                       datetime.date(2024, 2, 29), datetime.time(12, 34, 56))
    assert row[9] == datetime.datetime(2024, 1, 2, 3, 4, 5, 678000)
    assert row[10] == datetime.datetime(2023, 11, 14, 22, 13, 20, 123000), row[10]
    assert row[11] == [1, 2]


def test_an_unsupported_type_is_refused_with_flinks_message(t_env, postgres, db):
    t_env.execute_sql(_ddl("m", "id INT, tags MAP<STRING, INT>", postgres))
    with pytest.raises(ValidationError, match=r"The PostgreSQL dialect doesn't support type: "
                                              r"MAP<STRING, INT>\."):
        _collect(t_env, "SELECT * FROM m")


def test_partition_options_come_all_or_none(t_env, postgres, db):
    t_env.execute_sql(_ddl("books", "id INT", postgres, **{"scan.partition.column": "id"}))
    with pytest.raises(ValidationError, match="all or none"):
        _collect(t_env, "SELECT * FROM books")


def test_another_database_url_is_refused(t_env, postgres):
    t_env.execute_sql("CREATE TABLE x (id INT) WITH ('connector' = 'jdbc', 'url' = "
                      "'jdbc:mysql://127.0.0.1:3306/db', 'table-name' = 'x')")
    with pytest.raises(ValidationError, match="PostgreSQL only"):
        _collect(t_env, "SELECT * FROM x")


def test_an_updating_query_into_a_table_without_key_is_refused(t_env, postgres, db):
    t_env.execute_sql(_ddl("out_append", "w STRING, c BIGINT", postgres))
    t_env.execute_sql("CREATE TEMPORARY VIEW words AS SELECT * FROM (VALUES ('a')) AS t(w)")
    with pytest.raises(TableError, match="doesn't support consuming update changes"):
        t_env.execute_sql("INSERT INTO out_append SELECT w, COUNT(*) FROM words GROUP BY w")


def test_unknown_options_are_refused(t_env, postgres):
    t_env.execute_sql(_ddl("x", "id INT", postgres, **{"sink.buffer-flush.rows": "1"}))
    with pytest.raises(ValidationError, match="Unsupported options found for 'jdbc'"):
        _collect(t_env, "SELECT * FROM x")


def test_lookup_join_enriches_each_row_with_the_current_dimension_row(t_env, postgres, db):
    _books(db, count=3)
    t_env.execute_sql(_ddl("books", "id INT, title STRING, price DECIMAL(6, 2)", postgres,
                           **{"lookup.cache": "PARTIAL", "lookup.partial-cache.max-rows": "10"}))
    t_env.execute_sql("CREATE TEMPORARY VIEW orders_raw AS SELECT * FROM (VALUES (1, 0), "
                      "(2, 2), (3, 7), (4, 2)) AS t(order_id, book_id)")
    t_env.execute_sql("CREATE TEMPORARY VIEW orders AS SELECT order_id, book_id, PROCTIME() AS "
                      "proc_time FROM orders_raw")
    inner = _collect(t_env, "SELECT o.order_id, b.title, b.price FROM orders AS o JOIN books "
                            "FOR SYSTEM_TIME AS OF o.proc_time AS b ON o.book_id = b.id")
    assert sorted(inner) == [(1, "b0", Decimal("0.00")), (2, "b2", Decimal("0.50")),
                             (4, "b2", Decimal("0.50"))]
    left = _collect(t_env, "SELECT o.order_id, b.title FROM orders AS o LEFT JOIN books FOR "
                           "SYSTEM_TIME AS OF o.proc_time AS b ON o.book_id = b.id AND "
                           "b.title <> 'b0'")
    assert sorted(left) == [(1, None), (2, "b2"), (3, None), (4, "b2")]


def test_lookup_join_needs_a_proctime_and_an_equality(t_env, postgres, db):
    _books(db, count=1)
    t_env.execute_sql(_ddl("books", "id INT, title STRING", postgres))
    t_env.execute_sql("CREATE TEMPORARY VIEW orders AS SELECT b, PROCTIME() AS pt, "
                      "CAST(NULL AS TIMESTAMP(3)) AS ts FROM (VALUES (1)) AS t(b)")
    with pytest.raises(ValidationError, match="requires an equality condition"):
        _collect(t_env, "SELECT * FROM orders AS o JOIN books FOR SYSTEM_TIME AS OF o.pt AS k "
                        "ON o.b > k.id")
    with pytest.raises(ValidationError, match="time attribute"):
        _collect(t_env, "SELECT * FROM orders AS o JOIN books FOR SYSTEM_TIME AS OF o.ts AS k "
                        "ON o.b = k.id")
