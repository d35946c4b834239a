"""Failures a restart cannot fix are never restarted, whatever the strategy (issue 16)."""

from __future__ import annotations

import random

import pytest

from flintlock.common.config import Configuration
from flintlock.runtime.restart import create_restart_strategy, is_unrecoverable
from flintlock.runtime.state.errors import (
    MaxParallelismMismatchError,
    NonRestoredStateError,
    StateKindMismatchError,
)
from flintlock.runtime.state.handles import CorruptStateError
from flintlock.testing.clock import ManualClock

PERMANENT = [
    CorruptStateError("file:///chk/job/chk-3/op-0", "expected 10 bytes, found 4 (truncated?)"),
    NonRestoredStateError(("op-1",)),
    MaxParallelismMismatchError(128, 256),
    StateKindMismatchError("count", "value", "list"),
]


@pytest.mark.parametrize("strategy", ["exponential-delay", "fixed-delay", "failure-rate"])
@pytest.mark.parametrize("error", PERMANENT, ids=lambda e: type(e).__name__)
def test_no_strategy_restarts_a_permanent_failure(strategy, error):
    config = Configuration().set_string("restart-strategy.type", strategy)
    restart = create_restart_strategy(config, True, ManualClock(), random.Random(1))
    decision = restart.on_failure(error)
    assert not decision.restart
    assert type(error).__name__ in decision.reason and str(error) in decision.reason
    assert restart.restarts == 0


def test_a_permanent_failure_anywhere_in_the_chain_counts_and_others_do_not():
    wrapped = RuntimeError("restore failed")
    wrapped.__cause__ = PERMANENT[0]
    assert is_unrecoverable(wrapped)
    assert not is_unrecoverable(RuntimeError("a user function raised"))
    config = Configuration().set_string("restart-strategy.type", "exponential-delay")
    restart = create_restart_strategy(config, True, ManualClock(), random.Random(1))
    assert restart.on_failure(RuntimeError("transient")).restart
