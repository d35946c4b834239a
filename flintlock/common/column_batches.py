"""A decoded changelog batch kept as columns: the group aggregation's input without a row
object per record (issue 28).

``ColumnBatch(kinds, columns)`` is what the changelog serializer's wire form holds (``kinds`` a
``bytes`` of ``RowKind`` values, one per row; ``columns[j][i]`` field j of row i) before the
rows are built. An input whose head operator reads columns (``takes_column_batches``: the
keyed batch operator of a group aggregation) gets its batches in this form; the aggregation's
C kernel reads them directly (``GroupAggKernel.columns``), so the rows the decoder used to
build and the kernel used to drop are never made. Anything else asks for ``rows()``.

It behaves as the list of rows it stands for where the task's input side uses a batch:
``len``, a slice (columns sliced, still a ``ColumnBatch``), an index (one ``Row``, built),
iteration (over ``rows()``), ``extend`` (a buffer of several chunks) and pickling (as the rows
it holds: a checkpoint's in-flight data reads back anywhere). Once extended with anything but
a batch of the same width it holds its rows instead (``columns`` None) and stays a correct, if
no longer columnar, batch.

Owned by the task thread that decoded it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, overload

from flintlock.common.row_batches import new_row, rows_from_columns
from flintlock.common.types import Row, RowKind

KINDS: tuple[RowKind, ...] = tuple(RowKind)
"""What a code of ``kinds`` indexes (the changelog serializer's wire codes)."""


def rows_of_columns(kinds: bytes, columns: list[list[Any]]) -> list[Row]:
    """The rows of a batch as columns (``row_batches.rows_from_columns``)."""
    return rows_from_columns(kinds, KINDS, columns)


class ColumnBatch:
    """A batch of changelog rows as their kinds and columns (see the module docstring)."""

    __slots__ = ("_rows", "columns", "kinds")

    def __init__(self, kinds: bytes, columns: list[list[Any]]) -> None:
        self.kinds = kinds
        self.columns: list[list[Any]] | None = columns
        self._rows: list[Any] | None = None

    def rows(self) -> list[Any]:
        """The batch as a list of rows (built at each call while columnar)."""
        if self._rows is not None:
            return self._rows
        assert self.columns is not None
        return rows_of_columns(self.kinds, self.columns)

    def __len__(self) -> int:
        return len(self._rows) if self._rows is not None else len(self.kinds)

    def __bool__(self) -> bool:
        return len(self) > 0

    @overload
    def __getitem__(self, index: int) -> Any: ...

    @overload
    def __getitem__(self, index: slice) -> Any: ...

    def __getitem__(self, index: int | slice) -> Any:
        if self._rows is not None:
            return self._rows[index]
        assert self.columns is not None
        if isinstance(index, slice):
            return ColumnBatch(self.kinds[index], [column[index] for column in self.columns])
        return new_row([column[index] for column in self.columns], KINDS[self.kinds[index]])

    def __iter__(self) -> Iterator[Any]:
        return iter(self.rows())

    def extend(self, more: Any) -> None:
        """Appends ``more`` (a ``ColumnBatch`` or a list of records)."""
        if (self._rows is None and type(more) is ColumnBatch and more._rows is None
                and self.columns is not None and more.columns is not None
                and len(more.columns) == len(self.columns)):
            self.kinds += more.kinds
            for column, added in zip(self.columns, more.columns, strict=True):
                column.extend(added)
            return
        rows = list(self.rows())
        rows.extend(more)
        self._rows, self.columns = rows, None

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ColumnBatch):
            return self.rows() == other.rows()
        return isinstance(other, list) and self.rows() == other

    __hash__ = None  # type: ignore[assignment]

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        if self._rows is not None:
            return (list, (self._rows,))
        return (rows_of_columns, (self.kinds, self.columns))

    def __repr__(self) -> str:
        return f"ColumnBatch({self.rows()!r})"
