"""Deduplication on processing-time order (``ROW_NUMBER() OVER (PARTITION BY k ORDER BY
proctime [DESC]) = 1``) and changelog normalisation: Flink's
``ProcTimeDeduplicateKeepFirstRowFunction``, ``ProcTimeDeduplicateKeepLastRowFunction`` and
the keep-last-row-on-changelog logic of ``ChangelogNormalize``, as ``KeyedProcessFunction``s
keyed by the deduplication key. Records arrive in processing-time order, so the first and
last arrivals are the first and last rows.

* ``KeepFirstRowFunction()``: insert-only input; per key a flag in a ``ValueState``; the
  first row is forwarded (+I), every later one dropped. Output: insert-only.
* ``KeepLastRowFunction(generate_update_before=True, generate_insert=True,
  state_retention_ms=0)``: insert-only input; per key the last row (its values) in a
  ``ValueState``. The first row of a key is emitted as +I, every later one as +U, preceded by
  -U of the previous row with ``generate_update_before``; a row equal to the previous one is
  dropped (Flink 2.3's equaliser; not when a state retention is set). With neither UPDATE_BEFORE nor
  INSERT wanted (an upsert sink, Flink's
  ``table.exec.deduplicate.insert-update-after-sensitive-enabled`` off) every row is a +U
  and no state is kept.
* ``ChangelogNormalizeFunction(generate_update_before=True, state_retention_ms=0)``: an
  upsert (or any keyed) changelog in, a complete changelog out: +I/+U for a key without state
  -> +I; for a key with a different previous row -> (-U previous) +U; the same row again ->
  nothing (unless a state retention is set); -U/-D -> -D of the stored row (the full row, the
  input may carry only the key), state cleared; a deletion of an unknown key -> nothing.

Key the input with ``rows.key_selector(dedup_key_fields)``. Non-INSERT input to the
insert-only variants raises ``NotInsertOnlyError``. The task thread owns a function once opened.
"""

from __future__ import annotations

from typing import Any

from flintlock.common.state import StateTtlConfig, ValueStateDescriptor
from flintlock.datastream.changelog.errors import NotInsertOnlyError
from flintlock.datastream.changelog.rows import (
    DELETE,
    INSERT,
    UPDATE_AFTER,
    UPDATE_BEFORE,
    new_row,
)
from flintlock.datastream.functions import KeyedProcessFunction, RuntimeContext


def _state(runtime_context: RuntimeContext, name: str, retention_ms: int) -> Any:
    descriptor = ValueStateDescriptor(name)
    if retention_ms > 0:
        descriptor.enable_time_to_live(StateTtlConfig.new_builder(retention_ms).build())
    return runtime_context.get_state(descriptor)


class KeepFirstRowFunction(KeyedProcessFunction):
    """Keep the first row per key; see the module docstring."""

    def __init__(self, state_retention_ms: int = 0) -> None:
        self.state_retention_ms = state_retention_ms

    def open(self, runtime_context: RuntimeContext) -> None:
        self._seen = _state(runtime_context, "existsState", self.state_retention_ms)

    def process_element(self, value: Any, ctx: Any) -> tuple[Any, ...]:
        if value._row_kind is not INSERT:
            raise NotInsertOnlyError(type(self).__name__, value._row_kind.name)
        if self._seen.value() is not None:
            return ()
        self._seen.update(True)
        return (value,)


class KeepLastRowFunction(KeyedProcessFunction):
    """Keep the last row per key over an insert-only input; see the module docstring."""

    def __init__(self, generate_update_before: bool = True, generate_insert: bool = True,
                 state_retention_ms: int = 0) -> None:
        self.generate_update_before = generate_update_before
        self.generate_insert = generate_insert
        self.state_retention_ms = state_retention_ms

    def open(self, runtime_context: RuntimeContext) -> None:
        self._last = _state(runtime_context, "preRowState", self.state_retention_ms)

    def process_element(self, value: Any, ctx: Any) -> tuple[Any, ...]:
        if value._row_kind is not INSERT:
            raise NotInsertOnlyError(type(self).__name__, value._row_kind.name)
        values = list(value._values)
        if not (self.generate_update_before or self.generate_insert):
            return (new_row(values, UPDATE_AFTER),)
        previous = self._last.value()
        self._last.update(tuple(values))
        if previous is None:
            return (new_row(values, INSERT),)
        if self.state_retention_ms <= 0 and list(previous) == values:
            return ()
        if self.generate_update_before:
            return (new_row(list(previous), UPDATE_BEFORE), new_row(values, UPDATE_AFTER))
        return (new_row(values, UPDATE_AFTER),)


class ChangelogNormalizeFunction(KeyedProcessFunction):
    """Keep the last row per key over a changelog; see the module docstring."""

    def __init__(self, generate_update_before: bool = True, state_retention_ms: int = 0) -> None:
        self.generate_update_before = generate_update_before
        self.state_retention_ms = state_retention_ms

    def open(self, runtime_context: RuntimeContext) -> None:
        self._last = _state(runtime_context, "preRowState", self.state_retention_ms)

    def process_element(self, value: Any, ctx: Any) -> tuple[Any, ...]:
        previous = self._last.value()
        kind = value._row_kind
        if kind is INSERT or kind is UPDATE_AFTER:
            values = tuple(value._values)
            self._last.update(values)
            if previous is None:
                return (new_row(list(values), INSERT),)
            if self.state_retention_ms <= 0 and previous == values:
                return ()
            if self.generate_update_before:
                return (new_row(list(previous), UPDATE_BEFORE),
                        new_row(list(values), UPDATE_AFTER))
            return (new_row(list(values), UPDATE_AFTER),)
        if previous is None:
            return ()
        self._last.clear()
        return (new_row(list(previous), DELETE),)
