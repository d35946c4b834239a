"""The data-plane wire protocol between TaskManagers: its messages and their frames.

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

- Encoding does not copy a buffer's payload (``encode`` returns it as a separate chunk);
  decoding received bytes is ``frame_decoder.FrameDecoder``'s, an I/O-free incremental
  decoder that parses the bodies with ``decode_body``.
- Data payloads are never unpickled here. An error response's cause stays as bytes until
  ``ErrorResponse.cause()`` is called, which connections only do after authentication.
- A ``PayloadAllocator`` (the receiving side's) says where a buffer payload goes.

Who calls it: the connection code in ``transport``/``connection`` (the network I/O thread owns
each decoder and encoder) and the in-memory transport (which passes message objects and
never encodes them).
"""

from __future__ import annotations

import enum
import pickle
import struct
import traceback
from dataclasses import dataclass
from typing import Final, Protocol

from flintlock.common.errors import FlintlockError
from flintlock.common.ids import IntermediateDataSetId, ResultPartitionId, SubtaskIndex

MAGIC: Final = 0xF11C0C4B
HEADER: Final = struct.Struct("!IBI")
HEADER_SIZE: Final = HEADER.size
_PARTITION_REQUEST = struct.Struct("!QIIIIH")
_ADD_CREDIT = struct.Struct("!QI")
BUFFER_FIXED = struct.Struct("!QQIB")
_ERROR_FIXED = struct.Struct("!BQBI")
_RECEIVER = struct.Struct("!Q")

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


MESSAGE_TYPES: dict[int, MessageType] = {int(kind): kind for kind in MessageType}


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
    length = BUFFER_FIXED.size + message.size
    return HEADER.pack(MAGIC, MessageType.BUFFER_RESPONSE, length) + BUFFER_FIXED.pack(
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


def decode_body(kind: MessageType, body: memoryview) -> Message:
    """The message of a complete frame body of ``kind`` (not a BufferResponse's)."""
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
