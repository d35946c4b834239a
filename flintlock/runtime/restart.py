"""Restart strategies: after a job attempt failed, restart it (and after how long) or give up.

The JobManager calls ``on_failure(cause)`` once per failure it learns of and carries out the
returned ``RestartDecision`` (resubmit the barrier stage after ``delay_ms``, or fail the job);
it calls ``on_running()`` when a restarted attempt is running again. The strategies read time
only through an injected ``Clock`` and draw jitter only from an injected ``random.Random``, so
they are I/O-free and tested with a manual clock and exact delays.

Strategies and their rules (Flink's, keys under ``restart-strategy.``):

* ``none``: never restart.
* ``fixed-delay``: restart up to ``attempts`` times, each after ``delay``; the next failure
  fails the job.
* ``failure-rate``: restart after ``delay`` unless this failure is the (max+1)-th within
  ``failure-rate-interval`` (the job survives ``max-failures-per-interval`` failures per
  interval, measured on a sliding window).
* ``exponential-delay``: restart after ``initial * multiplier^n`` (n = restarts since the last
  reset) plus or minus ``jitter * that`` drawn uniformly, clamped to [initial, max]. A failure
  while a restart is still pending merges into it (no new attempt: several TaskManagers
  failing at once are one failure). Running for ``reset-backoff-threshold`` without failure
  resets n to 0. Gives up after ``attempts-before-reset-backoff`` restarts without a reset.
  The running time is counted from ``on_running()`` when the JobManager reports it, else
  from the scheduled restart time (Flink's approximation, which counts redeployment as
  running).

Unset ``restart-strategy.type``: exponential-delay when checkpointing is enabled, else none
(Flink >= 1.19). A failure whose cause chain contains ``SuppressRestartsError`` is never
restarted, whatever the strategy; nor is one a restart cannot fix (``PERMANENT_FAILURES``): a
corrupt or unreadable checkpoint or savepoint file (``CorruptStateError``, naming the file), state
that cannot be restored into this job (non-restored state without allowNonRestoredState, a
changed max parallelism, a state used as another kind, unaligned state that cannot be
rescaled, a parallelism out of range). Every attempt would restore the same files into the same
job graph and fail the same way, so the job fails at once with that error (docs/reliability.md).

Thread ownership: a strategy instance belongs to the JobManager's coordination thread.
"""

from __future__ import annotations

import abc
import math
import random
from collections import deque
from dataclasses import dataclass

from flintlock.common.clock import Clock
from flintlock.common.config import Configuration
from flintlock.common.errors import (
    ConfigurationError,
    FlintlockError,
    InvalidConfigValueError,
)
from flintlock.common.options import restart as options
from flintlock.runtime.state.errors import (
    ChannelStateRescaleError,
    InvalidParallelismError,
    MaxParallelismMismatchError,
    NonRestoredStateError,
    StateKindMismatchError,
)
from flintlock.runtime.state.handles import CorruptStateError

_LONG_MAX = 2**63 - 1


class SuppressRestartsError(FlintlockError):
    """Raised (or chained) by code that knows a failure is permanent: the job fails without
    restarting (a bad job definition found on a TaskManager, an explicit user request)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason

    def __str__(self) -> str:
        return f"restarts suppressed: {self.reason}"


PERMANENT_FAILURES: tuple[type[BaseException], ...] = (
    SuppressRestartsError, CorruptStateError, NonRestoredStateError,
    MaxParallelismMismatchError, StateKindMismatchError, ChannelStateRescaleError,
    InvalidParallelismError,
)
"""Failures no restart can fix: the next attempt restores the same files into the same job."""


def permanent_cause(cause: BaseException | None) -> BaseException | None:
    """The first error in ``cause``'s cause/context chain that no restart can fix, or None."""
    seen: set[int] = set()
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, PERMANENT_FAILURES):
            return cause
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return None


def is_unrecoverable(cause: BaseException | None) -> bool:
    """Whether ``cause`` or anything in its cause/context chain is a ``PERMANENT_FAILURES``."""
    return permanent_cause(cause) is not None


