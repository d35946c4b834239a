"""Restart strategies driven by a manual clock and a seeded Random, with exact delays."""

from __future__ import annotations

import pickle
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flintlock.common.config import Configuration
from flintlock.common.errors import ConfigurationError, InvalidConfigValueError
from flintlock.runtime.restart import (
    ExponentialDelayRestartStrategy,
    ExponentialDelaySettings,
    FailureRateRestartStrategy,
    FixedDelayRestartStrategy,
    NoRestartStrategy,
    RestartDecision,
    RestartStrategy,
    SuppressRestartsError,
    create_restart_strategy,
    is_unrecoverable,
)
from flintlock.testing.clock import ManualClock


def make(values: dict[str, object], checkpointing: bool = False,
         clock: ManualClock | None = None, seed: int = 1) -> RestartStrategy:
    return create_restart_strategy(
        Configuration(values), checkpointing, clock or ManualClock(), random.Random(seed))


def delays(strategy: RestartStrategy, clock: ManualClock, gaps: list[float]) -> list[int | None]:
    """Advance by each gap, fail, and collect the delay (None when the job fails)."""
    result: list[int | None] = []
    for gap in gaps:
        clock.advance(gap)
        decision = strategy.on_failure(RuntimeError("boom"))
        result.append(decision.delay_ms if decision.restart else None)
    return result


class TestSelection:
    def test_unset_type_depends_on_checkpointing(self) -> None:
        assert isinstance(make({}, checkpointing=False), NoRestartStrategy)
        assert isinstance(make({}, checkpointing=True), ExponentialDelayRestartStrategy)

    @pytest.mark.parametrize(("name", "kind"), [
        ("none", NoRestartStrategy), ("off", NoRestartStrategy), ("disable", NoRestartStrategy),
        ("fixed-delay", FixedDelayRestartStrategy), ("fixeddelay", FixedDelayRestartStrategy),
        ("failure-rate", FailureRateRestartStrategy), ("failurerate", FailureRateRestartStrategy),
        ("exponential-delay", ExponentialDelayRestartStrategy),
        ("exponentialdelay", ExponentialDelayRestartStrategy),
    ])
    def test_every_flink_name_and_alias(self, name: str, kind: type) -> None:
        assert isinstance(make({"restart-strategy.type": name}, checkpointing=True), kind)

    def test_explicit_type_wins_over_checkpointing_default(self) -> None:
        assert isinstance(make({"restart-strategy.type": "none"}, True), NoRestartStrategy)

    def test_options_are_read_with_flink_keys(self) -> None:
        fixed = make({"restart-strategy.type": "fixed-delay",
                      "restart-strategy.fixed-delay.attempts": 3,
                      "restart-strategy.fixed-delay.delay": "10 s"})
        assert isinstance(fixed, FixedDelayRestartStrategy)
        assert (fixed.attempts, fixed.delay_ms) == (3, 10_000)
        rate = make({"restart-strategy.type": "failure-rate",
                     "restart-strategy.failure-rate.max-failures-per-interval": 2,
                     "restart-strategy.failure-rate.failure-rate-interval": "5 min",
                     "restart-strategy.failure-rate.delay": "250 ms"})
        assert isinstance(rate, FailureRateRestartStrategy)
        assert (rate.max_failures, rate.interval_ms, rate.delay_ms) == (2, 300_000, 250)
        exponential = make({"restart-strategy.type": "exponential-delay"})
        assert isinstance(exponential, ExponentialDelayRestartStrategy)
        assert exponential.settings == ExponentialDelaySettings(
            1000, 60_000, 1.5, 3_600_000, 0.1, 2**31 - 1)

    def test_bad_exponential_settings_name_the_keys(self) -> None:
        with pytest.raises(InvalidConfigValueError, match="jitter-factor"):
            make({"restart-strategy.type": "exponential-delay",
                  "restart-strategy.exponential-delay.jitter-factor": 1.5})
        with pytest.raises(ConfigurationError, match=r"initial-backoff \(5000 ms\) may not exceed"):
            make({"restart-strategy.type": "exponential-delay",
                  "restart-strategy.exponential-delay.initial-backoff": "5 s",
                  "restart-strategy.exponential-delay.max-backoff": "1 s"})


