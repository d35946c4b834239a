"""The data-plane wire protocol between TaskManagers: messages, framing and an I/O-free decoder.

Every frame is a fixed 9-byte header followed by a body::

    magic  u32 = 0xF11C0C4B   (anything else: MalformedFrameError, the connection fails)
    type   u8  = MessageType  (unknown: MalformedFrameError)
    length u32 = body bytes   (> flintlock.network.max-frame-size: FrameTooLargeError,
                               raised before anything is allocated)

Bodies (network byte order; receiver ids are u64 chosen by the consuming TaskManager and
unique on its connections):

    PARTITION_REQUEST  receiver u64, subpartition u32, initial credit u32, producer subtask u32,
                       attempt u32, data-set id (u16 length + UTF-8)
    ADD_CREDIT         receiver u64, credit u32
    BUFFER_RESPONSE    receiver u64, sequence number u64, backlog u32, data type u8, payload
    ERROR_RESPONSE     has-receiver u8, receiver u64, kind u8, text (u32 length + UTF-8),
                       pickled cause (the rest; may be empty)
    CANCEL_PARTITION   receiver u64
    CLOSE_REQUEST      (empty)
    BACKLOG            receiver u64, backlog u32 (a sender with data but no credit says so,
                       so a receiver without exclusive buffers can borrow floating ones)
    PING, PONG         (empty) a side that has heard nothing for a while asks; the other
                       answers at once (``flintlock.runtime.liveness``; either side may ask)

Invariants:

- The decoder is I/O-free: the connection asks ``read_target()`` where the next bytes should
  go, ``recv_into`` it, and reports ``bytes_received(n)``; complete messages come back in
  order. Small frames are parsed out of a staging area (few syscalls for many frames); a
  buffer payload is placed directly in the receiver's buffer: the part already staged is
  copied once, the rest is received straight into the buffer (``PayloadAllocator``).
- Nothing is allocated for bytes that have not arrived: a frame's length field is a claim,
  not a fact (issue 14). A body larger than the staging area grows as its bytes arrive, and
  so does a payload the allocator gives as a growable ``bytearray`` (fresh memory, e.g. an
  event); only memory that already exists (a pooled network buffer) is handed out at the
  announced size. An authenticated peer announcing 16 MiB and sending 10 bytes costs 10
  bytes, not 16 MiB.
- Data payloads are never unpickled here. An error response's cause stays as bytes until
  ``ErrorResponse.cause()`` is called, which connections only do after authentication.
- ``close()`` on a decoder that holds part of a frame raises ``ConnectionLostError`` naming
  what was pending (the peer vanished mid-frame).

Who calls it: the connection code in ``transport``/``connection`` (the network I/O thread owns
each decoder and encoder) and the in-memory transport (which passes message objects and
never encodes them).
"""

from __future__ import annotations

import enum
import pickle
import struct
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Protocol

from flintlock.common.errors import FlintlockError
from flintlock.common.ids import IntermediateDataSetId, ResultPartitionId, SubtaskIndex

MAGIC: Final = 0xF11C0C4B
HEADER: Final = struct.Struct("!IBI")
HEADER_SIZE: Final = HEADER.size
_PARTITION_REQUEST = struct.Struct("!QIIIIH")
_ADD_CREDIT = struct.Struct("!QI")
_BUFFER_FIXED = struct.Struct("!QQIB")
_ERROR_FIXED = struct.Struct("!BQBI")
_RECEIVER = struct.Struct("!Q")
STAGING_SIZE: Final = 64 * 1024
DIRECT_THRESHOLD: Final = 4096

ReceiverId = int


class ProtocolError(FlintlockError):
    """Base of the errors of the data-plane wire protocol; they fail one connection."""


