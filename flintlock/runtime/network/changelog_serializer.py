"""The serializer of the Table planner's edges (``ChangelogRowTypeInfo``): a batch of
``Row``s as their kinds and their value lists.

``dumps`` pickles, once per batch, an object whose pickle is ``rows_from(kinds, values)``:
``kinds`` a ``bytes`` of one ``RowKind`` value per row, ``values`` the rows' value lists
(pickled in the writer's fast mode). Unpickling calls ``rows_from``, which returns the list of
rows, built at once (``common.row_batches``: in C where the accelerator was built): no
``Row.__init__`` and no ``__reduce__`` per row; ``dumps`` takes a batch apart in one pass
(``split_rows``). The chunk is
an ordinary pickle chunk, so any reader decodes it (channel state restored by a later version,
or after a rescale, included). A batch holding anything but plain rows (an event-time run, a
row with field names) is pickled as the plain list it is.

Owned by the writer that holds it.
"""

from __future__ import annotations

from typing import Any

from flintlock.common.row_batches import rows_from_codes, split_rows
from flintlock.common.types import Row, RowKind
from flintlock.runtime.network.serialization import CorruptChannelDataError, PickleBatchSerializer

_KINDS = tuple(RowKind)


def rows_from(kinds: bytes, values: list[list[Any]]) -> list[Row]:
    """The rows of a changelog batch (what its pickle calls)."""
    if len(kinds) != len(values):
        raise CorruptChannelDataError(
            f"a changelog batch holds {len(kinds)} row kinds for {len(values)} rows")
    try:
        return rows_from_codes(kinds, _KINDS, values)
    except (ValueError, TypeError):
        raise CorruptChannelDataError("a changelog batch holds an unknown row kind") from None


class _RowBatch:
    __slots__ = ("kinds", "values")

    def __init__(self, kinds: bytes, values: list[list[Any]]) -> None:
        self.kinds = kinds
        self.values = values

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (rows_from, (self.kinds, self.values))


class ChangelogRowSerializer(PickleBatchSerializer):
    __slots__ = ()

    def dumps(self, records: list[Any]) -> bytes | memoryview:
        split = split_rows(records, _KINDS) if isinstance(records, list) else None
        if split is None:  # not all plain rows: an event-time run, or another record
            return super().dumps(records)
        return super().dumps(_RowBatch(*split))  # type: ignore[arg-type]
