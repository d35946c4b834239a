"""The window operator: ``KeyedStream.window(...)`` / ``count_window(...)`` and the all-window
variants (keyed by one constant key), as Flink's ``WindowOperator``.

Per element, with its key set: the assigner names its windows; for each window that is not
late (event time: its cleanup time, ``max_timestamp() + allowed_lateness``, is still ahead of
the watermark) the element joins the window's contents and the trigger's ``on_element`` says
whether to fire and/or purge; a cleanup timer is registered at the cleanup time. A timer
(event or processing time, one per key, window and time) asks the trigger again and, at the
cleanup time, drops everything of the window. An element late for all its windows goes to the
late-data side output if one was asked for (else it is dropped).

What a window holds is ``window_contents``; what user code sees of it, ``window_contexts``; the
timers (trigger and cleanup timers, namespaced by window) are the operator's
``timer_service.InternalTimerService``. Everything — contents, the set of session windows
(``SESSIONS``), trigger and window-function state (``window_state``) and the timers — is keyed
state of the operator's backend: snapshotted, restored and rescaled with the key groups.

Merging assigners (sessions): each new window is merged with the key's current session windows
(``merge_windows``); the contents, trigger state and timers of merged windows move to the
window that covers them, as Flink's merging window set does.

Event-time timers a trigger registers while a watermark's timers fire (a continuous trigger's
next firing) wait for the next watermark even when they are due already: PyFlink's window
operator behaves so (its timers return to the JVM only after the watermark was handled), and
a watermark that jumps ahead then fires a window once instead of once per interval it passed.
Java Flink would fire them in the same advance.

Outputs carry the fired window's ``max_timestamp()``. Everything runs on the task thread.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from flintlock.common.evictors import Evictor, TimestampedValue
from flintlock.common.operator_spec import OperatorSpec, WindowFunctionKind, WindowSpec
from flintlock.common.output_tag import OutputTag
from flintlock.common.state import MapStateDescriptor
from flintlock.common.windowing import (
    MAX_LONG,
    MIN_LONG,
    EventTimeTrigger,
    MergingWindowAssigner,
    SlidingEventTimeWindows,
    TimeWindow,
    Trigger,
    TumblingEventTimeWindows,
)
from flintlock.runtime.network.event_time import NO_TIMESTAMP, TimestampedBatch
from flintlock.runtime.state.heap_states import HeapMapState
from flintlock.runtime.tasks.contexts import RuntimeContextImpl
from flintlock.runtime.tasks.operators import FunctionOperator
from flintlock.runtime.tasks.timer_service import WINDOW_TIMERS, InternalTimerService
from flintlock.runtime.tasks.window_contents import WindowContents
from flintlock.runtime.tasks.window_contexts import (
    AssignerContext,
    EvictorContext,
    MergeCollector,
    ProcessWindowContext,
    TriggerContext,
)
from flintlock.runtime.tasks.window_grouping import tumbling_panes
from flintlock.runtime.tasks.window_state import WindowStates

SESSIONS = MapStateDescriptor("_flintlock_window_sessions", None, None)


class WindowOperator(FunctionOperator):
    """Keyed windows (see the module docstring)."""

    def __init__(self, spec: OperatorSpec) -> None:
        super().__init__(spec)
        window = spec.window
        if window is None:
            raise ValueError("a window operator needs a WindowSpec")
        self.window: WindowSpec = window
        self._assigner = window.assigner
        # The API resolves the default trigger with the environment (PyFlink's signature
        # get_default_trigger(self, env)); a spec built without it gets env=None.
        trigger = window.trigger or window.assigner.get_default_trigger(None)
        if not isinstance(trigger, Trigger):
            raise TypeError(f"a window trigger must be a Trigger, got {trigger!r}")
        self._trigger: Trigger[Any, Any] = trigger
        self._merging = isinstance(window.assigner, MergingWindowAssigner)
        self._event_time = bool(window.assigner.is_event_time())
        self._lateness = window.allowed_lateness_ms
        self._evictor: Evictor[Any, Any] | None = window.evictor
        self._grouping = (type(trigger) is EventTimeTrigger and window.incremental
                          and type(window.assigner) in (TumblingEventTimeWindows,
                                                        SlidingEventTimeWindows))
        """Whether batches may be handled per (key, window) (``_process_grouped``)."""
        assigner = window.assigner
        self._tumbling: tuple[int, int] | None = (
            (assigner._size, assigner._offset) if type(assigner) is TumblingEventTimeWindows
            else None)
        """(size, offset) of tumbling event-time windows: ``_process_tumbling``."""
        self._windows: dict[int, TimeWindow] = {}
        """The tumbling windows of ``_process_tumbling`` by start, until their cleanup."""
        self._timed: dict[int, set[Any]] = {}
        """Per window start of ``_windows``: the keys whose trigger (and cleanup) timers
        ``_process_tumbling`` registered. Such a timer goes only when it fires or at the
        window's cleanup, and that path handles no window the watermark has reached, so a
        key found here needs no second registration (a miss just registers again)."""

    # -- life cycle -----------------------------------------------------------------------

    def _functions(self) -> list[Any]:
        w = self.window
        return [f for f in (w.reduce_function, w.aggregate_function, w.window_function)
                if f is not None]

    def open(self) -> None:
        backend = self.context.keyed_backend
        self._contents = WindowContents(backend, self.window)
        self._sessions = backend.get_partitioned_state(SESSIONS)
        self._states = WindowStates(backend)
        self._timers = InternalTimerService(
            backend, self.context.timers, WINDOW_TIMERS, self, defer_new_event_timers=True,
            bundle_time_ms=self.context.environment.bundle_time_ms)
        self._trigger_context = TriggerContext(self._timers, self._states)
        self._assigner_context = AssignerContext(self.context)
        self._evictor_context = EvictorContext(self._timers)
        self._out = TimestampedBatch()
        self._side: dict[str, TimestampedBatch] = {}
        self._window_context = ProcessWindowContext(self.context, self._timers, self._states,
                                                    self._side_output, None)
        runtime_context = RuntimeContextImpl(self.context)
        for function in self._functions():
            opener = getattr(function, "open", None)
            if opener is not None:
                opener(runtime_context)
        self._timers.restore()

    def close(self) -> None:
        for function in self._functions():
            closer = getattr(function, "close", None)
            if closer is not None:
                closer()

    # -- elements -------------------------------------------------------------------------

    def process_batch(self, records: list[Any]) -> None:
        get_key = self._key_selector()
        set_key = self.context.keyed_backend.set_current_key
        stamps = records.timestamps if type(records) is TimestampedBatch else None
        if self._grouping and stamps is not None and self._process_grouped(
                records, stamps, get_key, set_key):
            return
        for index, value in enumerate(records):
            key = get_key(value)
            if not self._key_checked:
                self._first_key(key)
            set_key(key)
            self._process_element(value, NO_TIMESTAMP if stamps is None else stamps[index], key)
        self._flush()

    def _process_element(self, value: Any, timestamp: int, key: Any) -> None:
        windows = self._assigner.assign_windows(value, timestamp, self._assigner_context)
        placed = False
        for window in windows:
            if self._merging:
                window = self._merge_session(window)
            if self._is_late(window):
                if self._merging:
                    self._sessions.remove(window)
                continue
            placed = True
            self._contents.add(window, value, timestamp)
            result = self._trigger.on_element(value, timestamp, window,
                                              self._trigger_context.at(window))
            self._act(result, window, key)
            self._register_cleanup(window)
        if not placed and self._is_late_element(timestamp):
            tag = self.window.late_output_tag
            if tag is not None:
                self._side_output(tag, value, timestamp)

    def _process_grouped(self, records: list[Any], stamps: list[int],
                         get_key: Callable[[Any], Any], set_key: Callable[[Any], None]) -> bool:
        """The common case done per (key, window) instead of per element: time windows with
        the event-time trigger and an incremental function. The watermark cannot move within
        a batch, so if every window of the batch is still ahead of it, no element is late and
        the trigger only registers its timer (``EventTimeTrigger.on_element``): the same
        state, accumulated in the same order per window, with far fewer state accesses.
        Returns False (nothing done) when some window is not ahead of the watermark."""
        if self._tumbling is not None:
            return self._process_tumbling(records, stamps, get_key, set_key, *self._tumbling)
        watermark = self._timers.watermark
        assign, context = self._assigner.assign_windows, self._assigner_context
        groups: dict[tuple[Any, Any], list[Any]] = {}
        for value, timestamp in zip(records, stamps, strict=True):
            key = get_key(value)
            if not self._key_checked:
                self._first_key(key)
            for window in assign(value, timestamp, context):
                if window.max_timestamp() <= watermark:
                    return False
                group = groups.get((key, window))
                if group is None:
                    groups[(key, window)] = [value]
                else:
                    group.append(value)
        accumulators, fold = self._contents.accumulators, self._contents.fold_into
        register_timer = self._timers.register_event_time_timer
        for (key, window), values in groups.items():
            set_key(key)
            accumulators.put(window, fold(accumulators.get(window), values))
            register_timer(window, window.max_timestamp())
            self._register_cleanup(window)
        return True

    def _process_tumbling(self, records: list[Any], stamps: list[int],
                          get_key: Callable[[Any], Any], set_key: Callable[[Any], None],
                          size: int, offset: int) -> bool:
        """``_process_grouped`` for tumbling event-time windows: a record's window is
        arithmetic on its timestamp (``TimeWindow.get_window_start_with_offset``), so records
        are grouped by window start, then key — no window object, no assigner call, no tuple
        per record — and each window is one object per start
        (``_windows``), which the state's maps and the timers' index find by identity."""
        lowest = min(stamps)
        if lowest == MIN_LONG or (
                lowest - (lowest - offset) % size + size - 1 <= self._timers.watermark):
            return False  # a record without a timestamp, or a window not ahead: per element
        if not self._key_checked:
            self._first_key(get_key(list.__getitem__(records, 0)))
        self._fold_panes(tumbling_panes(records, stamps, get_key, size, offset), set_key, size)
        return True

    def _fold_panes(self, panes: dict[int, dict[Any, list[Any]]],
                    set_key: Callable[[Any], None], size: int) -> None:
        """Folds each window's values per key into its accumulator and registers each key's
        timer of the window once (``_process_tumbling``)."""
        windows, timed = self._windows, self._timed
        accumulators, fold = self._contents.accumulators, self._contents.fold_into
        register_timer = self._timers.register_event_time_timer
        lateness = self._lateness
        # Timers of one window fire in the order of the keys' first records, as per element;
        # different windows' timers have different times, so the order of windows is free.
        # On the heap backend with no snapshot in flight (the state object is the plain
        # HeapMapState; a snapshot swaps in its copy-on-write class between batches) the
        # accumulators are read and written in the state's dict directly: key -> window -> acc.
        table = accumulators._table if type(accumulators) is HeapMapState else None
        for start, groups in panes.items():
            window = windows.get(start)
            if window is None:
                window = windows[start] = TimeWindow(start, start + size)
                timed[start] = set()
            keys_timed = timed[start]
            end = start + size - 1
            for key, values in groups.items():
                if table is None:
                    set_key(key)
                    accumulators.put(window, fold(accumulators.get(window), values))
                else:
                    per_key = table.get(key)
                    if per_key is None:
                        table[key] = {window: fold(None, values)}
                    else:
                        per_key[window] = fold(per_key.get(window), values)
                if key not in keys_timed:
                    keys_timed.add(key)
                    set_key(key)
                    register_timer(window, end)
                    if lateness:  # else the cleanup timer is the trigger's timer
                        self._register_cleanup(window)

    def _is_late_element(self, timestamp: int) -> bool:
        return self._event_time and (
            _plus(timestamp, self.window.allowed_lateness_ms) <= self._timers.watermark)

    def _cleanup_time(self, window: Any) -> int:
        end = window.max_timestamp()
        lateness = self._lateness
        return (end if lateness == 0 else _plus(end, lateness)) if self._event_time else end

    def _is_late(self, window: Any) -> bool:
        return self._event_time and self._cleanup_time(window) <= self._timers.watermark

    def _register_cleanup(self, window: Any) -> None:
        cleanup = self._cleanup_time(window)
        if cleanup >= MAX_LONG:
            return
        if self._event_time:
            self._timers.register_event_time_timer(window, cleanup)
        else:
            self._timers.register_processing_time_timer(window, cleanup)

    def _delete_cleanup(self, window: Any) -> None:
        cleanup = self._cleanup_time(window)
        if self._event_time:
            self._timers.delete_event_time_timer(window, cleanup)
        else:
            self._timers.delete_processing_time_timer(window, cleanup)

    # -- firing ---------------------------------------------------------------------------

    def _act(self, result: Any, window: Any, key: Any) -> None:
        if result.is_fire():
            self._emit(window, key)
        if result.is_purge():
            self._contents.clear(window)

    def _emit(self, window: Any, key: Any) -> None:
        if self._evictor is not None:
            self._emit_evicting(window, key, self._evictor)
            return
        contents = self._contents.for_firing(window)
        if contents is not None:
            produced = self._call_window_function(window, key, contents)
            self._collect(produced, window.max_timestamp())

    def _emit_evicting(self, window: Any, key: Any, evictor: Evictor[Any, Any]) -> None:
        """Flink's ``EvictingWindowOperator``: evict before, call the function with what is
        left, evict after, keep what is left (a window that holds nothing does not fire)."""
        entries = self._contents.evicting_contents(window)
        if not entries:
            return
        elements = [TimestampedValue(value, timestamp) for value, timestamp in entries]
        evictor.evict_before(elements, len(elements), window, self._evictor_context)
        contents = self._contents.fold([element.get_value() for element in elements])
        if contents or self.window.reduce_function is None:
            produced = self._call_window_function(window, key, contents)
            self._collect(produced, window.max_timestamp())
        evictor.evict_after(elements, len(elements), window, self._evictor_context)
        self._contents.replace(window, [(element.get_value(), element.get_timestamp())
                                        for element in elements])

    def _call_window_function(self, window: Any, key: Any, contents: list[Any]
                              ) -> Iterable[Any] | None:
        function = self.window.window_function
        kind = self.window.window_function_kind
        if kind is WindowFunctionKind.NONE:
            return contents
        if kind is WindowFunctionKind.WINDOW:
            return function.apply(key, window, contents)  # type: ignore[no-any-return]
        if kind is WindowFunctionKind.ALL_WINDOW:
            return function.apply(window, contents)  # type: ignore[no-any-return]
        context = self._process_context(window)
        if kind is WindowFunctionKind.PROCESS:
            return function.process(key, context, contents)  # type: ignore[no-any-return]
        return function.process(context, contents)  # type: ignore[no-any-return]

    def _collect(self, produced: Iterable[Any] | None, timestamp: int) -> None:
        if produced is None:
            return
        for item in produced:
            if type(item) is tuple and len(item) == 2 and type(item[0]) is OutputTag:
                self._side_output(item[0].tag_id, item[1], timestamp)
            else:
                self._out.append(item)
                self._out.timestamps.append(timestamp)

    def _side_output(self, tag_id: str, value: Any, timestamp: int) -> None:
        batch = self._side.get(tag_id)
        if batch is None:
            batch = self._side[tag_id] = TimestampedBatch()
        batch.append(value)
        batch.timestamps.append(timestamp)

    def _flush(self) -> None:
        if self._out:
            out, self._out = self._out, TimestampedBatch()
            self.output.collect_batch(out)
        if self._side:
            side, self._side = self._side, {}
            for tag_id, batch in side.items():
                target = self.context.side_outputs.get(tag_id)
                if target is not None:
                    target.collect_batch(batch)

    def _process_context(self, window: Any) -> ProcessWindowContext:
        """The ``ProcessWindowFunction``'s context, at ``window``: one object per operator
        (as PyFlink's), not one per firing."""
        context = self._window_context
        context._window = window
        return context

    def _clear_all(self, window: Any) -> None:
        self._contents.clear(window)
        self._trigger.clear(window, self._trigger_context.at(window))
        clear = getattr(self.window.window_function, "clear", None)
        if clear is not None and self.window.window_function_kind in (
                WindowFunctionKind.PROCESS, WindowFunctionKind.PROCESS_ALL):
            clear(self._process_context(window))
        self._states.clear_window(window)
        if self._merging:
            self._sessions.remove(window)

    # -- timers and watermarks ------------------------------------------------------------

    def process_watermark(self, timestamp: int) -> None:
        self._timers.advance_watermark(timestamp)
        if self._windows:
            self._forget_windows(timestamp)
        self._flush()
        self.emit_watermark(timestamp)

    def _forget_windows(self, watermark: int) -> None:
        """Drops the windows of ``_windows`` whose cleanup time the watermark reached."""
        cleaned = [start for start, window in self._windows.items()
                   if self._cleanup_time(window) <= watermark]
        for start in cleaned:
            del self._windows[start]
            del self._timed[start]

    def on_event_time(self, timestamp: int, key: Any, window: Any) -> None:
        """A trigger or cleanup timer in event time (the timer service, on a watermark)."""
        self._on_timer(timestamp, key, window, event_time=True)

    def on_processing_time(self, timestamp: int, key: Any, window: Any) -> None:
        """A trigger or cleanup timer in processing time (the timer service, as mail)."""
        self._on_timer(timestamp, key, window, event_time=False)
        self._flush()

    def _on_timer(self, timestamp: int, key: Any, window: Any, event_time: bool) -> None:
        if self._merging and not self._sessions.contains(window):
            return  # merged into another window, whose timers took over
        context = self._trigger_context.at(window)
        if event_time:
            result = self._trigger.on_event_time(timestamp, window, context)
        else:
            result = self._trigger.on_processing_time(timestamp, window, context)
        self._act(result, window, key)
        if event_time == self._event_time and timestamp == self._cleanup_time(window):
            self._clear_all(window)

    # -- sessions -------------------------------------------------------------------------

    def _merge_session(self, new_window: Any) -> Any:
        """Merges ``new_window`` with the key's session windows; returns the window the
        element belongs to now."""
        active = list(self._sessions.keys())
        merges: list[tuple[list[Any], Any]] = []
        self._assigner.merge_windows([*active, new_window], MergeCollector(merges))
        actual = new_window
        for members, result in merges:
            if new_window in members:
                actual = result
            merged = [w for w in members if w != result]
            context = self._trigger_context.at(result, merged)
            self._trigger.on_merge(result, context)
            for window in merged:
                if window in active:
                    self._contents.move(window, result)
                    self._trigger.clear(window, self._trigger_context.at(window))
                    self._delete_cleanup(window)
                    self._sessions.remove(window)
            self._sessions.put(result, True)
        if actual == new_window:
            self._sessions.put(new_window, True)
        return actual


def _plus(timestamp: int, millis: int) -> int:
    """``timestamp + millis`` capped at the largest long (the end of time stays the end)."""
    return min(MAX_LONG, timestamp + millis)

