"""``WindowedStream`` and ``AllWindowedStream``: PyFlink's windowed operations.

``KeyedStream.window(assigner)`` / ``count_window(size, slide)`` give a ``WindowedStream``;
``DataStream.window_all(assigner)`` / ``count_window_all(size, slide)`` an
``AllWindowedStream``, which is a windowed stream keyed by one constant key and run at
parallelism 1 (as PyFlink builds it). Settings (``trigger``, ``evictor``, ``allowed_lateness``,
``side_output_late_data``) return the same stream; a function (``reduce``, ``aggregate``,
``apply``, ``process``) adds one window operator (``OperatorKind.WINDOW`` with a
``WindowSpec``) and returns its output stream, on which ``get_side_output`` reads the late
data.

Owned by the user's thread while the job is built.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from flintlock.common.evictors import Evictor
from flintlock.common.operator_spec import (
    OperatorKind,
    OperatorSpec,
    WindowFunctionKind,
    WindowSpec,
)
from flintlock.common.output_tag import OutputTag
from flintlock.common.typeinfo import TypeInformation
from flintlock.common.windowing import Trigger, WindowAssigner
from flintlock.datastream import functions as fn

if TYPE_CHECKING:
    from flintlock.datastream.data_stream import DataStream, KeyedStream

_AGGREGATE_METHODS = ("create_accumulator", "add", "get_result", "merge")


def _check_assigner(assigner: Any, operation: str) -> WindowAssigner[Any, Any]:
    if not isinstance(assigner, WindowAssigner):
        raise TypeError(f"{operation} needs a WindowAssigner (e.g. "
                        f"TumblingEventTimeWindows.of(Time.seconds(5))), got {assigner!r}")
    return assigner


class WindowedStream:
    """A keyed stream cut into windows; a window function makes it a stream again."""

    def __init__(self, keyed_stream: KeyedStream, window: WindowSpec,
                 non_parallel: bool = False) -> None:
        self._keyed = keyed_stream
        self._window = window
        self._non_parallel = non_parallel

    def get_execution_environment(self) -> Any:
        return self._keyed.get_execution_environment()

    def get_input_type(self) -> TypeInformation:
        return self._keyed.get_type()

    # -- settings -------------------------------------------------------------------------

    def trigger(self, trigger: Trigger[Any, Any]) -> WindowedStream:
        if not isinstance(trigger, Trigger):
            raise TypeError(f"trigger() takes a Trigger, got {trigger!r}")
        self._window = replace(self._window, trigger=trigger)
        return self

    def evictor(self, evictor: Evictor[Any, Any]) -> WindowedStream:
        """Evicts elements of a firing window before and/or after the window function
        (``CountEvictor``, ``TimeEvictor``, ``DeltaEvictor`` or a custom ``Evictor``; see
        ``flintlock.common.evictors``). The window then keeps its elements instead of an
        accumulator, as in Flink."""
        if not isinstance(evictor, Evictor):
            raise TypeError(f"evictor() takes an Evictor (e.g. CountEvictor.of(3)), "
                            f"got {evictor!r}")
        self._window = replace(self._window, evictor=evictor)
        return self

    def allowed_lateness(self, time_ms: int) -> WindowedStream:
        """How long (ms, event time) a window keeps its contents after it fired; late elements
        within it fire the window again."""
        millis = time_ms if isinstance(time_ms, int) and not isinstance(time_ms, bool) else (
            getattr(time_ms, "to_milliseconds", lambda: None)())
        if not isinstance(millis, int) or millis < 0:
            raise ValueError(f"allowed_lateness() takes a non-negative number of milliseconds, "
                             f"got {time_ms!r}")
        if millis and not self._window.assigner.is_event_time():
            raise ValueError("allowed_lateness() applies to event-time windows only")
        self._window = replace(self._window, allowed_lateness_ms=millis)
        return self

    def side_output_late_data(self, output_tag: OutputTag) -> WindowedStream:
        """Late elements (behind the watermark for all their windows) go to ``output_tag``
        (read with ``get_side_output`` on the windowed operator's result)."""
        if not isinstance(output_tag, OutputTag):
            raise TypeError(f"side_output_late_data() takes an OutputTag, got {output_tag!r}")
        self._window = replace(self._window, late_output_tag=output_tag.tag_id)
        return self

    # -- functions ------------------------------------------------------------------------

    def reduce(self, reduce_function: Any, window_function: Any = None,
               output_type: TypeInformation | None = None) -> DataStream:
        """Reduce each window incrementally; emit the result (or hand it to
        ``window_function`` as the window's only element)."""
        reducer = fn.wrap_reduce(reduce_function)
        kind = self._kind_of(window_function)
        declared = output_type if window_function is not None else self._keyed._output_type
        return self._build("Window(Reduce)", replace(
            self._window, reduce_function=reducer, window_function=window_function,
            window_function_kind=kind), declared)

    def aggregate(self, aggregate_function: fn.AggregateFunction, window_function: Any = None,
                  accumulator_type: TypeInformation | None = None,
                  output_type: TypeInformation | None = None) -> DataStream:
        """Aggregate each window incrementally (``AggregateFunction``)."""
        missing = [m for m in _AGGREGATE_METHODS
                   if not callable(getattr(aggregate_function, m, None))]
        if missing:
            raise TypeError(f"aggregate() needs an AggregateFunction; "
                            f"{type(aggregate_function).__name__} lacks {', '.join(missing)}")
        kind = self._kind_of(window_function)
        return self._build("Window(Aggregate)", replace(
            self._window, aggregate_function=aggregate_function,
            window_function=window_function, window_function_kind=kind), output_type)

    def apply(self, window_function: Any, output_type: TypeInformation | None = None
              ) -> DataStream:
        """``window_function.apply(key, window, inputs)`` with all of a fired window's
        elements."""
        kind = self._kind_of(window_function, process=False)
        return self._build("Window(Apply)", replace(
            self._window, window_function=window_function, window_function_kind=kind),
            output_type)

    def process(self, process_window_function: Any,
                output_type: TypeInformation | None = None) -> DataStream:
        """``process(key, context, elements)`` with all of a fired window's elements."""
        kind = self._kind_of(process_window_function, apply=False)
        return self._build("Window(Process)", replace(
            self._window, window_function=process_window_function,
            window_function_kind=kind), output_type)

    # -- building -------------------------------------------------------------------------

    def _kind_of(self, function: Any, apply: bool = True, process: bool = True
                 ) -> WindowFunctionKind:
        if function is None:
            return WindowFunctionKind.NONE
        all_window = self._non_parallel
        if apply and isinstance(function, fn.AllWindowFunction if all_window
                                else fn.WindowFunction):
            return WindowFunctionKind.ALL_WINDOW if all_window else WindowFunctionKind.WINDOW
        if process and isinstance(function, fn.ProcessAllWindowFunction if all_window
                                  else fn.ProcessWindowFunction):
            return WindowFunctionKind.PROCESS_ALL if all_window else WindowFunctionKind.PROCESS
        expected = [name for wanted, name in (
            (apply, "AllWindowFunction" if all_window else "WindowFunction"),
            (process, "ProcessAllWindowFunction" if all_window else "ProcessWindowFunction"),
        ) if wanted]
        raise fn.FunctionTypeError(type(self).__name__, " or ".join(f"a {e}" for e in expected),
                                   type(function).__name__)

    def _build(self, name: str, window: WindowSpec, output_type: TypeInformation | None
               ) -> DataStream:
        keyed = self._keyed
        if window.trigger is None:  # as PyFlink: the assigner's default, given the environment
            window = replace(window, trigger=window.assigner.get_default_trigger(keyed._env))
        spec = OperatorSpec(OperatorKind.WINDOW, output_type=output_type, keyed=True,
                            window=window)
        return keyed._output_of(
            name, spec, [(stream_input, 0) for stream_input in keyed._inputs],
            key_selectors=keyed._key_selectors(),
            parallelism=1 if self._non_parallel else None, non_parallel=self._non_parallel)


class AllWindowedStream(WindowedStream):
    """Windows over a whole (non-keyed) stream: one window operator at parallelism 1."""

    def __init__(self, data_stream: DataStream, assigner: WindowAssigner[Any, Any],
                 keep_last: int | None = None) -> None:
        keyed = data_stream.key_by(fn.NullByteKeySelector())
        super().__init__(keyed, WindowSpec(assigner, window_function=_PLACEHOLDER,
                                           keep_last=keep_last), non_parallel=True)


class _Placeholder(fn.Function):
    """Stands for the function a windowed stream does not have yet (``WindowSpec`` needs
    one); every window function call replaces it."""


_PLACEHOLDER = _Placeholder()


def windowed(keyed_stream: KeyedStream, assigner: Any, operation: str,
             keep_last: int | None = None) -> WindowedStream:
    """The ``WindowedStream`` of ``keyed_stream.window(assigner)``."""
    _check_assigner(assigner, operation)
    return WindowedStream(keyed_stream, WindowSpec(assigner, window_function=_PLACEHOLDER,
                                                   keep_last=keep_last))


def all_windowed(data_stream: DataStream, assigner: Any, operation: str,
                 keep_last: int | None = None) -> AllWindowedStream:
    _check_assigner(assigner, operation)
    return AllWindowedStream(data_stream, assigner, keep_last)


__all__ = ["AllWindowedStream", "WindowedStream"]
