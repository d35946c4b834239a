"""Channel state: the in-flight buffers of an unaligned checkpoint, collected, serialised and
replayed on recovery (Flink's ChannelStateWriter / ChannelStateReader, without the I/O).

Collecting. The subtask's checkpoint machine (``runtime/tasks/checkpointing``) says what to
collect and the task carries it out here: ``start`` opens checkpoint n, ``add_input`` appends a
copy of a buffer to input channel c of n — first the partial record a channel's deserializer
holds at the trigger (the in-flight data of a channel starts where processing stopped,
possibly inside a record), then each buffer the barrier handler persists — ``add_output``
appends an output buffer a priority barrier overtook in a result subpartition, ``abort``
discards n. Once the machine says capture of n is over, ``finish(n)`` returns the
``ChannelStateSnapshot``.

Invariants: the bytes are copied when added (the buffer is recycled right after it is
processed); per channel the order of adding is the order of replay; a checkpoint is either
finished once or aborted, never both.

Format (``ChannelStateSnapshot.to_bytes``), big-endian: magic ``FLCS``, version byte,
checkpoint id (u64), entry count (u32), then per channel: kind (u8: 0 input, 1 output),
index (u32), buffer count (u32), and per buffer its length (u32) and bytes; last a CRC-32 of
everything before it. ``from_bytes`` verifies all of it and raises ``CorruptChannelStateError``
instead of returning damaged data. Storing the bytes is the checkpoint storage's job.

Recovery. ``RecoveredInput`` hands the restored buffers back per input channel, in order; the
gate serves a channel's restored buffers before any new input of that channel.

Threads: a writer and a ``RecoveredInput`` belong to the task thread; snapshots are immutable.
"""

from __future__ import annotations

import enum
import struct
import zlib
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, NoReturn

from flintlock.common.errors import FlintlockError
from flintlock.common.ids import CheckpointId
from flintlock.runtime.state.handles import CorruptStateError

_MAGIC = b"FLCS"
_VERSION = 1
_HEADER = struct.Struct(">4sBQI")
_ENTRY = struct.Struct(">BII")
_LENGTH = struct.Struct(">I")
_CRC = struct.Struct(">I")


class ChannelKind(enum.IntEnum):
    INPUT = 0
    """An input channel of this subtask's gate (receiver side)."""
    OUTPUT = 1
    """A result subpartition of this subtask (sender side, overtaken by a priority barrier)."""


class CorruptChannelStateError(CorruptStateError):
    """Serialised channel state that is truncated, altered or not channel state at all."""


class UnknownCheckpointError(FlintlockError, KeyError):
    """Channel state was added to, finished or read for a checkpoint that is not open."""


def buffer_bytes(buffer: object) -> bytes:
    """A copy of a buffer's content: bytes-like objects, or anything with ``view()`` (the
    network ``Buffer``), ``__bytes__`` or the buffer protocol."""
    if isinstance(buffer, bytes | bytearray | memoryview):
        return bytes(buffer)
    view = getattr(buffer, "view", None)
    if callable(view):
        return bytes(view())
    if hasattr(buffer, "__bytes__"):
        return bytes(buffer)
    try:
        return bytes(memoryview(buffer))  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(f"cannot read the bytes of a {type(buffer).__name__}") from None


Channels = Mapping[int, tuple[bytes, ...]]


@dataclass(frozen=True, slots=True)
class ChannelStateSnapshot:
    """The in-flight data of one subtask for one checkpoint, per channel, in order."""

    checkpoint_id: CheckpointId
    inputs: Channels = field(default_factory=lambda: MappingProxyType({}))
    outputs: Channels = field(default_factory=lambda: MappingProxyType({}))

    @property
    def size(self) -> int:
        """Bytes of buffer content (not of the serialised form)."""
        parts = (self.inputs, self.outputs)
        return sum(len(b) for part in parts for buffers in part.values() for b in buffers)

    @property
    def is_empty(self) -> bool:
        return not any(self.inputs.values()) and not any(self.outputs.values())

    def to_bytes(self) -> bytes:
        entries = [(ChannelKind.INPUT, ch, bs) for ch, bs in sorted(self.inputs.items())]
        entries += [(ChannelKind.OUTPUT, ch, bs) for ch, bs in sorted(self.outputs.items())]
        parts = [_HEADER.pack(_MAGIC, _VERSION, self.checkpoint_id, len(entries))]
        for kind, index, buffers in entries:
            parts.append(_ENTRY.pack(kind, index, len(buffers)))
            for data in buffers:
                parts.append(_LENGTH.pack(len(data)))
                parts.append(data)
        body = b"".join(parts)
        return body + _CRC.pack(zlib.crc32(body))

    @classmethod
    def from_bytes(cls, data: bytes, uri: str = "<channel state>") -> ChannelStateSnapshot:
        """Parse ``data``; ``uri`` names where it came from in the error, if any."""
        return _Parser(bytes(data), uri).parse()


