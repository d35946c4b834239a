"""Building batches of ``Row``s and reading key fields out of them: the Table layer's row hot
path (issue 28), shared by the changelog operators, the planner's compiled Calcs and the
changelog serializer of the exchange.

* ``new_row(values, kind)`` — one positional row over ``values`` (used as is, not copied), no
  field names; what ``types.row_of`` builds, without its optional field names.
* ``rows_of(value_lists, kind)`` — a batch of rows of one kind.
* ``rows_with_kinds(kinds, value_lists)`` — row i of kind ``kinds[i]``.
* ``rows_from_codes(codes, kinds, value_lists)`` — row i of kind ``kinds[codes[i]]`` (a
  ``bytes`` of indexes: the changelog serializer's wire form); ``ValueError`` for an unknown
  code or a length mismatch.
* ``split_rows(rows, kinds)`` — the inverse: ``(codes, value_lists)`` of a list of rows, or
  None when a record is not exactly a ``Row`` without field names whose kind is in ``kinds``.
* ``split_columns(rows, kinds)`` / ``rows_from_columns(codes, kinds, columns)`` — the same
  with the values as columns (rows of one width): the changelog serializer's wire form (a
  column unpickles at a quarter of the cost of a list per row).
* ``field_reader(indices)`` — ``row -> row._values[i]`` for one index, the tuple of the fields
  for several; any record that is not exactly a ``Row`` is indexed as ``record[i]``.

Where the optional C accelerator ``_crows.c`` was built (and ``FLINTLOCK_PURE_PYTHON`` is not
set: ``speedups``) each is a C routine: a row is one allocation and three pointer stores
instead of ``Row.__new__`` and three slot-descriptor calls (a quarter of the time or less,
benchmarks/table_sql_stages.py). Else the Python twins below run, with the same behaviour
(tests/unit/test_row_batches.py runs both). Pure functions; any thread.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable
from itertools import repeat
from types import ModuleType
from typing import Any

from flintlock.common.speedups import PURE_PYTHON_ENV
from flintlock.common.types import Row, RowKind

_SLOTS: dict[str, Any] = dict(vars(Row))
ROW_NEW = Row.__new__
SET_VALUES: Callable[[Row, list[Any]], None] = _SLOTS["_values"].__set__
SET_FIELDS: Callable[[Row, Any], None] = _SLOTS["_fields"].__set__
SET_KIND: Callable[[Row, RowKind], None] = _SLOTS["_row_kind"].__set__


def _new_row(values: list[Any], kind: RowKind) -> Row:
    row = ROW_NEW(Row)
    SET_VALUES(row, values)
    SET_FIELDS(row, None)
    SET_KIND(row, kind)
    return row


def _rows_of(value_lists: list[list[Any]], kind: RowKind) -> list[Row]:
    count = len(value_lists)
    rows = list(map(ROW_NEW, repeat(Row, count)))
    deque(map(SET_VALUES, rows, value_lists), 0)
    deque(map(SET_FIELDS, rows, repeat(None, count)), 0)
    deque(map(SET_KIND, rows, repeat(kind, count)), 0)
    return rows


def _rows_with_kinds(kinds: list[RowKind], value_lists: list[list[Any]]) -> list[Row]:
    if len(kinds) != len(value_lists):
        raise ValueError(f"{len(kinds)} row kinds for {len(value_lists)} rows")
    count = len(value_lists)
    rows = list(map(ROW_NEW, repeat(Row, count)))
    deque(map(SET_VALUES, rows, value_lists), 0)
    deque(map(SET_FIELDS, rows, repeat(None, count)), 0)
    deque(map(SET_KIND, rows, kinds), 0)
    return rows


def _rows_from_codes(codes: bytes, kinds: tuple[RowKind, ...],
                     value_lists: list[list[Any]]) -> list[Row]:
    if len(codes) != len(value_lists):
        raise ValueError(f"{len(codes)} row kinds for {len(value_lists)} rows")
    try:
        return _rows_with_kinds([kinds[code] for code in codes], value_lists)
    except IndexError:
        raise ValueError("an unknown row kind") from None


def _split_rows(rows: list[Any], kinds: tuple[RowKind, ...]
                ) -> tuple[bytes, list[list[Any]]] | None:
    codes = {kind: index for index, kind in enumerate(kinds)}
    try:
        if not all(type(r) is Row and r._fields is None for r in rows):
            return None
        return bytes([codes[r._row_kind] for r in rows]), [r._values for r in rows]
    except KeyError:
        return None


def _split_columns(rows: list[Any], kinds: tuple[RowKind, ...]
                   ) -> tuple[bytes, list[list[Any]]] | None:
    split = _split_rows(rows, kinds)
    if split is None or not split[1]:
        return None
    codes, lists = split
    width = len(lists[0]) if type(lists[0]) is list else -1
    if width < 0 or not all(type(v) is list and len(v) == width for v in lists):
        return None
    return codes, [list(column) for column in zip(*lists, strict=True)] if width else []


def _rows_from_columns(codes: bytes, kinds: tuple[RowKind, ...],
                       columns: list[list[Any]]) -> list[Row]:
    if not all(type(c) is list and len(c) == len(codes) for c in columns):
        raise ValueError(f"{len(codes)} row kinds for a column that is not a list of "
                         f"{len(codes)} values")
    lists = ([list(values) for values in zip(*columns, strict=True)] if columns
             else [[] for _ in codes])
    return _rows_from_codes(codes, kinds, lists)


def _load() -> ModuleType | None:
    if os.environ.get(PURE_PYTHON_ENV, "").strip().lower() in ("1", "true", "yes"):
        return None
    try:
        from flintlock.common import _crows
    except ImportError:
        return None
    _crows.bind(Row, _SLOTS["_values"], _SLOTS["_fields"], _SLOTS["_row_kind"])
    return _crows  # type: ignore[no-any-return]


accelerator: ModuleType | None = _load()
"""The compiled ``_crows`` module bound to ``Row``, or None (the Python twins are used)."""

new_row: Callable[[list[Any], RowKind], Row] = (
    accelerator.new_row if accelerator is not None else _new_row)
"""A positional row of ``values`` (used as is, not copied) with ``kind``."""
rows_of: Callable[[list[list[Any]], RowKind], list[Row]] = (
    accelerator.rows_of if accelerator is not None else _rows_of)
"""Rows of one kind over the value lists (each used as is)."""
rows_with_kinds: Callable[[list[RowKind], list[list[Any]]], list[Row]] = (
    accelerator.rows_with_kinds if accelerator is not None else _rows_with_kinds)
"""Row i of kind ``kinds[i]`` over value list i; ValueError if the lengths differ."""
rows_from_codes: Callable[[bytes, tuple[RowKind, ...], list[list[Any]]], list[Row]] = (
    accelerator.rows_from_codes if accelerator is not None else _rows_from_codes)
"""As ``rows_with_kinds``, row i's kind ``kinds[codes[i]]``; ValueError for an unknown code."""
split_rows: Callable[[list[Any], tuple[RowKind, ...]], tuple[bytes, list[list[Any]]] | None] = (
    accelerator.split_rows if accelerator is not None else _split_rows)
