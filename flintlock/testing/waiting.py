"""Waiting in tests for another thread's progress, bounded, by polling a condition instead of
sleeping a guessed time (a loaded machine outruns any guess)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

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


def wait_for(read: Callable[[], T], ready: Callable[[T], object] = bool,
             timeout_s: float = DEFAULT_TIMEOUT_S,
             message: str = "no ready value within the bound") -> T:
    """Calls ``read`` until ``ready`` holds for what it returned, and returns that value;
    ``AssertionError(message)`` naming the last value seen after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = read()
        if ready(value):
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"{message} ({timeout_s:g} s); last seen: {value!r}")
        time.sleep(POLL_INTERVAL_S)