class _Parser:
    def __init__(self, data: bytes, uri: str) -> None:
        self._data = data
        self._uri = uri
        self._pos = 0

    def parse(self) -> ChannelStateSnapshot:
        if len(self._data) < _HEADER.size + _CRC.size:
            self._fail("too short to be channel state")
        body, (crc,) = self._data[: -_CRC.size], _CRC.unpack(self._data[-_CRC.size :])
        if zlib.crc32(body) != crc:
            self._fail("checksum mismatch")
        self._data = body
        magic, version, checkpoint_id, count = self._take(_HEADER)
        if magic != _MAGIC or version != _VERSION:
            self._fail(f"not channel state version {_VERSION} (magic {magic!r}, v{version})")
        found: dict[ChannelKind, dict[int, tuple[bytes, ...]]] = {k: {} for k in ChannelKind}
        for _ in range(count):
            kind, index, num_buffers = self._take(_ENTRY)
            if kind not in ChannelKind._value2member_map_:
                self._fail(f"unknown channel kind {kind}")
            found[ChannelKind(kind)][index] = tuple(self._buffer() for _ in range(num_buffers))
        if self._pos != len(self._data):
            self._fail(f"{len(self._data) - self._pos} trailing bytes")
        return ChannelStateSnapshot(
            CheckpointId(checkpoint_id),
            MappingProxyType(found[ChannelKind.INPUT]),
            MappingProxyType(found[ChannelKind.OUTPUT]),
        )

    def _take(self, layout: struct.Struct) -> tuple[Any, ...]:
        end = self._pos + layout.size
        if end > len(self._data):
            self._fail("truncated")
        values = layout.unpack_from(self._data, self._pos)
        self._pos = end
        return tuple(values)

    def _buffer(self) -> bytes:
        (length,) = self._take(_LENGTH)
        end = self._pos + length
        if end > len(self._data):
            self._fail("truncated buffer")
        data = self._data[self._pos : end]
        self._pos = end
        return data

    def _fail(self, detail: str) -> NoReturn:
        raise CorruptChannelStateError(self._uri, detail)


class _Collecting:
    """Buffers of one open checkpoint, per channel kind and index."""

    __slots__ = ("inputs", "outputs")

    def __init__(self) -> None:
        self.inputs: dict[int, list[bytes]] = {}
        self.outputs: dict[int, list[bytes]] = {}

    def snapshot(self, checkpoint_id: CheckpointId) -> ChannelStateSnapshot:
        return ChannelStateSnapshot(
            checkpoint_id,
            MappingProxyType({ch: tuple(bs) for ch, bs in self.inputs.items()}),
            MappingProxyType({ch: tuple(bs) for ch, bs in self.outputs.items()}),
        )


class ChannelStateWriter:
    """Collects in-flight buffers per open checkpoint (see the module docstring).

    ``to_bytes`` turns a buffer into a copy of its content (default ``buffer_bytes``).
    """

    def __init__(self, to_bytes: Callable[[object], bytes] = buffer_bytes) -> None:
        self._to_bytes = to_bytes
        self._open: dict[CheckpointId, _Collecting] = {}  # task thread

    def start(self, checkpoint_id: CheckpointId) -> None:
        self._open.setdefault(checkpoint_id, _Collecting())

    def add_input(self, checkpoint_id: CheckpointId, channel: int, buffer: object) -> None:
        self._collecting(checkpoint_id).inputs.setdefault(channel, []).append(
            self._to_bytes(buffer)
        )

    def add_output(self, checkpoint_id: CheckpointId, subpartition: int, buffer: object) -> None:
        self._collecting(checkpoint_id).outputs.setdefault(subpartition, []).append(
            self._to_bytes(buffer)
        )

    def finish(self, checkpoint_id: CheckpointId) -> ChannelStateSnapshot:
        """Close ``checkpoint_id`` and return what was collected for it."""
        return self._pop(checkpoint_id).snapshot(checkpoint_id)

    def abort(self, checkpoint_id: CheckpointId) -> None:
        """Discard ``checkpoint_id`` (nothing happens if it is not open)."""
        self._open.pop(checkpoint_id, None)

    @property
    def open_checkpoints(self) -> list[CheckpointId]:
        return sorted(self._open)

    def _collecting(self, checkpoint_id: CheckpointId) -> _Collecting:
        try:
            return self._open[checkpoint_id]
        except KeyError:
            raise UnknownCheckpointError(checkpoint_id) from None

    def _pop(self, checkpoint_id: CheckpointId) -> _Collecting:
        self._collecting(checkpoint_id)
        return self._open.pop(checkpoint_id)


class RecoveredInput:
    """Restored in-flight input, served per channel in order before any new input."""

    def __init__(self, snapshot: ChannelStateSnapshot) -> None:
        self.checkpoint_id = snapshot.checkpoint_id
        self._pending: dict[int, deque[bytes]] = {  # task thread
            ch: deque(bs) for ch, bs in snapshot.inputs.items() if bs
        }

    def poll(self, channel: int) -> bytes | None:
        """The next restored buffer of ``channel``, or None once it has none left."""
        queue = self._pending.get(channel)
        if not queue:
            return None
        data = queue.popleft()
        if not queue:
            del self._pending[channel]
        return data

    def has_pending(self, channel: int) -> bool:
        return channel in self._pending

    @property
    def pending_channels(self) -> list[int]:
        return sorted(self._pending)

    @property
    def is_drained(self) -> bool:
        return not self._pending

    def drain(self, channel: int) -> Iterator[bytes]:
        """All remaining restored buffers of ``channel``, in order."""
        while (data := self.poll(channel)) is not None:
            yield data
