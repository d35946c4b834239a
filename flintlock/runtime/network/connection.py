"""One authenticated TCP data connection: framing in, framing out, write water marks.

A ``SocketConnection`` moves bytes between a non-blocking socket and a ``ConnectionHandler``
(the server side serving subpartitions, or the client side feeding remote channels). Reads go
through the I/O-free ``FrameDecoder`` (``recv_into`` its ``read_target()``, so a buffer payload
lands in the receiver's buffer); writes are queued as chunks (a sender buffer's payload is a
memoryview, never copied) and written with ``sendmsg`` when the I/O loop flushes.

Invariants:

- ``writable`` has hysteresis: it turns False when more than the high water mark
  (``flintlock.network.write-buffer.high-water-mark``) bytes are queued and True again only
  below the low mark; then the handler's ``on_writable`` runs. Handlers stop polling
  subpartition views while not writable, so a slow socket never grows memory without bound.
- Each queued chunk may carry a completion callback (the sender buffer's ``recycle``); it runs
  exactly once, when the chunk has been written or when the connection closes.
- Any protocol error, socket error or end of stream closes this connection only and tells its
  handler why (``on_closed(cause)``; None for a clean end between frames).
- Over TLS (``runtime.tls.TlsSocket``) the same reads and writes carry decrypted bytes; two
  things differ: decrypted bytes may wait in the TLS socket that no readiness announces (a
  read that stops on its budget with such bytes posts another), and sealed bytes the socket
  did not take keep write interest until they are out.
- With an idle timeout (``heartbeat.timeout``), the connection keeps its own ``Liveness``: it
  answers a PING with a PONG and pings a quiet peer (neither reaches the handler), and a peer
  silent for the whole timeout fails the connection with ``PeerSilentError``, a lost
  connection: its channels fail and the job fails over instead of waiting for ever.

Thread ownership: everything here belongs to the TaskManager's network I/O loop: its I/O
thread, or a thread running a task inline while the loop is idle (``IOThread.call_now_or_soon``),
always under the loop lock.
"""

from __future__ import annotations

import itertools
import logging
import selectors
import socket
import time
from collections import deque
from collections.abc import Callable
from typing import Protocol

from flintlock.common.errors import FlintlockError
from flintlock.runtime.liveness import Liveness, PeerSilent, SendPing
from flintlock.runtime.network.frame_decoder import FrameDecoder
from flintlock.runtime.network.io_thread import IOThread
from flintlock.runtime.network.protocol import (
    BufferResponse,
    Message,
    PeerSilentError,
    Ping,
    Pong,
    ProtocolError,
    encode_buffer_header,
    encode_control,
)
from flintlock.runtime.tls.channel import TlsSocket

log = logging.getLogger(__name__)

Completion = Callable[[], None]
_MAX_CHUNKS_PER_SEND = 64
_MAX_READS_PER_WAKEUP = 16


class ConnectionHandler(Protocol):
    def on_message(self, message: Message) -> None: ...

    def on_writable(self) -> None: ...

    def on_closed(self, cause: BaseException | None) -> None: ...


class Wire(Protocol):
    """What a handler needs of its connection (TCP here, in-memory in flintlock.testing)."""

    peer: str

    @property
    def writable(self) -> bool: ...

    def send(self, message: Message, on_sent: Completion | None = None) -> None: ...

    def close(self, cause: BaseException | None = None) -> None: ...