"""``(codes, value_lists)`` of plain rows whose kinds are in ``kinds``, else None."""
split_columns: Callable[[list[Any], tuple[RowKind, ...]],
                        tuple[bytes, list[list[Any]]] | None] = (
    accelerator.split_columns if accelerator is not None else _split_columns)
"""As ``split_rows``, the values as columns (``columns[j][i]`` field j of row i); None also
for no rows or rows of different widths."""
rows_from_columns: Callable[[bytes, tuple[RowKind, ...], list[list[Any]]], list[Row]] = (
    accelerator.rows_from_columns if accelerator is not None else _rows_from_columns)
"""The inverse of ``split_columns``; ValueError for a column of another length or an unknown
code."""


def _py_field_reader(indices: tuple[int, ...]) -> Callable[[Any], Any]:
    """The twin of ``FieldKey``: a function compiled for the indices."""
    reads = ", ".join(f"v[{i}]" for i in indices)
    items = ", ".join(f"row[{i}]" for i in indices)
    if len(indices) > 1:
        reads, items = f"({reads})", f"({items})"
    source = (f"def get_key(row):\n    if type(row) is Row:\n        v = row._values\n"
              f"        return {reads}\n    return {items}\n")
    namespace: dict[str, Any] = {"Row": Row}
    exec(compile(source, "<flintlock key selector>", "exec"), namespace)
    return namespace["get_key"]  # type: ignore[no-any-return]


def field_reader(indices: tuple[int, ...]) -> Callable[[Any], Any]:
    """``row -> field`` (one index) or the tuple of the fields (several; at least one)."""
    if not indices:
        raise ValueError("a field reader needs at least one index")
    if accelerator is not None:
        return accelerator.FieldKey(tuple(indices))  # type: ignore[no-any-return]
    return _py_field_reader(tuple(indices))


__all__ = ["accelerator", "field_reader", "new_row", "rows_from_codes", "rows_from_columns",
           "rows_of", "rows_with_kinds", "split_columns", "split_rows"]
