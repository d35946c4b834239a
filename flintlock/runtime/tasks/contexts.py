"""What user functions see of the runtime: the RuntimeContext, process-function contexts and
the keyed processing-time timer service.

These implement, by duck typing, the abstract classes of ``flintlock.datastream.functions``
(the runtime never imports the user API): ``get_state(descriptor)`` and friends reach the
operator's keyed state backend for the current key; a descriptor used outside a keyed context
is a ``StateOutsideKeyedContextError`` naming the operator.

Processing-time timers are keyed state (DESIGN.md §5): each key's registered timestamps live
in an internal map state of the operator's keyed backend, so they are snapshotted, restored
and rescaled with the key groups like any other state. A heap orders them for firing; the
task's ``TimerScheduler`` wakes the task thread (through its mailbox) at the earliest one.

Everything here belongs to the task thread.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from typing import Any

from flintlock.common.errors import FlintlockError
from flintlock.common.state import (
    AggregatingStateDescriptor,
    ListStateDescriptor,
    MapStateDescriptor,
    ReducingStateDescriptor,
    StateDescriptor,
    ValueStateDescriptor,
)
from flintlock.runtime.tasks.operator import OperatorContext

TIMER_STATE = MapStateDescriptor("_flintlock_processing_timers", None, None)
MIN_WATERMARK = -(2**63)
NO_TIMESTAMP = -(2**63)
"""``ctx.timestamp()`` of a record without one: Long.MIN_VALUE, as PyFlink returns it."""


class StateOutsideKeyedContextError(FlintlockError):
    """Keyed state was requested by a function that does not run on a keyed stream."""

    def __init__(self, operator: str, state_name: str) -> None:
        super().__init__(operator, state_name)
        self.operator = operator
        self.state_name = state_name

    def __str__(self) -> str:
        return (f"operator {self.operator!r} asked for keyed state {self.state_name!r}, but it "
                "does not run on a keyed stream; call key_by(...) before it")


class RuntimeContextImpl:
    """``RuntimeContext`` for one operator of one subtask."""

    def __init__(self, context: OperatorContext) -> None:
        self._context = context

    def get_task_name(self) -> str:
        return self._context.task_name

    def get_number_of_parallel_subtasks(self) -> int:
        return self._context.parallelism

    def get_max_number_of_parallel_subtasks(self) -> int:
        return self._context.max_parallelism

    def get_index_of_this_subtask(self) -> int:
        return self._context.subtask_index

    def get_attempt_number(self) -> int:
        return self._context.attempt_number

    def get_task_name_with_subtasks(self) -> str:
        c = self._context
        return f"{c.task_name} ({c.subtask_index + 1}/{c.parallelism})"

    def get_job_parameter(self, key: str, default_value: str) -> str:
        return str(self._context.extra.get("job_parameters", {}).get(key, default_value))

    def get_metrics_group(self) -> Any:
        raise NotImplementedError("metrics groups are not supported yet")

    def _keyed(self, descriptor: StateDescriptor, expected: type) -> Any:
        if not isinstance(descriptor, expected):
            raise TypeError(f"expected a {expected.__name__}, got {type(descriptor).__name__}")
        backend = self._context.keyed_backend
        if backend is None:
            raise StateOutsideKeyedContextError(self._context.operator_name, descriptor.name)
        return backend.get_partitioned_state(descriptor)

    def get_state(self, state_descriptor: ValueStateDescriptor) -> Any:
        return self._keyed(state_descriptor, ValueStateDescriptor)

    def get_list_state(self, state_descriptor: ListStateDescriptor) -> Any:
        return self._keyed(state_descriptor, ListStateDescriptor)

    def get_map_state(self, state_descriptor: MapStateDescriptor) -> Any:
        return self._keyed(state_descriptor, MapStateDescriptor)

    def get_reducing_state(self, state_descriptor: ReducingStateDescriptor) -> Any:
        return self._keyed(state_descriptor, ReducingStateDescriptor)

    def get_aggregating_state(self, state_descriptor: AggregatingStateDescriptor) -> Any:
        return self._keyed(state_descriptor, AggregatingStateDescriptor)


class KeyedTimerService:
    """Processing-time timers per key (``ctx.timer_service()`` of keyed process functions).

    ``on_fire(timestamp, key)`` is called for each due timer with the key already set as the
    current key of the backend. Event-time timers need watermarks, which are not supported yet.
    """

    def __init__(self, context: OperatorContext, on_fire: Callable[[int, Any], None]) -> None:
        self._context = context
        self._backend = context.keyed_backend
        self._on_fire = on_fire
        self._heap: list[tuple[int, int, Any]] = []
        self._sequence = 0
        self._wakeup_at: int | None = None
        self._state: Any = None

    def _timers(self) -> Any:
        if self._state is None:
            self._state = self._backend.get_partitioned_state(TIMER_STATE)
        return self._state

    def restore_timers(self) -> None:
        """Rebuilds the firing order from the restored timer state of every key."""
        backend = self._backend
        for key in list(backend.keys(TIMER_STATE.name)):
            backend.set_current_key(key)
            for timestamp in self._timers().keys():
                self._push(timestamp, key)
        self._schedule_wakeup()

    # -- TimerService (user-facing) ----------------------------------------------------

    def current_processing_time(self) -> int:
        return self._context.timers.now_ms()

    def current_watermark(self) -> int:
        return MIN_WATERMARK

    def register_processing_time_timer(self, timestamp: int) -> None:
        timestamp = int(timestamp)
        timers = self._timers()
        if timers.contains(timestamp):
            return
        timers.put(timestamp, True)
        self._push(timestamp, self._backend.get_current_key())
        self._schedule_wakeup()

    def delete_processing_time_timer(self, timestamp: int) -> None:
        self._timers().remove(int(timestamp))

    def register_event_time_timer(self, timestamp: int) -> None:
        raise NotImplementedError("event-time timers need watermarks, which are not supported yet")

    def delete_event_time_timer(self, timestamp: int) -> None:
        raise NotImplementedError("event-time timers need watermarks, which are not supported yet")

    # -- firing ---------------------------------------------------------------------------

    def _push(self, timestamp: int, key: Any) -> None:
        self._sequence += 1
        heapq.heappush(self._heap, (timestamp, self._sequence, key))

    def _schedule_wakeup(self) -> None:
        if not self._heap:
            return
        earliest = self._heap[0][0]
        if self._wakeup_at is None or earliest < self._wakeup_at:
            self._wakeup_at = earliest
            self._context.timers.schedule(earliest, self._fire_due)

    def _fire_due(self, now: int) -> None:
        self._wakeup_at = None
        now = max(now, self._context.timers.now_ms())
        backend = self._backend
        while self._heap and self._heap[0][0] <= now:
            timestamp, _, key = heapq.heappop(self._heap)
            backend.set_current_key(key)
            timers = self._timers()
            if not timers.contains(timestamp):
                continue  # deleted, or fired already
            timers.remove(timestamp)
            self._on_fire(timestamp, key)
        self._schedule_wakeup()


class ProcessContext:
    """``ctx`` of ``process_element`` / ``on_timer`` (keyed and non-keyed)."""

    __slots__ = ("_backend", "_service", "_side", "_timestamp", "time_domain_value")

    def __init__(self, backend: Any, service: Any) -> None:
        self._backend = backend
        self._service = service
        self._timestamp: int = NO_TIMESTAMP
        self._side: dict[str, list[Any]] = {}
        self.time_domain_value: Any = None

    def output(self, output_tag: Any, value: Any) -> None:
        """``ctx.output(tag, value)``: a side output, sent when the current batch is done."""
        tag_id = getattr(output_tag, "tag_id", None)
        if not isinstance(tag_id, str):
            raise TypeError(f"ctx.output() takes an OutputTag, got {output_tag!r}")
        self._side.setdefault(tag_id, []).append(value)

    def flush_side_outputs(self, outputs: dict[str, Any]) -> None:
        """Hands what ``output`` collected to the side outputs (a tag nobody reads: dropped,
        as in Flink)."""
        if not self._side:
            return
        side, self._side = self._side, {}
        for tag_id, values in side.items():
            target = outputs.get(tag_id)
            if target is not None:
                target.collect_batch(values)

    def timestamp(self) -> int:
        return self._timestamp

    def timer_service(self) -> Any:
        if self._service is None:
            raise NotImplementedError(
                "timers need a keyed stream: call key_by(...) and use a KeyedProcessFunction")
        return self._service

    def get_current_key(self) -> Any:
        if self._backend is None:
            raise FlintlockError("get_current_key() is only available on a keyed stream")
        return self._backend.get_current_key()

    def time_domain(self) -> Any:
        return self.time_domain_value


class NonKeyedTimerService:
    """``timer_service()`` of a non-keyed ProcessFunction: time only, no timers (as Flink)."""

    def __init__(self, context: OperatorContext) -> None:
        self._context = context

    def current_processing_time(self) -> int:
        return self._context.timers.now_ms()

    def current_watermark(self) -> int:
        return MIN_WATERMARK

    def register_processing_time_timer(self, timestamp: int) -> None:
        raise NotImplementedError("timers are only supported on keyed streams (use key_by)")

    register_event_time_timer = register_processing_time_timer
    delete_processing_time_timer = register_processing_time_timer
    delete_event_time_timer = register_processing_time_timer
