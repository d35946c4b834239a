"""The ``jdbc`` table's lookup function and cache (``_jdbc_lookup``), its dialect's statements
and values (``_jdbc_dialect``), the scan reader's restore, and JDBC's ``?`` markers
(``_jdbc.to_psycopg``): the cache on a manual clock, the lookups against the real PostgreSQL
of tests/unit/connectors/postgres_server.py."""

import datetime

import psycopg
import pytest

from flintlock.datastream.connectors._jdbc import (
    BatchStatement,
    ConnectionSpec,
    JdbcConnectionError,
    JdbcWriteError,
    parse_url,
    to_psycopg,
)
from flintlock.table import DataTypes
from flintlock.table.connectors import _jdbc_dialect as dialect
from flintlock.table.connectors._jdbc_lookup import (
    CacheSettings,
    JdbcLookupFunction,
    LookupCache,
    cache_settings,
)
from flintlock.table.connectors._options import Options
from flintlock.table.connectors.jdbc import JdbcScanReader, ScanSplit
from flintlock.table.errors import ValidationError
from flintlock.table.plan.nodes import Field
from tests.unit.connectors.postgres_server import postgres_server

FIELDS = (Field("id", DataTypes.INT()), Field("name", DataTypes.STRING()),
          Field("seen", DataTypes.TIMESTAMP_LTZ(3)))


class ManualClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


@pytest.fixture(scope="module")
def postgres():
    with postgres_server() as server:
        with server.connect() as connection:
            connection.execute("CREATE TABLE users (id INT PRIMARY KEY, name TEXT, "
                               "seen TIMESTAMPTZ)")
            connection.execute("INSERT INTO users VALUES (1, 'ann', '2024-01-01 10:00:00+02'),"
                               " (2, 'bob', NULL), (3, 'bob', NULL)")
        yield server


def _function(postgres, keys=("id",), cache=None, clock=None, sleep=None):
    return JdbcLookupFunction(ConnectionSpec(postgres.jdbc_url, "postgres"), "users", FIELDS,
                              keys, cache, max_retries=2, sleep=sleep or (lambda s: None),
                              clock=clock or ManualClock())


def test_lookup_returns_the_matching_rows_converted(postgres):
    lookup = _function(postgres)
    assert lookup.lookup((1,)) == [[1, "ann", datetime.datetime(2024, 1, 1, 8, 0)]]
    assert lookup.lookup((9,)) == []
    assert lookup.lookup((None,)) == []  # a NULL key matches nothing, without a query
    assert lookup.queries == 2
    by_name = _function(postgres, keys=("name",))
    assert sorted(r[0] for r in by_name.lookup(("bob",))) == [2, 3]
    lookup.close()
    by_name.close()


def test_without_a_cache_every_lookup_asks_the_database(postgres):
    lookup = _function(postgres)
    for _ in range(3):
        lookup.lookup((1,))
    assert lookup.queries == 3 and lookup.cache is None


def test_the_partial_cache_serves_repeated_keys_until_they_expire(postgres):
    clock = ManualClock()
    lookup = _function(postgres, cache=CacheSettings(expire_after_write_ms=1000), clock=clock)
    lookup.lookup((1,))
    lookup.lookup((9,))  # a missing key is cached too (cache-missing-key defaults to true)
    clock.now = 0.999
    assert lookup.lookup((1,))[0][1] == "ann" and lookup.lookup((9,)) == []
    assert lookup.queries == 2
    clock.now = 1.0
    lookup.lookup((1,))
    assert lookup.queries == 3


def test_the_cache_evicts_the_least_recently_used_key():
    cache = LookupCache(CacheSettings(max_rows=2), ManualClock())
    cache.put((1,), ["a"])
    cache.put((2,), ["b"])
    assert cache.get((1,)) == ["a"]  # 1 is now the most recently used
    cache.put((3,), ["c"])
    assert cache.get((2,)) is None and cache.get((1,)) == ["a"] and cache.get((3,)) == ["c"]


