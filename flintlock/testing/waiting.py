"""Waiting in tests for another thread's progress, bounded, by polling a condition instead of
sleeping a guessed time (a loaded machine outruns any guess)."""

from __future__ import annotations

import time
from collections.abc import Callable

DEFAULT_TIMEOUT_S = 10.0
POLL_INTERVAL_S = 0.005


def wait_until(condition: Callable[[], object], timeout_s: float = DEFAULT_TIMEOUT_S,
               message: str = "condition not reached within the bound") -> None:
    """Polls ``condition`` until it is true; ``AssertionError(message)`` after ``timeout_s``
    (the condition is tried once more at the deadline)."""
    if not poll_until(condition, timeout_s):
        raise AssertionError(f"{message} ({timeout_s:g} s)")


def poll_until(condition: Callable[[], object], timeout_s: float = DEFAULT_TIMEOUT_S) -> bool:
    """Polls ``condition`` until it is true (True) or ``timeout_s`` passed (False)."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() >= deadline:
            return bool(condition())
        time.sleep(POLL_INTERVAL_S)
    return True
