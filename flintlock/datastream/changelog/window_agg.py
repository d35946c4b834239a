"""Window aggregation (``GROUP BY window_start, window_end[, keys]`` over TUMBLE, HOP,
CUMULATE or SESSION): Flink 2.3's ``WindowAggOperator`` results, as a ``KeyedProcessFunction``
keyed by the grouping keys over an insert-only input.

``WindowAggFunction(grouping, calls, window, rowtime, shift=0, ltz=False)``:

* ``grouping``: the key field positions; ``calls``: ``group_agg.AggregateCall``s (argument
  positions or a callable, FILTER, DISTINCT) over functions with ``create_accumulator`` /
  ``accumulate`` / ``get_value``; ``window``: ``("TUMBLE", size, 0, offset)``,
  ``("HOP", size, slide, offset)``, ``("CUMULATE", size, step, offset)`` or
  ``("SESSION", gap, 0, 0)`` in milliseconds; ``rowtime``: ``row -> epoch milliseconds``;
  ``shift``: milliseconds added to a time before windows are aligned (a TIMESTAMP_LTZ time
  column's session time zone; 0 for TIMESTAMP); ``ltz``: ``window_time`` is an instant
  (TIMESTAMP_LTZ) rather than a wall-clock TIMESTAMP.
* ``proctime``: windows of processing time (Flink's proctime window aggregation): a row
  goes into the windows of the clock's time when it arrives (``shift`` applied: aligned in
  the session time zone), nothing is late, and a window fires on a processing-time timer at
  its end - 1; as in Flink, windows still open when the input ends never fire (pending
  processing-time timers are dropped at the end of the input). Sessions merge on the clock
  too (``ProcessingTimeSessions``).
* Output, once per window and key when the watermark reaches the window's end - 1 (an
  event-time timer; proctime: the processing-time timer):
  ``+I[keys..., results..., window_start, window_end, window_time]`` with the window bounds
  as TIMESTAMP(3) values (naive datetimes) and ``window_time = end - 1 ms``.
  Nothing else is ever emitted: the output is append-only.
* Late rows: a row is dropped for each of its windows that has fired already (its end - 1 is
  at or behind the current watermark) — for HOP and CUMULATE it still counts in its windows
  that have not fired, as Flink's slices do. A session window is merged with the sessions of
  its key it overlaps or touches; the row is dropped if the merged session has fired.
* State (keyed, so checkpointed and rescaled with the key): aligned windows keep one flat
  list per window end (``MapState`` ``windows``: ``[start, accumulator slots...]``, the calls
  compiled by ``window_codegen``); sessions keep their rows
  (``ValueState`` ``sessions``: ``[start, end, rows]``), aggregated when they fire, so merging
  needs no ``merge`` of accumulators. Timers are keyed state of the runtime.

Event time over aligned windows runs compiled steps (``window_codegen``): a whole batch at a
time where the runtime offers it (``process_keyed_batch``, ``runtime.tasks.keyed_rows_operator``:
rows grouped by key and window, one key switch and state access per group), a row at a time
otherwise; the same state, timers and output as the general methods below.

Non-INSERT input raises ``NotInsertOnlyError``. The task thread owns a function once opened.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from flintlock.common.state import MapStateDescriptor, ValueStateDescriptor
from flintlock.datastream.changelog.errors import InvalidOperatorArgumentError, NotInsertOnlyError
from flintlock.datastream.changelog.group_agg import AggregateCall
from flintlock.datastream.changelog.rows import INSERT, key_selector, new_row
from flintlock.datastream.changelog.window_assigners import (
    WindowAssigner,
    add_to_sessions,
    from_millis,
    take_session,
)
from flintlock.datastream.changelog.window_codegen import (
    StepSpec,
    compile_window_batch,
    compile_window_calls,
    compile_window_step,
)
from flintlock.datastream.functions import KeyedProcessFunction, RuntimeContext

WindowDescription = tuple[str, int, int, int]

__all__ = ["CallAccumulators", "WindowAggFunction", "aggregate_rows"]


class CallAccumulators:
    """Accumulating the calls of one window: ``[accumulators, distinct value sets]``."""

    def __init__(self, calls: Sequence[AggregateCall]) -> None:
        self.calls = list(calls)

    def create(self) -> list[Any]:
        return [[c.function.create_accumulator() for c in self.calls],
                [{} if c.distinct else None for c in self.calls]]

    def accumulate(self, entry: list[Any], values: list[Any], row: Any) -> None:
        accumulators, seen = entry
        for index, call in enumerate(self.calls):
            if call.filter is not None and not call.filter(row):
                continue
            arguments = call.arguments
            args = (tuple(arguments(row)) if callable(arguments)
                    else tuple(values[i] for i in arguments))
            distinct = seen[index]
            if distinct is not None:
                if args in distinct:
                    continue
                distinct[args] = True
            call.function.accumulate(accumulators[index], *args)

    def results(self, entry: list[Any]) -> list[Any]:
        return [c.function.get_value(acc) for c, acc in zip(self.calls, entry[0], strict=True)]


def aggregate_rows(calls: Sequence[AggregateCall], rows: Sequence[Any]) -> list[Any]:
    """The results of ``calls`` over ``rows`` (Rows), as one window's aggregation gives."""
    helper = CallAccumulators(calls)
    entry = helper.create()
    for row in rows:
        helper.accumulate(entry, row._values, row)
    return helper.results(entry)


