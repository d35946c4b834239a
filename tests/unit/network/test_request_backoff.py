"""The partition-request back-off local and remote channels share (issue 29)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from flintlock.common.config import Configuration
from flintlock.runtime.network.request_backoff import RequestBackoff


def delays(backoff: RequestBackoff) -> list[int]:
    found = []
    while (delay := backoff.next_delay_ms()) is not None:
        found.append(delay)
    return found


def test_doubles_up_to_the_maximum_then_gives_up() -> None:
    assert delays(RequestBackoff(100, 1000)) == [100, 200, 400, 800, 1000]
    assert delays(RequestBackoff(100, 100)) == [100]


def test_no_retry_when_the_initial_wait_is_zero_or_above_the_maximum() -> None:
    assert delays(RequestBackoff(0, 1000)) == []
    assert delays(RequestBackoff(2000, 1000)) == []


def test_read_from_the_configuration() -> None:
    config = Configuration({"taskmanager.network.request-backoff.initial": "50 ms",
                            "taskmanager.network.request-backoff.max": "120 ms"})
    assert delays(RequestBackoff.from_config(config)) == [50, 100, 120]


@given(st.integers(1, 10_000), st.integers(1, 100_000))
def test_waits_grow_end_at_the_maximum_and_stop(initial: int, maximum: int) -> None:
    found = delays(RequestBackoff(initial, maximum))
    assert found == sorted(found)
    assert all(delay <= maximum for delay in found)
    assert (found[-1] == maximum) if initial <= maximum else found == []
