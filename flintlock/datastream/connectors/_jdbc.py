"""What the JDBC connectors share: a ``jdbc:postgresql://`` URL as a psycopg connection,
JDBC's ``?`` parameters as psycopg's, and Flink's retry loop around a database call.

**URLs.** PostgreSQL's JDBC driver reads ``jdbc:postgresql://host[:port][/database][?k=v&...]``
(port 5432 and the user's name as the database by default). flintlock reads the same and
connects with psycopg 3 (the ``jdbc`` extra): ``user``/``password`` from the options or the
URL's query, ``sslmode``, ``connectTimeout`` (seconds), ``ApplicationName``,
``currentSchema`` (the session's ``search_path``), ``options``. Another database's URL, or a
URL parameter outside this list, is a ``JdbcConnectionError`` that names it: flintlock speaks
to PostgreSQL only (there is no JDBC driver to load).

**Parameters.** A statement written for JDBC (``INSERT INTO t VALUES (?, ?)``) has ``?``
markers; psycopg's are ``%s``. ``to_psycopg(sql)`` rewrites every ``?`` outside string
literals, quoted identifiers, dollar-quoted bodies and comments, and doubles every ``%``
there, so a statement means the same to both.

**Batches** (``execute_batch``): a plain ``INSERT INTO t (...) VALUES (?, ..., ?)`` is sent as
one multi-row ``VALUES (...), (...), ...`` statement per chunk of rows (what PostgreSQL's JDBC
driver does with ``reWriteBatchedInserts``; ~10x fewer round trips and executions than one
execution per row); with a trailing ``ON CONFLICT`` clause only when the caller knows no two
rows of the batch conflict (the upsert sink, which reduces its batch per key: PostgreSQL
refuses a statement that updates one row twice). Any other statement runs once per row
(``executemany``, pipelined by psycopg).

**Retries** (``with_retries``): as Flink's JDBC writers, a failed call is retried up to
``max_retries`` times, after ``1 s * attempt`` (the ``sleep`` is injectable), with the
connection re-opened when it was lost; the last error is raised as ``JdbcWriteError`` with the
cause kept. A statement the database refuses for its data (a constraint, a type) fails the same
way after the retries, as in Flink.

Pure functions except ``connect``; called on task threads and on the driver.
"""

from __future__ import annotations

import re
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from flintlock.common.errors import FlintlockError

T = TypeVar("T")

_URL_PREFIX = "jdbc:postgresql:"
DEFAULT_PORT = 5432
_PARAMETERS = {"user": "user", "password": "password", "sslmode": "sslmode",
               "connectTimeout": "connect_timeout", "ApplicationName": "application_name",
               "options": "options"}


class JdbcConnectionError(FlintlockError):
    """A JDBC URL flintlock cannot use, or a database it cannot reach."""


class JdbcWriteError(FlintlockError):
    """The database refused a statement, after the retries."""


@dataclass(frozen=True, slots=True)
class ConnectionSpec:
    """Where and as whom to connect: picklable, built on the driver, used by the tasks."""

    url: str
    user: str | None = None
    password: str | None = None

    def conninfo(self) -> dict[str, Any]:
        """psycopg's ``connect`` arguments for this URL and credentials."""
        found = parse_url(self.url)
        if self.user is not None:
            found["user"] = self.user
        if self.password is not None:
            found["password"] = self.password
        return found


def parse_url(url: str) -> dict[str, Any]:
    """psycopg connection arguments from a ``jdbc:postgresql://`` URL."""
    if not url.startswith(_URL_PREFIX):
        kind = url.split(":")[1] if url.startswith("jdbc:") and url.count(":") > 1 else url
        raise JdbcConnectionError(
            f"unsupported JDBC URL {url!r}: flintlock's JDBC connector speaks to PostgreSQL "
            f"only (jdbc:postgresql://host:port/database), not {kind!r}")
    rest = url[len(_URL_PREFIX):]
    if not rest.startswith("//"):
        raise JdbcConnectionError(f"JDBC URL {url!r} has no host: write "
                                  "jdbc:postgresql://host:port/database")
    parts = urllib.parse.urlsplit("postgresql:" + rest)
    try:
        port = parts.port or DEFAULT_PORT
    except ValueError:
        raise JdbcConnectionError(f"JDBC URL {url!r} has an invalid port") from None
    found: dict[str, Any] = {"host": parts.hostname or "localhost", "port": port}
    database = urllib.parse.unquote(parts.path.lstrip("/"))
    if database:
        found["dbname"] = database
    for key, value in urllib.parse.parse_qsl(parts.query, keep_blank_values=True):
        if key == "currentSchema":
            found["options"] = f"-csearch_path={value}"
        elif key in _PARAMETERS:
            found[_PARAMETERS[key]] = value
        else:
            raise JdbcConnectionError(
                f"JDBC URL parameter {key!r} is not supported by flintlock; supported: "
                f"{', '.join(sorted([*_PARAMETERS, 'currentSchema']))}")
    return found


