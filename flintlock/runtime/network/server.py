"""The serving side of a data connection: subpartition views sent to remote receivers.

For each ``PartitionRequest`` the handler creates a view through the TaskManager's
``ResultPartitionManager`` and keeps a reader for it (the view, the sender's credit ledger and
the next sequence number). Readers that can send (``view.is_available(credit)``: any event, or
a data buffer when credit > 0) wait in a FIFO; while the connection is writable the handler
polls them round robin, one buffer each turn, and queues a ``BufferResponse`` whose payload is
the producer's buffer itself (recycled once the bytes are on the socket).

Invariants:

- A data buffer is never sent without credit (``SenderCreditLedger`` raises otherwise).
- Each reader is in the FIFO at most once; a reader leaves it when it has nothing sendable and
  comes back on ``notify_data_available`` (producer thread, posted to the I/O thread) or on
  ``AddCredit``.
- Nothing is polled while the connection is above its high water mark; ``on_writable``
  resumes. Memory held for one connection is bounded by the high mark plus one buffer.
- A request for an unknown partition answers PARTITION_NOT_FOUND; a view whose producer failed
  answers PRODUCER_FAILED with the cause; after end of partition the view is released.
- Closing the connection releases every view it holds.

Thread ownership: the handler and its readers belong to the network I/O loop: the I/O thread,
or a producer thread sending inline through ``IOThread.call_now_or_soon`` while the loop is
idle (under the loop lock either way).
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable

from flintlock.common.errors import FlintlockError
from flintlock.runtime.network.buffer import DataType
from flintlock.runtime.network.connection import Wire
from flintlock.runtime.network.credit import SenderCreditLedger
from flintlock.runtime.network.events import is_end_of_partition
from flintlock.runtime.network.io_thread import IOThread
from flintlock.runtime.network.partition import (
    PartitionNotFoundError,
    ResultPartitionManager,
    ResultSubpartitionView,
)
from flintlock.runtime.network.protocol import (
    AddCredit,
    BacklogAnnouncement,
    BufferResponse,
    CancelPartitionRequest,
    CloseRequest,
    ErrorKind,
    ErrorResponse,
    MalformedFrameError,
    Message,
    PartitionRequest,
    ReceiverId,
)

log = logging.getLogger(__name__)


class PartitionReleasedError(FlintlockError):
    """The producer released a subpartition before its end (its task was cancelled)."""

    def __init__(self, receiver_id: ReceiverId) -> None:
        super().__init__(receiver_id)
        self.receiver_id = receiver_id

    def __str__(self) -> str:
        return f"the subpartition served to receiver {self.receiver_id} was released early"


class _Reader:
    """One served subpartition view. The listener side may be called from any thread."""

    __slots__ = (
        "backlog_announced", "credit", "handler", "queued", "receiver_id", "sequence", "view",
    )

    def __init__(self, handler: ServerHandler, receiver_id: ReceiverId, credit: int) -> None:
        self.handler = handler
        self.receiver_id = receiver_id
        self.credit = SenderCreditLedger(credit)
        self.sequence = 0
        self.queued = False
        self.backlog_announced = False  # told the receiver about data it has no credit for
        self.view: ResultSubpartitionView | None = None

    def notify_data_available(self) -> None:
        """From the producer's thread (or any): sends from there if the I/O loop is idle."""
        self.handler.io.call_now_or_soon(lambda: self.handler.enqueue(self))


