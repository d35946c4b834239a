"""Driving the changelog operators in unit tests: one keyed (co-)process function opened as a
task would open it (``flintlock.testing.operators.open_operator``) over an in-memory keyed
state backend, rows written as strings Flink prints (``+I[a, 1]``), and the changelog applied
to a multiset (a table) for the property tests."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from flintlock.common.operator_spec import OperatorKind, OperatorSpec
from flintlock.common.types import Row, RowKind
from flintlock.runtime.state.heap import HeapKeyedStateBackend
from flintlock.runtime.state.keygroups import KeyGroupRange
from flintlock.testing.operators import ManualTimers, MemoryStateWriter, open_operator

KINDS = {"+I": RowKind.INSERT, "-U": RowKind.UPDATE_BEFORE, "+U": RowKind.UPDATE_AFTER,
         "-D": RowKind.DELETE}


def r(kind: str, *values: Any) -> Row:
    """``r("+I", "a", 1)``: a row of that kind."""
    return Row.of_kind(KINDS[kind], *values)


def show(row: Row) -> str:
    """Flink's print form, null for None."""
    inner = ", ".join("null" if v is None else str(v) for v in row)
    return f"{row.get_row_kind().short_string()}[{inner}]"


def backend() -> HeapKeyedStateBackend:
    return HeapKeyedStateBackend(KeyGroupRange(0, 127), 128)


class Harness:
    """One open operator around ``function``; ``feed`` returns what one call emitted."""

    def __init__(self, function: Any, keys: Sequence[Callable[[Any], Any]],
                 state: HeapKeyedStateBackend | None = None, restored: Any = False,
                 timers: ManualTimers | None = None) -> None:
        self.backend = state or backend()
        self.timers = timers or ManualTimers()
        kind = OperatorKind.KEYED_PROCESS if len(keys) == 1 else OperatorKind.KEYED_CO_PROCESS
        spec = OperatorSpec(kind, function=function, keyed=True)
        self.operator, self.out = open_operator(
            spec, keyed_backend=self.backend, key_selectors=tuple(keys), restored=restored,
            timers=self.timers)
        self._seen = 0

    def feed(self, *rows: Row, side: int = 0) -> list[str]:
        if side == 0:
            self.operator.process_batch(list(rows))
        else:
            self.operator.process_batch2(list(rows))
        values = self.out.values()[self._seen:]
        self._seen += len(values)
        return [show(v) for v in values]

    def watermark(self, timestamp: int) -> list[str]:
        """Passes a watermark (firing due event-time timers); what that emitted."""
        self.operator.process_watermark(timestamp)
        values = self.out.values()[self._seen:]
        self._seen += len(values)
        return [show(v) for v in values]

    def rows(self) -> list[Row]:
        return self.out.values()

    def snapshot(self) -> tuple[Any, MemoryStateWriter]:
        snapshot = self.backend.snapshot()
        writer = MemoryStateWriter()
        return snapshot.write(writer, "keyed"), writer


def freeze(values: Iterable[Any]) -> tuple[Any, ...]:
    """Values as a hashable tuple (a multiset value, a dict, as a frozenset of its items)."""
    return tuple(frozenset(v.items()) if isinstance(v, dict) else v for v in values)


def apply_changelog(rows: Iterable[Row]) -> Counter[tuple[Any, ...]]:
    """The table a changelog describes, as a multiset of value tuples; a retraction of a row
    that is not in the table fails the test."""
    table: Counter[tuple[Any, ...]] = Counter()
    for row in rows:
        values = freeze(row)
        if row.get_row_kind() in (RowKind.INSERT, RowKind.UPDATE_AFTER):
            table[values] += 1
        else:
            assert table[values] > 0, f"retraction of a row not in the table: {show(row)}"
            table[values] -= 1
            if not table[values]:
                del table[values]
    return table


def apply_upserts(rows: Iterable[Row], key: Callable[[tuple[Any, ...]], Any]) -> dict[Any, Any]:
    """The table an upsert changelog (no -U needed) describes: key -> row values."""
    table: dict[Any, Any] = {}
    for row in rows:
        values = tuple(row)
        if row.get_row_kind() in (RowKind.INSERT, RowKind.UPDATE_AFTER):
            table[key(values)] = values
        else:
            table.pop(key(values), None)
    return table
