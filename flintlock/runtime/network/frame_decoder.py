"""An I/O-free, incremental decoder of the data-plane wire protocol (``protocol``).

The connection asks ``read_target()`` where the next received bytes should go, ``recv_into``
it, and reports ``bytes_received(n)``; complete messages come back in order.

Design note. Small frames are parsed out of a staging area, so one ``recv_into`` serves many
frames (few syscalls). A buffer payload is placed directly in the receiver's buffer: the part
already staged is copied once, the rest (at least ``DIRECT_THRESHOLD`` bytes) is received
straight into the buffer the ``PayloadAllocator`` gave. Nothing is allocated for bytes that
have not arrived: a frame's length field is a claim, not a fact (issue 14). A body larger than
the staging area grows as its bytes arrive, and so does a payload the allocator gives as a
growable ``bytearray`` (fresh memory, e.g. an event); only memory that already exists (a
pooled network buffer) is handed out at the announced size. An authenticated peer announcing
16 MiB and sending 10 bytes costs 10 bytes, not 16 MiB.

Errors: a bad magic, an unknown type or data type, or a body that does not parse is a
``MalformedFrameError``; a length over ``flintlock.network.max-frame-size`` a
``FrameTooLargeError`` raised before anything is allocated. ``close()`` on a decoder that
holds part of a frame raises ``ConnectionLostError`` naming what was pending (the peer
vanished mid-frame).

Threads: a decoder is owned by one thread, the network I/O thread of its connection.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Final

from flintlock.runtime.network.protocol import (
    BUFFER_FIXED,
    HEADER,
    HEADER_SIZE,
    MAGIC,
    MESSAGE_TYPES,
    BufferResponse,
    ConnectionLostError,
    FrameTooLargeError,
    MalformedFrameError,
    Message,
    MessageType,
    PayloadAllocator,
    PayloadTarget,
    ReceiverId,
    decode_body,
)

STAGING_SIZE: Final = 64 * 1024
DIRECT_THRESHOLD: Final = 4096


class BytearrayAllocator:
    """Gives each payload a fresh bytearray, grown as it arrives (the decoder's default:
    tests, and the serving side, where no client sends payloads)."""

    def allocate(
        self, receiver_id: ReceiverId, data_type: int, size: int
    ) -> tuple[PayloadTarget, object] | None:
        target = bytearray()
        return target, target


class _State(enum.Enum):
    HEADER = "header"
    BODY = "body"
    BUFFER_FIXED = "buffer header"
    PAYLOAD = "buffer payload"


class FrameDecoder:
    """Turns received bytes into messages. Owned by one thread (the connection's I/O thread).

    ``valid_data_type`` rejects data types the receiver does not know (a malformed frame).
    """

    def __init__(
        self,
        max_frame_size: int,
        allocator: PayloadAllocator | None = None,
        valid_data_type: Callable[[int], bool] = lambda _: True,
        staging_size: int = STAGING_SIZE,
    ) -> None:
        self._max = max_frame_size
        self._allocator: PayloadAllocator = allocator or BytearrayAllocator()
        self._valid_data_type = valid_data_type
        self._staging = bytearray(max(staging_size, HEADER_SIZE + BUFFER_FIXED.size))
        self._view = memoryview(self._staging)
        self._start = 0  # first unparsed staged byte
        self._end = 0  # one past the last staged byte
        self._state = _State.HEADER
        self._kind = MessageType.CLOSE_REQUEST
        self._need = HEADER_SIZE  # bytes the current state needs
        self._body: bytearray | None = None  # a body larger than the staging area, growing
        self._body_size = 0  # what its header announced
        self._fixed: tuple[int, int, int, int] = (0, 0, 0, 0)
        self._target: PayloadTarget | None = None  # filled in place, or grown
        self._handle: object = None
        self._filled = 0
        self._size = 0
        self._out: list[Message] = []

    # -- the I/O side -----------------------------------------------------------------------

    def read_target(self) -> memoryview:
        """Where the next received bytes should be written (``sock.recv_into``)."""
        if self._state is _State.PAYLOAD and self._start == self._end and self._direct():
            assert isinstance(self._target, memoryview)
            return self._target[self._filled:self._size]
        if self._start == self._end:
            self._start = self._end = 0
        elif len(self._staging) - self._end < len(self._staging) // 4:
            self._compact()
        return self._view[self._end:]

    def _compact(self) -> None:
        pending = self._end - self._start
        self._staging[:pending] = self._staging[self._start:self._end]
        self._start, self._end = 0, pending

    def bytes_received(self, n: int) -> list[Message]:
        """Account for ``n`` bytes written into the last ``read_target()``; complete messages."""
        if n <= 0:
            return []
        if self._state is _State.PAYLOAD and self._start == self._end and self._direct():
            self._filled += n
        else:
            self._end += n
        self._parse()
        out, self._out = self._out, []
        return out

    def _direct(self) -> bool:
        """The rest of the payload is received straight into a pooled buffer."""
        return (isinstance(self._target, memoryview)
                and self._size - self._filled >= DIRECT_THRESHOLD)

    def feed(self, data: bytes | bytearray | memoryview) -> list[Message]:
        """Copy ``data`` in through ``read_target`` (tests and the in-memory pipe)."""
        messages: list[Message] = []
        source = memoryview(data)
        while len(source):
            target = self.read_target()
            n = min(len(target), len(source))
            target[:n] = source[:n]
            source = source[n:]
            messages.extend(self.bytes_received(n))
        return messages

    def close(self, peer: str) -> None:
        """The stream ended. Raises ``ConnectionLostError`` if a frame was cut off (then
        ``abandon()`` hands back the payload buffer that was being filled)."""
        pending = self._pending_description()
        if pending:
            raise ConnectionLostError(peer, pending)

    def abandon(self) -> object:
        """Drop the partial frame; returns the payload handle the allocator gave, if any."""
        handle, self._handle, self._target = self._handle, None, None
        self._state, self._body, self._start, self._end = _State.HEADER, None, 0, 0
        return handle

    def _pending_description(self) -> str:
        staged = self._end - self._start + (len(self._body) if self._body is not None else 0)
        if self._state is _State.HEADER and staged == 0:
            return ""
        if self._state is _State.PAYLOAD:
            got = self._filled + staged
            return f"a buffer payload ({got} of {self._size} bytes received)"
        return f"a {self._kind.name if self._state is not _State.HEADER else 'frame'} " \
            f"{self._state.value} ({staged} bytes received)"

    # -- parsing ----------------------------------------------------------------------------

    def _parse(self) -> None:
        while True:
            if self._state is _State.PAYLOAD:
                if not self._fill_payload():
                    return
            elif self._body is not None:
                if not self._fill_large_body():
                    return
            elif self._end - self._start < self._need:
                return
            else:
                self._step()

    def _step(self) -> None:
        view = self._view[self._start:self._start + self._need]
        self._start += self._need
        if self._state is _State.HEADER:
            self._on_header(view)
        elif self._state is _State.BODY:
            self._out.append(decode_body(self._kind, view))
            self._expect_header()
        else:
            self._on_buffer_fixed(view)

    def _expect_header(self) -> None:
        self._state, self._need = _State.HEADER, HEADER_SIZE

    def _on_header(self, view: memoryview) -> None:
        magic, kind, length = HEADER.unpack(view)
        if magic != MAGIC:
            raise MalformedFrameError(f"bad magic 0x{magic:08x}")
        message_type = MESSAGE_TYPES.get(kind)
        if message_type is None:
            raise MalformedFrameError(f"unknown message type {kind}")
        if length > self._max:
            raise FrameTooLargeError(length, self._max)
        self._kind = message_type
        if message_type is MessageType.BUFFER_RESPONSE:
            if length < BUFFER_FIXED.size:
                raise MalformedFrameError("buffer response shorter than its fixed fields")
            self._state, self._need = _State.BUFFER_FIXED, BUFFER_FIXED.size
            self._size = length - BUFFER_FIXED.size
        elif length > len(self._staging) - HEADER_SIZE:
            self._body, self._body_size, self._state = bytearray(), length, _State.BODY
        else:
            self._state, self._need = _State.BODY, length

    def _fill_large_body(self) -> bool:
        assert self._body is not None
        take = min(self._body_size - len(self._body), self._end - self._start)
        self._body += self._view[self._start:self._start + take]
        self._start += take
        if len(self._body) < self._body_size:
            return False
        body, self._body = self._body, None
        self._out.append(decode_body(self._kind, memoryview(body)))
        self._expect_header()
        return True

    def _on_buffer_fixed(self, view: memoryview) -> None:
        receiver, sequence, backlog, data_type = BUFFER_FIXED.unpack(view)
        if not self._valid_data_type(data_type):
            raise MalformedFrameError(f"unknown buffer data type {data_type}")
        self._fixed = (receiver, sequence, backlog, data_type)
        target = self._allocator.allocate(receiver, data_type, self._size)
        self._target, self._handle = target if target is not None else (None, None)
        self._filled = 0
        self._state = _State.PAYLOAD

    def _fill_payload(self) -> bool:
        take = min(self._size - self._filled, self._end - self._start)
        start, filled, target = self._start, self._filled, self._target
        if take and isinstance(target, bytearray):
            target += self._view[start:start + take]
        elif take and target is not None:
            target[filled:filled + take] = self._view[start:start + take]
        self._start += take
        self._filled += take
        if self._filled < self._size:
            return False
        receiver, sequence, backlog, data_type = self._fixed
        handle, self._handle, self._target = self._handle, None, None
        self._out.append(BufferResponse(receiver, sequence, backlog, data_type, handle, self._size))
        self._expect_header()
        return True