def test_expire_after_access_counts_from_the_last_read():
    clock = ManualClock()
    cache = LookupCache(CacheSettings(expire_after_access_ms=100), clock)
    cache.put((1,), ["a"])
    for step in (0.09, 0.18, 0.27):
        clock.now = step
        assert cache.get((1,)) == ["a"]
    clock.now = 0.38
    assert cache.get((1,)) is None


def test_missing_keys_are_not_cached_when_told_not_to():
    cache = LookupCache(CacheSettings(max_rows=5, cache_missing_key=False), ManualClock())
    cache.put((1,), [])
    assert cache.get((1,)) is None and len(cache) == 0


def test_cache_options_new_and_legacy():
    assert cache_settings(Options({})) is None
    assert cache_settings(Options({"lookup.cache": "PARTIAL",
                                   "lookup.partial-cache.max-rows": "10",
                                   "lookup.partial-cache.expire-after-access": "5 s",
                                   "lookup.partial-cache.cache-missing-key": "false"})) == (
        CacheSettings(10, None, 5000, False))
    assert cache_settings(Options({"lookup.cache.max-rows": "3", "lookup.cache.ttl": "1 min"})
                          ) == CacheSettings(3, 60000, None, True)
    with pytest.raises(ValidationError, match="PARTIAL"):
        cache_settings(Options({"lookup.cache": "PARTIAL"}))


def test_a_failing_lookup_is_retried_then_raised(postgres):
    slept = []
    lookup = JdbcLookupFunction(ConnectionSpec(postgres.jdbc_url, "postgres"), "no_such_table",
                                FIELDS, ("id",), None, max_retries=2, sleep=slept.append)
    with pytest.raises(JdbcWriteError, match="after 3 attempt") as caught:
        lookup.lookup((1,))
    assert isinstance(caught.value.__cause__, psycopg.errors.UndefinedTable)
    assert slept == [1.0, 2.0] and lookup.queries == 3


def test_lookup_keys_must_be_columns(postgres):
    with pytest.raises(ValidationError, match="not columns"):
        _function(postgres, keys=("nope",))


def test_scan_reader_restored_mid_split_skips_the_rows_it_emitted(postgres):
    sql = to_psycopg("SELECT id, name, seen FROM users ORDER BY id")
    spec = ConnectionSpec(postgres.jdbc_url, "postgres")
    reader = JdbcScanReader(spec, sql, FIELDS, 0)
    reader.add_splits([ScanSplit("0", None)])
    first, _ = reader.poll(2)
    [state] = reader.snapshot_state(1)
    reader.close()
    assert [r[0] for r in first] == [1, 2] and state.emitted == 2
    restored = JdbcScanReader(spec, sql, FIELDS, 0)
    restored.restore([state])
    restored.notify_no_more_splits()
    rest, done = restored.poll(10)
    restored.close()
    assert [r[0] for r in rest] == [3] and done


def test_statements_as_flinks_postgres_dialect_writes_them():
    assert dialect.upsert("t", ["k", "a", "b"], ["k"]) == (
        "INSERT INTO t(k, a, b) VALUES (?, ?, ?) ON CONFLICT (k) DO UPDATE SET "
        "a=EXCLUDED.a, b=EXCLUDED.b")
    assert dialect.upsert("t", ["k"], ["k"]).endswith("ON CONFLICT (k) DO NOTHING")
    assert dialect.delete("s.t", ["k", "j"]) == "DELETE FROM s.t WHERE k = ? AND j = ?"
    assert dialect.select("t", ["a", "b"], ["a"]) == "SELECT a, b FROM t WHERE a = ?"


