"""User function interfaces with PyFlink's names and method signatures.

Users subclass these (``MapFunction.map``, ``KeyedProcessFunction.process_element`` ...) or pass
plain callables where PyFlink accepts them; the ``wrap_*`` helpers turn a callable into the
matching function object so the runtime sees one shape per operator kind. A wrapper stores the
user's callable itself as the instance attribute named like the method (``wrapper.map is
user_lambda``), so calling through it costs nothing over calling the lambda.

Contracts the runtime honours (documented per kind in ``flintlock.common.operator_spec``):

* ``open(runtime_context)`` once per subtask before the first record, ``close()`` once after the
  last (also on cancellation).
* ``flat_map``, ``process_element``, ``process_element1/2`` and ``on_timer`` may ``yield``
  outputs, return an iterable of outputs, or return ``None`` (no output).
* Functions are shipped to the TaskManagers with cloudpickle; whatever they reference must be
  picklable (the environment checks this before submission).

``RuntimeContext``, ``TimerService`` and the process-function ``Context`` classes are abstract:
the runtime implements them. Function objects are owned by the subtask thread that runs them.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Iterable
from typing import Any, Generic, TypeVar

from flintlock.common.errors import FlintlockError
from flintlock.common.time_domain import TimeDomain as TimeDomain
from flintlock.datastream.async_retry_strategies import (
    AsyncRetryPredicate as AsyncRetryPredicate,
)
from flintlock.datastream.async_retry_strategies import (
    AsyncRetryStrategy as AsyncRetryStrategy,
)


class RuntimeContext(abc.ABC):
    """What a function can ask about the subtask it runs in, and its keyed state."""

    @abc.abstractmethod
    def get_task_name(self) -> str: ...

    @abc.abstractmethod
    def get_number_of_parallel_subtasks(self) -> int: ...

    @abc.abstractmethod
    def get_max_number_of_parallel_subtasks(self) -> int: ...

    @abc.abstractmethod
    def get_index_of_this_subtask(self) -> int: ...

    @abc.abstractmethod
    def get_attempt_number(self) -> int: ...

    def get_task_name_with_subtasks(self) -> str:
        return (f"{self.get_task_name()} ({self.get_index_of_this_subtask() + 1}/"
                f"{self.get_number_of_parallel_subtasks()})")

    def get_job_parameter(self, key: str, default_value: str) -> str:
        return default_value

    def get_metrics_group(self) -> Any:
        """The ``flintlock.metrics.MetricGroup`` of this operator in this subtask
        (docs/metrics.md); the runtime's context implements it."""
        raise NotImplementedError(f"{type(self).__name__} has no metric group: only the "
                                  "runtime's RuntimeContext gives one")

    @abc.abstractmethod
    def get_state(self, state_descriptor: Any) -> Any:
        """The ``ValueState`` of ``state_descriptor`` for the current key."""

    @abc.abstractmethod
    def get_list_state(self, state_descriptor: Any) -> Any: ...

    @abc.abstractmethod
    def get_map_state(self, state_descriptor: Any) -> Any: ...

    @abc.abstractmethod
    def get_reducing_state(self, state_descriptor: Any) -> Any: ...

    @abc.abstractmethod
    def get_aggregating_state(self, state_descriptor: Any) -> Any: ...


class TimerService(abc.ABC):
    """Timers and clocks of a keyed operator (timers are scoped to the current key)."""

    @abc.abstractmethod
    def current_processing_time(self) -> int: ...

    @abc.abstractmethod
    def current_watermark(self) -> int: ...

    @abc.abstractmethod
    def register_processing_time_timer(self, timestamp: int) -> None: ...

    @abc.abstractmethod
    def register_event_time_timer(self, timestamp: int) -> None: ...

    @abc.abstractmethod
    def delete_processing_time_timer(self, timestamp: int) -> None: ...

    @abc.abstractmethod
    def delete_event_time_timer(self, timestamp: int) -> None: ...


class Function(abc.ABC):  # noqa: B024  (no abstract method: open/close are optional hooks)
    """Base of every user function: optional ``open``/``close`` lifecycle hooks."""

    def open(self, runtime_context: RuntimeContext) -> None:  # noqa: B027
        """Called once per subtask before the first record."""

    def close(self) -> None:  # noqa: B027
        """Called once per subtask after the last record or on cancellation."""


class MapFunction(Function):
    @abc.abstractmethod
    def map(self, value: Any) -> Any: ...


class FlatMapFunction(Function):
    @abc.abstractmethod
    def flat_map(self, value: Any) -> Iterable[Any] | None: ...


class FilterFunction(Function):
    @abc.abstractmethod
    def filter(self, value: Any) -> bool: ...


class ReduceFunction(Function):
    @abc.abstractmethod
    def reduce(self, value1: Any, value2: Any) -> Any: ...


