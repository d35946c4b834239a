"""Errors the DataStream API raises while a job is being built, before anything runs.

Each names the operator or call at fault and says what to do instead (STYLE.md §5); every
constructor argument is kept in ``args`` so the errors survive pickling. Raised on the user's
thread.
"""

from __future__ import annotations

from flintlock.common.errors import FlintlockError


class DataStreamApiError(FlintlockError):
    """Base of the errors raised while a job is built."""


class EnvironmentClosedError(DataStreamApiError, RuntimeError):
    """An operation on an environment (or a stream of one) after ``env.close()``."""

    def __init__(self, operation: str) -> None:
        super().__init__(operation)
        self.operation = operation

    def __str__(self) -> str:
        return (f"{self.operation}: the StreamExecutionEnvironment is closed; create a new one "
                "with StreamExecutionEnvironment.get_execution_environment()")


class NotAnOperatorError(DataStreamApiError, TypeError):
    """An operator setting (name, uid, parallelism, ...) on a stream that is no operator: the
    result of a partitioning call or of ``union``."""

    def __init__(self, method: str, origin: str) -> None:
        super().__init__(method, origin)
        self.method = method
        self.origin = origin

    def __str__(self) -> str:
        return (f"{self.method}() sets a property of an operator, but this stream is the result "
                f"of {self.origin}, which creates no operator; call {self.method}() on the "
                "operator that produces the stream instead")


class KeyedStreamRequiredError(DataStreamApiError, TypeError):
    """A keyed operation (reduce, sum, a KeyedProcessFunction, ...) on a non-keyed stream."""

    def __init__(self, operation: str) -> None:
        super().__init__(operation)
        self.operation = operation

    def __str__(self) -> str:
        return (f"{self.operation} needs a keyed stream: call key_by(key_selector) first, e.g. "
                f"ds.key_by(lambda value: value[0]).{self.operation.split('(')[0]}(...)")


class KeyedStreamOperationError(DataStreamApiError, TypeError):
    """An operation a KeyedStream does not allow (re-partitioning, naming the key_by)."""

    def __init__(self, operation: str, detail: str) -> None:
        super().__init__(operation, detail)
        self.operation = operation
        self.detail = detail

    def __str__(self) -> str:
        return f"KeyedStream.{self.operation}: {self.detail}"


class InvalidOperatorSettingError(DataStreamApiError, ValueError):
    """An operator setting outside its bounds (parallelism < 1, a non-parallel source with
    parallelism > 1, a bad field for an aggregation, ...)."""

    def __init__(self, operator: str, setting: str, value: str, expected: str) -> None:
        super().__init__(operator, setting, value, expected)
        self.operator = operator
        self.setting = setting
        self.value = value
        self.expected = expected

    def __str__(self) -> str:
        return (f"operator {self.operator!r}: invalid {self.setting} {self.value}; "
                f"{self.expected}")


class UnionTypeMismatchError(DataStreamApiError, TypeError):
    """``union`` of streams whose declared types differ."""

    def __init__(self, first: str, second: str) -> None:
        super().__init__(first, second)
        self.first = first
        self.second = second

    def __str__(self) -> str:
        return (f"cannot union streams of different types: {self.first} and {self.second}; "
                "map them to one type first")


class ForeignStreamError(DataStreamApiError, ValueError):
    """Streams of two different environments combined in one operation."""

    def __init__(self, operation: str) -> None:
        super().__init__(operation)
        self.operation = operation

    def __str__(self) -> str:
        return (f"{self.operation}: the streams belong to different "
                "StreamExecutionEnvironments; build a job from one environment")


class EmptyJobError(DataStreamApiError, RuntimeError):
    """``execute`` with no operator defined (only sources, or nothing at all)."""

    def __init__(self, detail: str = "") -> None:
        super().__init__(detail)
        self.detail = detail

    def __str__(self) -> str:
        return ("no operators defined in the streaming topology, cannot execute; add a sink "
                "(e.g. ds.print()) or an operator to a stream" + (
                    f" ({self.detail})" if self.detail else ""))


class UnpicklableFunctionError(DataStreamApiError, TypeError):
    """A user function (or source, sink, collection element) that cannot be shipped to the
    TaskManagers because something it holds cannot be pickled."""

    def __init__(self, operator: str, function: str, member: str, cause: str) -> None:
        super().__init__(operator, function, member, cause)
        self.operator = operator
        self.function = function
        self.member = member
        self.cause = cause

    def __str__(self) -> str:
        where = f"its member {self.member}" if self.member else "it"
        return (f"operator {self.operator!r}: {self.function} cannot be pickled to ship it to "
                f"the TaskManagers: {where} is not picklable ({self.cause}); create such "
                "resources (connections, locks, files, threads) in open() instead")


class AsyncFunctionError(DataStreamApiError, ValueError):
    """``AsyncDataStream`` got an unusable argument: no ``AsyncFunction``, an ``async_invoke``
    that is no coroutine function, a bad capacity, timeout or retry strategy."""
