"""The serializer of the Table planner's edges (``ChangelogRowTypeInfo``): a batch of
``Row``s as their kinds and their values.

``dumps`` pickles, once per batch, an object whose pickle is ``rows_from_columns_of(kinds,
columns)``: ``kinds`` a ``bytes`` of one ``RowKind`` value per row, ``columns`` the rows'
values as one list per field (pickled in the writer's fast mode; a column unpickles at about a
quarter of the cost of a list per row, and each row's list is then built at its final size).
Rows of different widths go as ``rows_from(kinds, values)``, ``values`` the value lists.
Unpickling returns the list of rows, built at once (``common.row_batches``: in C where the
accelerator was built): no ``Row.__init__`` and no ``__reduce__`` per row; ``dumps`` takes a
batch apart in one pass (``split_columns``, ``split_rows``). The chunk is an ordinary pickle
chunk, so any reader decodes it (channel state restored by a later version, or after a
rescale, included; both forms stay readable). An event-time run (``StampedRun``, the last
element of its chunk) of rows of one width goes as its columns and its timestamps, and comes
back as the run of rows it was (issue 32: an event-time job's exchange). A batch holding
anything else but plain rows (a row with field names) is pickled as the plain list it is.

A column whose values are all of one of the classes in ``_PACKED`` (``datetime``, ``date``,
``time``, ``Decimal``: TIMESTAMP, DATE, TIME and DECIMAL values) goes as that class's code and
the values' constructor arguments (what each value's own pickle holds), rebuilt in one
``starmap``: a pickler in fast mode keeps no memo, so it otherwise writes and looks up the
class's global once per value (about 10 µs a ``datetime`` each way; issue 33, q20's bids).

Reading as columns (issue 28): an input whose head operator takes ``ColumnBatch``es (the
group aggregation's keyed batch operator) reads through ``ColumnDecodingSerializer``, under
which a batch sent as columns decodes to a ``ColumnBatch`` (``common.column_batches``) the
aggregation's C kernel reads without a row per record; everywhere else it decodes to rows.

Owned by the writer that holds it (``ColumnDecodingSerializer``: the reading task's thread).
"""

from __future__ import annotations

import datetime
import decimal
import pickle
import threading
from itertools import starmap
from typing import Any

from flintlock.common.column_batches import ColumnBatch
from flintlock.common.row_batches import (
    rows_from_codes,
    rows_from_columns,
    split_columns,
    split_rows,
)
from flintlock.common.types import Row, RowKind
from flintlock.runtime.network.event_time import RunDetectingSerializer, StampedRun
from flintlock.runtime.network.serialization import CorruptChannelDataError, PickleBatchSerializer
from flintlock.runtime.network.typed_codec import MAGIC

_KINDS = tuple(RowKind)
_PACKED: tuple[type, ...] = (datetime.datetime, datetime.date, datetime.time, decimal.Decimal)
_CODES = {cls: code for code, cls in enumerate(_PACKED)}


def column_from(code: int, arguments: list[tuple[Any, ...]]) -> list[Any]:
    """A packed column's values (what its pickle calls)."""
    try:
        return list(starmap(_PACKED[code], arguments))
    except (IndexError, TypeError, ValueError):
        raise CorruptChannelDataError(
            f"a changelog batch holds a packed column of code {code!r} that does not "
            "rebuild") from None


class _Column:
    """Pickles as ``column_from(code, arguments)``."""

    __slots__ = ("arguments", "code")

    def __init__(self, code: int, arguments: list[tuple[Any, ...]]) -> None:
        self.code = code
        self.arguments = arguments

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (column_from, (self.code, self.arguments))


def packed(columns: list[list[Any]]) -> list[Any]:
    """``columns`` with each column of one ``_PACKED`` class replaced by a ``_Column``."""
    out: list[Any] = columns
    for index, column in enumerate(columns):
        cls = type(column[0]) if column else None
        code = _CODES.get(cls)  # type: ignore[arg-type]
        if code is None or len(set(map(type, column))) != 1:
            continue
        if out is columns:
            out = list(columns)
        out[index] = _Column(code, [value.__reduce_ex__(4)[1] for value in column])
    return out


def rows_from(kinds: bytes, values: list[list[Any]]) -> list[Row]:
    """The rows of a changelog batch (what its pickle calls)."""
    if len(kinds) != len(values):
        raise CorruptChannelDataError(
            f"a changelog batch holds {len(kinds)} row kinds for {len(values)} rows")
    try:
        return rows_from_codes(kinds, _KINDS, values)
    except (ValueError, TypeError):
        raise CorruptChannelDataError("a changelog batch holds an unknown row kind") from None


