"""Record serialization: one serializer call per batch of records, chunks spanning buffers.

Python pays per call, not per byte, so records are never serialised one by one. A
``RecordWriter`` collects a channel's records in a list and serialises the whole list with one
``BatchSerializer.dumps`` call (default: ``pickle.dumps(list, protocol=5)``); the consumer's
``RecordDeserializer`` turns it back with one ``loads``.

Wire layout inside a channel's buffers: a sequence of *chunks*, each a 4-byte little-endian
length followed by that many bytes of one serialised batch. A chunk continues in the channel's
next buffer when the current one is full, so a batch — or a single huge record — may span any
number of buffers. A length header never spans buffers: a buffer with fewer than 4 free bytes
is finished first. Hence every data buffer either starts with a header or with the
continuation of the chunk begun in the previous buffer of the same channel, and the
deserializer (one per input channel, since chunks span only within a channel) needs no other
framing.

Batch sizing (``BatchSizer``): the writer keeps a running estimate of serialised bytes per
record and lets a channel's batch grow to about the free space of the channel's current
buffer (or a whole buffer when little is left), so a batch about fills a buffer and most
chunks need no continuation. The first batch of a writer has one record: it measures.

Threads: a ``RecordDeserializer`` belongs to the consuming task thread. ``write_chunk`` runs
under the owning writer's lock.
"""

from __future__ import annotations

import io
import pickle
import struct
from collections.abc import Callable
from typing import Any, Protocol

import cloudpickle

from flintlock.common.errors import FlintlockError
from flintlock.runtime.network.buffer import Buffer

CHUNK_HEADER = struct.Struct("<I")
MAX_CHUNK_BYTES = 2**32 - 1
MAX_BATCH_RECORDS = 4_096
"""The most records one chunk holds (a stream task's largest batch). Not more: a reader decodes
a chunk into that many objects at once, and with the typed codec's two-byte records a chunk of
16,384 kept enough of them alive to start CPython's young collections (threshold 50,000 in a
TaskManager) over and over — 80 ns a record of the keyed count at parallelism 2."""


class RecordTooLargeError(FlintlockError):
    """A serialised batch is longer than a chunk length field can describe (4 GiB)."""


class CorruptChannelDataError(FlintlockError):
    """A channel's buffers do not parse as chunks (truncated header, data after end)."""


class BatchSerializer(Protocol):
    """Turns a list of records into bytes and back; chosen per stream."""

    def dumps(self, records: list[Any]) -> bytes | bytearray | memoryview: ...

    def loads(self, data: memoryview | bytes | bytearray) -> list[Any]: ...


class PickleBatchSerializer:
    """The default: any picklable record, one ``pickle`` call per batch.

    Batches are pickled in the pickler's *fast mode*, which keeps no memo: no memo-table
    entry per tuple or string on either side, and a smaller stream (small tuples: about a
    third less time to pickle, a sixth less to unpickle, 13 % fewer bytes; see
    docs/benchmarks.md). Records are values (docs/decisions.md), so what fast mode gives up —
    two references to one object within a batch arrive as two equal objects — is nothing a
    job may rely on; it never held across batches anyway. A batch fast mode cannot pickle (a
    cyclic record: fast mode raises ``ValueError``) is pickled again with the memo.

    A record whose class exists only in the job's code — defined in the job's script, or in a
    module shipped by value — cannot be pickled by reference inside a TaskManager (the class
    is not importable there). Such a batch is pickled with cloudpickle instead, which carries
    the class by value; ``loads`` reads all of them (each writes a standard pickle stream)."""

    __slots__ = ("protocol",)

    def __init__(self, protocol: int = 5) -> None:
        self.protocol = protocol

    def dumps(self, records: list[Any]) -> bytes | memoryview:
        try:
            return self._dumps_fast(records)
        except ValueError:  # a cycle, which only the memo can describe
            pass
        except (pickle.PicklingError, AttributeError, TypeError):
            return bytes(cloudpickle.dumps(records, self.protocol))
        try:
            return pickle.dumps(records, self.protocol)
        except (pickle.PicklingError, AttributeError, TypeError):
            return bytes(cloudpickle.dumps(records, self.protocol))

    def _dumps_fast(self, records: list[Any]) -> memoryview:
        out = io.BytesIO()
        pickler = pickle.Pickler(out, self.protocol)
        pickler.fast = True
        pickler.dump(records)
        return out.getbuffer()

    def loads(self, data: memoryview | bytes | bytearray) -> list[Any]:
        records = pickle.loads(data)
        if not isinstance(records, list):
            raise CorruptChannelDataError(f"a batch decoded to {type(records).__name__}, not list")
        return records


