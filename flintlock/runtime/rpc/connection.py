"""One authenticated RPC connection: symmetric, either side may call or tell the other.

The JobManager's ``RpcServer`` and a TaskManager's ``RpcClient`` both end up holding an
``RpcConnection``; the JM uses the one it accepted to push deployments, checkpoint triggers
and cancellations, the TM uses its own to register, acknowledge and report.

Threads (both daemon, named after the peer):

- the *reader* owns the socket's receiving side and the ``FrameDecoder``: it completes pending
  calls when REPLY/FAILURE frames arrive and queues CALL/TELL messages for the dispatcher; on
  end of stream, error or a malformed frame it fails every pending call, queues the
  disconnect notification and closes the socket. It is the only thread that closes the socket.
  With an idle timeout it also runs the connection's ``Liveness`` between reads: it answers
  a PING with a PONG, pings a quiet peer, and ends the connection as lost
  (``ConnectionLostError`` naming ``heartbeat.timeout``) when the peer stays silent. Its
  keepalives never block it: one is skipped when another thread is sending (those bytes are
  on their way) or the socket cannot take it now.
- the *dispatcher* runs the handler, one message at a time in arrival order, so a handler may
  itself ``call`` the peer (its reply is read by the reader) without deadlock.

Any thread may ``call``/``tell``: sends are serialised by ``_send_lock``, and written in
chunks so that the reader sees a large frame's progress (``_bytes_sent``, written under the
send lock, read by the reader). ``_pending`` (call id
→ waiter) is guarded by ``_lock``. ``close()`` shuts the socket down, which wakes the reader,
then joins both threads (except the calling one, when a handler closes its own connection).

Invariant: payloads are unpickled only by the reader, and only after the handshake succeeded
(the server authenticates before constructing a connection, the client before returning one).

Over TLS the socket is a ``runtime.tls.TlsSocket``: the reader's ``recv`` decrypts, senders'
``sendall`` encrypt, each taking the TLS session's lock only for in-memory work, so the reader
blocked on the socket never holds up a sender. Decrypted bytes can wait inside the TLS socket
without the socket being readable; the reader takes them before it waits
(``buffered_input``).
"""

from __future__ import annotations

import itertools
import logging
import pickle
import queue
import selectors
import socket
import threading
import time
import traceback
from dataclasses import dataclass, field
from typing import Final, Protocol

from flintlock.runtime.liveness import PROGRESS_BYTES, Liveness, PeerSilent, SendPing
from flintlock.runtime.rpc.errors import (
    ConnectionLostError,
    MalformedFrameError,
    RemoteCallError,
    RemoteTraceback,
    RpcClosedError,
    RpcTimeoutError,
)
from flintlock.runtime.rpc.frames import (
    DEFAULT_MAX_FRAME_SIZE,
    Frame,
    FrameDecoder,
    FrameKind,
    decode_payload,
    encode_frame,
    encode_message,
)
from flintlock.runtime.tls.channel import TlsSocket

LOG = logging.getLogger(__name__)
_RECV_SIZE = 64 * 1024
_DONTWAIT: Final = getattr(socket, "MSG_DONTWAIT", 0)


class RpcHandler(Protocol):
    """What a connection dispatches to (on its dispatcher thread)."""

    def on_message(self, connection: RpcConnection, message: object) -> object:
        """Handle a CALL (the return value is the reply) or a TELL (it is dropped)."""
        ...

    def on_disconnected(self, connection: RpcConnection, cause: BaseException | None) -> None:
        """The connection ended: ``cause`` is None when this side closed it."""
        ...