def rows_from_columns_of(kinds: bytes, columns: list[list[Any]]) -> list[Row] | ColumnBatch:
    """The rows of a changelog batch sent as columns (what its pickle calls); while a
    ``ColumnDecodingSerializer`` reads on this thread, the batch as a ``ColumnBatch``."""
    if getattr(_decoding, "columns", False):
        if (type(kinds) is not bytes or type(columns) is not list
                or not all(type(c) is list and len(c) == len(kinds) for c in columns)
                or (kinds and max(kinds) >= len(_KINDS))):
            raise CorruptChannelDataError(
                f"a changelog batch of {len(kinds)} rows holds an unknown row kind or a "
                "column of another length")
        return ColumnBatch(kinds, columns)
    return _rows_of_columns(kinds, columns)


def _rows_of_columns(kinds: bytes, columns: list[list[Any]]) -> list[Row]:
    try:
        return rows_from_columns(kinds, _KINDS, columns)
    except (ValueError, TypeError):
        raise CorruptChannelDataError(
            f"a changelog batch of {len(kinds)} rows holds an unknown row kind or a column "
            "of another length") from None


def stamped_run_from_columns(kinds: bytes, columns: list[list[Any]],
                             timestamps: list[int]) -> StampedRun:
    """The event-time run of a changelog batch sent as columns (what its pickle calls)."""
    rows = _rows_of_columns(kinds, columns)
    if len(rows) != len(timestamps):
        raise CorruptChannelDataError(
            f"an event-time run holds {len(rows)} rows for {len(timestamps)} timestamps")
    return StampedRun(rows, timestamps)


class _Run:
    """Pickles as ``stamped_run_from_columns(kinds, columns, timestamps)``."""

    __slots__ = ("columns", "kinds", "timestamps")

    def __init__(self, kinds: bytes, columns: list[list[Any]], timestamps: list[int]) -> None:
        self.kinds = kinds
        self.columns = columns
        self.timestamps = timestamps

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (stamped_run_from_columns, (self.kinds, self.columns, self.timestamps))


class _Batch:
    """Pickles as ``rebuild(kinds, values)``: the rows built at once on the reading side."""

    __slots__ = ("kinds", "rebuild", "values")

    def __init__(self, rebuild: Any, kinds: bytes, values: list[list[Any]]) -> None:
        self.rebuild = rebuild
        self.kinds = kinds
        self.values = values

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (self.rebuild, (self.kinds, self.values))


_decoding = threading.local()
"""``columns`` True while a ``ColumnDecodingSerializer`` of this thread unpickles."""


class ColumnDecodingSerializer(RunDetectingSerializer):
    """The reading side of an input whose head operator takes ``ColumnBatch``es
    (``takes_column_batches``): a changelog batch sent as columns decodes to a
    ``ColumnBatch`` (no rows built); every other chunk as ``RunDetectingSerializer`` reads it.
    Task thread only (the switch is thread-local, on only inside ``loads``)."""

    __slots__ = ()

    def loads(self, data: memoryview | bytes | bytearray) -> Any:
        if len(data) and data[0] == MAGIC:
            return super().loads(data)
        _decoding.columns = True
        try:
            records = pickle.loads(data)
        finally:
            _decoding.columns = False
        if type(records) is ColumnBatch:
            return records
        if not isinstance(records, list):
            raise CorruptChannelDataError(f"a batch decoded to {type(records).__name__}, not list")
        if records and type(records[-1]) is StampedRun:
            self.saw_runs = True
        return records


class ChangelogRowSerializer(PickleBatchSerializer):
    __slots__ = ()

    def dumps(self, records: list[Any]) -> bytes | memoryview:
        if not isinstance(records, list):
            return super().dumps(records)
        if records and type(records[-1]) is StampedRun:
            return self._dumps_run(records)
        columns = split_columns(records, _KINDS)
        if columns is not None:  # rows of one width: the columns
            wire = _Batch(rows_from_columns_of, columns[0], packed(columns[1]))
            return super().dumps(wire)  # type: ignore[arg-type]
        split = split_rows(records, _KINDS)
        if split is None:  # not all plain rows: an event-time run, or another record
            return super().dumps(records)
        return super().dumps(_Batch(rows_from, *split))  # type: ignore[arg-type]

    def _dumps_run(self, records: list[Any]) -> bytes | memoryview:
        run = records[-1]
        columns = split_columns(run.values, _KINDS)
        if columns is None:
            return super().dumps(records)
        wire = _Run(columns[0], packed(columns[1]), run.timestamps)
        return super().dumps([*records[:-1], wire])