class MalformedFrameError(ProtocolError):
    """Bytes that are not a frame of this protocol (bad magic, unknown type, bad body)."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail

    def __str__(self) -> str:
        return f"malformed frame: {self.detail}"


class FrameTooLargeError(MalformedFrameError):
    """A header announced more bytes than ``flintlock.network.max-frame-size`` allows."""

    def __init__(self, length: int, limit: int) -> None:
        ProtocolError.__init__(self, length, limit)
        self.detail = f"frame length {length} exceeds flintlock.network.max-frame-size={limit}"
        self.length = length
        self.limit = limit


class ConnectionLostError(ProtocolError, ConnectionError):
    """The peer closed or vanished; ``pending`` says which partial frame was cut off."""

    def __init__(self, peer: str, pending: str = "") -> None:
        super().__init__(peer, pending)
        self.peer = peer
        self.pending = pending

    def __str__(self) -> str:
        cut = f" in the middle of {self.pending}" if self.pending else ""
        return f"connection to {self.peer} lost{cut}"


class PeerSilentError(ConnectionLostError):
    """Nothing came from the peer for ``heartbeat.timeout``, not even an answer to a PING: a
    frozen or cut-off peer, or one that holds the connection and says nothing."""

    def __init__(self, peer: str, silent_s: float, timeout_s: float) -> None:
        ProtocolError.__init__(self, peer, silent_s, timeout_s)
        self.peer = peer
        self.pending = ""
        self.silent_s = silent_s
        self.timeout_s = timeout_s

    def __str__(self) -> str:
        return (f"connection to {self.peer} lost: nothing heard for {self.silent_s:.1f} s, "
                f"not even an answer to a keepalive (heartbeat.timeout is {self.timeout_s:g} s)")


class RemoteError(FlintlockError):
    """A remote failure whose exception could not be rebuilt here; carries its text."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


class MessageType(enum.IntEnum):
    PARTITION_REQUEST = 1
    ADD_CREDIT = 2
    BUFFER_RESPONSE = 3
    ERROR_RESPONSE = 4
    CANCEL_PARTITION = 5
    CLOSE_REQUEST = 6
    BACKLOG_ANNOUNCEMENT = 7
    PING = 8
    PONG = 9


_MESSAGE_TYPES: dict[int, MessageType] = {int(kind): kind for kind in MessageType}


class ErrorKind(enum.IntEnum):
    PARTITION_NOT_FOUND = 1
    PRODUCER_FAILED = 2
    OTHER = 3


@dataclass(frozen=True, slots=True)
class PartitionRequest:
    partition_id: ResultPartitionId
    subpartition_index: int
    receiver_id: ReceiverId
    initial_credit: int


@dataclass(frozen=True, slots=True)
class AddCredit:
    receiver_id: ReceiverId
    credit: int


@dataclass(frozen=True, slots=True)
class BufferResponse:
    """One buffer or event. ``payload`` is what the ``PayloadAllocator`` handed out (received
    side), a bytes-like view (sending side), or None when the receiver discarded it."""

    receiver_id: ReceiverId
    sequence_number: int
    backlog: int
    data_type: int
    payload: object
    size: int


@dataclass(frozen=True, slots=True)
class ErrorResponse:
    """A failure for one receiver, or for the whole connection when ``receiver_id`` is None."""

    receiver_id: ReceiverId | None
    kind: ErrorKind
    text: str
    pickled_cause: bytes = b""

    @classmethod
    def of(
        cls, receiver_id: ReceiverId | None, kind: ErrorKind, cause: BaseException
    ) -> ErrorResponse:
        text = "".join(traceback.format_exception(cause)).rstrip()
        try:
            pickled = pickle.dumps(cause, protocol=5)
        except Exception:  # an unpicklable cause still travels as text
            pickled = b""
        return cls(receiver_id, kind, text, pickled)

    def cause(self) -> BaseException:
        """The remote exception; call only on an authenticated connection (it unpickles)."""
        if self.pickled_cause:
            try:
                loaded = pickle.loads(self.pickled_cause)
            except Exception:  # fall back to the text
                return RemoteError(self.text)
            if isinstance(loaded, BaseException):
                return loaded
        return RemoteError(self.text)


@dataclass(frozen=True, slots=True)
class CancelPartitionRequest:
    receiver_id: ReceiverId


@dataclass(frozen=True, slots=True)
class CloseRequest:
    pass


