"""Encoding of in-band events into event buffers, and back.

The checkpoint events have a compact fixed binary layout (big-endian, one tag byte first) so
that a barrier costs a few bytes and decoding it runs no user code; anything else travels as a
pickled generic event (tag 255). Layouts:

* ``0``  EndOfPartitionEvent — the tag alone.
* ``1``  CheckpointBarrier — ``>q`` id, ``>q`` timestamp, ``B`` checkpoint type, ``B``
  alignment type, ``>q`` alignment timeout in ms (-1: none).
* ``2``  CancelCheckpointMarker — ``>q`` id.
* ``3``  Watermark — ``>q`` timestamp.
* ``4``  WatermarkStatus — ``B`` 1 idle, 0 active.
* ``255`` generic — a pickle of the event object (only ever decoded after the peer
  authenticated; see DESIGN.md §7).

An unaligned barrier is encoded into a ``PRIORITY_EVENT_BUFFER`` (it overtakes queued data);
every other event into an ``EVENT_BUFFER``. Pure functions, safe from any thread.
"""

from __future__ import annotations

import pickle
import struct

from flintlock.common.errors import FlintlockError
from flintlock.common.ids import CheckpointId
from flintlock.runtime.network.barriers import (
    END_OF_PARTITION,
    AlignmentType,
    CancelCheckpointMarker,
    CheckpointBarrier,
    CheckpointOptions,
    CheckpointType,
    EndOfPartitionEvent,
)
from flintlock.runtime.network.buffer import Buffer, DataType, unpooled_buffer
from flintlock.runtime.network.event_time import Watermark, WatermarkStatus

TAG_END_OF_PARTITION = 0
TAG_BARRIER = 1
TAG_CANCEL_CHECKPOINT = 2
TAG_WATERMARK = 3
TAG_WATERMARK_STATUS = 4
TAG_GENERIC = 255

_BARRIER = struct.Struct(">BqqBBq")
_CANCEL = struct.Struct(">Bq")
_WATERMARK = struct.Struct(">Bq")
_STATUS = struct.Struct(">BB")
_END_OF_PARTITION_BYTES = bytes([TAG_END_OF_PARTITION])


class UnknownEventTagError(FlintlockError):
    """An event buffer starts with a tag no event type has."""

    def __init__(self, tag: int) -> None:
        super().__init__(tag)
        self.tag = tag

    def __str__(self) -> str:
        return f"unknown event tag {self.tag}"


class MalformedEventError(FlintlockError):
    """An event buffer is too short or too long for its tag, or its fields are invalid."""


def event_bytes(event: object) -> bytes:
    """The encoded form of ``event`` (see the module docstring)."""
    if isinstance(event, EndOfPartitionEvent):
        return _END_OF_PARTITION_BYTES
    if isinstance(event, CheckpointBarrier):
        options = event.options
        timeout = -1 if options.alignment_timeout_ms is None else options.alignment_timeout_ms
        return _BARRIER.pack(
            TAG_BARRIER, event.checkpoint_id, event.timestamp,
            options.checkpoint_type.value, options.alignment.value, timeout,
        )
    if isinstance(event, CancelCheckpointMarker):
        return _CANCEL.pack(TAG_CANCEL_CHECKPOINT, event.checkpoint_id)
    if isinstance(event, Watermark):
        return _WATERMARK.pack(TAG_WATERMARK, event.timestamp)
    if isinstance(event, WatermarkStatus):
        return _STATUS.pack(TAG_WATERMARK_STATUS, 1 if event.idle else 0)
    return bytes([TAG_GENERIC]) + pickle.dumps(event, protocol=5)


def event_data_type(event: object) -> DataType:
    """PRIORITY_EVENT_BUFFER for an unaligned barrier, EVENT_BUFFER for anything else."""
    if isinstance(event, CheckpointBarrier) and event.is_priority:
        return DataType.PRIORITY_EVENT_BUFFER
    return DataType.EVENT_BUFFER


def encode_event(event: object) -> Buffer:
    """An unpooled event buffer holding ``event``."""
    return unpooled_buffer(event_bytes(event), event_data_type(event))


def decode_event(buffer: Buffer | memoryview | bytes) -> object:
    """The event in ``buffer``; raises ``UnknownEventTagError`` / ``MalformedEventError``."""
    data = buffer.view() if isinstance(buffer, Buffer) else memoryview(buffer)
    if len(data) == 0:
        raise MalformedEventError("empty event buffer")
    tag = data[0]
    if tag == TAG_END_OF_PARTITION:
        _expect_length(data, 1, "end of partition")
        return END_OF_PARTITION
    if tag == TAG_BARRIER:
        return _decode_barrier(data)
    if tag == TAG_CANCEL_CHECKPOINT:
        _expect_length(data, _CANCEL.size, "cancel checkpoint marker")
        return CancelCheckpointMarker(CheckpointId(_CANCEL.unpack(data)[1]))
    if tag == TAG_WATERMARK:
        _expect_length(data, _WATERMARK.size, "watermark")
        return Watermark(_WATERMARK.unpack(data)[1])
    if tag == TAG_WATERMARK_STATUS:
        _expect_length(data, _STATUS.size, "watermark status")
        flag = _STATUS.unpack(data)[1]
        if flag > 1:
            raise MalformedEventError(f"watermark status must be 0 or 1, got {flag}")
        return WatermarkStatus(flag == 1)
    if tag == TAG_GENERIC:
        return pickle.loads(data[1:])
    raise UnknownEventTagError(tag)


def barrier_id(buffer: Buffer) -> int | None:
    """The checkpoint id if ``buffer`` holds a checkpoint barrier, else None (reads the tag
    and the id only)."""
    if buffer.data_type is DataType.DATA_BUFFER or buffer.size != _BARRIER.size:
        return None
    if buffer.segment[0] != TAG_BARRIER:
        return None
    return int(_BARRIER.unpack_from(buffer.segment, 0)[1])


def is_end_of_partition(buffer: Buffer) -> bool:
    """Whether ``buffer`` holds the end-of-partition event (looks at the tag byte only)."""
    return (
        buffer.data_type is DataType.EVENT_BUFFER
        and buffer.size == 1
        and buffer.segment[0] == TAG_END_OF_PARTITION
    )


def _expect_length(data: memoryview, length: int, what: str) -> None:
    if len(data) != length:
        raise MalformedEventError(f"{what} must be {length} bytes, got {len(data)}")


def _decode_barrier(data: memoryview) -> CheckpointBarrier:
    _expect_length(data, _BARRIER.size, "checkpoint barrier")
    _, checkpoint_id, timestamp, ctype, alignment, timeout = _BARRIER.unpack(data)
    try:
        options = CheckpointOptions(
            CheckpointType(ctype), AlignmentType(alignment), None if timeout < 0 else timeout
        )
    except ValueError as exc:
        raise MalformedEventError(f"checkpoint barrier with invalid options: {exc}") from exc
    return CheckpointBarrier(CheckpointId(checkpoint_id), timestamp, options)