class ServerHandler:
    """Serves partition requests arriving on one connection."""

    def __init__(self, io: IOThread, wire: Wire, partitions: ResultPartitionManager) -> None:
        self.io = io
        self.wire = wire
        self._partitions = partitions
        self._readers: dict[ReceiverId, _Reader] = {}
        self._available: deque[_Reader] = deque()
        self._closed = False
        self.on_close_callbacks: list[Callable[[], None]] = []

    # -- inbound ------------------------------------------------------------------------------

    def on_message(self, message: Message) -> None:
        if isinstance(message, PartitionRequest):
            self._on_request(message)
        elif isinstance(message, AddCredit):
            self._on_credit(message)
        elif isinstance(message, CancelPartitionRequest):
            self._release(message.receiver_id)
        elif isinstance(message, CloseRequest):
            self.wire.close(None)
        else:
            self.wire.close(MalformedFrameError(f"a client sent {type(message).__name__}"))

    def _on_request(self, request: PartitionRequest) -> None:
        if request.receiver_id in self._readers:
            self._release(request.receiver_id)
        reader = _Reader(self, request.receiver_id, request.initial_credit)
        self._readers[request.receiver_id] = reader
        try:
            reader.view = self._partitions.create_subpartition_view(
                request.partition_id, request.subpartition_index, reader
            )
        except PartitionNotFoundError as exc:
            del self._readers[request.receiver_id]
            kind = ErrorKind.PARTITION_NOT_FOUND
            self.wire.send(ErrorResponse.of(request.receiver_id, kind, exc))
        except Exception as exc:  # e.g. already consumed, bad index: that receiver fails
            del self._readers[request.receiver_id]
            self.wire.send(ErrorResponse.of(request.receiver_id, ErrorKind.OTHER, exc))
        else:
            self.enqueue(reader)

    def _on_credit(self, message: AddCredit) -> None:
        reader = self._readers.get(message.receiver_id)
        if reader is None:  # cancelled or finished meanwhile: the credit is moot
            return
        reader.credit.credit_added(message.credit)
        reader.backlog_announced = False
        self.enqueue(reader)

    def _release(self, receiver_id: ReceiverId) -> None:
        reader = self._readers.pop(receiver_id, None)
        if reader is not None and reader.view is not None:
            reader.view.release()

    # -- outbound -----------------------------------------------------------------------------

    def enqueue(self, reader: _Reader) -> None:
        """Queue ``reader`` if it is still served and has something sendable (I/O thread)."""
        if reader.queued or self._closed or self._readers.get(reader.receiver_id) is not reader:
            return
        view = reader.view
        if view is None:
            return
        if not view.is_available(reader.credit.credit) and not view.is_released:
            self._announce_backlog_if_starved(reader, view)
            return
        reader.queued = True
        self._available.append(reader)
        self._send_available()

    def on_writable(self) -> None:
        self._send_available()

    def _send_available(self) -> None:
        while self._available and self.wire.writable:
            reader = self._available.popleft()
            reader.queued = False
            if self._readers.get(reader.receiver_id) is reader:
                self._send_one(reader)

    def _send_one(self, reader: _Reader) -> None:
        view = reader.view
        assert view is not None
        if not view.is_available(reader.credit.credit):
            if view.is_released:
                self._on_view_released(reader, view)
            return
        polled = view.poll_next()
        if polled is None:
            if view.is_released:
                self._on_view_released(reader, view)
            return
        buffer = polled.buffer
        if buffer.data_type is DataType.DATA_BUFFER:
            reader.credit.data_buffer_sent()
        message = BufferResponse(
            reader.receiver_id, reader.sequence, polled.backlog, buffer.data_type,
            memoryview(buffer.segment), buffer.size,
        )
        reader.sequence += 1
        finished = buffer.data_type is not DataType.DATA_BUFFER and is_end_of_partition(buffer)
        self.wire.send(message, buffer.recycle)
        if finished:
            self._release(reader.receiver_id)
        elif view.is_available(reader.credit.credit) or view.is_released:
            reader.queued = True
            self._available.append(reader)
        else:
            self._announce_backlog_if_starved(reader, view)

    def _announce_backlog_if_starved(self, reader: _Reader, view: ResultSubpartitionView) -> None:
        """Data waits but the receiver gave no credit (it may have no exclusive buffers): say
        how much, once per credit drought, so it can borrow floating buffers."""
        if reader.credit.credit or reader.backlog_announced:
            return
        backlog = view.get_backlog()
        if backlog > 0:
            reader.backlog_announced = True
            self.wire.send(BacklogAnnouncement(reader.receiver_id, backlog))

    def _on_view_released(self, reader: _Reader, view: ResultSubpartitionView) -> None:
        self._readers.pop(reader.receiver_id, None)
        cause = view.failure_cause
        if cause is not None:
            kind = ErrorKind.PRODUCER_FAILED
            self.wire.send(ErrorResponse.of(reader.receiver_id, kind, cause))
        else:
            released = PartitionReleasedError(reader.receiver_id)
            self.wire.send(ErrorResponse.of(reader.receiver_id, ErrorKind.OTHER, released))
        view.release()

    def on_closed(self, cause: BaseException | None) -> None:
        self._closed = True
        readers, self._readers = self._readers, {}
        self._available.clear()
        for reader in readers.values():
            if reader.view is not None:
                reader.view.release()
        if cause is not None:
            log.info("data connection from %s closed: %s", self.wire.peer, cause)
        for callback in self.on_close_callbacks:
            callback()