class ProcessingTimeSessions:
    """A timer service as ``add_to_sessions`` uses it, on processing time: its session timers
    are processing-time timers, and no session is late."""

    def __init__(self, timers: Any) -> None:
        self.timers = timers

    def current_watermark(self) -> int:
        return -(1 << 63)

    def register_event_time_timer(self, timestamp: int) -> None:
        self.timers.register_processing_time_timer(timestamp)

    def delete_event_time_timer(self, timestamp: int) -> None:
        self.timers.delete_processing_time_timer(timestamp)


class WindowAggFunction(KeyedProcessFunction):
    """Append-only window aggregation; see the module docstring."""

    def __init__(self, grouping: Sequence[int], calls: Sequence[AggregateCall],
                 window: WindowDescription, rowtime: Callable[[Any], int], shift: int = 0,
                 ltz: bool = False, proctime: bool = False) -> None:
        kind, size, slide, offset = window
        if kind not in ("TUMBLE", "HOP", "CUMULATE", "SESSION"):
            raise InvalidOperatorArgumentError("WindowAggFunction",
                                               f"unknown window kind {kind!r}")
        for call in calls:
            if not isinstance(call, AggregateCall):
                raise InvalidOperatorArgumentError(
                    "WindowAggFunction", f"calls must be AggregateCall objects, got {call!r}")
        self.grouping = tuple(grouping)
        self.calls = list(calls)
        self.window = window
        self.rowtime = rowtime
        self.shift = shift
        self.ltz = ltz
        self.proctime = proctime
        self._assigner = None if kind == "SESSION" else WindowAssigner(kind, size, slide,
                                                                        offset)

    def key_selector(self) -> Callable[[Any], Any]:
        return key_selector(self.grouping)

    def open(self, runtime_context: RuntimeContext) -> None:
        self._helper = CallAccumulators(self.calls)
        for call in self.calls:
            opener = getattr(call.function, "open", None)
            if callable(opener):
                opener(runtime_context)
        if self._assigner is None:
            self._sessions = runtime_context.get_state(ValueStateDescriptor("sessions"))
        else:
            self._windows = runtime_context.get_map_state(MapStateDescriptor("windows"))
            self._compiled = compile_window_calls(self.calls)
            if not self.proctime:  # the compiled steps shadow the general methods below
                spec = self._step_spec(self._assigner)
                self.process_element = compile_window_step(  # type: ignore[method-assign,assignment]
                    self.calls, spec)
                self.process_keyed_batch = compile_window_batch(  # type: ignore[method-assign]
                    self.calls, spec)

    def _step_spec(self, assigner: WindowAssigner) -> StepSpec:
        field = getattr(self.rowtime, "index", None)
        return StepSpec(self.window, self.rowtime, field if type(field) is int else None,
                        self.shift, self._windows, assigner.windows_of, type(self).__name__)

    def close(self) -> None:
        for call in self.calls:
            closer = getattr(call.function, "close", None)
            if callable(closer):
                closer()

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("process_element", None)  # the compiled steps of an opened function
        state.pop("process_keyed_batch", None)
        return state

    # -- records ------------------------------------------------------------------------------

    def process_keyed_batch(self, rows: list[Any], get_key: Any, set_key: Any, ctx: Any) -> bool:
        """A whole batch (``runtime.tasks.keyed_rows_operator``): only an opened event-time
        aligned aggregation takes one (its compiled batch step shadows this); the others
        decline, and get their rows one at a time."""
        return False

    def process_element(self, value: Any, ctx: Any) -> tuple[Any, ...]:
        if value._row_kind is not INSERT:
            raise NotInsertOnlyError(type(self).__name__, value._row_kind.name)
        timers = ctx.timer_service()
        if self.proctime:  # the window of now; nothing is late
            time = timers.current_processing_time() + self.shift
            watermark, register = None, timers.register_processing_time_timer
        else:
            time = self.rowtime(value) + self.shift
            watermark, register = timers.current_watermark(), timers.register_event_time_timer
        if self._assigner is None:
            self._add_to_session(value, time, timers)
            return ()
        values = value._values
        windows, compiled = self._windows, self._compiled
        for start, end in self._assigner.windows_of(time):
            fires_at = end - 1 - self.shift
            if watermark is not None and fires_at <= watermark:
                continue  # this window has fired: too late for it
            entry = windows.get(end)
            if entry is None:
                entry = compiled.create(start)
                register(fires_at)
            compiled.accumulate(entry, values, value)
            windows.put(end, entry)
        return ()

    def _add_to_session(self, value: Any, time: int, timers: Any) -> None:
        if self.proctime:
            timers = ProcessingTimeSessions(timers)
        sessions = add_to_sessions(self._sessions.value() or [], value._values, time,
                                   self.window[1], self.shift, timers)
        if sessions is not None:
            self._sessions.update(sessions)

    # -- firing -------------------------------------------------------------------------------

    def on_timer(self, timestamp: int, ctx: Any) -> tuple[Any, ...]:
        end = timestamp + 1 + self.shift
        if self._assigner is None:
            return self._fire_session(end, ctx)
        entry = self._windows.get(end)
        if entry is None:
            return ()
        self._windows.remove(end)
        results = self._compiled.results(entry)
        return (self._output(ctx.get_current_key(), results, entry[0], end),)

    def on_event_timers(self, timers: Any, ctx: Any) -> tuple[list[Any], list[int]]:
        """A watermark's due event-time timers at once (``runtime.tasks.keyed_rows_operator``,
        each timer's key current as it comes up): what ``on_timer`` emits for each, in order,
        each output with its timer's timestamp."""
        out: list[Any] = []
        stamps: list[int] = []
        on_timer, extend, add = self.on_timer, out.extend, stamps.extend
        for timestamp, _key, _namespace in timers:
            rows = on_timer(timestamp, ctx)
            if rows:
                extend(rows)
                add([timestamp] * len(rows))
        return out, stamps

    def _fire_session(self, end: int, ctx: Any) -> tuple[Any, ...]:
        firing, rest = take_session(self._sessions.value() or [], end)
        if not firing:
            return ()
        if rest:
            self._sessions.update(rest)
        else:
            self._sessions.clear()
        out = []
        for start, _, rows in firing:
            results = aggregate_rows(self.calls, [new_row(list(r), INSERT) for r in rows])
            out.append(self._output(ctx.get_current_key(), results, start, end))
        return tuple(out)

    def _output(self, key: Any, results: list[Any], start: int, end: int) -> Any:
        keys = list(key) if len(self.grouping) > 1 else (
            [key] if self.grouping else [])
        time = end - 1 - self.shift if self.ltz else end - 1
        return new_row(keys + results + [from_millis(start), from_millis(end),
                                         from_millis(time)], INSERT)
