"""Deduplication on event-time order (``ROW_NUMBER() OVER (PARTITION BY k ORDER BY rowtime
[DESC]) = 1``): Flink 2.3's ``RowTimeDeduplicateFunction`` (keep the last row, no mini-batch)
and ``RowTimeDeduplicateKeepFirstRowFunction`` (keep the first row, insert-only output), as
``KeyedProcessFunction``s keyed by the deduplication key over an insert-only input.

``rowtime`` is a callable ``row -> epoch milliseconds`` (the row's time attribute as a number;
the planner composes the field access with the conversion of its TIMESTAMP value).

* ``RowTimeKeepLastRowFunction(rowtime, generate_update_before=True, generate_insert=True,
  state_retention_ms=0)``: a row replaces the stored one when its rowtime is not earlier
  (ties: the later arrival wins); then, as the processing-time variant, +I for a key's first
  row, -U previous (with ``generate_update_before``) and +U for a later one, +U alone with
  neither UPDATE_BEFORE nor INSERT wanted. An earlier-rowtime row is dropped. Watermarks play
  no part; equal rows are not suppressed.
* ``RowTimeKeepFirstRowFunction(rowtime, state_retention_ms=0)``: per key the candidate with
  the earliest rowtime (ties: the earlier arrival) waits in state with an event-time timer at
  its rowtime; when the watermark passes it, the candidate is emitted once as +I and the key
  emits nothing more. A row whose rowtime is behind the current watermark is dropped (late).

Non-INSERT input raises ``NotInsertOnlyError``. The task thread owns a function once opened.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flintlock.common.state import StateTtlConfig, ValueStateDescriptor
from flintlock.datastream.changelog.errors import NotInsertOnlyError
from flintlock.datastream.changelog.rows import INSERT, UPDATE_AFTER, UPDATE_BEFORE, new_row
from flintlock.datastream.changelog.timer_batches import RowsThenTimers
from flintlock.datastream.functions import KeyedProcessFunction, RuntimeContext


def _state(runtime_context: RuntimeContext, name: str, retention_ms: int) -> Any:
    descriptor = ValueStateDescriptor(name)
    if retention_ms > 0:
        descriptor.enable_time_to_live(StateTtlConfig.new_builder(retention_ms).build())
    return runtime_context.get_state(descriptor)


def _insert_only(function: Any, value: Any) -> None:
    if value._row_kind is not INSERT:
        raise NotInsertOnlyError(type(function).__name__, value._row_kind.name)


class RowTimeKeepLastRowFunction(KeyedProcessFunction):
    """Keep the row with the latest rowtime per key; see the module docstring."""

    def __init__(self, rowtime: Callable[[Any], int], generate_update_before: bool = True,
                 generate_insert: bool = True, state_retention_ms: int = 0) -> None:
        self.rowtime = rowtime
        self.generate_update_before = generate_update_before
        self.generate_insert = generate_insert
        self.state_retention_ms = state_retention_ms

    def open(self, runtime_context: RuntimeContext) -> None:
        self._last = _state(runtime_context, "preRowState", self.state_retention_ms)

    def process_element(self, value: Any, ctx: Any) -> tuple[Any, ...]:
        _insert_only(self, value)
        time = self.rowtime(value)
        previous = self._last.value()
        if previous is not None and previous[1] > time:
            return ()
        values = tuple(value._values)
        self._last.update((values, time))
        if not (self.generate_update_before or self.generate_insert):
            return (new_row(list(values), UPDATE_AFTER),)
        if previous is None:
            return (new_row(list(values), INSERT),)
        if self.generate_update_before:
            return (new_row(list(previous[0]), UPDATE_BEFORE),
                    new_row(list(values), UPDATE_AFTER))
        return (new_row(list(values), UPDATE_AFTER),)


class RowTimeKeepFirstRowFunction(RowsThenTimers, KeyedProcessFunction):
    """Keep the row with the earliest rowtime per key, emitted once the watermark passes it;
    see the module docstring. Rows are taken a batch at a time and a watermark's timers at
    once (``timer_batches``)."""

    def __init__(self, rowtime: Callable[[Any], int], state_retention_ms: int = 0) -> None:
        self.rowtime = rowtime
        self.state_retention_ms = state_retention_ms

    def open(self, runtime_context: RuntimeContext) -> None:
        self._waiting = _state(runtime_context, "waitingToEmitOnTimer", self.state_retention_ms)
        self._emitted = _state(runtime_context, "alreadyEmitted", self.state_retention_ms)

    def process_element(self, value: Any, ctx: Any) -> tuple[Any, ...]:
        _insert_only(self, value)
        time = self.rowtime(value)
        timers = ctx.timer_service()
        if time < timers.current_watermark() or self._emitted.value():
            return ()
        waiting = self._waiting.value()
        if waiting is None or time < waiting[1]:
            if waiting is not None:
                timers.delete_event_time_timer(waiting[1])
            timers.register_event_time_timer(time)
            self._waiting.update((tuple(value._values), time))
        return ()

    def on_timer(self, timestamp: int, ctx: Any) -> tuple[Any, ...]:
        waiting = self._waiting.value()
        if waiting is None:
            return ()
        self._waiting.clear()
        self._emitted.update(True)
        return (new_row(list(waiting[0]), INSERT),)
