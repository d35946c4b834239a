"""The window table functions on their own (``SELECT * FROM TABLE(TUMBLE(...))`` not followed
by a window aggregation): each row with ``window_start``, ``window_end``, ``window_time``
appended, once per window it belongs to.

* ``AlignedWindowTableFunction(window, rowtime, shift=0, ltz=False)`` — TUMBLE, HOP,
  CUMULATE: a stateless ``FlatMapFunction``; a row's windows come in Flink's order (HOP from
  the latest start, CUMULATE from the shortest). Rows are not checked against the watermark,
  as Flink's operator does not drop them either.
* ``SessionWindowTableFunction(partition, window, rowtime, shift=0, ltz=False)`` — SESSION:
  a ``KeyedProcessFunction`` keyed by the PARTITION BY fields that keeps each session's rows
  (``ValueState`` ``sessions``) and emits them, in arrival order, with the session's bounds
  when the watermark reaches its end - 1; a row whose merged session has fired is dropped.

``window``, ``rowtime``, ``shift`` and ``ltz`` are as in ``window_agg``. Insert-only input.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from flintlock.common.state import ValueStateDescriptor
from flintlock.datastream.changelog.errors import NotInsertOnlyError
from flintlock.datastream.changelog.rows import INSERT, key_selector, new_row
from flintlock.datastream.changelog.window_agg import WindowDescription
from flintlock.datastream.changelog.window_assigners import (
    WindowAssigner,
    add_to_sessions,
    from_millis,
    take_session,
)
from flintlock.datastream.functions import (
    FlatMapFunction,
    KeyedProcessFunction,
    RuntimeContext,
)

__all__ = ["AlignedWindowTableFunction", "SessionWindowTableFunction"]


def _bounds(start: int, end: int, shift: int, ltz: bool) -> list[Any]:
    time = end - 1 - shift if ltz else end - 1
    return [from_millis(start), from_millis(end), from_millis(time)]


class AlignedWindowTableFunction(FlatMapFunction):
    def __init__(self, window: WindowDescription, rowtime: Callable[[Any], int], shift: int = 0,
                 ltz: bool = False) -> None:
        kind, size, slide, offset = window
        self.assigner = WindowAssigner(kind, size, slide, offset)
        self.rowtime = rowtime
        self.shift = shift
        self.ltz = ltz

    def flat_map(self, value: Any) -> list[Any]:
        values = value._values
        time = self.rowtime(value) + self.shift
        return [new_row(values + _bounds(start, end, self.shift, self.ltz), value._row_kind)
                for start, end in self.assigner.windows_of(time)]


class SessionWindowTableFunction(KeyedProcessFunction):
    def __init__(self, partition: Sequence[int], window: WindowDescription,
                 rowtime: Callable[[Any], int], shift: int = 0, ltz: bool = False) -> None:
        self.partition = tuple(partition)
        self.gap = window[1]
        self.rowtime = rowtime
        self.shift = shift
        self.ltz = ltz

    def key_selector(self) -> Callable[[Any], Any]:
        return key_selector(self.partition)

    def open(self, runtime_context: RuntimeContext) -> None:
        self._sessions = runtime_context.get_state(ValueStateDescriptor("sessions"))

    def process_element(self, value: Any, ctx: Any) -> tuple[Any, ...]:
        if value._row_kind is not INSERT:
            raise NotInsertOnlyError(type(self).__name__, value._row_kind.name)
        time = self.rowtime(value) + self.shift
        sessions = add_to_sessions(self._sessions.value() or [], value._values, time, self.gap,
                                   self.shift, ctx.timer_service())
        if sessions is not None:
            self._sessions.update(sessions)
        return ()

    def on_timer(self, timestamp: int, ctx: Any) -> tuple[Any, ...]:
        end = timestamp + 1 + self.shift
        firing, rest = take_session(self._sessions.value() or [], end)
        if rest:
            self._sessions.update(rest)
        else:
            self._sessions.clear()
        return tuple(new_row(list(row) + _bounds(start, end, self.shift, self.ltz), INSERT)
                     for start, _, rows in firing for row in rows)
