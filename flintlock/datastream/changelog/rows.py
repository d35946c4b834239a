"""Row helpers shared by the changelog operators: building output rows quickly, telling
accumulate from retract messages, and the key selectors the planner keys a stream with.

Flink's vocabulary: INSERT and UPDATE_AFTER *accumulate* a row into a result, UPDATE_BEFORE and
DELETE *retract* it. The operators never mutate an input ``Row`` (a chained upstream operator
may hand the same object to another consumer): they read its values and build new rows.

``new_row(values, kind)`` builds a positional ``Row`` without ``Row.__init__``'s argument
checks; ``values`` becomes the row's own list (the caller hands over a fresh list).

Key selectors (used with ``key_by``): ``key_selector(indices)`` is ``operator.itemgetter``
over the fields, so the key of one field is the bare value and of several a tuple; with no
fields (a global aggregation) every row has the key ``()``. Pure functions, no state.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

from flintlock.common.types import Row, RowKind

INSERT = RowKind.INSERT
UPDATE_BEFORE = RowKind.UPDATE_BEFORE
UPDATE_AFTER = RowKind.UPDATE_AFTER
DELETE = RowKind.DELETE

# Row's slot descriptors: setting a slot through them costs less than half of
# ``object.__setattr__`` (measured), and a changelog operator builds one row per output.
_SLOTS: dict[str, Any] = dict(vars(Row))
ROW_NEW = Row.__new__
SET_VALUES: Callable[[Row, list[Any]], None] = _SLOTS["_values"].__set__
SET_FIELDS: Callable[[Row, Any], None] = _SLOTS["_fields"].__set__
SET_KIND: Callable[[Row, RowKind], None] = _SLOTS["_row_kind"].__set__


def new_row(values: list[Any], kind: RowKind) -> Row:
    """A positional row of ``values`` (used as is, not copied) with ``kind``."""
    row = ROW_NEW(Row)
    SET_VALUES(row, values)
    SET_FIELDS(row, None)
    SET_KIND(row, kind)
    return row


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


def key_selector(indices: Sequence[int]) -> Callable[[Any], Any]:
    """The key of a row by field positions: the bare value for one field, a tuple of values
    for several, ``()`` for none (picklable: an ``itemgetter`` or a module function)."""
    if not indices:
        return _global_key
    return operator.itemgetter(*indices)
