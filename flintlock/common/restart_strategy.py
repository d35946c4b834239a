"""``RestartStrategies``: PyFlink's restart-strategy configurations, written as Flink's
``restart-strategy.*`` keys.

``env.set_restart_strategy(RestartStrategies.fixed_delay_restart(3, 1000))`` is the same as
setting ``restart-strategy.type: fixed-delay`` and its two keys; the JobManager's restart
strategy (``flintlock.runtime.restart``) reads only the configuration. ``from_configuration``
turns the keys back into the matching object (``fall_back_restart()`` when no type is set: the
default Flink chooses — exponential delay with checkpointing, none without).

Durations are accepted as integer milliseconds, ``datetime.timedelta`` or ``Duration``; getters
return ``timedelta``, as PyFlink's do. Immutable values; no thread owns anything here.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Any

from flintlock.common.config import Configuration
from flintlock.common.options import restart as options
from flintlock.common.time import Duration

_FIXED_DELAY = ("fixed-delay", "fixeddelay")
_FAILURE_RATE = ("failure-rate", "failurerate")
_EXPONENTIAL = ("exponential-delay", "exponentialdelay")
_NONE = ("none", "off", "disable")


def _millis(value: int | datetime.timedelta | Duration, what: str) -> int:
    if isinstance(value, datetime.timedelta):
        return value // datetime.timedelta(milliseconds=1)
    if isinstance(value, Duration):
        return value.to_milliseconds()
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise TypeError(f"{what} must be milliseconds (int), a timedelta or a Duration, got "
                    f"{value!r}")


def _delta(millis: int) -> datetime.timedelta:
    return datetime.timedelta(milliseconds=millis)


class RestartStrategyConfiguration:
    """Base of the restart-strategy descriptions."""

    def configure_into(self, configuration: Configuration) -> None:
        raise NotImplementedError

    def get_description(self) -> str:
        return type(self).__name__


@dataclass(frozen=True)
class NoRestartStrategyConfiguration(RestartStrategyConfiguration):
    def configure_into(self, configuration: Configuration) -> None:
        configuration.set(options.TYPE, "none")

    def get_description(self) -> str:
        return "Restart deactivated."


@dataclass(frozen=True)
class FallbackRestartStrategyConfiguration(RestartStrategyConfiguration):
    def configure_into(self, configuration: Configuration) -> None:
        configuration.remove_config(options.TYPE.key)

    def get_description(self) -> str:
        return "Cluster level default restart strategy"


@dataclass(frozen=True)
class FixedDelayRestartStrategyConfiguration(RestartStrategyConfiguration):
    restart_attempts: int
    delay_ms: int

    def get_restart_attempts(self) -> int:
        return self.restart_attempts

    def get_delay_between_attempts_interval(self) -> datetime.timedelta:
        return _delta(self.delay_ms)

    def configure_into(self, configuration: Configuration) -> None:
        configuration.set(options.TYPE, "fixed-delay")
        configuration.set(options.FIXED_DELAY_ATTEMPTS, self.restart_attempts)
        configuration.set(options.FIXED_DELAY_DELAY, self.delay_ms)

    def get_description(self) -> str:
        return (f"Restart with fixed delay ({self.delay_ms} ms). #{self.restart_attempts} "
                "restart attempts.")


@dataclass(frozen=True)
class FailureRateRestartStrategyConfiguration(RestartStrategyConfiguration):
    max_failure_rate: int
    failure_interval_ms: int
    delay_ms: int

    def get_max_failure_rate(self) -> int:
        return self.max_failure_rate

    def get_failure_interval(self) -> datetime.timedelta:
        return _delta(self.failure_interval_ms)

    def get_delay_between_attempts_interval(self) -> datetime.timedelta:
        return _delta(self.delay_ms)

    def configure_into(self, configuration: Configuration) -> None:
        configuration.set(options.TYPE, "failure-rate")
        configuration.set(options.FAILURE_RATE_MAX, self.max_failure_rate)
        configuration.set(options.FAILURE_RATE_INTERVAL, self.failure_interval_ms)
        configuration.set(options.FAILURE_RATE_DELAY, self.delay_ms)

    def get_description(self) -> str:
        return (f"Failure rate restart with maximum of {self.max_failure_rate} failures within "
                f"interval {self.failure_interval_ms} ms and fixed delay {self.delay_ms} ms.")


@dataclass(frozen=True)
class ExponentialDelayRestartStrategyConfiguration(RestartStrategyConfiguration):
    initial_backoff_ms: int
    max_backoff_ms: int
    backoff_multiplier: float
    reset_backoff_threshold_ms: int
    jitter_factor: float

    def get_initial_backoff(self) -> datetime.timedelta:
        return _delta(self.initial_backoff_ms)

    def get_max_backoff(self) -> datetime.timedelta:
        return _delta(self.max_backoff_ms)

    def get_backoff_multiplier(self) -> float:
        return self.backoff_multiplier

    def get_reset_backoff_threshold(self) -> datetime.timedelta:
        return _delta(self.reset_backoff_threshold_ms)

    def get_jitter_factor(self) -> float:
        return self.jitter_factor

    def configure_into(self, configuration: Configuration) -> None:
        configuration.set(options.TYPE, "exponential-delay")
        configuration.set(options.EXP_INITIAL, self.initial_backoff_ms)
        configuration.set(options.EXP_MAX, self.max_backoff_ms)
        configuration.set(options.EXP_MULTIPLIER, self.backoff_multiplier)
        configuration.set(options.EXP_RESET, self.reset_backoff_threshold_ms)
        configuration.set(options.EXP_JITTER, self.jitter_factor)


_NoRestartStrategyConfiguration = NoRestartStrategyConfiguration
_FallbackRestartStrategyConfiguration = FallbackRestartStrategyConfiguration
_FixedDelayRestartStrategyConfiguration = FixedDelayRestartStrategyConfiguration
_FailureRateRestartStrategyConfiguration = FailureRateRestartStrategyConfiguration
_ExponentialDelayRestartStrategyConfiguration = ExponentialDelayRestartStrategyConfiguration


class RestartStrategies:
    """Factories with PyFlink's names."""

    RestartStrategyConfiguration = RestartStrategyConfiguration
    NoRestartStrategyConfiguration = NoRestartStrategyConfiguration
    FallbackRestartStrategyConfiguration = FallbackRestartStrategyConfiguration
    FixedDelayRestartStrategyConfiguration = FixedDelayRestartStrategyConfiguration
    FailureRateRestartStrategyConfiguration = FailureRateRestartStrategyConfiguration
    ExponentialDelayRestartStrategyConfiguration = ExponentialDelayRestartStrategyConfiguration

    @staticmethod
    def no_restart() -> _NoRestartStrategyConfiguration:
        return NoRestartStrategyConfiguration()

    @staticmethod
    def fall_back_restart() -> _FallbackRestartStrategyConfiguration:
        return FallbackRestartStrategyConfiguration()

    @staticmethod
    def fixed_delay_restart(restart_attempts: int, delay_between_attempts: Any
                            ) -> _FixedDelayRestartStrategyConfiguration:
        return FixedDelayRestartStrategyConfiguration(
            restart_attempts, _millis(delay_between_attempts, "delay_between_attempts"))

    @staticmethod
    def failure_rate_restart(failure_rate: int, failure_interval: Any, delay_interval: Any
                             ) -> _FailureRateRestartStrategyConfiguration:
        return FailureRateRestartStrategyConfiguration(
            failure_rate, _millis(failure_interval, "failure_interval"),
            _millis(delay_interval, "delay_interval"))

    @staticmethod
    def exponential_delay_restart(initial_backoff: Any, max_backoff: Any,
                                  backoff_multiplier: float, reset_backoff_threshold: Any,
                                  jitter_factor: float
                                  ) -> _ExponentialDelayRestartStrategyConfiguration:
        return ExponentialDelayRestartStrategyConfiguration(
            _millis(initial_backoff, "initial_backoff"), _millis(max_backoff, "max_backoff"),
            float(backoff_multiplier),
            _millis(reset_backoff_threshold, "reset_backoff_threshold"), float(jitter_factor))


def from_configuration(configuration: Configuration) -> RestartStrategyConfiguration:
    """The restart strategy the configuration's ``restart-strategy.*`` keys describe."""
    kind = configuration.get(options.TYPE)
    if kind is None:
        return FallbackRestartStrategyConfiguration()
    if kind in _NONE:
        return NoRestartStrategyConfiguration()
    if kind in _FIXED_DELAY:
        return FixedDelayRestartStrategyConfiguration(
            configuration.get(options.FIXED_DELAY_ATTEMPTS),
            configuration.get(options.FIXED_DELAY_DELAY))
    if kind in _FAILURE_RATE:
        return FailureRateRestartStrategyConfiguration(
            configuration.get(options.FAILURE_RATE_MAX),
            configuration.get(options.FAILURE_RATE_INTERVAL),
            configuration.get(options.FAILURE_RATE_DELAY))
    if kind not in _EXPONENTIAL:
        raise ValueError(f"unknown restart strategy type {kind!r}")
    return ExponentialDelayRestartStrategyConfiguration(
        configuration.get(options.EXP_INITIAL), configuration.get(options.EXP_MAX),
        configuration.get(options.EXP_MULTIPLIER), configuration.get(options.EXP_RESET),
        configuration.get(options.EXP_JITTER))
