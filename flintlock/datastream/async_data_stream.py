"""``AsyncDataStream``: enrich a stream with async requests (PyFlink's
``pyflink.datastream.AsyncDataStream``).

Each method adds an async I/O operator after ``data_stream`` (run by
``runtime.tasks.async_operator``): ``async_function.async_invoke(value)``, a coroutine,
returns the record's outputs as a list; at most ``capacity`` records are in flight per subtask;
``timeout`` (a ``Time`` or ``Duration``) bounds each record's request, retries included, after
which ``async_function.timeout(value)`` gives the outputs. ``ordered_wait`` emits results in
input order, ``unordered_wait`` as they complete (never across a watermark). The ``_with_retry``
variants retry attempts that an ``AsyncRetryStrategy``'s predicates select.

The signatures are PyFlink 2.3's: ``(data_stream, async_function, timeout[,
async_retry_strategy], capacity=100, output_type=None)``; there is no separate time unit.
"""

from __future__ import annotations

import inspect
from typing import Any

from flintlock.common.operator_spec import AsyncIOSpec, OperatorKind, OperatorSpec
from flintlock.common.typeinfo import TypeInformation
from flintlock.datastream import functions as fn
from flintlock.datastream.async_retry_strategies import NO_RETRY_STRATEGY
from flintlock.datastream.data_stream import DataStream
from flintlock.datastream.errors import AsyncFunctionError

OPERATOR_NAME = "async wait operator"


def _timeout_ms(timeout: Any) -> int:
    to_ms = getattr(timeout, "to_milliseconds", None)
    if to_ms is None or isinstance(timeout, type):
        raise AsyncFunctionError(
            f"timeout must be a Time or Duration (e.g. Time.seconds(10)), got {timeout!r}")
    return int(to_ms())


def _validate(async_function: Any, timeout_ms: int, strategy: Any, capacity: Any) -> None:
    if not isinstance(async_function, fn.AsyncFunction):
        raise AsyncFunctionError(
            f"expected an AsyncFunction, got {type(async_function).__name__}")
    if not inspect.iscoroutinefunction(async_function.async_invoke):
        raise AsyncFunctionError(
            f"method 'async_invoke' of class {type(async_function).__name__!r} should be "
            "declared as 'async def'")
    if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity <= 0:
        raise AsyncFunctionError(f"capacity must be a positive int, got {capacity!r}")
    if strategy is None:
        raise AsyncFunctionError("the async retry strategy must not be None "
                                 "(use AsyncRetryStrategy.no_restart())")
    if strategy is not NO_RETRY_STRATEGY and timeout_ms <= 0:
        raise AsyncFunctionError("a timeout must be set (> 0) when async requests are retried")
    if strategy.get_retry_predicate() is None:
        raise AsyncFunctionError(
            f"the retry predicate of the async retry strategy {type(strategy).__name__!r} "
            "is None")


def _add(data_stream: DataStream, async_function: Any, timeout: Any, strategy: Any,
         capacity: int, output_type: TypeInformation | None, ordered: bool) -> DataStream:
    if not isinstance(data_stream, DataStream):
        raise AsyncFunctionError(f"expected a DataStream, got {type(data_stream).__name__}")
    timeout_ms = _timeout_ms(timeout)
    _validate(async_function, timeout_ms, strategy, capacity)
    settings = AsyncIOSpec(timeout_ms=timeout_ms, capacity=capacity, ordered=ordered,
                           retry_strategy=strategy)
    spec = OperatorSpec(OperatorKind.ASYNC, function=async_function, output_type=output_type,
                        async_io=settings)
    return data_stream._add_operator(OPERATOR_NAME, spec)


class AsyncDataStream:
    """Applies an ``AsyncFunction`` to a data stream (static methods only)."""

    @staticmethod
    def unordered_wait(data_stream: DataStream, async_function: fn.AsyncFunction[Any, Any],
                       timeout: Any, capacity: int = 100,
                       output_type: TypeInformation | None = None) -> DataStream:
        """Results leave as their requests complete (but never overtake a watermark)."""
        return _add(data_stream, async_function, timeout, NO_RETRY_STRATEGY, capacity,
                    output_type, ordered=False)

    @staticmethod
    def unordered_wait_with_retry(
            data_stream: DataStream, async_function: fn.AsyncFunction[Any, Any], timeout: Any,
            async_retry_strategy: fn.AsyncRetryStrategy[Any], capacity: int = 100,
            output_type: TypeInformation | None = None) -> DataStream:
        return _add(data_stream, async_function, timeout, async_retry_strategy, capacity,
                    output_type, ordered=False)

    @staticmethod
    def ordered_wait(data_stream: DataStream, async_function: fn.AsyncFunction[Any, Any],
                     timeout: Any, capacity: int = 100,
                     output_type: TypeInformation | None = None) -> DataStream:
        """Results leave in the order of the input records."""
        return _add(data_stream, async_function, timeout, NO_RETRY_STRATEGY, capacity,
                    output_type, ordered=True)

    @staticmethod
    def ordered_wait_with_retry(
            data_stream: DataStream, async_function: fn.AsyncFunction[Any, Any], timeout: Any,
            async_retry_strategy: fn.AsyncRetryStrategy[Any], capacity: int = 100,
            output_type: TypeInformation | None = None) -> DataStream:
        return _add(data_stream, async_function, timeout, async_retry_strategy, capacity,
                    output_type, ordered=True)


__all__ = ["AsyncDataStream"]