class AggregateFunction(Function):
    """Incremental aggregation: accumulator in, result out (used with aggregating state)."""

    @abc.abstractmethod
    def create_accumulator(self) -> Any: ...

    @abc.abstractmethod
    def add(self, value: Any, accumulator: Any) -> Any: ...

    @abc.abstractmethod
    def get_result(self, accumulator: Any) -> Any: ...

    @abc.abstractmethod
    def merge(self, acc_a: Any, acc_b: Any) -> Any: ...


class KeySelector(Function):
    @abc.abstractmethod
    def get_key(self, value: Any) -> Any: ...


class NullByteKeySelector(KeySelector):
    """Puts every record under the same key (0)."""

    def get_key(self, value: Any) -> Any:
        return 0


class Partitioner(Function):
    @abc.abstractmethod
    def partition(self, key: Any, num_partitions: int) -> int: ...


class CoMapFunction(Function):
    @abc.abstractmethod
    def map1(self, value: Any) -> Any: ...

    @abc.abstractmethod
    def map2(self, value: Any) -> Any: ...


class CoFlatMapFunction(Function):
    @abc.abstractmethod
    def flat_map1(self, value: Any) -> Iterable[Any] | None: ...

    @abc.abstractmethod
    def flat_map2(self, value: Any) -> Iterable[Any] | None: ...


class BaseContext(abc.ABC):
    """What every process-function context offers."""

    @abc.abstractmethod
    def timestamp(self) -> int | None:
        """The event timestamp of the current record (None if it has none)."""

    @abc.abstractmethod
    def timer_service(self) -> TimerService: ...

    def output(self, output_tag: Any, value: Any) -> None:
        """Emit ``value`` to the side output ``output_tag`` (PyFlink's ``ctx.output``);
        the runtime's contexts implement it."""
        raise NotImplementedError("ctx.output() is implemented by the runtime's contexts")


class KeyedContext(BaseContext):
    @abc.abstractmethod
    def get_current_key(self) -> Any: ...


class TimerContext(KeyedContext):
    @abc.abstractmethod
    def time_domain(self) -> TimeDomain: ...


class ProcessFunction(Function):
    """One record in, any number out, on a non-keyed stream."""

    Context = BaseContext

    @abc.abstractmethod
    def process_element(self, value: Any, ctx: BaseContext) -> Iterable[Any] | None: ...


class KeyedProcessFunction(Function):
    """One record in, any number out, with keyed state and timers."""

    Context = KeyedContext
    OnTimerContext = TimerContext

    @abc.abstractmethod
    def process_element(self, value: Any, ctx: KeyedContext) -> Iterable[Any] | None: ...

    def on_timer(self, timestamp: int, ctx: TimerContext) -> Iterable[Any] | None:
        """Called when a timer registered for the current key fires."""
        return None


class CoProcessFunction(Function):
    Context = BaseContext

    @abc.abstractmethod
    def process_element1(self, value: Any, ctx: BaseContext) -> Iterable[Any] | None: ...

    @abc.abstractmethod
    def process_element2(self, value: Any, ctx: BaseContext) -> Iterable[Any] | None: ...


class KeyedCoProcessFunction(Function):
    Context = KeyedContext
    OnTimerContext = TimerContext

    @abc.abstractmethod
    def process_element1(self, value: Any, ctx: KeyedContext) -> Iterable[Any] | None: ...

    @abc.abstractmethod
    def process_element2(self, value: Any, ctx: KeyedContext) -> Iterable[Any] | None: ...

    def on_timer(self, timestamp: int, ctx: TimerContext) -> Iterable[Any] | None:
        return None


class _Unsupported(Function):
    """Base of PyFlink function types whose operators flintlock does not run yet."""

    feature = ""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(f"{type(self).__name__}: {self.feature} is not supported "
                                  "yet (issue #5)")


class SourceFunction(_Unsupported):
    feature = "the legacy SourceFunction API (use env.from_source or env.from_collection)"


class SinkFunction(_Unsupported):
    feature = "the legacy SinkFunction API (use DataStream.sink_to or print)"


IN = TypeVar("IN")
OUT = TypeVar("OUT")
KEY = TypeVar("KEY")
W = TypeVar("W")


class WindowContext(abc.ABC, Generic[W]):
    """What a process window function may ask about the window it is called for."""

    @abc.abstractmethod
    def window(self) -> W: ...

    @abc.abstractmethod
    def current_processing_time(self) -> int: ...

    @abc.abstractmethod
    def current_watermark(self) -> int: ...

    @abc.abstractmethod
    def window_state(self) -> Any:
        """State of the current key and window (``get_state(descriptor)`` ...)."""

    @abc.abstractmethod
    def global_state(self) -> Any:
        """State of the current key across windows."""