def _psycopg() -> Any:
    try:
        import psycopg
    except ImportError:
        raise JdbcConnectionError(
            "the JDBC connector needs psycopg 3: pip install 'flintlock[jdbc]'") from None
    return psycopg


def connect(spec: ConnectionSpec, autocommit: bool) -> Any:
    """A psycopg connection (``JdbcConnectionError`` when the database cannot be reached)."""
    psycopg = _psycopg()
    try:
        return psycopg.connect(autocommit=autocommit, **spec.conninfo())
    except psycopg.Error as failed:
        raise JdbcConnectionError(f"cannot connect to {spec.url}: {failed}") from failed


def database_errors() -> tuple[type[BaseException], ...]:
    """The exceptions a database call raises that a retry may cure."""
    return (_psycopg().Error,)


def to_psycopg(sql: str) -> str:
    """``sql`` with JDBC's ``?`` markers as ``%s`` and literal ``%`` doubled (outside quotes
    and comments)."""
    out: list[str] = []
    i, n = 0, len(sql)
    while i < n:
        c = sql[i]
        end = _quoted_end(sql, i)
        if end > i:
            out.append(sql[i:end])
            i = end
            continue
        out.append("%s" if c == "?" else "%%" if c == "%" else c)
        i += 1
    return "".join(out)


def _quoted_end(sql: str, i: int) -> int:
    """The end of the literal, identifier or comment starting at ``i`` (``i``: none)."""
    c = sql[i]
    if c in ("'", '"'):
        j = i + 1
        while j < len(sql):
            if sql[j] == c:
                if j + 1 < len(sql) and sql[j + 1] == c:
                    j += 2
                    continue
                return j + 1
            j += 1
        return len(sql)
    if sql.startswith("--", i):
        j = sql.find("\n", i)
        return len(sql) if j < 0 else j + 1
    if sql.startswith("/*", i):
        j = sql.find("*/", i + 2)
        return len(sql) if j < 0 else j + 2
    if c == "$":
        j = sql.find("$", i + 1)
        tag = sql[i:j + 1] if j > i else ""
        if tag and (tag == "$$" or tag[1:-1].replace("_", "a").isalnum()) and not tag[1].isdigit():
            k = sql.find(tag, j + 1)
            return len(sql) if k < 0 else k + len(tag)
    return i


_VALUES = re.compile(r"^(\s*INSERT\s+INTO\s.+?\sVALUES\s*)\((\s*%s\s*(?:,\s*%s\s*)*)\)"
                     r"(\s+ON\s+CONFLICT\s.*)?\s*;?\s*$", re.IGNORECASE | re.DOTALL)
_MAX_PARAMETERS = 32767  # PostgreSQL allows 65535 per statement
_MAX_ROWS = 1000


class BatchStatement:
    """A psycopg statement run for many rows at once (see "Batches")."""

    def __init__(self, sql: str, unique_rows: bool = False) -> None:
        self.sql = sql
        match = _VALUES.match(sql)
        if match is not None and match.group(3) and not unique_rows:
            match = None
        self._head = self._tail = ""
        self._chunk = 0
        if match is not None:
            width = match.group(2).count("%s")
            self._head, self._tail = match.group(1), match.group(3) or ""
            self._row = "(" + ", ".join(["%s"] * width) + ")"
            self._chunk = max(1, min(_MAX_ROWS, _MAX_PARAMETERS // width))
            self._full = self._statement(self._chunk)

    def _statement(self, rows: int) -> str:
        return self._head + ", ".join([self._row] * rows) + self._tail

    def execute(self, cursor: Any, rows: list[tuple[Any, ...]]) -> None:
        if not self._chunk or len(rows) == 1:
            cursor.executemany(self.sql, rows)
            return
        for start in range(0, len(rows), self._chunk):
            chunk = rows[start:start + self._chunk]
            statement = self._full if len(chunk) == self._chunk else self._statement(len(chunk))
            cursor.execute(statement, [value for row in chunk for value in row])


def with_retries(call: Callable[[], T], max_retries: int, on_failure: Callable[[], None],
                 what: str, sleep: Callable[[float], None] = time.sleep) -> T:
    """``call()``, retried up to ``max_retries`` times after a database error;
    ``on_failure()`` runs after each failed attempt (roll back, reconnect)."""
    errors = database_errors()
    attempt = 0
    while True:
        try:
            return call()
        except errors as failed:
            on_failure()
            if attempt >= max_retries:
                raise JdbcWriteError(f"{what} failed after {attempt + 1} attempt(s): "
                                     f"{failed}") from failed
            attempt += 1
            sleep(1.0 * attempt)


__all__ = ["BatchStatement", "ConnectionSpec", "JdbcConnectionError", "JdbcWriteError", "connect",
           "database_errors", "parse_url", "to_psycopg", "with_retries"]
