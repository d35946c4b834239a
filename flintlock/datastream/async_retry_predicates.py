"""Ready-made retry predicates for ``AsyncRetryStrategy`` (PyFlink's
``pyflink.datastream.async_retry_predicates``): pass them as ``result_predicate`` or
``exception_predicate``; ``exception_type_predicate`` takes the expected type as a second
argument, so bind it with ``functools.partial(..., expected_error_type=TimeoutError)``."""

from __future__ import annotations

from typing import Any


def empty_result_predicate(result: list[Any] | None) -> bool:
    """Retry when an attempt produced no output."""
    return result is None or len(result) == 0


def has_exception_predicate(error: BaseException | None) -> bool:
    """Retry on any exception."""
    return error is not None


def exception_type_predicate(error: BaseException | None,
                             expected_error_type: type[BaseException]) -> bool:
    """Retry when the exception is an ``expected_error_type``."""
    return isinstance(error, expected_error_type)


__all__ = ["empty_result_predicate", "exception_type_predicate", "has_exception_predicate"]
