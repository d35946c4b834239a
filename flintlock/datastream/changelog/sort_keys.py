"""Sort keys for Top-N: ``ORDER BY`` fields with directions and null ordering, turned into a
plain Python value that sorts ascending in the requested order and can key a dict.

``sort_key_selector(fields, ascending, nulls_first)`` returns ``row -> key``; the key is a
flat tuple (flag, value, flag, value...) where the flag puts nulls before (0) or after (2)
the non-null values (1), and a descending value is negated (numbers) or wrapped in ``Desc``
(anything else ordered by ``<``). Flink's default null order is the one that treats null as
the smallest value: NULLS FIRST for ASC, NULLS LAST for DESC (``nulls_first=None``).

A planner with its own comparator can pass any ``row -> key`` callable to the Top-N functions
instead, as long as the keys are hashable, totally ordered and equal exactly when Flink's
comparator says 0.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from decimal import Decimal
from functools import total_ordering
from typing import Any

from flintlock.datastream.changelog.errors import InvalidOperatorArgumentError

_NEGATABLE = frozenset({int, float, Decimal, bool})


@total_ordering
class Desc:
    """A value that sorts in reverse."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __lt__(self, other: Desc) -> bool:
        return bool(other.value < self.value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Desc) and self.value == other.value

    def __hash__(self) -> int:
        return hash(self.value)

    def __reduce__(self) -> tuple[Any, tuple[Any]]:
        return (Desc, (self.value,))

    def __repr__(self) -> str:
        return f"Desc({self.value!r})"


def _descending(value: Any) -> Any:
    return -value if type(value) in _NEGATABLE else Desc(value)


class SortKeySelector:
    """``row -> sort key`` (see the module docstring); picklable."""

    def __init__(self, fields: Sequence[int], ascending: Sequence[bool],
                 nulls_first: Sequence[bool | None] | None = None) -> None:
        if len(ascending) != len(fields):
            raise InvalidOperatorArgumentError("sort key", "one direction per field is needed")
        nulls = list(nulls_first) if nulls_first is not None else [None] * len(fields)
        if len(nulls) != len(fields):
            raise InvalidOperatorArgumentError("sort key", "one null order per field is needed")
        self.fields = tuple(fields)
        self.ascending = tuple(ascending)
        self.null_flags = tuple(
            (0 if (asc if first is None else first) else 2)
            for asc, first in zip(self.ascending, nulls, strict=True))

    def __call__(self, row: Any) -> tuple[Any, ...]:
        key: list[Any] = []
        for field, asc, null_flag in zip(self.fields, self.ascending, self.null_flags,
                                         strict=True):
            value = row[field]
            if value is None:
                key += (null_flag, None)
            else:
                key += (1, value if asc else _descending(value))
        return tuple(key)


def sort_key_selector(fields: Sequence[int], ascending: Sequence[bool],
                      nulls_first: Sequence[bool | None] | None = None
                      ) -> Callable[[Any], tuple[Any, ...]]:
    """The sort key of ``ORDER BY fields`` with these directions and null orders."""
    return SortKeySelector(fields, ascending, nulls_first)