@dataclass(frozen=True, slots=True)
class RemoteFailure:
    """A handler's exception on the wire: the exception pickled if it can be, else its text."""

    pickled: bytes | None
    type_name: str
    message: str
    traceback: str

    @classmethod
    def capture(cls, exc: BaseException) -> RemoteFailure:
        text = "".join(traceback.format_exception(exc))
        try:
            pickled: bytes | None = pickle.dumps(exc, protocol=5)
        except Exception:
            pickled = None
        return cls(pickled, type(exc).__qualname__, str(exc), text)

    def to_exception(self) -> BaseException:
        """The original exception (``__cause__`` = the remote traceback) or a RemoteCallError."""
        if self.pickled is not None:
            try:
                exc = pickle.loads(self.pickled)
            except Exception:
                exc = None
            if isinstance(exc, BaseException):
                exc.__cause__ = RemoteTraceback(self.traceback)
                return exc
        return RemoteCallError(self.type_name, self.message, self.traceback)


@dataclass(frozen=True, slots=True)
class RpcConnectionStatistics:
    bytes_sent: int
    bytes_received: int
    keepalives_sent: int
    keepalives_received: int


@dataclass(slots=True)
class _PendingCall:
    message_type: str
    done: threading.Event = field(default_factory=threading.Event)
    reply: object = None
    error: BaseException | None = None