@dataclass(frozen=True, slots=True)
class BacklogAnnouncement:
    receiver_id: ReceiverId
    backlog: int


@dataclass(frozen=True, slots=True)
class Ping:
    """Anyone there? (the connection's ``Liveness``; answered by the connection itself)"""


@dataclass(frozen=True, slots=True)
class Pong:
    """The answer to a Ping."""


Message = (
    PartitionRequest | AddCredit | BufferResponse | ErrorResponse | CancelPartitionRequest
    | CloseRequest | BacklogAnnouncement | Ping | Pong
)


# ---------------------------------------------------------------------------------- encoding


def _frame(kind: MessageType, body: bytes) -> bytes:
    return HEADER.pack(MAGIC, kind, len(body)) + body


def encode(message: Message) -> list[bytes | memoryview]:
    """The frame for ``message`` as a list of chunks (a buffer's payload is not copied)."""
    if isinstance(message, BufferResponse):
        return [encode_buffer_header(message), _as_view(message.payload, message.size)]
    return [encode_control(message)]


def _as_view(payload: object, size: int) -> memoryview:
    view = payload if isinstance(payload, memoryview) else memoryview(payload)  # type: ignore[arg-type]
    return view[:size]


def encode_buffer_header(message: BufferResponse) -> bytes:
    """Header and fixed fields of a BufferResponse; the payload's ``size`` bytes follow."""
    length = _BUFFER_FIXED.size + message.size
    return HEADER.pack(MAGIC, MessageType.BUFFER_RESPONSE, length) + _BUFFER_FIXED.pack(
        message.receiver_id, message.sequence_number, message.backlog, message.data_type
    )


def encode_control(message: Message) -> bytes:
    """The whole frame of any message but a BufferResponse."""
    if isinstance(message, AddCredit):
        return _frame(MessageType.ADD_CREDIT, _ADD_CREDIT.pack(message.receiver_id, message.credit))
    if isinstance(message, PartitionRequest):
        return _frame(MessageType.PARTITION_REQUEST, _encode_request(message))
    if isinstance(message, ErrorResponse):
        return _frame(MessageType.ERROR_RESPONSE, _encode_error(message))
    if isinstance(message, CancelPartitionRequest):
        return _frame(MessageType.CANCEL_PARTITION, _RECEIVER.pack(message.receiver_id))
    if isinstance(message, CloseRequest):
        return _frame(MessageType.CLOSE_REQUEST, b"")
    if isinstance(message, BacklogAnnouncement):
        body = _ADD_CREDIT.pack(message.receiver_id, message.backlog)
        return _frame(MessageType.BACKLOG_ANNOUNCEMENT, body)
    if isinstance(message, Ping):
        return _PING_FRAME
    if isinstance(message, Pong):
        return _PONG_FRAME
    raise TypeError(f"not a control message: {message!r}")


_PING_FRAME: Final = _frame(MessageType.PING, b"")
_PONG_FRAME: Final = _frame(MessageType.PONG, b"")


def _encode_request(message: PartitionRequest) -> bytes:
    pid = message.partition_id
    data_set = str(pid.data_set).encode()
    return _PARTITION_REQUEST.pack(
        message.receiver_id, message.subpartition_index, message.initial_credit,
        pid.producer_subtask, pid.attempt, len(data_set),
    ) + data_set


def _encode_error(message: ErrorResponse) -> bytes:
    text = message.text.encode("utf-8", "replace")
    has_receiver = message.receiver_id is not None
    fixed = _ERROR_FIXED.pack(has_receiver, message.receiver_id or 0, message.kind, len(text))
    return fixed + text + message.pickled_cause


# ---------------------------------------------------------------------------------- decoding


def _decode_request(body: memoryview) -> PartitionRequest:
    if len(body) < _PARTITION_REQUEST.size:
        raise MalformedFrameError("partition request body too short")
    receiver, index, credit, subtask, attempt, n = _PARTITION_REQUEST.unpack_from(body)
    raw = bytes(body[_PARTITION_REQUEST.size:])
    if len(raw) != n:
        raise MalformedFrameError("partition request data-set id length mismatch")
    try:
        data_set = raw.decode()
    except UnicodeDecodeError as exc:
        raise MalformedFrameError("partition request data-set id is not UTF-8") from exc
    pid = ResultPartitionId(IntermediateDataSetId(data_set), SubtaskIndex(subtask), attempt)
    return PartitionRequest(pid, index, receiver, credit)


