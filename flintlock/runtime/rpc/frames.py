"""RPC framing: a fixed header and a payload, with an incremental, I/O-free decoder.

Frame layout (big-endian)::

    magic "FR" (2) | kind (1) | correlation id (8) | payload length (4) | payload

``kind`` says what the payload is: a CALL expecting a REPLY or FAILURE with the same
correlation id, or a one-way TELL. PING and PONG carry no payload: a connection that has heard
nothing for a while asks with a PING, and the peer answers at once with a PONG
(``flintlock.runtime.liveness``); they never reach a handler. Other payloads are messages
pickled with cloudpickle (so a message may carry a function or a class shipped by value, as
user code is), but this module never unpickles: the decoder only splits bytes into frames,
rejects a bad magic, an unknown kind or a length above the limit (before allocating
anything), and reports bytes left pending when the stream ends. ``decode_payload``
unpickles, and is only ever called on an authenticated connection.

Thread ownership: a ``FrameDecoder`` belongs to the single reader thread of its connection.
"""

from __future__ import annotations

import enum
import pickle
import struct
from dataclasses import dataclass
from typing import Final

import cloudpickle

from flintlock.runtime.rpc.errors import FrameTooLargeError, MalformedFrameError

MAGIC: Final = b"FR"
HEADER: Final = struct.Struct("!2sBQI")
DEFAULT_MAX_FRAME_SIZE: Final = 64 * 1024 * 1024


class FrameKind(enum.IntEnum):
    CALL = 1
    REPLY = 2
    FAILURE = 3
    TELL = 4
    PING = 5
    PONG = 6


@dataclass(frozen=True, slots=True)
class Frame:
    kind: FrameKind
    correlation_id: int
    payload: bytes


def encode_frame(kind: FrameKind, correlation_id: int, payload: bytes, max_size: int) -> bytes:
    """Header and payload as one bytes object; a payload above ``max_size`` is refused."""
    if len(payload) > max_size:
        raise FrameTooLargeError(len(payload), max_size)
    return HEADER.pack(MAGIC, kind, correlation_id, len(payload)) + payload


def encode_message(kind: FrameKind, correlation_id: int, message: object, max_size: int) -> bytes:
    return encode_frame(kind, correlation_id, cloudpickle.dumps(message, protocol=5), max_size)


def decode_payload(frame: Frame) -> object:
    """Unpickle a frame's payload (authenticated connections only); failures are malformed."""
    try:
        return pickle.loads(frame.payload)
    except Exception as exc:
        raise MalformedFrameError(f"{frame.kind.name} payload does not unpickle: {exc!r}") from exc


class FrameDecoder:
    """Feed it bytes as they arrive; it returns the frames they complete."""

    def __init__(self, max_frame_size: int = DEFAULT_MAX_FRAME_SIZE) -> None:
        self._max = max_frame_size
        self._pending = bytearray()

    @property
    def pending_bytes(self) -> int:
        """Bytes of an incomplete frame held back (non-zero at end of stream = truncated)."""
        return len(self._pending)

    def feed(self, data: bytes) -> list[Frame]:
        self._pending += data
        frames: list[Frame] = []
        while True:
            frame = self._next_frame()
            if frame is None:
                return frames
            frames.append(frame)

    def _next_frame(self) -> Frame | None:
        if len(self._pending) < HEADER.size:
            return None
        magic, kind, correlation_id, length = HEADER.unpack_from(self._pending)
        if magic != MAGIC:
            raise MalformedFrameError(f"bad magic {bytes(magic)!r}")
        if kind not in FrameKind._value2member_map_:
            raise MalformedFrameError(f"unknown frame kind {kind}")
        if length > self._max:
            raise FrameTooLargeError(length, self._max)
        end = HEADER.size + length
        if len(self._pending) < end:
            return None
        payload = bytes(self._pending[HEADER.size:end])
        del self._pending[:end]
        return Frame(FrameKind(kind), correlation_id, payload)
