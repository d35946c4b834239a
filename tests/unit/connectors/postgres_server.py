"""A throw-away PostgreSQL server for the JDBC connector tests: its own data directory in a
fresh temporary directory, its own free port on 127.0.0.1, started and stopped by the tests
that use it (bounded waits).

The binaries (``initdb``, ``postgres``, PostgreSQL 16) are the ones the ``pgserver`` wheel of
the project's ``test`` extra ships inside its package (``pgserver/pginstall``); the package is
located, never imported (its own start-up code takes a lock in the user's runtime directory and,
as root, adds a system user and opens up the permissions of every parent directory). PATH is
never searched, so a PostgreSQL on the machine cannot stand in, and a missing extra is an error
that says how to install it, never a skip (docs/decisions.md, "Test set-up").

PostgreSQL refuses to run as root. Under root (the CI machines) the server runs as the
``nobody`` account: its data directory is created in a new directory under the system's temp
directory owned by ``nobody``, and when ``nobody`` cannot reach the binaries where they are
installed (a directory on their path not readable by others), they are copied next to the data
first (36 MB, well under a second), with the wheel's vendored libraries beside them.
Unix-domain sockets go to the same directory; clients use TCP on 127.0.0.1.

The server runs with ``fsync = off`` (a test database is thrown away) and
``max_prepared_transactions`` > 0, which the exactly-once JDBC sink's two-phase commit
(``PREPARE TRANSACTION``) needs.
"""

from __future__ import annotations

import importlib.util
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psycopg

from flintlock.testing.waiting import poll_until

from .server_process import log_tail, start_on_a_free_port

_UNPRIVILEGED = "nobody"
USER = "postgres"
DATABASE = "postgres"


class PostgresServerUnavailableError(RuntimeError):
    """The test extra's PostgreSQL binaries are not installed in this environment."""


class PostgresServerStartError(RuntimeError):
    """initdb or the postgres process failed, or the server did not answer in time."""


@dataclass(frozen=True)
class PostgresServer:
    """Where a running test server listens."""

    host: str
    port: int
    directory: Path

    @property
    def jdbc_url(self) -> str:
        return f"jdbc:postgresql://{self.host}:{self.port}/{DATABASE}"

    @property
    def conninfo(self) -> str:
        return f"host={self.host} port={self.port} user={USER} dbname={DATABASE}"

    def connect(self) -> psycopg.Connection:
        return psycopg.connect(self.conninfo, autocommit=True, connect_timeout=10)


def postgres_install() -> Path:
    """``pgserver/pginstall`` inside the installed ``pgserver`` package."""
    spec = importlib.util.find_spec("pgserver")
    if spec is None or not spec.submodule_search_locations:
        raise PostgresServerUnavailableError(
            "the JDBC tests run the PostgreSQL shipped by the 'pgserver' package of the test "
            "extra, which is not installed in this environment: run `make test`, or "
            "`pip install -e '.[test]'` in this environment")
    install = Path(spec.submodule_search_locations[0]) / "pginstall"
    for name in ("initdb", "postgres"):
        if not os.access(install / "bin" / name, os.X_OK):
            raise PostgresServerUnavailableError(
                f"'pgserver' is installed but has no executable {install / 'bin' / name}: "
                "reinstall the test extra (`pip install --force-reinstall pgserver`)")
    return install


