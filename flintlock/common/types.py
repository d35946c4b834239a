"""``Row`` and ``RowKind``: PyFlink's record type with positional and (optionally) named fields.

A ``Row`` holds a list of values, optionally the names of those fields, and a ``RowKind``
(the change-log flag, ``INSERT`` by default). It behaves as PyFlink's:

* ``Row(1, "a")`` — positional; ``Row(id=1, name="a")`` — named, in the order given;
  mixing both is an error.
* ``Row("id", "name")`` used as a factory: ``Person = Row("id", "name"); Person(1, "a")`` builds
  ``Row(id=1, name="a")``.
* ``row[0]``, ``row[1:]``, ``row["name"]``, ``row.name``; ``len``, iteration, ``in``.
* Equality compares values and row kind; two named rows are equal when they hold the same
  field → value pairs, in any field order; equal rows hash alike (so rows work as keys).
* Rows are read-only through attributes (``row.x = 1`` fails, as in PyFlink); ``row[i] = v``
  assigns a field.
* Pickling keeps values, names and kind (a row crosses process boundaries between subtasks).

No I/O; no shared state. User code, operators and the print sink use it.
"""

from __future__ import annotations

import enum
import gc
from collections.abc import Iterator, Sequence
from typing import Any


class RowKind(enum.Enum):
    """The change a row describes in a change-log stream."""

    INSERT = 0
    UPDATE_BEFORE = 1
    UPDATE_AFTER = 2
    DELETE = 3

    def short_string(self) -> str:
        return _SHORT_STRINGS[self]

    def __str__(self) -> str:
        return self.short_string()


_SHORT_STRINGS = {
    RowKind.INSERT: "+I",
    RowKind.UPDATE_BEFORE: "-U",
    RowKind.UPDATE_AFTER: "+U",
    RowKind.DELETE: "-D",
}
_INTERNAL = frozenset({"_values", "_fields", "_row_kind"})
_KINDS = tuple(RowKind)  # by value: RowKind(v) is _KINDS[v]


def row_of(values: list[Any], kind: RowKind = RowKind.INSERT,
           fields: list[str] | None = None) -> Row:
    """A row over ``values`` (taken, not copied) without ``Row.__init__``'s argument handling:
    the Table layer's compiled projections build one row per record with it (the slots are
    set through their descriptors, bound once below: no attribute lookup per call)."""
    row = _new(Row)
    _set_values(row, values)
    _set_fields(row, fields)
    _set_kind(row, kind)
    return row


def _track_again(row: Row) -> None:
    """Puts a row the C accelerator built untracked (over values that hold no container:
    ``common/_crows.c``) back on the cycle collector's lists, now that it holds a container
    that may refer back to it (issue 28)."""
    import flintlock.common._crows as crows  # built, since it untracked the row

    crows.track_row(row)


def _rebuild_row(values: list[Any], fields: list[str] | None, kind_value: int) -> Row:
    """What a pickled row is rebuilt with (the signature is part of the savepoint format: rows
    in state were pickled with it). Builds the row directly, without ``Row.__init__``."""
    if fields is not None and len(fields) != len(values):
        raise ValueError(f"{len(fields)} field names for a Row of {len(values)} fields")
    return row_of(values if type(values) is list else list(values), _KINDS[kind_value],
                  fields)


