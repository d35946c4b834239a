"""The requesting side of a data connection: remote input channels multiplexed on one wire.

A TaskManager keeps one ``ClientHandler`` per producer TaskManager it reads from; every
``RemoteInputChannel`` reading a subpartition there registers under its receiver id. The
handler sends partition requests, credit announcements and cancellations, and hands each
arriving ``BufferResponse`` to its channel. It is also the decoder's ``PayloadAllocator``: a
data payload is received straight into an empty buffer of the receiving channel (exclusive or
floating, as the channel's credit ledger decides), an event into a fresh unpooled buffer.

Invariants:

- A BufferResponse for an unknown receiver (cancelled meanwhile) is discarded and the
  cancellation repeated; its bytes are skipped, never allocated.
- A data buffer arriving for a channel without an empty buffer breaks the credit protocol:
  the connection fails (``CreditViolationError``).
- Connection-wide failures (malformed frame, lost connection, error response without a
  receiver) fail every channel on this connection and no other.

Thread ownership: the handler's maps belong to the network I/O loop (see ``io_thread``);
``request``, ``notify_credit`` and ``cancel`` may be called from any thread (they post to the
loop; ``notify_credit`` runs on the calling thread when the loop is idle).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Protocol

from flintlock.runtime.network.buffer import Buffer, DataType
from flintlock.runtime.network.connection import Wire
from flintlock.runtime.network.io_thread import IOThread
from flintlock.runtime.network.protocol import (
    AddCredit,
    BacklogAnnouncement,
    BufferResponse,
    CancelPartitionRequest,
    CloseRequest,
    ConnectionLostError,
    ErrorKind,
    ErrorResponse,
    MalformedFrameError,
    Message,
    PartitionRequest,
    PayloadTarget,
    ReceiverId,
)

log = logging.getLogger(__name__)


class ReceivingChannel(Protocol):
    """What the client handler needs of a remote input channel."""

    receiver_id: ReceiverId

    @property
    def is_released(self) -> bool: ...

    def partition_request(self) -> PartitionRequest: ...

    def take_target(self, data_type: DataType, size: int
                    ) -> tuple[PayloadTarget, Buffer] | None: ...

    def on_buffer(self, buffer: Buffer, sequence_number: int, backlog: int) -> None: ...

    def on_error(self, cause: BaseException) -> None: ...

    def on_partition_not_found(self, cause: BaseException) -> None: ...

    def on_producer_failed(self, cause: BaseException) -> None: ...

    def on_backlog(self, backlog: int) -> None: ...

    def announce_credit(self) -> int: ...


_DATA_TYPES: dict[int, DataType] = {int(kind): kind for kind in DataType}


def valid_data_type(value: int) -> bool:
    return value in _DATA_TYPES


class ClientHandler:
    """The client end of one connection to a producer TaskManager."""

    def __init__(self, io: IOThread, peer: str, on_closed: Callable[[ClientHandler], None]) -> None:
        self.io = io
        self.peer = peer
        self.wire: Wire | None = None
        self._channels: dict[ReceiverId, ReceivingChannel] = {}
        self._closed_cause: BaseException | None = None
        self._closed = False
        self._on_closed_callback = on_closed

    def attach(self, wire: Wire) -> None:
        self.wire = wire

    # -- any thread ---------------------------------------------------------------------------

    def request(self, channel: ReceivingChannel) -> None:
        self.io.call_soon(lambda: self._request(channel))

    def notify_credit(self, channel: ReceivingChannel) -> None:
        """From the thread that freed a buffer: announces from there if the loop is idle."""
        self.io.call_now_or_soon(lambda: self._announce(channel))

    def cancel(self, channel: ReceivingChannel) -> None:
        self.io.call_soon(lambda: self._cancel(channel.receiver_id))

    def close(self) -> None:
        """Say goodbye to the producer (CloseRequest) and close the connection."""
        self.io.call_soon(self._close)

    # -- I/O thread ---------------------------------------------------------------------------

    def _request(self, channel: ReceivingChannel) -> None:
        if channel.is_released:  # e.g. a retry timer firing after the task let go
            return
        if self._closed or self.wire is None:
            channel.on_error(self._closed_cause or ConnectionLostError(self.peer))
            return
        self._channels[channel.receiver_id] = channel
        self.wire.send(channel.partition_request())

    def _announce(self, channel: ReceivingChannel) -> None:
        if self._closed or self.wire is None or channel.receiver_id not in self._channels:
            return
        credit = channel.announce_credit()
        if credit > 0:
            self.wire.send(AddCredit(channel.receiver_id, credit))

    def _cancel(self, receiver_id: ReceiverId) -> None:
        if self._channels.pop(receiver_id, None) is not None and self.wire is not None:
            self.wire.send(CancelPartitionRequest(receiver_id))

    def _close(self) -> None:
        if self.wire is not None and not self._closed:
            self.wire.send(CloseRequest())
            self.wire.close(None)

    def allocate(
        self, receiver_id: ReceiverId, data_type: int, size: int
    ) -> tuple[PayloadTarget, object] | None:
        channel = self._channels.get(receiver_id)
        if channel is None:
            return None
        return channel.take_target(_DATA_TYPES[data_type], size)  # validated by the decoder

    def on_message(self, message: Message) -> None:
        if isinstance(message, BufferResponse):
            self._on_buffer(message)
        elif isinstance(message, ErrorResponse):
            self._on_error(message)
        elif isinstance(message, BacklogAnnouncement):
            channel = self._channels.get(message.receiver_id)
            if channel is not None:
                channel.on_backlog(message.backlog)
        else:
            assert self.wire is not None
            self.wire.close(MalformedFrameError(f"a server sent {type(message).__name__}"))

    def _on_buffer(self, message: BufferResponse) -> None:
        channel = self._channels.get(message.receiver_id)
        buffer = message.payload
        if channel is None or not isinstance(buffer, Buffer):
            if isinstance(buffer, Buffer):
                buffer.recycle()
            self._cancel_unknown(message.receiver_id)
            return
        buffer.size = message.size
        channel.on_buffer(buffer, message.sequence_number, message.backlog)

    def _cancel_unknown(self, receiver_id: ReceiverId) -> None:
        if self.wire is not None and not self._closed:
            self.wire.send(CancelPartitionRequest(receiver_id))

    def _on_error(self, message: ErrorResponse) -> None:
        cause = message.cause()  # safe: this connection is authenticated
        if message.receiver_id is None:
            assert self.wire is not None
            self.wire.close(cause)
            return
        channel = self._channels.pop(message.receiver_id, None)
        if channel is None:
            return
        if message.kind is ErrorKind.PARTITION_NOT_FOUND:
            channel.on_partition_not_found(cause)
        elif message.kind is ErrorKind.PRODUCER_FAILED:
            channel.on_producer_failed(cause)
        else:
            channel.on_error(cause)

    def on_writable(self) -> None:
        return None

    def on_closed(self, cause: BaseException | None) -> None:
        self._closed = True
        self._closed_cause = cause if cause is not None else ConnectionLostError(self.peer)
        channels, self._channels = self._channels, {}
        self._on_closed_callback(self)
        for channel in channels.values():
            channel.on_error(self._closed_cause)