def test_ltz_values_are_sent_in_utc_and_read_back_as_naive_utc():
    write = dialect.params_writer([DataTypes.INT(), DataTypes.TIMESTAMP_LTZ(3)])
    moment = datetime.datetime(2024, 1, 1, 8, 0)
    assert write([1, moment]) == (1, moment.replace(tzinfo=datetime.UTC))
    assert write([1, None]) == (1, None)
    read = dialect.reader(DataTypes.TIMESTAMP_LTZ(3))
    zoned = datetime.datetime(2024, 1, 1, 10, 0, tzinfo=datetime.timezone(
        datetime.timedelta(hours=2)))
    assert read(zoned) == moment


@pytest.mark.parametrize(("sql", "expected"), [
    ("INSERT INTO t VALUES (?, ?)", "INSERT INTO t VALUES (%s, %s)"),
    ("SELECT '?', \"a?\", ? -- what?\n", "SELECT '?', \"a?\", %s -- what?\n"),
    ("SELECT 'it''s ?' || ?", "SELECT 'it''s ?' || %s"),
    ("SELECT 5 % ?, /* ? */ $$?$$, $q$ ? $q$", "SELECT 5 %% %s, /* ? */ $$?$$, $q$ ? $q$"),
])
def test_jdbc_markers_become_psycopg_placeholders(sql, expected):
    assert to_psycopg(sql) == expected


def test_jdbc_urls():
    assert parse_url("jdbc:postgresql://db.example:6543/shop?user=u&currentSchema=s") == {
        "host": "db.example", "port": 6543, "dbname": "shop", "user": "u",
        "options": "-csearch_path=s"}
    assert parse_url("jdbc:postgresql://h/") == {"host": "h", "port": 5432}
    with pytest.raises(JdbcConnectionError, match="not 'mysql'"):
        parse_url("jdbc:mysql://h:3306/db")
    with pytest.raises(JdbcConnectionError, match="'loginTimeout' is not supported"):
        parse_url("jdbc:postgresql://h/db?loginTimeout=3")


class _RecordingCursor:
    def __init__(self):
        self.calls = []

    def execute(self, sql, params):
        self.calls.append(("execute", sql, list(params)))

    def executemany(self, sql, rows):
        self.calls.append(("executemany", sql, list(rows)))


def test_a_plain_insert_is_sent_as_multi_row_statements():
    statement = BatchStatement("INSERT INTO t (a, b) VALUES (%s, %s)")
    cursor = _RecordingCursor()
    statement.execute(cursor, [(i, str(i)) for i in range(1001)])
    assert [c[0] for c in cursor.calls] == ["execute", "execute"]
    first, second = cursor.calls
    assert first[1].count("(%s, %s)") == 1000 and first[2][:4] == [0, "0", 1, "1"]
    assert second[1] == "INSERT INTO t (a, b) VALUES (%s, %s)" and second[2] == [1000, "1000"]


@pytest.mark.parametrize(("sql", "unique"), [
    ("INSERT INTO t (a) VALUES (%s) ON CONFLICT (a) DO NOTHING", False),  # rows may conflict
    ("INSERT INTO t (a, b) VALUES (%s, now())", True),  # not only markers
    ("UPDATE t SET a = %s", True),
])
def test_other_statements_run_once_per_row(sql, unique):
    cursor = _RecordingCursor()
    BatchStatement(sql, unique_rows=unique).execute(cursor, [(1,), (2,)])
    assert cursor.calls == [("executemany", sql, [(1,), (2,)])]


def test_an_upsert_of_unique_keys_is_batched_too(postgres):
    statement = BatchStatement(to_psycopg(dialect.upsert("upserted", ["id", "name"], ["id"])),
                               unique_rows=True)
    with psycopg.connect(postgres.conninfo, autocommit=True) as connection:
        connection.execute("CREATE TABLE upserted (id INT PRIMARY KEY, name TEXT)")
        connection.execute("INSERT INTO upserted VALUES (1, 'ann')")
        with connection.cursor() as cursor:
            statement.execute(cursor, [(1, "anna"), (7, "gus")])
        assert connection.execute("SELECT id, name FROM upserted ORDER BY id").fetchall() == [
            (1, "anna"), (7, "gus")]