class WindowFunction(Function, Generic[IN, OUT, KEY, W]):
    """Called with a fired window's key, window and contents (or incremental result)."""

    @abc.abstractmethod
    def apply(self, key: KEY, window: W, inputs: Iterable[IN]) -> Iterable[OUT] | None: ...


class ProcessWindowFunction(Function, Generic[IN, OUT, KEY, W]):
    """Like ``WindowFunction``, with a context: the window, clocks, window-scoped state."""

    Context = WindowContext

    @abc.abstractmethod
    def process(self, key: KEY, context: WindowContext[W], elements: Iterable[IN]
                ) -> Iterable[OUT] | None: ...

    def clear(self, context: WindowContext[W]) -> None:
        """Called when the window is dropped (its cleanup time passed)."""


class AllWindowFunction(Function, Generic[IN, OUT, W]):
    """``WindowFunction`` of a non-keyed (all-)window."""

    @abc.abstractmethod
    def apply(self, window: W, inputs: Iterable[IN]) -> Iterable[OUT] | None: ...


class ProcessAllWindowFunction(Function, Generic[IN, OUT, W]):
    """``ProcessWindowFunction`` of a non-keyed (all-)window."""

    Context = WindowContext

    @abc.abstractmethod
    def process(self, context: WindowContext[W], elements: Iterable[IN]
                ) -> Iterable[OUT] | None: ...

    def clear(self, context: WindowContext[W]) -> None:
        """Called when the window is dropped."""


class BroadcastBaseContext(abc.ABC):
    """What both sides of a broadcast process function see."""

    @abc.abstractmethod
    def timestamp(self) -> int: ...

    @abc.abstractmethod
    def current_processing_time(self) -> int: ...

    @abc.abstractmethod
    def current_watermark(self) -> int: ...

    def output(self, output_tag: Any, value: Any) -> None:
        """Emit ``value`` to the side output ``output_tag`` (the runtime implements it)."""
        raise NotImplementedError("ctx.output() is implemented by the runtime's contexts")


class BroadcastContext(BroadcastBaseContext):
    """The broadcast side: the broadcast state may be changed."""

    @abc.abstractmethod
    def get_broadcast_state(self, state_descriptor: Any) -> Any: ...


class ReadOnlyBroadcastContext(BroadcastBaseContext):
    """The non-broadcast side: the broadcast state may only be read."""

    @abc.abstractmethod
    def get_broadcast_state(self, state_descriptor: Any) -> Any: ...


class KeyedBroadcastContext(BroadcastContext):
    @abc.abstractmethod
    def apply_to_keyed_state(self, state_descriptor: Any,
                             function: Callable[[Any, Any], None]) -> None:
        """``function(key, state)`` for every key of this subtask that has the state."""


class KeyedReadOnlyBroadcastContext(ReadOnlyBroadcastContext):
    @abc.abstractmethod
    def timer_service(self) -> TimerService: ...

    @abc.abstractmethod
    def get_current_key(self) -> Any: ...


class KeyedBroadcastOnTimerContext(KeyedReadOnlyBroadcastContext):
    @abc.abstractmethod
    def time_domain(self) -> TimeDomain: ...


class BaseBroadcastProcessFunction(Function):
    """Base of ``BroadcastProcessFunction`` and ``KeyedBroadcastProcessFunction``."""


class BroadcastProcessFunction(BaseBroadcastProcessFunction):
    """Connects a stream with a broadcast stream: every parallel instance sees every broadcast
    element and keeps its own copy of the broadcast state."""

    Context = BroadcastContext
    ReadOnlyContext = ReadOnlyBroadcastContext

    @abc.abstractmethod
    def process_element(self, value: Any, ctx: ReadOnlyBroadcastContext
                        ) -> Iterable[Any] | None: ...

    @abc.abstractmethod
    def process_broadcast_element(self, value: Any, ctx: BroadcastContext
                                  ) -> Iterable[Any] | None: ...


class KeyedBroadcastProcessFunction(BaseBroadcastProcessFunction):
    """``BroadcastProcessFunction`` whose non-broadcast side is keyed: keyed state and timers."""

    Context = KeyedBroadcastContext
    ReadOnlyContext = KeyedReadOnlyBroadcastContext
    OnTimerContext = KeyedBroadcastOnTimerContext

    @abc.abstractmethod
    def process_element(self, value: Any, ctx: KeyedReadOnlyBroadcastContext
                        ) -> Iterable[Any] | None: ...

    @abc.abstractmethod
    def process_broadcast_element(self, value: Any, ctx: KeyedBroadcastContext
                                  ) -> Iterable[Any] | None: ...

    def on_timer(self, timestamp: int, ctx: KeyedBroadcastOnTimerContext
                 ) -> Iterable[Any] | None:
        """Called when a timer registered for the current key fires."""
        return None


# -- async I/O (AsyncDataStream; the runtime is runtime.tasks.async_operator) -----------------