class RpcConnection:
    """An authenticated socket with a reader and a dispatcher thread; see the module doc."""

    def __init__(
        self,
        sock: socket.socket | TlsSocket,
        handler: RpcHandler,
        peer_name: str,
        max_frame_size: int = DEFAULT_MAX_FRAME_SIZE,
        idle_timeout_s: float | None = None,
    ) -> None:
        self.peer_name = peer_name
        self._sock = sock
        self._handler = handler
        self._max_frame_size = max_frame_size
        self._idle_timeout_s = idle_timeout_s
        self._bytes_sent = 0  # written under _send_lock
        self._bytes_received = 0  # reader thread
        self._keepalives_sent = 0  # reader thread
        self._keepalives_received = 0  # reader thread
        self._lock = threading.Lock()
        self._send_lock = threading.Lock()
        self._pending: dict[int, _PendingCall] = {}  # guarded by _lock
        self._ids = itertools.count(1)  # guarded by _lock
        self._closing = False  # guarded by _lock; set by close()
        self._lost: BaseException | None = None  # guarded by _lock; set by the reader
        # (frame, message) for the dispatcher; (None, cause) ends it
        self._inbox: queue.SimpleQueue[tuple[Frame | None, object]] = queue.SimpleQueue()
        self._reader = threading.Thread(
            target=self._read_loop, name=f"flintlock-rpc-reader-{peer_name}", daemon=True
        )
        self._dispatcher = threading.Thread(
            target=self._dispatch_loop, name=f"flintlock-rpc-dispatch-{peer_name}", daemon=True
        )
        self.closed = threading.Event()

    def start(self) -> RpcConnection:
        self._sock.settimeout(None)
        self._reader.start()
        self._dispatcher.start()
        return self

    # -- sending ----------------------------------------------------------------------

    def tell(self, message: object) -> None:
        """Send a one-way message; raises if the connection is closed or lost."""
        self._send(FrameKind.TELL, 0, message)

    def call(self, message: object, timeout_s: float) -> object:
        """Send ``message`` and wait for the reply; a remote exception is re-raised here."""
        pending = _PendingCall(type(message).__qualname__)
        with self._lock:
            self._raise_if_unusable()
            call_id = next(self._ids)
            self._pending[call_id] = pending
        try:
            self._send(FrameKind.CALL, call_id, message)
            if not pending.done.wait(timeout_s):
                raise RpcTimeoutError(pending.message_type, self.peer_name, timeout_s)
        finally:
            with self._lock:
                self._pending.pop(call_id, None)
        if pending.error is not None:
            raise pending.error
        return pending.reply

    def _send(self, kind: FrameKind, call_id: int, message: object) -> None:
        data = encode_message(kind, call_id, message, self._max_frame_size)
        with self._lock:
            self._raise_if_unusable()
        try:
            with self._send_lock:
                self._send_locked(data)
        except OSError as exc:
            with self._lock:
                self._raise_if_unusable()
            raise ConnectionLostError(self.peer_name, f"send failed: {exc}") from exc

    def _send_locked(self, data: bytes) -> None:
        view = memoryview(data)
        for start in range(0, len(view), PROGRESS_BYTES):
            chunk = view[start:start + PROGRESS_BYTES]
            self._sock.sendall(chunk)
            self._bytes_sent += len(chunk)

    def statistics(self) -> RpcConnectionStatistics:
        return RpcConnectionStatistics(self._bytes_sent, self._bytes_received,
                                       self._keepalives_sent, self._keepalives_received)

    def _raise_if_unusable(self) -> None:
        if self._closing:
            raise RpcClosedError(self.peer_name)
        if self._lost is not None:
            raise ConnectionLostError(self.peer_name, str(self._lost)) from self._lost

    # -- closing ----------------------------------------------------------------------

    def close(self) -> None:
        """Close from this side: pending calls fail with RpcClosedError; threads are joined."""
        with self._lock:
            self._closing = True
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        current = threading.current_thread()
        for thread in (self._reader, self._dispatcher):
            if thread.ident is not None and thread is not current:
                thread.join()
        if self._reader.ident is None:
            self._close_socket()
            self.closed.set()

    @property
    def finished(self) -> bool:
        """Both threads have ended (the connection can be forgotten without a join)."""
        return self.closed.is_set() and not self._dispatcher.is_alive()

    @property
    def is_open(self) -> bool:
        with self._lock:
            return not self._closing and self._lost is None

    # -- reader thread ----------------------------------------------------------------

    def _read_loop(self) -> None:
        decoder = FrameDecoder(self._max_frame_size)
        cause: BaseException | None = None
        try:
            with selectors.DefaultSelector() as selector:
                selector.register(self._sock, selectors.EVENT_READ)
                liveness = None
                if self._idle_timeout_s is not None:
                    liveness = Liveness(self._idle_timeout_s, time.monotonic())
                while True:
                    if liveness is not None:
                        silent = self._await_bytes(selector, liveness)
                        if silent is not None:
                            cause = ConnectionLostError(self.peer_name, _silence(silent))
                            break
                    data = self._sock.recv(_RECV_SIZE)
                    if not data:
                        detail = "peer closed the connection"
                        if decoder.pending_bytes:
                            detail += f" mid-frame ({decoder.pending_bytes} bytes pending)"
                        cause = ConnectionLostError(self.peer_name, detail)
                        break
                    self._bytes_received += len(data)
                    if liveness is not None:
                        liveness.received(time.monotonic())
                    for frame in decoder.feed(data):
                        self._on_frame(frame)
        except MalformedFrameError as exc:
            LOG.warning("closing RPC connection to %s: %s", self.peer_name, exc)
            cause = exc
        except OSError as exc:
            cause = ConnectionLostError(self.peer_name, str(exc))
        finally:
            self._finish_reading(cause)

    def _await_bytes(self, selector: selectors.BaseSelector, liveness: Liveness
                     ) -> PeerSilent | None:
        """Waits until the socket is readable (None), pinging a quiet peer on the way, or
        until the peer has been silent for the idle timeout (its ``PeerSilent``)."""
        while True:
            if isinstance(self._sock, TlsSocket) and self._sock.buffered_input:
                return None
            now = time.monotonic()
            if selector.select(max(0.0, liveness.next_check() - now)):
                return None
            now = time.monotonic()
            liveness.sent(now, self._bytes_sent)
            action = liveness.poll(now)
            if isinstance(action, PeerSilent):
                return action
            if isinstance(action, SendPing):
                self._send_keepalive(FrameKind.PING)

    def _send_keepalive(self, kind: FrameKind) -> None:
        """From the reader, never blocking: skipped while another thread sends (its bytes
        are on their way) or when the socket cannot take a frame now."""
        if not self._send_lock.acquire(blocking=False):
            return
        try:
            with selectors.DefaultSelector() as selector:
                selector.register(self._sock, selectors.EVENT_WRITE)
                if not selector.select(0):
                    return
            frame = encode_frame(kind, 0, b"", self._max_frame_size)
            sent = self._sock.send(frame, _DONTWAIT)
            if sent < len(frame):  # a writable socket takes 15 bytes; this is a safeguard
                self._sock.sendall(frame[sent:])
            self._bytes_sent += len(frame)
            self._keepalives_sent += 1
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            LOG.debug("keepalive to %s not sent: %s", self.peer_name, exc)
        finally:
            self._send_lock.release()

    def _on_frame(self, frame: Frame) -> None:
        if frame.kind in (FrameKind.PING, FrameKind.PONG):
            self._keepalives_received += 1
            if frame.kind is FrameKind.PING:
                self._send_keepalive(FrameKind.PONG)
            return
        message = decode_payload(frame)
        if frame.kind in (FrameKind.CALL, FrameKind.TELL):
            self._inbox.put((frame, message))
            return
        with self._lock:
            pending = self._pending.get(frame.correlation_id)
        if pending is None:
            return
        if frame.kind is FrameKind.FAILURE:
            if not isinstance(message, RemoteFailure):
                raise MalformedFrameError(f"FAILURE frame carries a {type(message).__name__}")
            pending.error = message.to_exception()
        else:
            pending.reply = message
        pending.done.set()

    def _finish_reading(self, cause: BaseException | None) -> None:
        with self._lock:
            closing = self._closing
            if not closing:
                self._lost = cause or ConnectionLostError(self.peer_name, "reader stopped")
            error = self._lost or RpcClosedError(self.peer_name)
            pending = list(self._pending.values())
        for call in pending:
            call.error = error
            call.done.set()
        self._close_socket()
        self._inbox.put((None, None if closing else error))
        self.closed.set()

    def _close_socket(self) -> None:
        """Shut down first (a sender blocked on a full socket wakes with an error), then close
        under the send lock, so no sender ever writes to a closed, possibly reused, fd."""
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        with self._send_lock:
            self._sock.close()

    # -- dispatcher thread ------------------------------------------------------------

    def _dispatch_loop(self) -> None:
        while True:
            frame, message = self._inbox.get()
            if frame is None:
                self._notify_disconnected(message)
                return
            self._dispatch(frame, message)

    def _dispatch(self, frame: Frame, message: object) -> None:
        try:
            reply = self._handler.on_message(self, message)
        except Exception as exc:
            if frame.kind is FrameKind.TELL:
                LOG.exception("RPC handler failed on %s from %s", type(message).__name__,
                              self.peer_name)
                return
            self._reply(FrameKind.FAILURE, frame.correlation_id, RemoteFailure.capture(exc))
            return
        if frame.kind is FrameKind.CALL:
            self._reply(FrameKind.REPLY, frame.correlation_id, reply)

    def _reply(self, kind: FrameKind, call_id: int, payload: object) -> None:
        try:
            self._send(kind, call_id, payload)
        except (RpcClosedError, ConnectionLostError):
            LOG.debug("reply to %s dropped: connection ended", self.peer_name)
        except Exception as exc:
            if kind is FrameKind.FAILURE:
                LOG.exception("could not send a failure reply to %s", self.peer_name)
                return
            self._reply(FrameKind.FAILURE, call_id, RemoteFailure.capture(exc))

    def _notify_disconnected(self, cause: object) -> None:
        try:
            self._handler.on_disconnected(
                self, cause if isinstance(cause, BaseException) else None
            )
        except Exception:
            LOG.exception("RPC disconnect handler failed for %s", self.peer_name)

    def __repr__(self) -> str:
        return f"RpcConnection({self.peer_name}, open={self.is_open})"


def _silence(silent: PeerSilent) -> str:
    return (f"nothing heard for {silent.silent_s:.1f} s, not even an answer to a keepalive "
            f"(heartbeat.timeout is {silent.timeout_s:g} s)")
