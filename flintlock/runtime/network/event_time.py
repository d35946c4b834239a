"""What event time adds to the exchange: record timestamps and the in-band watermark events.

Design note — timestamps without a wrapper per record. Records move in batches (plain Python
lists, see ``runtime.tasks.operator``); most streams carry no timestamps, and their hot path
must not pay for the few that do. So a batch whose records have timestamps is a
``TimestampedBatch``: a list of the plain values (code that ignores time iterates it as
before) plus a parallel list ``timestamps``. Operators check the batch's type once per batch
and keep the timestamps aligned with what they emit.

On the wire a record writer cannot put a parallel list into a channel's pending records, so
each channel's share of a timestamped batch travels as one ``StampedRun`` element (values and
timestamps) among the channel's plain records, and the receiving side turns a chunk holding
runs back into one ``TimestampedBatch`` (``expand_runs``), plain records getting
``NO_TIMESTAMP``. Order within a channel is kept.

Watermarks and watermark status are events (``runtime.network.events`` encodes them in a
few bytes): a writer flushes what is pending before it adds an event, so a watermark never
overtakes the records before it.

Pure data, no thread owns anything here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, SupportsIndex, overload

from flintlock.runtime.network.serialization import PickleBatchSerializer
from flintlock.runtime.network.typed_codec import MAGIC, decode_chunk

MIN_WATERMARK = -(2**63)
"""No event time has passed yet (Java's Long.MIN_VALUE, what PyFlink reports)."""
MAX_WATERMARK = 2**63 - 1
"""The end of event time: a bounded input that ended sends it, so every event-time timer fires."""
NO_TIMESTAMP = -(2**63)
"""The timestamp of a record without one (``ctx.timestamp()`` returns it, as PyFlink does)."""


class TimestampedBatch(list[Any]):
    """Values with their event timestamps (``timestamps[i]`` belongs to ``self[i]``).

    Slicing keeps the timestamps; every other list operation sees the values only, so a
    consumer that ignores time (a sink) may treat it as a plain list.
    """

    __slots__ = ("timestamps",)

    def __init__(self, values: Iterable[Any] = (), timestamps: Sequence[int] = ()) -> None:
        super().__init__(values)
        self.timestamps: list[int] = list(timestamps)
        if len(self.timestamps) != len(self):
            raise ValueError(f"{len(self)} values but {len(self.timestamps)} timestamps")

    @staticmethod
    def uniform(values: list[Any], timestamp: int) -> TimestampedBatch:
        """``values`` all with the same timestamp (outputs of one event-time timer)."""
        return TimestampedBatch(values, [timestamp] * len(values))

    @overload
    def __getitem__(self, index: SupportsIndex) -> Any: ...

    @overload
    def __getitem__(self, index: slice) -> TimestampedBatch: ...

    def __getitem__(self, index: SupportsIndex | slice) -> Any:
        if isinstance(index, slice):
            return TimestampedBatch(list.__getitem__(self, index), self.timestamps[index])
        return list.__getitem__(self, index)

    def pairs(self) -> Iterable[tuple[Any, int]]:
        return zip(self, self.timestamps, strict=True)

    def as_run(self) -> StampedRun:
        return StampedRun(list(self), list(self.timestamps))

    def __reduce__(self) -> tuple[Any, ...]:
        return (TimestampedBatch, (list(self), self.timestamps))

    def __repr__(self) -> str:
        return f"TimestampedBatch({list(self)!r}, {self.timestamps!r})"


@dataclass(slots=True)
class StampedRun:
    """One channel's share of a timestamped batch, as a single element of its pending list."""

    values: list[Any]
    timestamps: list[int]


class RunDetectingSerializer(PickleBatchSerializer):
    """The reader's batch serializer: pickle chunks and typed chunks (``typed_codec``: the
    first byte tells them apart), noting whether a chunk it read holds a ``StampedRun``.

    A record writer writes a channel's chunk right after appending a run to it, so a run is
    the last element of its chunk: one check per chunk, none per record. ``saw_runs`` stays
    set until the reader clears it (task thread only)."""

    __slots__ = ("saw_runs",)

    def __init__(self, protocol: int = 5) -> None:
        super().__init__(protocol)
        self.saw_runs = False

    def loads(self, data: memoryview | bytes | bytearray) -> list[Any]:
        if len(data) and data[0] == MAGIC:
            records, run = decode_chunk(data)
            if run is not None:
                records.append(StampedRun(*run))
                self.saw_runs = True
            return records
        records = super().loads(data)
        if records and type(records[-1]) is StampedRun:
            self.saw_runs = True
        return records


def expand_runs(records: list[Any]) -> list[Any]:
    """``records`` as the chain expects them: unchanged when no element is a ``StampedRun``,
    else one ``TimestampedBatch`` in the same order (plain records get ``NO_TIMESTAMP``)."""
    if not any(type(record) is StampedRun for record in records):
        return records
    values: list[Any] = []
    timestamps: list[int] = []
    for record in records:
        if type(record) is StampedRun:
            values.extend(record.values)
            timestamps.extend(record.timestamps)
        else:
            values.append(record)
            timestamps.append(NO_TIMESTAMP)
    return TimestampedBatch(values, timestamps)


def as_wire_records(records: list[Any]) -> list[Any]:
    """The inverse for re-encoding: a timestamped batch as one run, plain records as they are."""
    if type(records) is TimestampedBatch:
        return [records.as_run()]
    return records


@dataclass(frozen=True, slots=True)
class Watermark:
    """In-band event: no record with a timestamp at or below ``timestamp`` follows."""

    timestamp: int

    @property
    def is_max(self) -> bool:
        return self.timestamp >= MAX_WATERMARK


@dataclass(frozen=True, slots=True)
class WatermarkStatus:
    """In-band event: the channel's producer went idle (its watermark must not hold the
    consumer back) or became active again."""

    idle: bool


__all__ = [
    "MAX_WATERMARK", "MIN_WATERMARK", "NO_TIMESTAMP", "RunDetectingSerializer", "StampedRun",
    "TimestampedBatch",
    "Watermark", "WatermarkStatus", "as_wire_records", "expand_runs",
]
