"""The retry strategies of async I/O (PyFlink's ``pyflink.datastream.async_retry_strategies``)
and their base classes ``AsyncRetryStrategy`` / ``AsyncRetryPredicate`` (which
``flintlock.datastream.functions`` re-exports, as PyFlink has them there).

Attempts are counted from 1: after the first attempt ``can_retry(1)`` is asked, so
``max_attempts=3`` allows three retries after the first call, as in PyFlink. Every strategy
here is immutable: the exponential back-off computes each delay from the attempt number, so
one strategy object serves every in-flight record at once.
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from typing import Any, Generic, TypeVar

OUT = TypeVar("OUT")
ResultPredicate = Callable[[list[Any]], bool]
ExceptionPredicate = Callable[[Exception], bool]


class AsyncRetryPredicate(abc.ABC, Generic[OUT]):
    """When a finished attempt is retried: on its outputs, or on its exception."""

    @abc.abstractmethod
    def result_predicate(self) -> Callable[[list[OUT]], bool] | None:
        """Retry when this returns True for an attempt's outputs (None: never on outputs)."""

    @abc.abstractmethod
    def exception_predicate(self) -> Callable[[Exception], bool] | None:
        """Retry when this returns True for an attempt's exception (None: never)."""


class AsyncRetryStrategy(abc.ABC, Generic[OUT]):
    """Whether and when an async request is attempted again (attempts count from 1)."""

    @abc.abstractmethod
    def can_retry(self, current_attempts: int) -> bool:
        """Whether another attempt may follow ``current_attempts`` attempts."""

    @abc.abstractmethod
    def get_backoff_time_millis(self, current_attempts: int) -> int:
        """Milliseconds to wait before the next attempt."""

    @abc.abstractmethod
    def get_retry_predicate(self) -> AsyncRetryPredicate[OUT]:
        """Which outcomes are retried."""

    @staticmethod
    def no_restart() -> AsyncRetryStrategy[Any]:
        return NO_RETRY_STRATEGY

    @staticmethod
    def fixed_delay(max_attempts: int, backoff_time_millis: int,
                    result_predicate: Callable[[list[Any]], bool] | None,
                    exception_predicate: Callable[[Exception], bool] | None
                    ) -> AsyncRetryStrategy[Any]:
        return FixedDelayRetryStrategy(max_attempts, backoff_time_millis, result_predicate,
                                       exception_predicate)

    @staticmethod
    def exponential_backoff(max_attempts: int, initial_delay: int, max_retry_delay: int,
                            multiplier: float,
                            result_predicate: Callable[[list[Any]], bool] | None,
                            exception_predicate: Callable[[Exception], bool] | None
                            ) -> AsyncRetryStrategy[Any]:
        return ExponentialBackoffDelayRetryStrategy(
            max_attempts, initial_delay, max_retry_delay, multiplier, result_predicate,
            exception_predicate)



class RetryPredicate(AsyncRetryPredicate[Any]):
    def __init__(self, result_predicate: ResultPredicate | None,
                 exception_predicate: ExceptionPredicate | None) -> None:
        self._result_predicate = result_predicate
        self._exception_predicate = exception_predicate

    def result_predicate(self) -> ResultPredicate | None:
        return self._result_predicate

    def exception_predicate(self) -> ExceptionPredicate | None:
        return self._exception_predicate


def _positive(name: str, value: float) -> None:
    if not value > 0:
        raise ValueError(f"{name} should be greater than zero, got {value!r}")


class NoRetryStrategy(AsyncRetryStrategy[Any]):
    def can_retry(self, current_attempts: int) -> bool:
        return False

    def get_backoff_time_millis(self, current_attempts: int) -> int:
        return -1

    def get_retry_predicate(self) -> AsyncRetryPredicate[Any]:
        return RetryPredicate(None, None)


class FixedDelayRetryStrategy(AsyncRetryStrategy[Any]):
    def __init__(self, max_attempts: int, backoff_time_millis: int,
                 result_predicate: ResultPredicate | None,
                 exception_predicate: ExceptionPredicate | None) -> None:
        _positive("max_attempts", max_attempts)
        _positive("backoff_time_millis", backoff_time_millis)
        self._max_attempts = max_attempts
        self._backoff_ms = backoff_time_millis
        self._predicate = RetryPredicate(result_predicate, exception_predicate)

    def can_retry(self, current_attempts: int) -> bool:
        return current_attempts <= self._max_attempts

    def get_backoff_time_millis(self, current_attempts: int) -> int:
        return self._backoff_ms

    def get_retry_predicate(self) -> AsyncRetryPredicate[Any]:
        return self._predicate


class ExponentialBackoffDelayRetryStrategy(AsyncRetryStrategy[Any]):
    """Waits ``initial_delay`` ms before the first retry, then ``multiplier`` times the
    previous wait (whole milliseconds), at most ``max_retry_delay``."""

    def __init__(self, max_attempts: int, initial_delay: int, max_retry_delay: int,
                 multiplier: float, result_predicate: ResultPredicate | None,
                 exception_predicate: ExceptionPredicate | None) -> None:
        for name, value in (("max_attempts", max_attempts), ("initial_delay", initial_delay),
                            ("max_retry_delay", max_retry_delay), ("multiplier", multiplier)):
            _positive(name, value)
        self._max_attempts = max_attempts
        self._initial_delay = initial_delay
        self._max_retry_delay = max_retry_delay
        self._multiplier = multiplier
        self._predicate = RetryPredicate(result_predicate, exception_predicate)

    def can_retry(self, current_attempts: int) -> bool:
        return current_attempts <= self._max_attempts

    def get_backoff_time_millis(self, current_attempts: int) -> int:
        delay = self._initial_delay
        for _ in range(1, current_attempts):
            delay = int(min(delay * self._multiplier, self._max_retry_delay))
        return delay

    def get_retry_predicate(self) -> AsyncRetryPredicate[Any]:
        return self._predicate


NO_RETRY_STRATEGY: AsyncRetryStrategy[Any] = NoRetryStrategy()

__all__ = [
    "NO_RETRY_STRATEGY", "AsyncRetryPredicate", "AsyncRetryStrategy",
    "ExponentialBackoffDelayRetryStrategy", "FixedDelayRetryStrategy", "NoRetryStrategy",
    "RetryPredicate",
]
