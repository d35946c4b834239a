"""The ``jdbc`` table's lookup side (Flink's ``JdbcRowDataLookupFunction`` with its
``DefaultLookupCache``): the rows of the table whose key columns equal a probe row's values,
for ``JOIN dim FOR SYSTEM_TIME AS OF t.proc_time ON t.k = dim.k``.

**Query.** ``SELECT <all columns> FROM <table> WHERE k1 = ? AND k2 = ?`` on one connection
per lookup function (per join subtask). A failed query is retried up to ``lookup.max-retries``
times (default 3), after ``1 s * attempt`` (injectable), on a new connection when the old one
was lost; the last failure is raised as ``JdbcWriteError`` naming the lookup.

**Cache** (``lookup.cache`` = ``PARTIAL``; ``NONE``, the default, asks the database every
time): key -> the rows found, at most ``lookup.partial-cache.max-rows`` keys (the least
recently used key is evicted first), each dropped ``expire-after-write`` after it was loaded
and ``expire-after-access`` after it was last read; a key without rows is cached as an empty
list unless ``cache-missing-key`` is false. Flink's legacy keys ``lookup.cache.max-rows``,
``lookup.cache.ttl`` (= expire-after-write) and ``lookup.cache.caching-missing-key`` mean
the same and turn the cache on. Times come from an injected clock (``time.monotonic``), so
the cache is tested without sleeping. A cache of PARTIAL with no size and no expiry is refused
when the table is planned, as Flink refuses it.

The cache and the function belong to the lookup join's task thread.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from flintlock.datastream.connectors._jdbc import ConnectionSpec, connect, to_psycopg, with_retries
from flintlock.table.connectors import _jdbc_dialect as dialect
from flintlock.table.connectors._options import Options
from flintlock.table.errors import ValidationError
from flintlock.table.plan.nodes import Field

LOOKUP_OPTIONS = {
    "lookup.cache", "lookup.partial-cache.max-rows", "lookup.partial-cache.expire-after-write",
    "lookup.partial-cache.expire-after-access", "lookup.partial-cache.cache-missing-key",
    "lookup.max-retries", "lookup.cache.max-rows", "lookup.cache.ttl",
    "lookup.cache.caching-missing-key",
}


@dataclass(frozen=True, slots=True)
class CacheSettings:
    max_rows: int | None = None
    expire_after_write_ms: int | None = None
    expire_after_access_ms: int | None = None
    cache_missing_key: bool = True


def cache_settings(options: Options) -> CacheSettings | None:
    """The table's lookup cache (None: no cache), from the new or the legacy keys."""
    legacy = any(options.has(k) for k in ("lookup.cache.max-rows", "lookup.cache.ttl"))
    mode = options.get_choice("lookup.cache", ("NONE", "PARTIAL"), "PARTIAL" if legacy
                              else "NONE")
    if mode == "NONE":
        return None
    settings = CacheSettings(
        options.get_int("lookup.partial-cache.max-rows", options.get_int("lookup.cache.max-rows")),
        options.get_duration_ms("lookup.partial-cache.expire-after-write",
                                options.get_duration_ms("lookup.cache.ttl")),
        options.get_duration_ms("lookup.partial-cache.expire-after-access"),
        options.get_bool("lookup.partial-cache.cache-missing-key",
                         options.get_bool("lookup.cache.caching-missing-key", True)))
    if (settings.max_rows is None and settings.expire_after_write_ms is None
            and settings.expire_after_access_ms is None):
        raise ValidationError(
            "A 'PARTIAL' lookup cache needs 'lookup.partial-cache.max-rows', "
            "'lookup.partial-cache.expire-after-write' or "
            "'lookup.partial-cache.expire-after-access'.")
    if settings.max_rows is not None and settings.max_rows <= 0:
        raise ValidationError("'lookup.partial-cache.max-rows' must be positive, got "
                              f"{settings.max_rows}.")
    return settings


