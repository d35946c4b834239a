"""Over aggregation in event time (``agg(x) OVER (PARTITION BY k ORDER BY rowtime ROWS|RANGE
BETWEEN ... PRECEDING AND CURRENT ROW)``): Flink 2.3's ``RowTime{Rows,Range}{Bounded,
Unbounded}PrecedingFunction`` results, as one ``KeyedProcessFunction`` keyed by the partition
fields over an insert-only input.

``OverAggFunction(partition, calls, rowtime, rows, preceding=None)``:

* ``calls``: ``group_agg.AggregateCall``s over the input row; ``rowtime``: ``row -> epoch
  milliseconds``; ``rows``: a ROWS frame (else RANGE); ``preceding``: the number of preceding
  rows (ROWS) or milliseconds (RANGE) in the frame, None for UNBOUNDED PRECEDING.
* A row waits in state (``MapState`` ``pending``, by rowtime) until the watermark reaches its
  rowtime (an event-time timer); then the rows of that rowtime are emitted in arrival order,
  each as ``+I[row..., results...]``. ROWS: a row's frame is itself and the ``preceding`` rows
  emitted before it (rowtime order, then arrival). RANGE: the frame is every row of the
  partition with a rowtime in ``[rowtime - preceding, rowtime]`` — rows with the same rowtime
  share their results.
* A row at or behind the last rowtime emitted for its partition is late and dropped (Flink's
  ``lastTriggeringTs``). Unbounded frames keep accumulators; bounded ones keep the rows still
  in reach (``history``) and aggregate the frame per row, so no ``retract`` is needed.

``proctime=True``: ordered by a processing-time attribute (Flink's ``ProcTime*Preceding
Function``s): unbounded frames (ROWS or RANGE) and ROWS frames emit each row at once with the
aggregates over itself and the rows that arrived before it; a RANGE frame buffers the rows of
the current millisecond and emits them on a processing-time timer 1 ms later, over the rows
that arrived within ``preceding`` ms. Nothing is late.

Append-only output. Non-INSERT input raises ``NotInsertOnlyError``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from flintlock.common.state import MapStateDescriptor, ValueStateDescriptor
from flintlock.datastream.changelog.errors import NotInsertOnlyError
from flintlock.datastream.changelog.group_agg import AggregateCall
from flintlock.datastream.changelog.rows import INSERT, key_selector, new_row
from flintlock.datastream.changelog.timer_batches import RowsThenTimers
from flintlock.datastream.changelog.window_agg import CallAccumulators, aggregate_rows
from flintlock.datastream.functions import KeyedProcessFunction, RuntimeContext

__all__ = ["OverAggFunction"]


class OverAggFunction(RowsThenTimers, KeyedProcessFunction):
    """Event-time over aggregation; see the module docstring. On event time its rows are
    taken a batch at a time and a watermark's timers at once (``timer_batches``)."""

    def __init__(self, partition: Sequence[int], calls: Sequence[AggregateCall],
                 rowtime: Callable[[Any], int], rows: bool, preceding: int | None = None,
                 proctime: bool = False) -> None:
        self.partition = tuple(partition)
        self.calls = list(calls)
        self.rowtime = rowtime
        self.rows = rows
        self.preceding = preceding
        self.proctime = proctime

    def key_selector(self) -> Callable[[Any], Any]:
        return key_selector(self.partition)

    def takes_keyed_batches(self) -> bool:
        return not self.proctime  # processing time emits on rows

    def open(self, runtime_context: RuntimeContext) -> None:
        self._helper = CallAccumulators(self.calls)
        self._pending = runtime_context.get_map_state(MapStateDescriptor("pending"))
        self._last = runtime_context.get_state(ValueStateDescriptor("lastTriggeringTs"))
        self._history = runtime_context.get_state(ValueStateDescriptor("history"))

    def process_element(self, value: Any, ctx: Any) -> tuple[Any, ...]:
        if value._row_kind is not INSERT:
            raise NotInsertOnlyError(type(self).__name__, value._row_kind.name)
        if self.proctime:
            return self._process_proctime(list(value._values), ctx)
        time = self.rowtime(value)
        last = self._last.value()
        if last is not None and time <= last:
            return ()  # late: its rowtime was emitted already
        waiting = self._pending.get(time)
        if waiting is None:
            waiting = []
            ctx.timer_service().register_event_time_timer(time)
        waiting.append(list(value._values))
        self._pending.put(time, waiting)
        return ()

    def _process_proctime(self, values: list[Any], ctx: Any) -> tuple[Any, ...]:
        """Processing time (Flink's ProcTime*PrecedingFunction): unbounded and ROWS frames
        emit the row at once, over the rows that arrived before it; a RANGE frame waits for a
        timer 1 ms after the clock's time and aggregates the rows of that interval."""
        if self.preceding is None:
            return self._unbounded([values], emit_each=True)
        if self.rows:
            return self._bounded_rows([values], self.preceding)
        timers = ctx.timer_service()
        due = timers.current_processing_time() + 1
        waiting = self._pending.get(due)
        if waiting is None:
            waiting = []
            timers.register_processing_time_timer(due)
        waiting.append(values)
        self._pending.put(due, waiting)
        return ()

    def on_timer(self, timestamp: int, ctx: Any) -> tuple[Any, ...]:
        waiting = self._pending.get(timestamp)
        if waiting is None:
            return ()
        self._pending.remove(timestamp)
        if self.proctime:  # RANGE on processing time: the rows of timestamp - 1
            return self._bounded_range(timestamp - 1, waiting, self.preceding or 0)
        self._last.update(timestamp)
        if self.preceding is None:
            return self._unbounded(waiting)
        if self.rows:
            return self._bounded_rows(waiting, self.preceding)
        return self._bounded_range(timestamp, waiting, self.preceding)

    def _unbounded(self, waiting: list[list[Any]], emit_each: bool = False
                   ) -> tuple[Any, ...]:
        entry = self._history.value() or self._helper.create()
        out = []
        each = self.rows or emit_each
        for values in waiting:
            self._helper.accumulate(entry, values, new_row(values, INSERT))
            if each:
                out.append(new_row(values + self._helper.results(entry), INSERT))
        self._history.update(entry)
        if each:
            return tuple(out)
        results = self._helper.results(entry)
        return tuple(new_row(values + results, INSERT) for values in waiting)

    def _bounded_rows(self, waiting: list[list[Any]], preceding: int) -> tuple[Any, ...]:
        history: list[list[Any]] = self._history.value() or []
        out = []
        for values in waiting:
            frame = history[len(history) - preceding:] if preceding else []
            frame = [*frame, values]
            results = aggregate_rows(self.calls, [new_row(v, INSERT) for v in frame])
            out.append(new_row(values + results, INSERT))
            history.append(values)
        self._history.update(history[len(history) - preceding:] if preceding else [])
        return tuple(out)

    def _bounded_range(self, timestamp: int, waiting: list[list[Any]], preceding: int
                       ) -> tuple[Any, ...]:
        history: list[tuple[int, list[Any]]] = self._history.value() or []
        history = [(t, v) for t, v in history if t >= timestamp - preceding]
        history.extend((timestamp, values) for values in waiting)
        self._history.update(history)
        results = aggregate_rows(self.calls, [new_row(v, INSERT) for _, v in history])
        return tuple(new_row(values + results, INSERT) for values in waiting)
