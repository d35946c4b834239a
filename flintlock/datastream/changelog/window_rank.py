"""Window Top-N and window deduplication (``ROW_NUMBER() OVER (PARTITION BY window_start,
window_end, ... ORDER BY ...)`` filtered to the first N, over a window table function or a
window aggregation): Flink 2.3's ``WindowRankOperator`` / ``WindowDeduplicateOperator``
results, as a ``KeyedProcessFunction`` keyed by the partition fields over an insert-only input.

``WindowRankFunction(partition, sort_key, rank_end, window_end, output_number=False,
keep_last=False, shift=0)``:

* ``partition``: the PARTITION BY field positions (they include the window's bounds);
  ``sort_key``: ``row -> key`` ordered ascending in the wanted order (``sort_keys``);
  ``rank_end``: N; ``window_end``: the position of the ``window_end`` field (a TIMESTAMP(3)
  value); ``shift``: milliseconds of the session zone's offset when the window is on a
  TIMESTAMP_LTZ column (``window_end`` is then a wall-clock time in that zone).
* The rows of a partition wait in ``ListState`` ``rows`` until the watermark reaches
  ``window_end - 1`` (an event-time timer); then the first N by ``sort_key`` — rows with
  equal keys in arrival order — are emitted as ``+I``, with their row number appended when
  ``output_number``. ``keep_last``: window deduplication keeping the last row (ORDER BY
  rowtime DESC, N = 1), where of rows with the same rowtime the later one wins, as Flink's
  deduplication keeps it.
* A row whose window has fired (``window_end - 1`` at or behind the watermark) is dropped.
  Append-only output. State is keyed (checkpointed and rescaled with the partition).

Non-INSERT input raises ``NotInsertOnlyError``. The task thread owns a function once opened.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from flintlock.common.state import ListStateDescriptor
from flintlock.datastream.changelog.errors import NotInsertOnlyError
from flintlock.datastream.changelog.rows import INSERT, key_selector, new_row
from flintlock.datastream.changelog.window_assigners import to_millis
from flintlock.datastream.functions import KeyedProcessFunction, RuntimeContext

__all__ = ["WindowRankFunction"]


class WindowRankFunction(KeyedProcessFunction):
    """Top-N rows of each window and partition; see the module docstring."""

    def __init__(self, partition: Sequence[int], sort_key: Callable[[Any], Any], rank_end: int,
                 window_end: int, output_number: bool = False, keep_last: bool = False,
                 shift: int = 0) -> None:
        self.partition = tuple(partition)
        self.sort_key = sort_key
        self.rank_end = rank_end
        self.window_end = window_end
        self.output_number = output_number
        self.keep_last = keep_last
        self.shift = shift

    def key_selector(self) -> Callable[[Any], Any]:
        return key_selector(self.partition)

    def open(self, runtime_context: RuntimeContext) -> None:
        self._rows = runtime_context.get_list_state(ListStateDescriptor("rows"))

    def process_element(self, value: Any, ctx: Any) -> tuple[Any, ...]:
        if value._row_kind is not INSERT:
            raise NotInsertOnlyError(type(self).__name__, value._row_kind.name)
        fires_at = to_millis(value._values[self.window_end]) - 1 - self.shift
        timers = ctx.timer_service()
        if fires_at <= timers.current_watermark():
            return ()  # its window has fired
        timers.register_event_time_timer(fires_at)
        self._rows.add(list(value._values))
        return ()

    def on_timer(self, timestamp: int, ctx: Any) -> tuple[Any, ...]:
        rows = [new_row(values, INSERT) for values in self._rows.get()]
        self._rows.clear()
        if self.keep_last:
            rows.reverse()  # the later of two equal rowtimes ranks first
        ranked = sorted(rows, key=self.sort_key)[:self.rank_end]
        if not self.output_number:
            return tuple(ranked)
        return tuple(new_row([*row._values, number], INSERT)
                     for number, row in enumerate(ranked, start=1))
