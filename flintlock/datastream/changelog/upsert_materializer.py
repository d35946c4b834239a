"""Flink's ``SinkUpsertMaterializer``: put before a sink with a primary key when the changelog's
own unique key is not that primary key, so that the sink, which sees only the latest row per
primary key, still ends with the right row after retractions arrive out of order.

Keyed by the sink's primary key. State per key (a ``ValueState``): the list of rows (value
tuples) currently holding that key, in arrival order. For an input row:

* +I / +U: with ``upsert_key`` (the input's unique key fields), a row with the same upsert
  key is replaced in place, otherwise the row is appended; without one it is always
  appended. Emitted as +I when the list was empty before, else +U.
* -U / -D: the first row equal to it (on the upsert key if given, else on all fields) is
  removed; none: nothing happens (Flink logs that the state was cleared). The list now empty:
  ``-D`` of the input row, state cleared; the removed row was the last one: ``+U`` of the new
  last row; otherwise nothing (the sink still shows the right row).

Constructor: ``SinkUpsertMaterializer(upsert_key=None, state_retention_ms=0)``. Key the input
with ``rows.key_selector(primary_key_fields)``. The task thread owns it once opened.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flintlock.common.state import StateTtlConfig, ValueStateDescriptor
from flintlock.datastream.changelog.rows import (
    DELETE,
    INSERT,
    UPDATE_AFTER,
    new_row,
)
from flintlock.datastream.functions import KeyedProcessFunction, RuntimeContext


class SinkUpsertMaterializer(KeyedProcessFunction):
    """Materialises a changelog per sink primary key; see the module docstring."""

    def __init__(self, upsert_key: Sequence[int] | None = None,
                 state_retention_ms: int = 0) -> None:
        self.upsert_key = tuple(upsert_key) if upsert_key is not None else None
        self.state_retention_ms = state_retention_ms

    def open(self, runtime_context: RuntimeContext) -> None:
        descriptor = ValueStateDescriptor("values")
        if self.state_retention_ms > 0:
            descriptor.enable_time_to_live(
                StateTtlConfig.new_builder(self.state_retention_ms).build())
        self._state = runtime_context.get_state(descriptor)

    def _find(self, rows: list[tuple[Any, ...]], values: tuple[Any, ...]) -> int:
        if self.upsert_key is None:
            for index, row in enumerate(rows):
                if row == values:
                    return index
            return -1
        wanted = [values[i] for i in self.upsert_key]
        for index, row in enumerate(rows):
            if [row[i] for i in self.upsert_key] == wanted:
                return index
        return -1

    def process_element(self, value: Any, ctx: Any) -> tuple[Any, ...]:
        rows = list(self._state.value() or ())
        values = tuple(value._values)
        kind = value._row_kind
        if kind is INSERT or kind is UPDATE_AFTER:
            out_kind = INSERT if not rows else UPDATE_AFTER
            index = self._find(rows, values) if self.upsert_key is not None else -1
            if index == -1:
                rows.append(values)
            else:
                rows[index] = values
            self._state.update(rows)
            return (new_row(list(values), out_kind),)
        last = len(rows) - 1
        index = self._find(rows, values)
        if index == -1:
            return ()
        del rows[index]
        if not rows:
            self._state.clear()
            return (new_row(list(values), DELETE),)
        self._state.update(rows)
        if index == last:
            return (new_row(list(rows[-1]), UPDATE_AFTER),)
        return ()