@dataclass(frozen=True, slots=True)
class RestartDecision:
    """What to do after a failure: restart after ``delay_ms``, or fail the job.

    ``new_attempt`` is False when the failure merged into a restart already scheduled (the
    JobManager then keeps its pending restart instead of scheduling another)."""

    restart: bool
    delay_ms: int
    reason: str
    new_attempt: bool = True


class RestartStrategy(abc.ABC):
    """Decides after each failure; counts the restarts it granted."""

    def __init__(self) -> None:
        self.restarts = 0  # restarts granted so far (Flink's numRestarts)
        self.running = False  # between on_running() and the next on_failure()

    def on_failure(self, cause: BaseException | None = None) -> RestartDecision:
        self.running = False
        permanent = permanent_cause(cause)
        if permanent is not None:
            return RestartDecision(False, 0, f"a restart cannot fix {type(permanent).__name__}: "
                                   f"{permanent}")
        decision = self._decide(cause)
        if decision.restart and decision.new_attempt:
            self.restarts += 1
        return decision

    def on_running(self) -> None:
        """The (restarted) job is running again (all its subtasks are RUNNING)."""
        self.running = True

    @abc.abstractmethod
    def _decide(self, cause: BaseException | None) -> RestartDecision: ...


class NoRestartStrategy(RestartStrategy):
    def _decide(self, cause: BaseException | None) -> RestartDecision:
        return RestartDecision(False, 0, "restart strategy 'none' never restarts")

    def __repr__(self) -> str:
        return "NoRestartStrategy()"


class FixedDelayRestartStrategy(RestartStrategy):
    def __init__(self, attempts: int, delay_ms: int) -> None:
        super().__init__()
        self.attempts = attempts
        self.delay_ms = delay_ms
        self._failures = 0

    def _decide(self, cause: BaseException | None) -> RestartDecision:
        self._failures += 1
        if self._failures > self.attempts:
            return RestartDecision(False, 0, f"fixed-delay: all {self.attempts} restart "
                                   f"attempts used ({options.FIXED_DELAY_ATTEMPTS.key})")
        return RestartDecision(
            True, self.delay_ms, f"fixed-delay: restart {self._failures} of {self.attempts} "
            f"in {self.delay_ms} ms")

    def __repr__(self) -> str:
        return f"FixedDelayRestartStrategy(attempts={self.attempts}, delay_ms={self.delay_ms})"


class FailureRateRestartStrategy(RestartStrategy):
    def __init__(self, max_failures: int, interval_ms: int, delay_ms: int, clock: Clock) -> None:
        super().__init__()
        self.max_failures = max_failures
        self.interval_ms = interval_ms
        self.delay_ms = delay_ms
        self._clock = clock
        self._recent: deque[float] = deque(maxlen=max_failures + 1)  # failure times, oldest left

    def _decide(self, cause: BaseException | None) -> RestartDecision:
        now = self._clock.now_ms()
        self._recent.append(now)
        if len(self._recent) > self.max_failures and now - self._recent[0] <= self.interval_ms:
            return RestartDecision(
                False, 0, f"failure-rate: {len(self._recent)} failures within "
                f"{self.interval_ms} ms exceed {self.max_failures} per interval "
                f"({options.FAILURE_RATE_MAX.key})")
        return RestartDecision(True, self.delay_ms, f"failure-rate: restart in {self.delay_ms} ms")

    def __repr__(self) -> str:
        return (f"FailureRateRestartStrategy(max_failures={self.max_failures}, "
                f"interval_ms={self.interval_ms}, delay_ms={self.delay_ms})")


@dataclass(frozen=True, slots=True)
class ExponentialDelaySettings:
    initial_backoff_ms: int
    max_backoff_ms: int
    multiplier: float
    reset_threshold_ms: int
    jitter_factor: float
    attempts_before_reset: int