class SocketConnection:
    """A framed, water-marked, non-blocking connection registered with an ``IOThread``."""

    def __init__(
        self,
        io: IOThread,
        sock: socket.socket | TlsSocket,
        decoder: FrameDecoder,
        high_water_mark: int,
        low_water_mark: int,
        peer: str,
        idle_timeout_s: float | None = None,
    ) -> None:
        self.io = io
        self.peer = peer
        self._idle_timeout_s = idle_timeout_s
        self._liveness: Liveness | None = None
        self._sock = sock
        self._tls = sock if isinstance(sock, TlsSocket) else None
        self._decoder = decoder
        self._high = high_water_mark
        self._low = min(low_water_mark, high_water_mark)
        self._chunks: deque[memoryview | bytes] = deque()
        self._completions: deque[tuple[int, Completion]] = deque()  # (chunk number, callback)
        self._chunks_done = 0  # chunks fully written so far
        self._chunks_queued = 0
        self._queued_bytes = 0
        self._writable = True
        self._want_write = False
        self._closed = False
        self.handler: ConnectionHandler | None = None
        self._closer: int | None = None
        self.bytes_sent = 0
        self.bytes_received = 0
        self.max_queued_bytes = 0  # the most bytes ever queued at once (statistics)
        self.keepalives_sent = 0
        self.keepalives_received = 0

    def start(self, handler: ConnectionHandler) -> None:
        self.handler = handler
        self.io.selector.register(self._sock, selectors.EVENT_READ, self._on_ready)
        self._closer = self.io.add_closer(lambda: self.close(None))
        if self._idle_timeout_s is not None:
            self._liveness = Liveness(self._idle_timeout_s, time.monotonic())
            self._check_liveness()
        if self._tls is not None and self._tls.buffered_input:
            self.io.call_soon(self._read)
        if self._tls is not None and self._tls.wants_write:
            self.io.flush_later(self)  # sealed records of the handshake still wait

    @property
    def writable(self) -> bool:
        return self._writable and not self._closed

    @property
    def queued_bytes(self) -> int:
        return self._queued_bytes

    def send(self, message: Message, on_sent: Completion | None = None) -> None:
        if self._closed:
            if on_sent is not None:
                on_sent()
            return
        if isinstance(message, BufferResponse):
            self._queue(encode_buffer_header(message))
            view = message.payload if isinstance(message.payload, memoryview) else None
            self._queue(view[: message.size] if view is not None else b"")
        else:
            self._queue(encode_control(message))
        if on_sent is not None:
            self._completions.append((self._chunks_queued, on_sent))
        if self._queued_bytes > self.max_queued_bytes:
            self.max_queued_bytes = self._queued_bytes
        if self._queued_bytes > self._high:
            self._writable = False
        self.io.flush_later(self)

    def _queue(self, chunk: memoryview | bytes) -> None:
        self._chunks.append(chunk)
        self._chunks_queued += 1
        self._queued_bytes += len(chunk)

    # -- I/O ----------------------------------------------------------------------------------

    def _on_ready(self, mask: int) -> None:
        if mask & selectors.EVENT_READ:
            self._read()
        if mask & selectors.EVENT_WRITE and not self._closed:
            self.flush()

    def _read(self) -> None:
        for _ in range(_MAX_READS_PER_WAKEUP):
            if self._closed:
                return
            target = self._decoder.read_target()
            try:
                n = self._sock.recv_into(target)
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:
                self._fail(exc)
                return
            if n == 0:
                self._end_of_stream()
                return
            self.bytes_received += n
            if self._liveness is not None:
                self._liveness.received(time.monotonic())
            try:
                self._dispatch(self._decoder.bytes_received(n))
            except FlintlockError as exc:  # malformed input or a broken protocol rule
                self._fail(exc)
                return
            if n < len(target):
                return  # the socket is drained: spare the syscall that would say so
        if self._tls is not None and self._tls.buffered_input and not self._closed:
            self.io.call_soon(self._read)  # decrypted bytes no readiness will announce

    def _dispatch(self, messages: list[Message]) -> None:
        assert self.handler is not None
        for message in messages:
            if self._closed:
                return
            if isinstance(message, (Ping, Pong)):
                self.keepalives_received += 1
                if isinstance(message, Ping):
                    self.send(Pong())
                continue
            self.handler.on_message(message)

    def _check_liveness(self) -> None:
        """A timer on the I/O thread, re-armed at the liveness' next check while open."""
        liveness = self._liveness
        if self._closed or liveness is None:
            return
        now = time.monotonic()
        liveness.sent(now, self.bytes_sent)
        action = liveness.poll(now)
        if isinstance(action, PeerSilent):
            self._fail(PeerSilentError(self.peer, action.silent_s, action.timeout_s))
            return
        if isinstance(action, SendPing):
            self.keepalives_sent += 1
            self.send(Ping())
        self.io.call_later(liveness.next_check() - now, self._check_liveness)

    def _end_of_stream(self) -> None:
        try:
            self._decoder.close(self.peer)
        except ProtocolError as exc:
            self._fail(exc)
            return
        self.close(None)

    def _fail(self, cause: BaseException) -> None:
        log.warning("data connection %s failed: %s", self.peer, cause)
        self.close(cause)

    def flush(self) -> None:
        if self._tls is not None and not self._closed:
            try:
                self._tls.flush_output()
            except OSError as exc:
                self._fail(exc)
                return
        while self._chunks and not self._closed:
            batch = list(itertools.islice(self._chunks, _MAX_CHUNKS_PER_SEND))
            try:
                sent = self._sock.sendmsg(batch)
            except (BlockingIOError, InterruptedError):
                break
            except OSError as exc:
                self._fail(exc)
                return
            self.bytes_sent += sent
            self._consume(sent)
            if sent < sum(len(c) for c in batch) and self._socket_full():
                break
        self._update_write_interest()
        if not self._writable and self._queued_bytes <= self._low and not self._closed:
            self._writable = True
            assert self.handler is not None
            self.handler.on_writable()

    def _socket_full(self) -> bool:
        """A short send means a full socket; over TLS only if sealed bytes wait (TLS seals
        a budget per call)."""
        return self._tls is None or self._tls.wants_write

    def _consume(self, sent: int) -> None:
        self._queued_bytes -= sent
        while sent:
            head = self._chunks[0]
            if len(head) > sent:
                self._chunks[0] = memoryview(head)[sent:]
                return
            sent -= len(head)
            self._chunks.popleft()
            self._chunk_done()
        while self._chunks and not len(self._chunks[0]):
            self._chunks.popleft()
            self._chunk_done()

    def _chunk_done(self) -> None:
        self._chunks_done += 1
        while self._completions and self._completions[0][0] <= self._chunks_done:
            self._completions.popleft()[1]()

    def _update_write_interest(self) -> None:
        sealed = self._tls is not None and self._tls.wants_write
        want = (bool(self._chunks) or sealed) and not self._closed
        if want != self._want_write:
            self._want_write = want
            events = selectors.EVENT_READ | (selectors.EVENT_WRITE if want else 0)
            self.io.selector.modify(self._sock, events, self._on_ready)

    def close(self, cause: BaseException | None = None) -> None:
        """Close the socket, run every pending completion, release a half-received payload."""
        if self._closed:
            return
        self._closed = True
        if self._closer is not None:
            self.io.remove_closer(self._closer)
        try:
            self.io.selector.unregister(self._sock)
        except (KeyError, ValueError):
            pass
        self._sock.close()
        self._chunks.clear()
        self._queued_bytes = 0
        completions, self._completions = self._completions, deque()
        for _, completion in completions:
            completion()
        partial = self._decoder.abandon()
        recycle = getattr(partial, "recycle", None)
        if recycle is not None:
            recycle()
        if self.handler is not None:
            self.handler.on_closed(cause)
