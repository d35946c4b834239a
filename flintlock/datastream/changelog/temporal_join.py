"""Event-time temporal join (``JOIN versioned FOR SYSTEM_TIME AS OF o.rowtime ON o.k = v.pk``):
Flink 2.3's ``TemporalRowTimeJoinOperator``, as a ``KeyedCoProcessFunction`` keyed by the
equi-join fields (the versioned table's primary key) on both inputs.

``TemporalRowTimeJoinFunction(left_arity, right_arity, left_keys, right_keys, left_time,
right_time, condition=None, left_outer=False, state_retention_ms=0)``:

* ``left_time`` / ``right_time``: ``row -> epoch milliseconds`` of each side's rowtime;
  ``condition(left_values, right_values) -> bool``: the rest of the ON condition.
* Left rows wait in ``MapState`` (arrival number -> row and its time); each right row is a
  version of its key, stored by its rowtime (``MapState`` time -> row; a later row with the
  same time replaces it, a deletion too). One event-time timer per key, at the smallest time
  waiting.
* When the watermark reaches it, every waiting left row at or before the watermark, in arrival
  order, joins the latest version at or before its own time: joined with the left row's kind
  when that version is not a deletion and the condition holds; else, for a LEFT join, padded
  with NULLs. Then the versions older than the latest one at or before the watermark are
  dropped, and the timer moves to the earliest left row still waiting.
* UPDATE_BEFORE rows of the versioned side are dropped: Flink's planner asks that side for
  its updates without them (a ``DropUpdateBefore`` in its plan).
* ``state_retention_ms`` (``table.exec.state.ttl``; on above 1 ms, as Flink's
  ``BaseTwoInputStreamOperatorWithStateRetention``): every row of a key pushes its
  processing-time clean-up timer to now + 1.5 x the retention, unless the one registered is
  still later than now + the retention; when it fires, the key's waiting left rows, versions
  and timer bookkeeping are dropped (its pending event-time timer then finds nothing). After
  the watermark's pass, a key with rows still waiting or versions kept pushes it again; a key
  left with nothing drops its clean-up timer and arrival counter.

Output rows are the left fields then the right fields. ``process_batch`` and
``on_event_timers`` let ``runtime.tasks.co_batch_operator`` run it a batch, and a watermark's
timers, at a time (the same calls per row and per timer, without the per-record operator
around each). The task thread owns a function once opened.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from flintlock.common.state import MapStateDescriptor, ValueStateDescriptor
from flintlock.datastream.changelog.errors import InvalidOperatorArgumentError
from flintlock.datastream.changelog.rows import (
    DELETE,
    UPDATE_BEFORE,
    key_selector,
    new_row,
)
from flintlock.datastream.functions import KeyedCoProcessFunction, RuntimeContext, TimeDomain

__all__ = ["TemporalRowTimeJoinFunction"]


class TemporalRowTimeJoinFunction(KeyedCoProcessFunction):
    """Event-time temporal join against a versioned table; see the module docstring."""

    def __init__(self, left_arity: int, right_arity: int, left_keys: Sequence[int],
                 right_keys: Sequence[int], left_time: Callable[[Any], int],
                 right_time: Callable[[Any], int],
                 condition: Callable[[Any, Any], Any] | None = None,
                 left_outer: bool = False, state_retention_ms: int = 0) -> None:
        if len(left_keys) != len(right_keys) or not left_keys:
            raise InvalidOperatorArgumentError(
                "TemporalRowTimeJoinFunction", "the join needs as many left as right key "
                f"fields, at least one: {len(left_keys)} and {len(right_keys)}")
        self.left_arity, self.right_arity = left_arity, right_arity
        self.left_keys, self.right_keys = tuple(left_keys), tuple(right_keys)
        self.left_time, self.right_time = left_time, right_time
        self.condition = condition
        self.left_outer = left_outer
        self.min_retention_ms = state_retention_ms
        self.max_retention_ms = state_retention_ms * 3 // 2
        self.state_cleaning = state_retention_ms > 1

    def left_key_selector(self) -> Callable[[Any], Any]:
        return key_selector(self.left_keys)

    def right_key_selector(self) -> Callable[[Any], Any]:
        return key_selector(self.right_keys)

    def open(self, runtime_context: RuntimeContext) -> None:
        self._left = runtime_context.get_map_state(MapStateDescriptor("left", None, None))
        self._versions = runtime_context.get_map_state(MapStateDescriptor("right", None, None))
        self._next_left = runtime_context.get_state(ValueStateDescriptor("next-index"))
        self._timer = runtime_context.get_state(ValueStateDescriptor("timer"))
        if self.state_cleaning:
            self._clean_up = runtime_context.get_state(ValueStateDescriptor("cleanup-timestamp"))

    def process_element1(self, value: Any, ctx: Any) -> tuple[Any, ...]:
        index = self._next_left.value() or 0
        self._next_left.update(index + 1)
        time = self.left_time(value)
        self._left.put(index, (value._row_kind, tuple(value._values), time))
        self._register_smallest(ctx, time)
        self._register_clean_up(ctx)
        return ()

    def process_element2(self, value: Any, ctx: Any) -> tuple[Any, ...]:
        if value._row_kind is UPDATE_BEFORE:
            return ()
        time = self.right_time(value)
        self._versions.put(time, (value._row_kind, tuple(value._values)))
        self._register_smallest(ctx, time)
        self._register_clean_up(ctx)
        return ()

    def process_batch(self, index: int, records: list[Any], timestamps: list[int] | None,
                      get_key: Callable[[Any], Any], set_key: Callable[[Any], None],
                      ctx: Any) -> tuple[list[Any], list[int] | None]:
        """``process_element1/2`` for each record of input ``index``, its key set: rows only
        wait for the watermark, nothing is emitted."""
        process = self.process_element1 if index == 0 else self.process_element2
        for row in records:
            set_key(get_key(row))
            process(row, ctx)
        return [], None if timestamps is None else []

    def on_event_timers(self, timers: Iterable[tuple[int, Any, Any]], ctx: Any
                        ) -> tuple[list[Any], list[int]]:
        """``on_timer`` for each of a watermark's due event-time timers (its key set): the
        rows in order, each with its timer's timestamp."""
        out: list[Any] = []
        stamps: list[int] = []
        for timestamp, _key, _namespace in timers:
            produced = self.on_timer(timestamp, ctx)
            if produced:
                out.extend(produced)
                stamps.extend([timestamp] * len(produced))
        return out, stamps

    # -- idle state retention (table.exec.state.ttl) ------------------------------------------

    def _register_clean_up(self, ctx: Any) -> None:
        if not self.state_cleaning:
            return
        timers = ctx.timer_service()
        now = int(timers.current_processing_time())
        registered = self._clean_up.value()
        if registered is not None and now + self.min_retention_ms <= registered:
            return
        if registered is not None:
            timers.delete_processing_time_timer(registered)
        self._clean_up.update(now + self.max_retention_ms)
        timers.register_processing_time_timer(now + self.max_retention_ms)

    def _drop_clean_up(self, ctx: Any) -> None:
        registered = self._clean_up.value()
        if registered is not None:
            self._clean_up.clear()
            ctx.timer_service().delete_processing_time_timer(registered)

    def _on_clean_up(self, timestamp: int) -> None:
        if self.state_cleaning and self._clean_up.value() == timestamp:
            self._left.clear()
            self._versions.clear()
            self._next_left.clear()
            self._timer.clear()
            self._clean_up.clear()

    def _register_smallest(self, ctx: Any, time: int) -> None:
        registered = self._timer.value()
        timers = ctx.timer_service()
        if registered is None:
            self._register(timers, time)
        elif registered > time:
            timers.delete_event_time_timer(registered)
            self._register(timers, time)

    def _register(self, timers: Any, time: int) -> None:
        self._timer.update(time)
        timers.register_event_time_timer(time)

    def on_timer(self, timestamp: int, ctx: Any) -> list[Any]:
        if ctx.time_domain() is TimeDomain.PROCESSING_TIME:
            self._on_clean_up(timestamp)
            return []
        self._timer.clear()
        timers = ctx.timer_service()
        watermark = int(timers.current_watermark())
        versions = sorted(self._versions.items())
        times = [time for time, _ in versions]
        due: list[tuple[int, Any, tuple[Any, ...], int]] = []
        waiting_from: int | None = None
        for index, (kind, values, time) in list(self._left.items()):
            if time <= watermark:
                due.append((index, kind, values, time))
                self._left.remove(index)
            elif waiting_from is None or time < waiting_from:
                waiting_from = time
        out = []
        for _index, kind, values, time in sorted(due, key=lambda entry: entry[0]):
            position = bisect.bisect_right(times, time)
            version = versions[position - 1][1] if position > 0 else None
            if version is not None and version[0] is not DELETE and self._holds(values,
                                                                               version[1]):
                out.append(new_row([*values, *version[1]], kind))
            elif self.left_outer:
                out.append(new_row([*values, *((None,) * self.right_arity)], kind))
        # keep the latest version at or before the watermark and every later one
        keep_from = bisect.bisect_right(times, watermark) - 1
        for time in times[:max(keep_from, 0)]:
            self._versions.remove(time)
        if waiting_from is not None:
            self._register(timers, waiting_from)
        if self.state_cleaning:
            if waiting_from is not None or not self._versions.is_empty():
                self._register_clean_up(ctx)
            else:
                self._drop_clean_up(ctx)
                self._next_left.clear()
        return out

    def _holds(self, left: tuple[Any, ...], right: tuple[Any, ...]) -> bool:
        return self.condition is None or bool(self.condition(left, right))