class Row:
    """A record of positional, optionally named, fields with a row kind."""

    __slots__ = ("_fields", "_row_kind", "_values")

    _values: list[Any]
    _fields: list[str] | None
    _row_kind: RowKind

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if args and kwargs:
            raise ValueError("a Row takes either positional values or named values, not both")
        object.__setattr__(self, "_row_kind", RowKind.INSERT)
        if kwargs:
            object.__setattr__(self, "_fields", list(kwargs))
            object.__setattr__(self, "_values", list(kwargs.values()))
        else:
            object.__setattr__(self, "_fields", None)
            object.__setattr__(self, "_values", list(args))

    # -- PyFlink's methods ----------------------------------------------------------------

    def as_dict(self, recursive: bool = False) -> dict[str, Any]:
        """Field name → value; a row without field names cannot be converted."""
        if self._fields is None:
            raise TypeError("as_dict() needs a Row with field names, e.g. Row(a=1, b=2)")
        if not recursive:
            return dict(zip(self._fields, self._values, strict=True))
        return {name: _as_plain(value) for name, value in zip(
            self._fields, self._values, strict=True)}

    def get_row_kind(self) -> RowKind:
        return self._row_kind

    @staticmethod
    def of_kind(row_kind: RowKind, *args: Any, **kwargs: Any) -> Row:
        """A row of the given kind (PyFlink's ``Row.of_kind``)."""
        row = Row(*args, **kwargs)
        row.set_row_kind(row_kind)
        return row

    def set_row_kind(self, row_kind: RowKind) -> None:
        if not isinstance(row_kind, RowKind):
            raise TypeError(f"row_kind must be a RowKind, got {row_kind!r}")
        object.__setattr__(self, "_row_kind", row_kind)

    def set_field_names(self, field_names: Sequence[str]) -> None:
        names = list(field_names)
        if len(names) != len(self._values):
            raise ValueError(
                f"{len(names)} field names given for a Row of {len(self._values)} fields"
            )
        object.__setattr__(self, "_fields", names)

    def get_field_names(self) -> list[str] | None:
        return None if self._fields is None else list(self._fields)

    def get_fields_by_names(self, names: Sequence[str]) -> list[Any]:
        return [self[name] for name in names]

    # -- factory use: Row("a", "b")(1, 2) ------------------------------------------------

    def __call__(self, *args: Any) -> Row:
        if len(args) > len(self._values):
            raise ValueError(f"too many values: expected at most {len(self._values)}, "
                             f"got {len(args)}")
        row = Row(*args)
        row.set_field_names([str(name) for name in self._values[: len(args)]])
        return row

    # -- access ---------------------------------------------------------------------------

    def _index_of(self, name: str) -> int:
        if self._fields is None or name not in self._fields:
            raise KeyError(name)
        return self._fields.index(name)

    def __getitem__(self, item: int | slice | str) -> Any:
        if isinstance(item, str):
            return self._values[self._index_of(item)]
        return self._values[item]

    def __setitem__(self, item: int | str, value: Any) -> None:
        index = self._index_of(item) if isinstance(item, str) else item
        self._values[index] = value
        if gc.is_tracked(value) and not gc.is_tracked(self):
            _track_again(self)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in _INTERNAL:
            raise AttributeError(name)
        try:
            return self._values[self._index_of(name)]
        except KeyError:
            raise AttributeError(f"Row has no field {name!r}") from None

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Row is read-only; assign a field with row[index] = value")

    def __contains__(self, item: object) -> bool:
        if self._fields is not None:
            return item in self._fields
        return item in self._values

    def __iter__(self) -> Iterator[Any]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    # -- value semantics ------------------------------------------------------------------

    def _comparable(self) -> tuple[Any, ...]:
        if self._fields is None:
            return (None, tuple(self._values))
        return (tuple(sorted(self._fields)), tuple(
            self._values[self._fields.index(name)] for name in sorted(self._fields)))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Row):
            return NotImplemented
        return self._row_kind is other._row_kind and self._comparable() == other._comparable()

    def __hash__(self) -> int:
        return hash(self._comparable())

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (_rebuild_row, (self._values, self._fields, self._row_kind.value))

    def __repr__(self) -> str:
        if self._fields is not None:
            inner = ", ".join(f"{name}={value!r}" for name, value in zip(
                self._fields, self._values, strict=True))
            return f"Row({inner})"
        return "<Row({})>".format(", ".join(repr(value) for value in self._values))

    def to_print_string(self) -> str:
        """How the print sink shows a row of a declared ROW type: ``+I[1, a]``."""
        return "{}[{}]".format(self._row_kind.short_string(),
                               ", ".join(str(value) for value in self._values))


_new = object.__new__
_set_values = vars(Row)["_values"].__set__  # the slots' member descriptors
_set_fields = vars(Row)["_fields"].__set__
_set_kind = vars(Row)["_row_kind"].__set__


def _as_plain(value: Any) -> Any:
    if isinstance(value, Row):
        return value.as_dict(True) if value._fields is not None else list(value)
    if isinstance(value, list):
        return [_as_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: _as_plain(item) for key, item in value.items()}
    return value