class LookupCache:
    """Keys -> rows, bounded by count and by age (see the module); no I/O."""

    def __init__(self, settings: CacheSettings,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._settings = settings
        self._clock = clock
        # key -> (rows, loaded at, last read at); ordered from least to most recently used
        self._entries: OrderedDict[tuple[Any, ...], tuple[list[Any], float, float]] = (
            OrderedDict())
        self.hits = 0
        self.misses = 0

    def get(self, key: tuple[Any, ...]) -> list[Any] | None:
        """The cached rows of ``key``, or None when it is not cached (or expired)."""
        entry = self._entries.get(key)
        now = self._clock()
        if entry is None or self._expired(entry, now):
            if entry is not None:
                del self._entries[key]
            self.misses += 1
            return None
        rows, loaded, _ = entry
        self._entries[key] = (rows, loaded, now)
        self._entries.move_to_end(key)
        self.hits += 1
        return rows

    def put(self, key: tuple[Any, ...], rows: list[Any]) -> None:
        if not rows and not self._settings.cache_missing_key:
            return
        now = self._clock()
        self._entries[key] = (rows, now, now)
        self._entries.move_to_end(key)
        limit = self._settings.max_rows
        while limit is not None and len(self._entries) > limit:
            self._entries.popitem(last=False)

    def __len__(self) -> int:
        return len(self._entries)

    def _expired(self, entry: tuple[list[Any], float, float], now: float) -> bool:
        _, loaded, read = entry
        write_ms, access_ms = (self._settings.expire_after_write_ms,
                               self._settings.expire_after_access_ms)
        return ((write_ms is not None and (now - loaded) * 1000.0 >= write_ms)
                or (access_ms is not None and (now - read) * 1000.0 >= access_ms))


class JdbcLookupFunction:
    """``lookup(key values) -> rows`` of the table (values in the table's column order)."""

    def __init__(self, spec: ConnectionSpec, table: str, fields: Sequence[Field],
                 keys: Sequence[str], cache: CacheSettings | None, max_retries: int = 3,
                 sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.monotonic) -> None:
        names = [f.name for f in fields]
        missing = [k for k in keys if k not in names]
        if missing or not keys:
            raise ValidationError(f"lookup keys {list(keys)} are not columns of the table "
                                  f"{table} ({', '.join(names)})")
        self._spec = spec
        self._sql = to_psycopg(dialect.select(table, names, keys))
        self._key_params = dialect.params_writer([fields[names.index(k)].type for k in keys])
        self._row = dialect.row_reader(fields)
        self._cache = None if cache is None else LookupCache(cache, clock)
        self._max_retries = max_retries
        self._sleep = sleep
        self._connection: Any = None
        self.queries = 0  # database round trips (for tests and metrics)

    @property
    def cache(self) -> LookupCache | None:
        return self._cache

    def lookup(self, key: Sequence[Any]) -> list[list[Any]]:
        """The rows whose key columns equal ``key`` (a NULL key matches nothing, as in SQL)."""
        cache_key = tuple(key)
        if self._cache is not None:
            found = self._cache.get(cache_key)
            if found is not None:
                return found
        rows = [] if any(v is None for v in key) else with_retries(
            lambda: self._query(cache_key), self._max_retries, self._reconnect,
            "the JDBC lookup", self._sleep)
        if self._cache is not None:
            self._cache.put(cache_key, rows)
        return rows

    def _query(self, key: tuple[Any, ...]) -> list[list[Any]]:
        if self._connection is None:
            self._connection = connect(self._spec, autocommit=True)
        self.queries += 1
        fetched = self._connection.execute(self._sql, self._key_params(key)).fetchall()
        return [self._row(values) for values in fetched]

    def _reconnect(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            connection.close()

    def close(self) -> None:
        self._reconnect()


__all__ = ["LOOKUP_OPTIONS", "CacheSettings", "JdbcLookupFunction", "LookupCache",
           "cache_settings"]
