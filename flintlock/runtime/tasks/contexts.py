"""What user functions see of the runtime: the RuntimeContext, process-function contexts and
the keyed processing-time timer service.

These implement, by duck typing, the abstract classes of ``flintlock.datastream.functions``
(the runtime never imports the user API): ``get_state(descriptor)`` and friends reach the
operator's keyed state backend for the current key; a descriptor used outside a keyed context
is a ``StateOutsideKeyedContextError`` naming the operator.

Timers are keyed state (DESIGN.md §5): each key's registered timestamps live in an internal
map state of the operator's keyed backend (one per time domain), so they are snapshotted,
restored and rescaled with the key groups like any other state. A heap per domain orders them
for firing: the task's ``TimerScheduler`` wakes the task thread (through its mailbox) at the
earliest processing-time timer; the operator's watermark fires event-time timers.

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
from flintlock.runtime.metrics.groups import MetricGroup
from flintlock.runtime.network.event_time import MIN_WATERMARK, NO_TIMESTAMP, TimestampedBatch
from flintlock.runtime.tasks.operator import OperatorContext

TIMER_STATE = MapStateDescriptor("_flintlock_processing_timers", None, None)
EVENT_TIMER_STATE = MapStateDescriptor("_flintlock_event_timers", None, None)
WINDOW_TIMER_STATE = MapStateDescriptor("_flintlock_window_processing_timers", None, None)
WINDOW_EVENT_TIMER_STATE = MapStateDescriptor("_flintlock_window_event_timers", None, None)


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
        return str(self._context.environment.job_parameters.get(key, default_value))

    def get_metrics_group(self) -> MetricGroup:
        """This operator's group; outside a TaskManager (operator tests) one nobody reports."""
        c = self._context
        return c.environment.metric_groups.operator(c.operator_id, c.operator_name)

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


class _TimerQueue:
    """The timers of one time domain: per key in a map state, ordered for firing by a heap of
    (timestamp, sequence, key, namespace); a deleted timer stays in the heap and is skipped
    when it comes up. A timer's map entry is its timestamp, or ``(timestamp, namespace)`` in a
    namespaced queue (windows: one timer per key, window and time)."""

    def __init__(self, backend: Any, descriptor: MapStateDescriptor, namespaced: bool) -> None:
        self._backend = backend
        self._descriptor = descriptor
        self._namespaced = namespaced
        self._heap: list[tuple[int, int, Any, Any]] = []
        self._sequence = 0
        self._state: Any = None

    def _timers(self) -> Any:
        if self._state is None:
            self._state = self._backend.get_partitioned_state(self._descriptor)
        return self._state

    def _entry(self, timestamp: int, namespace: Any) -> Any:
        return (timestamp, namespace) if self._namespaced else timestamp

    def restore(self) -> None:
        backend = self._backend
        for key in list(backend.keys(self._descriptor.name)):
            backend.set_current_key(key)
            for entry in self._timers().keys():
                if self._namespaced:
                    self._push(entry[0], key, entry[1])
                else:
                    self._push(entry, key, None)

    def register(self, timestamp: int, namespace: Any = None) -> bool:
        """Registers for the current key; False if that timer exists already."""
        timers = self._timers()
        entry = self._entry(timestamp, namespace)
        if timers.contains(entry):
            return False
        timers.put(entry, True)
        self._push(timestamp, self._backend.get_current_key(), namespace)
        return True

    def delete(self, timestamp: int, namespace: Any = None) -> None:
        self._timers().remove(self._entry(timestamp, namespace))

    def earliest(self) -> int | None:
        return self._heap[0][0] if self._heap else None

    def fire_due(self, now: int, on_fire: Callable[..., None],
                 registered_before: bool = False) -> None:
        """Fires every timer at or before ``now``, earliest first, with its key set:
        ``on_fire(timestamp, key)``, or ``on_fire(timestamp, key, namespace)`` if namespaced.
        With ``registered_before`` a timer registered while these fire waits for the next
        call, even if it is due already (PyFlink's window timers)."""
        backend = self._backend
        limit = self._sequence
        deferred: list[tuple[int, int, Any, Any]] = []
        while self._heap and self._heap[0][0] <= now:
            timestamp, sequence, key, namespace = heapq.heappop(self._heap)
            if registered_before and sequence > limit:
                deferred.append((timestamp, sequence, key, namespace))
                continue
            backend.set_current_key(key)
            timers = self._timers()
            entry = self._entry(timestamp, namespace)
            if not timers.contains(entry):
                continue  # deleted, or fired already
            timers.remove(entry)
            if self._namespaced:
                on_fire(timestamp, key, namespace)
            else:
                on_fire(timestamp, key)
        for item in deferred:
            heapq.heappush(self._heap, item)

    def _push(self, timestamp: int, key: Any, namespace: Any) -> None:
        self._sequence += 1
        heapq.heappush(self._heap, (timestamp, self._sequence, key, namespace))