@contextmanager
def postgres_server(timeout_s: float = 60.0) -> Iterator[PostgresServer]:
    """Runs a PostgreSQL server in a new temporary directory; yields where it listens; stops
    it and removes the directory on exit."""
    install = postgres_install()
    directory = Path(tempfile.mkdtemp(prefix="flintlock-pg-"))
    try:
        account = _account()
        if account is not None:
            os.chown(directory, account.pw_uid, account.pw_gid)
            install = _reachable(install, directory, account)
        _initdb(install, directory, account, timeout_s)
        process, server = _start(install, directory, account, timeout_s)
        try:
            yield server
        finally:
            _stop(process, timeout_s)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def _account() -> pwd.struct_passwd | None:
    """The account to run the server as: None (ourselves) unless we are root."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam(_UNPRIVILEGED)
    except KeyError:
        raise PostgresServerStartError(
            "the tests run as root and PostgreSQL refuses to: they run it as the "
            f"'{_UNPRIVILEGED}' account, which this machine does not have") from None


def _reachable(install: Path, directory: Path, account: pwd.struct_passwd) -> Path:
    """``install``, or a copy of it in ``directory`` when ``account`` cannot reach it. The
    binaries find their shared libraries at ``$ORIGIN/../../../pgserver.libs`` (the wheel's
    vendored libraries, next to the package), so the copy keeps that layout."""
    if _world_reachable(install / "bin" / "postgres"):
        return install
    package = directory / "pkg"
    copy = package / "pgserver" / "pginstall"
    shutil.copytree(install, copy, symlinks=True)
    libraries = install.parent.parent / "pgserver.libs"
    if libraries.is_dir():
        shutil.copytree(libraries, package / "pgserver.libs", symlinks=True)
    for path in [package, *package.rglob("*")]:
        os.chown(path, account.pw_uid, account.pw_gid, follow_symlinks=False)
    return copy


def _world_reachable(binary: Path) -> bool:
    if not binary.stat().st_mode & 0o001:
        return False
    return all(parent.stat().st_mode & 0o001 for parent in binary.resolve().parents)


def _run_as(account: pwd.struct_passwd | None) -> dict[str, object]:
    if account is None:
        return {}
    return {"user": account.pw_uid, "group": account.pw_gid, "extra_groups": []}


def _initdb(install: Path, directory: Path, account: pwd.struct_passwd | None,
            timeout_s: float) -> None:
    done = subprocess.run(
        [str(install / "bin" / "initdb"), "-D", str(directory / "data"), "-U", USER,
         "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync"],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout_s,
        cwd=directory, **_run_as(account))  # type: ignore[call-overload]
    if done.returncode != 0:
        raise PostgresServerStartError(f"initdb exited with {done.returncode}:\n"
                                       f"{done.stderr[-2000:]}")


def _start(install: Path, directory: Path, account: pwd.struct_passwd | None,
           timeout_s: float) -> tuple[subprocess.Popen[bytes], PostgresServer]:
    return start_on_a_free_port(
        lambda port: _start_on(install, directory, account, port, timeout_s),
        PostgresServerStartError)


def _start_on(install: Path, directory: Path, account: pwd.struct_passwd | None, port: int,
              timeout_s: float) -> tuple[subprocess.Popen[bytes], PostgresServer]:
    log = directory / f"postgres-{port}.log"
    with open(log, "wb") as out:
        if account is not None:
            os.chown(log, account.pw_uid, account.pw_gid)
        process = subprocess.Popen(
            [str(install / "bin" / "postgres"), "-D", str(directory / "data"),
             "-h", "127.0.0.1", "-p", str(port), "-k", str(directory),
             "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
             "-c", "max_prepared_transactions=64", "-c", "max_connections=100",
             "-c", "shared_buffers=16MB"],
            stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, cwd=directory,
            **_run_as(account))  # type: ignore[call-overload]
    server = PostgresServer("127.0.0.1", port, directory)
    try:
        _wait_until_ready(server, process, log, timeout_s)
    except BaseException:
        _stop(process, timeout_s)
        raise
    return process, server


def _wait_until_ready(server: PostgresServer, process: subprocess.Popen[bytes], log: Path,
                      timeout_s: float) -> None:
    def answers() -> bool:
        if process.poll() is not None:
            raise PostgresServerStartError(
                f"postgres exited with {process.returncode}; its log ends:\n{log_tail(log)}")
        try:
            with psycopg.connect(server.conninfo, connect_timeout=2) as connection:
                row = connection.execute("SELECT setting FROM pg_settings "
                                         "WHERE name = 'data_directory'").fetchone()
        except psycopg.OperationalError:
            return False
        # Our server, not one that took the port between free_port() and the bind.
        return row is not None and Path(row[0]) == server.directory / "data"

    if not poll_until(answers, timeout_s):
        raise PostgresServerStartError(
            f"postgres on port {server.port} did not answer within {timeout_s} s; its log "
            f"ends:\n{log_tail(log)}")


def _stop(process: subprocess.Popen[bytes], timeout_s: float) -> None:
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGINT)  # fast shutdown: clients still connected are cut off
    try:
        process.wait(timeout_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout_s)