class BatchSizer:
    """The running bytes-per-record estimate and the batch limit it implies."""

    __slots__ = ("bytes_per_record", "segment_size")

    def __init__(self, segment_size: int) -> None:
        self.segment_size = segment_size
        self.bytes_per_record = 0.0  # 0: nothing measured yet

    def observe(self, num_records: int, num_bytes: int) -> None:
        sample = num_bytes / num_records
        estimate = self.bytes_per_record
        self.bytes_per_record = sample if estimate == 0.0 else 0.75 * estimate + 0.25 * sample

    def limit(self, free_bytes: int) -> int:
        """How many records the next batch of a channel with ``free_bytes`` left may hold."""
        if self.bytes_per_record == 0.0:
            return 1
        target = free_bytes
        if free_bytes < self.segment_size // 2:
            target += self.segment_size
        return max(1, min(MAX_BATCH_RECORDS, int(target / self.bytes_per_record)))


def write_chunk(
    data: bytes | bytearray | memoryview, current: Buffer | None,
    request: Callable[[], Buffer], emit: Callable[[Buffer], None],
) -> Buffer | None:
    """Appends one chunk (header + ``data``) to a channel's buffers.

    ``current`` is the channel's partly filled buffer (or None); ``request`` gets a fresh one
    (may block: backpressure); ``emit`` hands a full one to the subpartition. Returns the
    partly filled buffer left over, or None if the last one was emitted full.
    """
    view = memoryview(data).cast("B")
    length = len(view)
    if length > MAX_CHUNK_BYTES:
        raise RecordTooLargeError(f"a serialised batch of {length} bytes exceeds 4 GiB")
    buffer = current if current is not None else request()
    if len(buffer.segment) - buffer.size < CHUNK_HEADER.size:
        emit(buffer)
        buffer = request()
    CHUNK_HEADER.pack_into(buffer.segment, buffer.size, length)
    buffer.size += CHUNK_HEADER.size
    position = 0
    while True:
        take = min(len(buffer.segment) - buffer.size, length - position)
        buffer.segment[buffer.size : buffer.size + take] = view[position : position + take]
        buffer.size += take
        position += take
        if position == length:
            break
        emit(buffer)
        buffer = request()
    if len(buffer.segment) - buffer.size < CHUNK_HEADER.size:
        emit(buffer)
        return None
    return buffer


class RecordDeserializer:
    """Reassembles one input channel's chunks and yields its records, in order."""

    __slots__ = ("_filled", "_partial", "_serializer")

    def __init__(self, serializer: BatchSerializer | None = None) -> None:
        self._serializer: BatchSerializer = serializer or PickleBatchSerializer()
        self._partial: bytearray | None = None  # a chunk begun in an earlier buffer
        self._filled = 0

    @property
    def has_partial_chunk(self) -> bool:
        return self._partial is not None

    def deserialize(self, data: memoryview | bytes | bytearray) -> list[Any]:
        """The records completed by this data buffer's content (possibly none)."""
        view = memoryview(data)
        size = len(view)
        records: list[Any] | None = None
        position = 0
        if self._partial is not None:
            position, completed = self._continue_partial(view)
            if completed is None:
                return []
            records = self._serializer.loads(completed)
        loads = self._serializer.loads
        while position < size:
            if size - position < CHUNK_HEADER.size:
                raise CorruptChannelDataError(f"{size - position} stray bytes at end of buffer")
            (length,) = CHUNK_HEADER.unpack_from(view, position)
            start = position + CHUNK_HEADER.size
            end = start + length
            if end > size:
                self._partial = bytearray(length)
                self._partial[: size - start] = view[start:]
                self._filled = size - start
                break
            batch = loads(view[start:end])
            if records is None:
                records = batch
            else:
                records.extend(batch)
            position = end
        return [] if records is None else records

    def _continue_partial(self, view: memoryview) -> tuple[int, bytearray | None]:
        """Copies the continuation in; returns bytes consumed and the chunk if now whole."""
        partial = self._partial
        assert partial is not None
        take = min(len(partial) - self._filled, len(view))
        partial[self._filled : self._filled + take] = view[:take]
        self._filled += take
        if self._filled < len(partial):
            return take, None
        self._partial = None
        return take, partial

    def check_complete(self) -> None:
        """At end of partition: a chunk begun but never finished means lost data."""
        if self._partial is not None:
            missing = len(self._partial) - self._filled
            raise CorruptChannelDataError(f"channel ended inside a chunk ({missing} bytes missing)")