class AsyncFunction(Function, Generic[IN, OUT]):
    """Enriches each record by a request that does not block the task: ``async_invoke`` is a
    coroutine on the task's event loop and returns the record's outputs as a list."""

    @abc.abstractmethod
    async def async_invoke(self, value: IN) -> list[OUT]:
        """The outputs for ``value``; raising fails the job (unless a retry strategy retries)."""

    def timeout(self, value: IN) -> list[OUT]:
        """The outputs for ``value`` when its request did not finish within the timeout; by
        default the job fails with a ``TimeoutError``."""
        raise TimeoutError(f"Async function call has timed out for input: {value}")


class FunctionTypeError(FlintlockError, TypeError):
    """An API method got something that is neither the expected function class nor a
    callable."""

    def __init__(self, api: str, expected: str, got: str) -> None:
        super().__init__(api, expected, got)
        self.api = api
        self.expected = expected
        self.got = got

    def __str__(self) -> str:
        return f"{self.api}: expected {self.expected}, got {self.got}"


class _Wrapper(Function):
    """Holds a user callable under the method name (see the module docstring)."""

    method = ""

    def __init__(self, func: Callable[..., Any]) -> None:
        self.func = func
        setattr(self, self.method, func)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({_name_of(self.func)})"


class _MapWrapper(_Wrapper, MapFunction):
    method = "map"

    def map(self, value: Any) -> Any:  # replaced per instance by the user's callable
        return self.func(value)


class _FlatMapWrapper(_Wrapper, FlatMapFunction):
    method = "flat_map"

    def flat_map(self, value: Any) -> Iterable[Any] | None:
        return self.func(value)  # type: ignore[no-any-return]


class _FilterWrapper(_Wrapper, FilterFunction):
    method = "filter"

    def filter(self, value: Any) -> bool:
        return bool(self.func(value))


class _ReduceWrapper(_Wrapper, ReduceFunction):
    method = "reduce"

    def reduce(self, value1: Any, value2: Any) -> Any:
        return self.func(value1, value2)


class _KeySelectorWrapper(_Wrapper, KeySelector):
    method = "get_key"

    def get_key(self, value: Any) -> Any:
        return self.func(value)


class _PartitionerWrapper(_Wrapper, Partitioner):
    method = "partition"

    def partition(self, key: Any, num_partitions: int) -> int:
        return self.func(key, num_partitions)  # type: ignore[no-any-return]


def _name_of(obj: Any) -> str:
    if isinstance(obj, _Wrapper):
        return _name_of(obj.func)
    name = getattr(obj, "__qualname__", None) or type(obj).__qualname__
    module = getattr(obj, "__module__", None) or type(obj).__module__
    return f"{module}.{name}" if module else str(name)


def function_name(obj: Any) -> str:
    """A readable name of a user function (for error messages)."""
    return _name_of(obj)


def _wrap(func: Any, base: type[Function], wrapper: type[_Wrapper], api: str) -> Any:
    if isinstance(func, base):
        return func
    if callable(func) and not isinstance(func, Function):
        return wrapper(func)
    raise FunctionTypeError(api, f"a {base.__name__} or a callable", _describe(func))


def _describe(obj: Any) -> str:
    if isinstance(obj, Function):
        return f"a {type(obj).__name__}"
    return f"{obj!r} ({type(obj).__name__})"


def wrap_map(func: Any, api: str = "map") -> MapFunction:
    return _wrap(func, MapFunction, _MapWrapper, api)  # type: ignore[no-any-return]


def wrap_flat_map(func: Any, api: str = "flat_map") -> FlatMapFunction:
    return _wrap(func, FlatMapFunction, _FlatMapWrapper, api)  # type: ignore[no-any-return]


def wrap_filter(func: Any, api: str = "filter") -> FilterFunction:
    return _wrap(func, FilterFunction, _FilterWrapper, api)  # type: ignore[no-any-return]


def wrap_reduce(func: Any, api: str = "reduce") -> ReduceFunction:
    return _wrap(func, ReduceFunction, _ReduceWrapper, api)  # type: ignore[no-any-return]


def wrap_key_selector(func: Any, api: str = "key_by") -> KeySelector:
    return _wrap(func, KeySelector, _KeySelectorWrapper, api)  # type: ignore[no-any-return]


def wrap_partitioner(func: Any, api: str = "partition_custom") -> Partitioner:
    return _wrap(func, Partitioner, _PartitionerWrapper, api)  # type: ignore[no-any-return]


def require(func: Any, bases: tuple[type[Function], ...], api: str) -> Any:
    """``func`` itself if it is an instance of one of ``bases`` (no callables accepted)."""
    if isinstance(func, bases):
        return func
    expected = " or ".join(f"a {base.__name__}" for base in bases)
    raise FunctionTypeError(api, expected, _describe(func))