class TestNone:
    def test_never_restarts(self) -> None:
        decision = NoRestartStrategy().on_failure(RuntimeError("x"))
        assert decision == RestartDecision(False, 0, "restart strategy 'none' never restarts")


class TestFixedDelay:
    def test_attempts_then_fail(self) -> None:
        clock = ManualClock()
        strategy = FixedDelayRestartStrategy(attempts=2, delay_ms=500)
        assert delays(strategy, clock, [0, 10, 10_000_000]) == [500, 500, None]
        assert strategy.restarts == 2
        assert "fixed-delay.attempts" in strategy.on_failure(None).reason

    def test_zero_attempts_fails_at_once(self) -> None:
        assert not FixedDelayRestartStrategy(0, 100).on_failure(None).restart

    def test_reason_names_the_attempt(self) -> None:
        decision = FixedDelayRestartStrategy(3, 100).on_failure(None)
        assert decision.reason == "fixed-delay: restart 1 of 3 in 100 ms"


class TestFailureRate:
    def test_max_failures_per_interval_are_survived(self) -> None:
        clock = ManualClock()
        strategy = FailureRateRestartStrategy(max_failures=2, interval_ms=1000, delay_ms=7,
                                              clock=clock)
        assert delays(strategy, clock, [0, 400, 400]) == [7, 7, None]

    def test_the_window_slides(self) -> None:
        clock = ManualClock()
        strategy = FailureRateRestartStrategy(2, 1000, 7, clock)
        # failures at 0, 600, 1200, 1800, 1900: the third is 1200 ms after the first (ok),
        # the fifth is within 1000 ms of the third and fourth (fail).
        assert delays(strategy, clock, [0, 600, 600, 600, 100]) == [7, 7, 7, 7, None]

    def test_exactly_interval_apart_still_counts(self) -> None:
        clock = ManualClock()
        strategy = FailureRateRestartStrategy(1, 1000, 7, clock)
        assert delays(strategy, clock, [0, 1000]) == [7, None]
        other = FailureRateRestartStrategy(1, 1000, 7, clock)
        assert delays(other, clock, [0, 1001]) == [7, 7]


def exponential(clock: ManualClock, seed: int = 3, **overrides: float) -> (
        ExponentialDelayRestartStrategy):
    values: dict[str, float] = dict(
        initial_backoff_ms=1000, max_backoff_ms=10_000, multiplier=2.0,
        reset_threshold_ms=60_000, jitter_factor=0.0, attempts_before_reset=100)
    values.update(overrides)
    return ExponentialDelayRestartStrategy(
        ExponentialDelaySettings(**values), clock, random.Random(seed))  # type: ignore[arg-type]


