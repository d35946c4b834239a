"""Row helpers shared by the changelog operators: building output rows quickly, telling
accumulate from retract messages, and the key selectors the planner keys a stream with.

Flink's vocabulary: INSERT and UPDATE_AFTER *accumulate* a row into a result, UPDATE_BEFORE and
DELETE *retract* it. The operators never mutate an input ``Row`` (a chained upstream operator
may hand the same object to another consumer): they read its values and build new rows.

``new_row(values, kind)`` builds a positional ``Row`` without ``Row.__init__``'s argument
checks; ``values`` becomes the row's own list (the caller hands over a fresh list).

Key selectors (used with ``key_by``): ``key_selector(indices)`` reads the fields out of the
row's value list (a ``FieldKeySelector``), so the key of one field is the bare value and of
several a tuple; with no fields (a global aggregation) every row has the key ``()``. Pure
functions, no state.

Bulk row building (issue 28's hot path): ``rows_of(value_lists, kind)``,
``rows_with_kinds(kinds, value_lists)`` and ``rows_from_codes(codes, kinds, value_lists)``
build a batch's rows at once; ``new_row`` one (``flintlock.common.row_batches``: C where the
optional accelerator was built, else Python twins with the same behaviour).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from flintlock.common.row_batches import (
    field_reader,
    new_row,
    rows_from_codes,
    rows_of,
    rows_with_kinds,
)
from flintlock.common.types import Row, RowKind
from flintlock.datastream.functions import KeySelector

INSERT = RowKind.INSERT
UPDATE_BEFORE = RowKind.UPDATE_BEFORE
UPDATE_AFTER = RowKind.UPDATE_AFTER
DELETE = RowKind.DELETE

__all__ = ["DELETE", "INSERT", "UPDATE_AFTER", "UPDATE_BEFORE", "FieldKeySelector",
           "is_accumulate", "key_selector", "kind_of", "new_row", "rows_from_codes", "rows_of",
           "rows_with_kinds", "values_of"]


def values_of(row: Row) -> list[Any]:
    """The row's value list itself (read it, never change it)."""
    return row._values


def kind_of(row: Row) -> RowKind:
    return row._row_kind


def is_accumulate(row: Row) -> bool:
    """INSERT or UPDATE_AFTER."""
    kind = row._row_kind
    return kind is INSERT or kind is UPDATE_AFTER


def _global_key(row: Any) -> tuple[()]:
    return ()


class FieldKeySelector(KeySelector):
    """The key of a row by field positions (what ``key_selector`` returns for fields): its
    ``get_key`` is the field reader itself, so the runtime calls it with no Python frame of
    this class; it pickles as its indices."""

    def __init__(self, indices: Sequence[int]) -> None:
        self.indices = tuple(indices)
        self.get_key = field_reader(self.indices)  # type: ignore[method-assign,assignment]

    def get_key(self, value: Any) -> Any:  # shadowed in __init__
        return field_reader(self.indices)(value)

    def __call__(self, value: Any) -> Any:
        return self.get_key(value)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (FieldKeySelector, (self.indices,))

    def __repr__(self) -> str:
        return f"FieldKeySelector({list(self.indices)})"


def key_selector(indices: Sequence[int]) -> Callable[[Any], Any]:
    """The key of a row by field positions: the bare value for one field, a tuple of values
    for several, ``()`` for none (picklable: a ``FieldKeySelector`` or a module function)."""
    if not indices:
        return _global_key
    return FieldKeySelector(indices)