def _decode_error(body: memoryview) -> ErrorResponse:
    if len(body) < _ERROR_FIXED.size:
        raise MalformedFrameError("error response body too short")
    has_receiver, receiver, kind, n = _ERROR_FIXED.unpack_from(body)
    end = _ERROR_FIXED.size + n
    if end > len(body) or kind not in ErrorKind._value2member_map_:
        raise MalformedFrameError("error response text length or kind invalid")
    text = bytes(body[_ERROR_FIXED.size:end]).decode("utf-8", "replace")
    receiver_id = receiver if has_receiver else None
    return ErrorResponse(receiver_id, ErrorKind(kind), text, bytes(body[end:]))


def _decode_fixed(kind: MessageType, body: memoryview) -> Message:
    if kind is MessageType.ADD_CREDIT and len(body) == _ADD_CREDIT.size:
        return AddCredit(*_ADD_CREDIT.unpack_from(body))
    if kind is MessageType.CANCEL_PARTITION and len(body) == _RECEIVER.size:
        return CancelPartitionRequest(*_RECEIVER.unpack_from(body))
    if kind is MessageType.BACKLOG_ANNOUNCEMENT and len(body) == _ADD_CREDIT.size:
        return BacklogAnnouncement(*_ADD_CREDIT.unpack_from(body))
    if kind is MessageType.CLOSE_REQUEST and len(body) == 0:
        return CloseRequest()
    if kind is MessageType.PING and len(body) == 0:
        return Ping()
    if kind is MessageType.PONG and len(body) == 0:
        return Pong()
    if kind is MessageType.PARTITION_REQUEST:
        return _decode_request(body)
    if kind is MessageType.ERROR_RESPONSE:
        return _decode_error(body)
    raise MalformedFrameError(f"{kind.name} body of {len(body)} bytes")


PayloadTarget = memoryview | bytearray


class PayloadAllocator(Protocol):
    """Gives the decoder a place for a buffer payload and its handle, or None to discard it.

    The place is either a memoryview of exactly ``size`` bytes of memory that exists already
    (a pooled buffer: filled in place), or an empty ``bytearray`` that the decoder grows as
    the payload's bytes arrive (fresh memory: never allocated ahead of the bytes)."""

    def allocate(
        self, receiver_id: ReceiverId, data_type: int, size: int
    ) -> tuple[PayloadTarget, object] | None: ...


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
        self._staging = bytearray(max(staging_size, HEADER_SIZE + _BUFFER_FIXED.size))
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
            self._out.append(_decode_fixed(self._kind, view))
            self._expect_header()
        else:
            self._on_buffer_fixed(view)

    def _expect_header(self) -> None:
        self._state, self._need = _State.HEADER, HEADER_SIZE

    def _on_header(self, view: memoryview) -> None:
        magic, kind, length = HEADER.unpack(view)
        if magic != MAGIC:
            raise MalformedFrameError(f"bad magic 0x{magic:08x}")
        message_type = _MESSAGE_TYPES.get(kind)
        if message_type is None:
            raise MalformedFrameError(f"unknown message type {kind}")
        if length > self._max:
            raise FrameTooLargeError(length, self._max)
        self._kind = message_type
        if message_type is MessageType.BUFFER_RESPONSE:
            if length < _BUFFER_FIXED.size:
                raise MalformedFrameError("buffer response shorter than its fixed fields")
            self._state, self._need = _State.BUFFER_FIXED, _BUFFER_FIXED.size
            self._size = length - _BUFFER_FIXED.size
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
        self._out.append(_decode_fixed(self._kind, memoryview(body)))
        self._expect_header()
        return True

    def _on_buffer_fixed(self, view: memoryview) -> None:
        receiver, sequence, backlog, data_type = _BUFFER_FIXED.unpack(view)
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
