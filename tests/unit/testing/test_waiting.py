"""The test kit's bounded waits: a condition polled, never a guessed sleep."""

from __future__ import annotations

import itertools

import pytest

from flintlock.testing.waiting import poll_until, wait_for, wait_until


def test_wait_for_returns_the_first_ready_value() -> None:
    counter = itertools.count()
    assert wait_for(lambda: next(counter), lambda value: value >= 3) == 3


def test_wait_for_names_the_last_value_when_the_bound_passes() -> None:
    with pytest.raises(AssertionError, match=r"never ready .*last seen: 'nope'"):
        wait_for(lambda: "nope", lambda value: value == "yes", 0.01, "never ready")


def test_wait_until_and_poll_until_agree_on_a_condition_that_never_holds() -> None:
    assert not poll_until(lambda: False, 0.01)
    with pytest.raises(AssertionError, match="still false"):
        wait_until(lambda: False, 0.01, "still false")