class KeyedTimerService:
    """Processing-time and event-time timers per key (``ctx.timer_service()`` of keyed
    process functions; namespaced per window for window operators).

    ``on_processing_time`` / ``on_event_time`` are called for each due timer with the key
    already set as the current key of the backend: ``(timestamp, key)``, or ``(timestamp, key,
    namespace)`` when ``namespaced``. Processing-time timers fire from the task's timer
    scheduler; event-time timers when the operator's watermark reaches them
    (``advance_watermark``). With ``defer_new_event_timers`` (window operators) an event-time
    timer registered while a watermark's timers fire waits for the next watermark even if it
    is due, as PyFlink's window timers do (see ``window_operator``).
    """

    def __init__(self, context: OperatorContext, on_processing_time: Callable[..., None],
                 on_event_time: Callable[..., None] | None = None,
                 namespaced: bool = False, defer_new_event_timers: bool = False) -> None:
        self._context = context
        self._backend = context.keyed_backend
        self._on_processing_time = on_processing_time
        self._on_event_time = on_event_time or on_processing_time
        states = (WINDOW_TIMER_STATE, WINDOW_EVENT_TIMER_STATE) if namespaced else (
            TIMER_STATE, EVENT_TIMER_STATE)
        self._processing = _TimerQueue(self._backend, states[0], namespaced)
        self._event = _TimerQueue(self._backend, states[1], namespaced)
        self._wakeup_at: int | None = None
        self._defer_new_event_timers = defer_new_event_timers
        self.watermark = MIN_WATERMARK

    def restore_timers(self) -> None:
        """Rebuilds the firing order from the restored timer state of every key."""
        self._processing.restore()
        self._event.restore()
        self._schedule_wakeup()

    # -- TimerService (user-facing) ----------------------------------------------------

    def current_processing_time(self) -> int:
        return self._context.timers.now_ms()

    def current_watermark(self) -> int:
        return self.watermark

    def register_processing_time_timer(self, timestamp: int, namespace: Any = None) -> None:
        if self._processing.register(int(timestamp), namespace):
            self._schedule_wakeup()

    def delete_processing_time_timer(self, timestamp: int, namespace: Any = None) -> None:
        self._processing.delete(int(timestamp), namespace)

    def register_event_time_timer(self, timestamp: int, namespace: Any = None) -> None:
        self._event.register(int(timestamp), namespace)

    def delete_event_time_timer(self, timestamp: int, namespace: Any = None) -> None:
        self._event.delete(int(timestamp), namespace)

    # -- firing ---------------------------------------------------------------------------

    def advance_watermark(self, watermark: int) -> None:
        """Event time reached ``watermark``: fire every event-time timer at or before it."""
        self.watermark = watermark
        self._event.fire_due(watermark, self._on_event_time, self._defer_new_event_timers)

    def _schedule_wakeup(self) -> None:
        earliest = self._processing.earliest()
        if earliest is None:
            return
        if self._wakeup_at is None or earliest < self._wakeup_at:
            self._wakeup_at = earliest
            self._context.timers.schedule(earliest, self._fire_due)

    def _fire_due(self, now: int) -> None:
        self._wakeup_at = None
        now = max(now, self._context.timers.now_ms())
        self._processing.fire_due(now, self._on_processing_time)
        self._schedule_wakeup()


class ProcessContext:
    """``ctx`` of ``process_element`` / ``on_timer`` (keyed and non-keyed)."""

    __slots__ = ("_backend", "_service", "_side", "_timestamp", "time_domain_value")

    def __init__(self, backend: Any, service: Any) -> None:
        self._backend = backend
        self._service = service
        self._timestamp: int = NO_TIMESTAMP
        self._side: dict[str, TimestampedBatch] = {}
        self.time_domain_value: Any = None

    def output(self, output_tag: Any, value: Any) -> None:
        """``ctx.output(tag, value)``: a side output with the current record's timestamp,
        sent when the current batch is done."""
        tag_id = getattr(output_tag, "tag_id", None)
        if not isinstance(tag_id, str):
            raise TypeError(f"ctx.output() takes an OutputTag, got {output_tag!r}")
        batch = self._side.get(tag_id)
        if batch is None:
            batch = self._side[tag_id] = TimestampedBatch()
        batch.append(value)
        batch.timestamps.append(self._timestamp)

    def flush_side_outputs(self, outputs: dict[str, Any]) -> None:
        """Hands what ``output`` collected to the side outputs (a tag nobody reads: dropped,
        as in Flink); values without timestamps go as a plain list."""
        if not self._side:
            return
        side, self._side = self._side, {}
        for tag_id, batch in side.items():
            target = outputs.get(tag_id)
            if target is not None:
                stamped = any(ts != NO_TIMESTAMP for ts in batch.timestamps)
                target.collect_batch(batch if stamped else list(batch))

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
        self.watermark = MIN_WATERMARK

    def current_processing_time(self) -> int:
        return self._context.timers.now_ms()

    def current_watermark(self) -> int:
        return self.watermark

    def advance_watermark(self, watermark: int) -> None:
        self.watermark = watermark

    def register_processing_time_timer(self, timestamp: int) -> None:
        raise NotImplementedError("timers are only supported on keyed streams (use key_by)")

    register_event_time_timer = register_processing_time_timer
    delete_processing_time_timer = register_processing_time_timer
    delete_event_time_timer = register_processing_time_timer
