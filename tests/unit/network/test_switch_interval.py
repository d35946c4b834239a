"""The GIL switch interval a job's buffer timeout asks for (transport.switch_interval_for)."""

import sys

import pytest

from flintlock.runtime.network.transport import (
    MAX_SWITCH_INTERVAL_S,
    MIN_SWITCH_INTERVAL_S,
    lower_switch_interval,
    switch_interval_for,
)


@pytest.mark.parametrize("timeout_ms, expected", [
    (0, MIN_SWITCH_INTERVAL_S),  # a flush after every record: latency first
    (1, MIN_SWITCH_INTERVAL_S),
    (8, 0.002),  # a quarter of the timeout
    (100, MAX_SWITCH_INTERVAL_S),  # the default: Python's own 5 ms
    (-1, MAX_SWITCH_INTERVAL_S),  # only full buffers: throughput first
])
def test_the_interval_follows_the_buffer_timeout(timeout_ms, expected):
    assert switch_interval_for(timeout_ms) == pytest.approx(expected)


def test_the_interval_is_only_ever_lowered():
    before = sys.getswitchinterval()
    try:
        sys.setswitchinterval(0.004)
        lower_switch_interval(0.005)
        assert sys.getswitchinterval() == pytest.approx(0.004)
        lower_switch_interval(0.001)
        assert sys.getswitchinterval() == pytest.approx(0.001)
    finally:
        sys.setswitchinterval(before)
