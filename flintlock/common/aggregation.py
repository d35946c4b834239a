"""Built-in keyed aggregations (``KeyedStream.sum/min/max/min_by/max_by``) with Flink's
semantics, as one ``reduce(accumulator, value)``.

``field`` is a position (tuples, lists, rows) or a name (rows with field names, dicts);
position 0 on a scalar record means the record itself. SUM/MIN/MAX keep the other fields of
the key's first record and replace the aggregated field; MIN_BY/MAX_BY keep the whole record
holding the extreme value (the earlier one on ties). Tuples yield new tuples; lists, dicts and
rows are copied, never mutated in place.

Design note: ``reduce`` runs once per record, so it must cost about what a user's lambda
costs. The general implementation inspects the record's shape on every call (~1 µs); instead,
``reduce`` keeps one function per accumulator type, specialised on first use: for plain tuples
and scalars a single slice-and-add or compare; anything else (rows, lists, dicts, named
tuples) takes the general path. The cache is per ``Aggregation`` object, never pickled, and
filled idempotently, so concurrent subtask threads sharing one object at worst compute the
same entry twice.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import operator
from collections.abc import Callable
from typing import Any

from flintlock.common.types import Row

Reducer = Callable[[Any, Any], Any]


class AggregationKind(enum.Enum):
    SUM = "sum"
    MIN = "min"
    MAX = "max"
    MIN_BY = "min_by"
    MAX_BY = "max_by"


@dataclasses.dataclass(frozen=True)
class Aggregation:
    """A built-in keyed aggregation over one field (see the module docstring)."""

    kind: AggregationKind
    field: int | str = 0
    _reducers: dict[type, Reducer] = dataclasses.field(
        default_factory=dict, init=False, repr=False, compare=False)

    def reduce(self, accumulator: Any, value: Any) -> Any:
        reducer = self._reducers.get(type(accumulator))
        if reducer is None:
            reducer = _specialise(self.kind, self.field, type(accumulator))
            self._reducers[type(accumulator)] = reducer
        return reducer(accumulator, value)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (Aggregation, (self.kind, self.field))


def _specialise(kind: AggregationKind, position: int | str, record_type: type) -> Reducer:
    if record_type is tuple and isinstance(position, int) and position >= 0:
        return _tuple_reducer(kind, position)
    if not issubclass(record_type, (tuple, list, Row, dict)) and position in (0, "0"):
        return _SCALAR[kind]
    return functools.partial(_general_reduce, kind, position)


def _tuple_reducer(kind: AggregationKind, p: int) -> Reducer:
    after = p + 1
    if kind is AggregationKind.SUM:
        return lambda acc, value: (*acc[:p], acc[p] + value[p], *acc[after:])
    if kind is AggregationKind.MIN:
        return lambda acc, value: acc if not value[p] < acc[p] else (
            *acc[:p], value[p], *acc[after:])
    if kind is AggregationKind.MAX:
        return lambda acc, value: acc if not value[p] > acc[p] else (
            *acc[:p], value[p], *acc[after:])
    if kind is AggregationKind.MIN_BY:
        return lambda acc, value: value if value[p] < acc[p] else acc
    return lambda acc, value: value if value[p] > acc[p] else acc


_SCALAR: dict[AggregationKind, Reducer] = {
    AggregationKind.SUM: operator.add,
    AggregationKind.MIN: lambda acc, value: value if value < acc else acc,
    AggregationKind.MAX: lambda acc, value: value if value > acc else acc,
    AggregationKind.MIN_BY: lambda acc, value: value if value < acc else acc,
    AggregationKind.MAX_BY: lambda acc, value: value if value > acc else acc,
}


def _general_reduce(kind: AggregationKind, position: int | str, accumulator: Any,
                    value: Any) -> Any:
    current, new = _field(accumulator, position), _field(value, position)
    if kind is AggregationKind.SUM:
        return _with_field(accumulator, position, current + new)
    if kind is AggregationKind.MIN:
        return accumulator if not new < current else _with_field(accumulator, position, new)
    if kind is AggregationKind.MAX:
        return accumulator if not new > current else _with_field(accumulator, position, new)
    if kind is AggregationKind.MIN_BY:
        return value if new < current else accumulator
    return value if new > current else accumulator


def _is_composite(record: Any) -> bool:
    return isinstance(record, (tuple, list, Row, dict))


def _field(record: Any, position: int | str) -> Any:
    if not _is_composite(record):
        if position not in (0, "0"):
            raise TypeError(f"field {position!r} selected on a scalar record {record!r}; only "
                            "field 0 (the record itself) can be")
        return record
    return record[position]


def _with_field(record: Any, position: int | str, value: Any) -> Any:
    if not _is_composite(record):
        return value
    if isinstance(record, tuple):
        items = list(record)
        items[position] = value  # type: ignore[index]
        return type(record)(items) if type(record) is tuple else type(record)(*items)
    if isinstance(record, Row):
        copy = Row(*record)
        names = record.get_field_names()
        if names is not None:
            copy.set_field_names(names)
        copy.set_row_kind(record.get_row_kind())
        copy[position] = value
        return copy
    copied = record.copy()
    copied[position] = value
    return copied