class TestExponentialDelay:
    def test_doubles_up_to_the_maximum(self) -> None:
        clock = ManualClock(5_000)
        strategy = exponential(clock)
        # each failure comes 1 ms after the previous restart happened
        gaps: list[float] = [0]
        expected = [1000, 2000, 4000, 8000, 10_000, 10_000]
        for delay in expected[:-1]:
            gaps.append(delay + 1)
        assert delays(strategy, clock, gaps) == expected
        assert strategy.restarts == 6

    def test_failure_while_restart_pending_merges(self) -> None:
        clock = ManualClock()
        strategy = exponential(clock)
        assert strategy.on_failure(None).delay_ms == 1000
        clock.advance(400)
        merged = strategy.on_failure(None)
        assert (merged.restart, merged.delay_ms, merged.new_attempt) == (True, 600, False)
        clock.advance(600)
        assert strategy.on_failure(None).new_attempt is False  # at the restart instant
        clock.advance(1)
        assert strategy.on_failure(None).delay_ms == 2000
        assert strategy.restarts == 2

    def test_running_past_the_threshold_resets_the_backoff(self) -> None:
        clock = ManualClock()
        strategy = exponential(clock, reset_threshold_ms=10_000)
        assert delays(strategy, clock, [0, 1001, 2001]) == [1000, 2000, 4000]
        # scheduled restart at 3002 + 4000 = 7002; running 10 s after it resets
        clock.advance(4000 + 10_000)
        assert strategy.on_failure(None).delay_ms == 1000

    def test_on_running_counts_from_when_the_job_really_ran(self) -> None:
        clock = ManualClock()
        strategy = exponential(clock, reset_threshold_ms=10_000)
        strategy.on_failure(None)  # restart at 1000
        clock.advance(5000)  # redeploying took until 5000
        strategy.on_running()
        assert strategy.running
        clock.advance(9_000)  # 13 s after the scheduled restart, 9 s after running
        assert strategy.on_failure(None).delay_ms == 2000
        assert not strategy.running
        clock.advance(2000)
        strategy.on_running()
        clock.advance(10_000)
        assert strategy.on_failure(None).delay_ms == 1000

    def test_gives_up_after_attempts_before_reset(self) -> None:
        clock = ManualClock()
        strategy = exponential(clock, attempts_before_reset=2)
        decisions = delays(strategy, clock, [0, 1001, 2001])
        assert decisions == [1000, 2000, None]
        assert "attempts-before-reset-backoff" in strategy.on_failure(None).reason

    def test_jitter_is_drawn_from_the_given_random(self) -> None:
        clock = ManualClock()
        strategy = exponential(clock, seed=42, jitter_factor=0.25, max_backoff_ms=100_000)
        twin = random.Random(42)
        expected = [max(1000, b + twin.randint(-(b // 4), b // 4)) for b in (1000, 2000, 4000)]
        got = [strategy.on_failure(None).delay_ms]
        for _ in range(2):
            clock.advance(got[-1] + 1)
            got.append(strategy.on_failure(None).delay_ms)
        assert got == expected
        assert got != [1000, 2000, 4000]

    def test_huge_attempt_counts_do_not_overflow(self) -> None:
        clock = ManualClock()
        strategy = exponential(clock, multiplier=1e6, jitter_factor=0.5)
        last = 0
        for _ in range(80):
            last = strategy.on_failure(None).delay_ms
            clock.advance(last + 1)
        assert 1000 <= last <= 10_000


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2**31), st.lists(st.integers(0, 20_000), min_size=1, max_size=30),
       st.floats(0, 1), st.floats(1, 4))
def test_exponential_delays_stay_within_bounds(
    seed: int, gaps: list[int], jitter: float, multiplier: float
) -> None:
    clock = ManualClock()
    strategy = exponential(clock, seed=seed, jitter_factor=jitter, multiplier=multiplier)
    for gap in gaps:
        clock.advance(gap)
        decision = strategy.on_failure(None)
        assert decision.restart
        assert 0 <= decision.delay_ms <= 10_000
        if decision.new_attempt:
            assert decision.delay_ms >= 1000


class TestUnrecoverable:
    def test_suppressed_failures_never_restart(self) -> None:
        strategy = FixedDelayRestartStrategy(5, 10)
        try:
            try:
                raise SuppressRestartsError("bad job")
            except SuppressRestartsError as inner:
                raise RuntimeError("task failed") from inner
        except RuntimeError as outer:
            decision = strategy.on_failure(outer)
        assert not decision.restart
        assert strategy.restarts == 0
        assert is_unrecoverable(SuppressRestartsError("x"))
        assert not is_unrecoverable(RuntimeError("x"))
        assert not is_unrecoverable(None)

    def test_error_pickles(self) -> None:
        error = pickle.loads(pickle.dumps(SuppressRestartsError("because")))
        assert str(error) == "restarts suppressed: because"
