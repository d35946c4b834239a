"""What the window operator hands to user code: the trigger's context (its timers go to the
operator's ``InternalTimerService``, namespaced by window), the assigner's context, the
context of a ``ProcessWindowFunction`` and its window-scoped state, the evictor's context,
and the callback a merging assigner reports merges to.

These implement PyFlink's interfaces by duck typing (``Trigger.TriggerContext``,
``OnMergeContext``, ``ProcessWindowFunction.Context``). Each is a view of the current key (the
keyed backend's) and of one window. Everything here belongs to the task thread.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from flintlock.common import evictors
from flintlock.common.state import StateDescriptor
from flintlock.common.windowing import MergingWindowAssigner, OnMergeContext
from flintlock.runtime.tasks.contexts import RuntimeContextImpl
from flintlock.runtime.tasks.operator import OperatorContext
from flintlock.runtime.tasks.timer_service import InternalTimerService
from flintlock.runtime.tasks.window_state import WindowStates


class MergeCollector(MergingWindowAssigner.MergeCallback):
    """Collects what a merging assigner merges: (windows merged, the window they became)."""

    def __init__(self, merges: list[tuple[list[Any], Any]]) -> None:
        self._merges = merges

    def merge(self, to_be_merged: Iterable[Any], merge_result: Any) -> None:
        self._merges.append((list(to_be_merged), merge_result))


class AssignerContext:
    """``WindowAssigner.WindowAssignerContext``."""

    __slots__ = ("_context",)

    def __init__(self, context: OperatorContext) -> None:
        self._context = context

    def get_current_processing_time(self) -> int:
        return self._context.timers.now_ms()

    def get_runtime_context(self) -> RuntimeContextImpl:
        return RuntimeContextImpl(self._context)


class EvictorContext(evictors.EvictorContext):
    """``Evictor.EvictorContext``: the operator's clocks."""

    __slots__ = ("_timers",)

    def __init__(self, timers: InternalTimerService) -> None:
        self._timers = timers

    def get_current_processing_time(self) -> int:
        return self._timers.current_processing_time()

    def get_current_watermark(self) -> int:
        return self._timers.watermark


class TriggerContext(OnMergeContext):
    """The trigger's view of one key and window (``at(window)`` selects the window): its
    timers are the operator's timers in the window's namespace, its partitioned state is
    window-scoped."""

    def __init__(self, timers: InternalTimerService, states: WindowStates) -> None:
        self._timers = timers
        self._states = states
        self._window: Any = None
        self._merged: list[Any] = []

    def at(self, window: Any, merged: list[Any] | None = None) -> TriggerContext:
        self._window = window
        self._merged = merged or []
        return self

    def get_current_processing_time(self) -> int:
        return self._timers.current_processing_time()

    def get_current_watermark(self) -> int:
        return self._timers.watermark

    def register_processing_time_timer(self, time: int) -> None:
        self._timers.register_processing_time_timer(self._window, time)

    def register_event_time_timer(self, time: int) -> None:
        self._timers.register_event_time_timer(self._window, time)

    def delete_processing_time_timer(self, time: int) -> None:
        self._timers.delete_processing_time_timer(self._window, time)

    def delete_event_time_timer(self, time: int) -> None:
        self._timers.delete_event_time_timer(self._window, time)

    def get_partitioned_state(self, state_descriptor: StateDescriptor) -> Any:
        return self._states.get(state_descriptor, self._window)

    def merge_partitioned_state(self, state_descriptor: StateDescriptor) -> None:
        self._states.merge(state_descriptor, self._merged, self._window)


class ProcessWindowContext:
    """``context`` of ``ProcessWindowFunction.process`` / ``clear``; ``side_output(tag_id,
    value, timestamp)`` is the operator's side-output buffer."""

    def __init__(self, context: OperatorContext, timers: InternalTimerService,
                 states: WindowStates, side_output: Callable[[str, Any, int], None],
                 window: Any) -> None:
        self._context = context
        self._timers = timers
        self._states = states
        self._side_output = side_output
        self._window = window

    def window(self) -> Any:
        return self._window

    def current_processing_time(self) -> int:
        return self._timers.current_processing_time()

    def current_watermark(self) -> int:
        return self._timers.watermark

    def window_state(self) -> WindowStateStore:
        return WindowStateStore(self._states, self._window)

    def global_state(self) -> RuntimeContextImpl:
        return RuntimeContextImpl(self._context)

    def output(self, output_tag: Any, value: Any) -> None:
        tag_id = getattr(output_tag, "tag_id", None)
        if not isinstance(tag_id, str):
            raise TypeError(f"context.output() takes an OutputTag, got {output_tag!r}")
        self._side_output(tag_id, value, self._window.max_timestamp())


class WindowStateStore:
    """``context.window_state()``: state of the current key and window."""

    def __init__(self, states: WindowStates, window: Any) -> None:
        self._states = states
        self._window = window

    def _get(self, descriptor: StateDescriptor) -> Any:
        return self._states.get(descriptor, self._window)

    get_state = get_list_state = get_map_state = _get
    get_reducing_state = get_aggregating_state = _get
