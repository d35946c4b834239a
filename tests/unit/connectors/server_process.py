"""What the tests' throw-away servers (``redis_server``, ``postgres_server``) share: a port the
kernel reports free on 127.0.0.1, starting again on another port when a different process took
that one before the server bound it, and the tail of a server's log for error messages."""

from __future__ import annotations

import socket
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

START_ATTEMPTS = 3  # another process may take the free port before the server binds it
PORT_TAKEN = "Address already in use"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_on_a_free_port(start_on: Callable[[int], T], start_error: type[Exception]) -> T:
    """``start_on(port)`` on a free port, again on another one (at most ``START_ATTEMPTS``
    times) when it failed with a ``start_error`` saying the address was in use."""
    attempt = 1
    while True:
        try:
            return start_on(free_port())
        except start_error as failed:
            if attempt == START_ATTEMPTS or PORT_TAKEN not in str(failed):
                raise
            attempt += 1


def log_tail(log: Path, lines: int = 10) -> str:
    try:
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
    except FileNotFoundError:
        return "(no log written)"
