"""Event-time keyed process functions whose rows emit nothing, taken a batch at a time (issue
32): the over aggregation and the keep-first-row deduplication on event time only store a row
and register a timer per row, and emit when the watermark passes the timer.

``RowsThenTimers`` gives such a function the two methods ``runtime.tasks.keyed_rows_operator``
runs a batch at a time (instead of ``ProcessOperator``'s calls per record, and a chain output
per fired timer):

* ``process_keyed_batch(records, get_key, set_key, ctx)``: ``process_element`` of each record
  with its key set, in order; declined (False) when ``takes_keyed_batches()`` says the rows
  emit (a processing-time variant), so those go record by record as before;
* ``on_event_timers(timers, ctx)``: ``on_timer`` of each due event-time timer (its key set by
  the timer service), the outputs of the watermark in one list, each with its timer's
  timestamp — what ``ProcessOperator`` emits timer by timer.

The function's ``process_element`` must return nothing on the batch path (checked: a
``RowsEmittedError`` otherwise) and must not read ``ctx.timestamp()``. Task thread only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["RowsEmittedError", "RowsThenTimers"]


class RowsEmittedError(RuntimeError):
    """A function taking rows a batch at a time emitted on a row."""

    def __init__(self, function: str) -> None:
        super().__init__(f"{function}.process_element emitted rows on the batch path, which "
                         "drops outputs: it must decline the batch (takes_keyed_batches)")


class RowsThenTimers:
    """Mixin for a ``KeyedProcessFunction``; see the module docstring."""

    process_element: Callable[[Any, Any], Any]
    on_timer: Callable[[int, Any], Any]

    def takes_keyed_batches(self) -> bool:
        """Whether rows emit nothing (the batch path applies); True unless overridden."""
        return True

    def process_keyed_batch(self, records: list[Any], get_key: Callable[[Any], Any],
                            set_key: Callable[[Any], None], ctx: Any) -> bool:
        if not self.takes_keyed_batches():
            return False
        process = self.process_element
        for row in records:
            set_key(get_key(row))
            if process(row, ctx):
                raise RowsEmittedError(type(self).__name__)
        return True

    def on_event_timers(self, timers: Iterable[tuple[int, Any, Any]], ctx: Any
                        ) -> tuple[list[Any], list[int]]:
        out: list[Any] = []
        stamps: list[int] = []
        on_timer = self.on_timer
        for timestamp, _key, _namespace in timers:
            rows = on_timer(timestamp, ctx)
            if rows:
                out.extend(rows)
                stamps.extend([timestamp] * len(rows))
        return out, stamps