class ExponentialDelayRestartStrategy(RestartStrategy):
    def __init__(
        self, settings: ExponentialDelaySettings, clock: Clock, rng: random.Random
    ) -> None:
        super().__init__()
        self.settings = settings
        self._clock = clock
        self._rng = rng
        self._attempt = 0  # restarts since the last reset
        self._next_restart_ms = -math.inf  # when the pending (or last) restart happens
        self._running_since: float | None = None

    def on_running(self) -> None:
        super().on_running()
        self._running_since = self._clock.now_ms()

    def _decide(self, cause: BaseException | None) -> RestartDecision:
        now = self._clock.now_ms()
        if now <= self._next_restart_ms:
            remaining = math.ceil(self._next_restart_ms - now)
            return RestartDecision(True, remaining, "exponential-delay: merged into the "
                                   "restart already pending", new_attempt=False)
        running_from = self._running_since
        if running_from is None:
            running_from = self._next_restart_ms
        if now - running_from >= self.settings.reset_threshold_ms:
            self._attempt = 0
        self._running_since = None
        if self._attempt >= self.settings.attempts_before_reset:
            return RestartDecision(False, 0, f"exponential-delay: {self._attempt} restarts "
                                   f"without a reset ({options.EXP_ATTEMPTS.key})")
        delay = self._backoff_ms()
        self._next_restart_ms = now + delay
        self._attempt += 1
        return RestartDecision(True, delay, f"exponential-delay: restart {self._attempt} "
                               f"in {delay} ms")

    def _backoff_ms(self) -> int:
        s = self.settings
        try:
            raw = s.initial_backoff_ms * s.multiplier ** self._attempt
        except OverflowError:
            raw = math.inf
        backoff = min(int(raw) if raw < _LONG_MAX else _LONG_MAX, _LONG_MAX)
        jitter = 0
        if s.jitter_factor > 0:
            offset = min(int(backoff * s.jitter_factor), _LONG_MAX - 1)
            jitter = self._rng.randint(-offset, offset)
        return max(s.initial_backoff_ms, min(backoff + jitter, s.max_backoff_ms))

    def __repr__(self) -> str:
        return f"ExponentialDelayRestartStrategy({self.settings})"


_ALIASES = {
    "none": "none", "off": "none", "disable": "none",
    "fixed-delay": "fixed-delay", "fixeddelay": "fixed-delay",
    "failure-rate": "failure-rate", "failurerate": "failure-rate",
    "exponential-delay": "exponential-delay", "exponentialdelay": "exponential-delay",
}


def restart_strategy_name(configuration: Configuration, checkpointing_enabled: bool) -> str:
    """The canonical strategy name configured (or defaulted) for a job."""
    configured = configuration.get(options.TYPE)
    if configured is None:
        return "exponential-delay" if checkpointing_enabled else "none"
    return _ALIASES[configured]


def create_restart_strategy(
    configuration: Configuration, checkpointing_enabled: bool, clock: Clock,
    rng: random.Random,
) -> RestartStrategy:
    """The restart strategy ``configuration`` asks for (see the module docstring)."""
    name = restart_strategy_name(configuration, checkpointing_enabled)
    if name == "none":
        return NoRestartStrategy()
    if name == "fixed-delay":
        return FixedDelayRestartStrategy(
            configuration.get(options.FIXED_DELAY_ATTEMPTS),
            configuration.get(options.FIXED_DELAY_DELAY))
    if name == "failure-rate":
        return FailureRateRestartStrategy(
            configuration.get(options.FAILURE_RATE_MAX),
            configuration.get(options.FAILURE_RATE_INTERVAL),
            configuration.get(options.FAILURE_RATE_DELAY), clock)
    return ExponentialDelayRestartStrategy(_exponential_settings(configuration), clock, rng)


def _exponential_settings(configuration: Configuration) -> ExponentialDelaySettings:
    settings = ExponentialDelaySettings(
        initial_backoff_ms=configuration.get(options.EXP_INITIAL),
        max_backoff_ms=configuration.get(options.EXP_MAX),
        multiplier=configuration.get(options.EXP_MULTIPLIER),
        reset_threshold_ms=configuration.get(options.EXP_RESET),
        jitter_factor=configuration.get(options.EXP_JITTER),
        attempts_before_reset=configuration.get(options.EXP_ATTEMPTS),
    )
    if settings.jitter_factor > 1.0:
        raise InvalidConfigValueError(
            options.EXP_JITTER.key, settings.jitter_factor, "a float between 0 and 1")
    if settings.initial_backoff_ms > settings.max_backoff_ms:
        raise ConfigurationError(
            f"{options.EXP_INITIAL.key} ({settings.initial_backoff_ms} ms) may not exceed "
            f"{options.EXP_MAX.key} ({settings.max_backoff_ms} ms)")
    return settings
