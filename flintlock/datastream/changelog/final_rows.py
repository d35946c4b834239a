"""The final table of a changelog, emitted at the end of bounded input (BATCH execution).

A BATCH job of the Table layer writes only final results: a GROUP BY's last value per key,
never its updates. flintlock's relational operators always emit changes; in BATCH mode the
planner puts this function before each sink and before a collected result: it applies every
change to a multiset of rows (a ``MapState`` from the row's values to their count) and, when
the input ends (the final watermark fires its event-time timer), emits what remains as +I
rows, each as often as it is counted, in the order the rows were first inserted — or sorted,
with an offset and a fetch, for a BATCH ``ORDER BY ... LIMIT``.

Keyed by the constant ``()`` (one subtask holds the whole table); built by the planner, owned
by the task thread once opened.
"""

from __future__ import annotations

from typing import Any

from flintlock.common.state import MapStateDescriptor, ValueStateDescriptor
from flintlock.common.types import RowKind, row_of
from flintlock.datastream.changelog.errors import ChangelogError
from flintlock.datastream.functions import KeyedProcessFunction, RuntimeContext

END_OF_INPUT = (1 << 63) - 1
"""The final watermark's timestamp: a timer here fires when bounded input ends."""


class RetractionOfUnknownRowError(ChangelogError, ValueError):
    """A changelog retracted a row that was never inserted (an inconsistent input)."""


class FinalRowsFunction(KeyedProcessFunction):
    """``order``: a sort key of a row (``sort_keys.SortKeySelector``) to emit the final rows
    sorted (BATCH ``ORDER BY``), then ``offset`` rows skipped and at most ``fetch`` emitted."""

    def __init__(self, order: Any = None, offset: int = 0, fetch: int | None = None) -> None:
        self.order = order
        self.offset = offset
        self.fetch = fetch

    def open(self, runtime_context: RuntimeContext) -> None:
        self._counts = runtime_context.get_map_state(MapStateDescriptor("final-rows", None, None))
        self._armed = runtime_context.get_state(ValueStateDescriptor("final-rows-armed", None))

    def process_element(self, value: Any, ctx: Any) -> None:
        if self._armed.value() is None:
            ctx.timer_service().register_event_time_timer(END_OF_INPUT)
            self._armed.update(True)
        row = tuple(value._values)
        kind = value._row_kind
        count = self._counts.get(row) or 0
        if kind is RowKind.INSERT or kind is RowKind.UPDATE_AFTER:
            self._counts.put(row, count + 1)
        elif count == 0:
            raise RetractionOfUnknownRowError(f"a changelog retracted {row!r}, never inserted")
        elif count == 1:
            self._counts.remove(row)
        else:
            self._counts.put(row, count - 1)

    def on_timer(self, timestamp: int, ctx: Any) -> list[Any]:
        out: list[Any] = []
        for row, count in list(self._counts.items()):
            out.extend(row_of(list(row)) for _ in range(count))
        self._counts.clear()
        if self.order is not None:
            out.sort(key=self.order)
        end = None if self.fetch is None else self.offset + self.fetch
        return out[self.offset:end] if self.offset or end is not None else out
