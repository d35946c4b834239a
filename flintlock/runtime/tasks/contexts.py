"""What user functions see of the runtime: the RuntimeContext, process-function contexts and
their timer services.

These implement, by duck typing, the abstract classes of ``flintlock.datastream.functions``
(the runtime never imports the user API): ``get_state(descriptor)`` and friends reach the
operator's keyed state backend for the current key; a descriptor used outside a keyed context
is a ``StateOutsideKeyedContextError`` naming the operator.

The keyed timer service of process functions (``KeyedTimerService``) is a facade: the timers
themselves are in the operator's ``timer_service.InternalTimerService`` (keyed state, fired
on the task thread by the task's timer service or the operator's watermark).

Everything here belongs to the task thread.
"""

from __future__ import annotations

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
from flintlock.runtime.tasks.timer_service import USER_TIMERS, InternalTimerService


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


class KeyedTimerService:
    """``ctx.timer_service()`` of keyed process functions: PyFlink's ``TimerService`` over
    the operator's ``InternalTimerService`` (timers without a namespace, kept in
    ``USER_TIMERS``).

    ``on_processing_time`` / ``on_event_time`` are called as ``(timestamp, key)`` for each
    due timer, with the key already set as the current key of the backend: processing-time
    timers fire from the task's timer service, event-time timers when the operator's
    watermark reaches them (``advance_watermark``).
    """

    __slots__ = ("_internal", "_on_event_time", "_on_processing_time")

    def __init__(self, context: OperatorContext, on_processing_time: Callable[[int, Any], None],
                 on_event_time: Callable[[int, Any], None] | None = None) -> None:
        self._on_processing_time = on_processing_time
        self._on_event_time = on_event_time or on_processing_time
        self._internal = InternalTimerService(
            context.keyed_backend, context.timers, USER_TIMERS, self,
            bundle_time_ms=context.environment.bundle_time_ms)

    @property
    def internal(self) -> InternalTimerService:
        return self._internal

    @property
    def watermark(self) -> int:
        return self._internal.watermark

    def restore_timers(self) -> None:
        """Rebuilds the firing order from the restored timer state of every key."""
        self._internal.restore()

    def advance_watermark(self, watermark: int) -> None:
        """Event time reached ``watermark``: fire every event-time timer at or before it."""
        self._internal.advance_watermark(watermark)

    # -- Triggerable (the internal service calls these) -------------------------------------

    def on_event_time(self, timestamp: int, key: Any, namespace: Any) -> None:
        self._on_event_time(timestamp, key)

    def on_processing_time(self, timestamp: int, key: Any, namespace: Any) -> None:
        self._on_processing_time(timestamp, key)

    # -- TimerService (user-facing) ----------------------------------------------------

    def current_processing_time(self) -> int:
        return self._internal.current_processing_time()

    def current_watermark(self) -> int:
        return self._internal.watermark

    def register_processing_time_timer(self, timestamp: int) -> None:
        self._internal.register_processing_time_timer(None, int(timestamp))

    def delete_processing_time_timer(self, timestamp: int) -> None:
        self._internal.delete_processing_time_timer(None, int(timestamp))

    def register_event_time_timer(self, timestamp: int) -> None:
        self._internal.register_event_time_timer(None, int(timestamp))

    def delete_event_time_timer(self, timestamp: int) -> None:
        self._internal.delete_event_time_timer(None, int(timestamp))


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
