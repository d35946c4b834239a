"""The JobManager's RPC endpoint and the TaskManager's way in (``RpcClient.connect``).

``RpcServer`` listens on ``jobmanager.bind-host``:``jobmanager.rpc.port`` (127.0.0.1 and a free
port by default). Its *acceptor* thread runs one selector loop over the listening socket, a
wake-up socket pair and every connection still authenticating: each accepted socket is made
non-blocking and authenticated with the job secret (context ``CONTROL_PLANE``) by an
``AcceptingHandshake`` under an absolute deadline (``handshake_timeout_s`` from accept, however
slowly the client trickles); only on success is it wrapped in an ``RpcConnection``
dispatching to the server's handler. A wrong secret, garbage or the deadline is logged and the
socket closed: nothing is unpickled, the handler never hears of it, no thread waits on it.

Bounds against any client (issue 14): at most ``max_pending_handshakes`` connections
authenticate at once (``admission.Acceptor``); more are closed at once, unread, with one log
line per burst. An authenticated connection silent for ``heartbeat.timeout`` (keepalives
included, ``runtime.liveness``) is closed as lost.

``RpcClient.connect`` dials, authenticates (raising ``AuthenticationError`` on a wrong secret)
and returns a started ``RpcConnection`` whose handler receives what the server pushes.

TLS (``security.ssl.internal.enabled``): when the job secret carries the job's TLS material
(``runtime.tls.certificates.JobSecret``), both sides first run mutual TLS 1.3 against the
per-job CA — the acceptor non-blocking, within the same absolute deadline
(``SecuredAccept``), the client under one deadline — and the secret handshake and every frame
then travel inside TLS. A client without the job's certificate gets a
``TlsHandshakeError``; on the server it is logged and closed like a wrong secret.

Thread ownership: the acceptor thread owns the listening socket and the handshakes (and their
``Admission``); ``_connections`` and ``_closed`` are guarded by ``_lock`` (the acceptor and
``close()`` touch them). ``close()`` stops the acceptor (which closes the sockets still
authenticating), closes every connection and joins every thread this server started: nothing
is left running.
"""

from __future__ import annotations

import logging
import selectors
import socket
import ssl
import threading
import time
from typing import Final

from flintlock.common.config import Configuration
from flintlock.common.options.cluster import HEARTBEAT_TIMEOUT, JM_BIND_HOST, JM_PORT
from flintlock.common.options.security import INTERNAL_ENABLED
from flintlock.runtime.admission import Acceptor
from flintlock.runtime.auth import CONTROL_PLANE, HandshakeEnded, send_busy
from flintlock.runtime.rpc.connection import RpcConnection, RpcHandler
from flintlock.runtime.rpc.errors import UnknownMessageError
from flintlock.runtime.rpc.frames import DEFAULT_MAX_FRAME_SIZE
from flintlock.runtime.tls.accepting import SecuredAccept, SecuredSocket, connect_secured
from flintlock.runtime.tls.contexts import internal_contexts, required_material, warn_if_exposed

LOG = logging.getLogger(__name__)
DEFAULT_HANDSHAKE_TIMEOUT_S: Final = 10.0
DEFAULT_IDLE_TIMEOUT_S: Final = HEARTBEAT_TIMEOUT.default / 1000.0
MAX_PENDING_HANDSHAKES: Final = 128


class _NoHandler:
    """The handler of a client that expects nothing from the server: a push is an error."""

    def on_message(self, connection: RpcConnection, message: object) -> object:
        raise UnknownMessageError(type(message).__qualname__)

    def on_disconnected(self, connection: RpcConnection, cause: BaseException | None) -> None:
        return None


class _Pending:
    """A socket still authenticating, with its absolute deadline (acceptor thread)."""

    __slots__ = ("deadline", "events", "handshake", "peer", "sock")

    def __init__(self, sock: socket.socket, peer: str, secret: bytes, deadline: float,
                 tls: ssl.SSLContext | None) -> None:
        self.sock = sock
        self.peer = peer
        self.deadline = deadline
        self.handshake = SecuredAccept(sock, secret, CONTROL_PLANE, tls)
        self.events = selectors.EVENT_READ


class RpcServer:
    """Accepts authenticated connections and dispatches their messages to ``handler``."""

    def __init__(
        self,
        handler: RpcHandler,
        secret: bytes,
        host: str = "127.0.0.1",
        port: int = 0,
        max_frame_size: int = DEFAULT_MAX_FRAME_SIZE,
        handshake_timeout_s: float = DEFAULT_HANDSHAKE_TIMEOUT_S,
        idle_timeout_s: float | None = DEFAULT_IDLE_TIMEOUT_S,
        max_pending_handshakes: int = MAX_PENDING_HANDSHAKES,
    ) -> None:
        self._handler = handler
        self._secret = secret
        self._max_frame_size = max_frame_size
        self._handshake_timeout_s = handshake_timeout_s
        self._idle_timeout_s = idle_timeout_s
        self._pending: dict[socket.socket, _Pending] = {}  # acceptor thread
        self._lock = threading.Lock()
        self._connections: list[RpcConnection] = []  # guarded by _lock
        self._closed = False  # guarded by _lock
        self._tls = internal_contexts(secret)[0]
        self._listener = socket.create_server((host, port), backlog=128)
        self._listener.setblocking(False)
        self._wake_r, self._wake_w = socket.socketpair()
        self.address: tuple[str, int] = self._listener.getsockname()[:2]
        self._admission = Acceptor(self._listener, max_pending_handshakes,
                                   f"RPC endpoint {self.address[1]}",
                                   self._refuse)  # acceptor thread
        self._acceptor = threading.Thread(
            target=self._accept_loop, name=f"flintlock-rpc-acceptor-{self.address[1]}",
            daemon=True,
        )
        self._acceptor.start()

    @classmethod
    def from_config(
        cls, config: Configuration, handler: RpcHandler, secret: bytes
    ) -> RpcServer:
        if required_material(secret, config.get(INTERNAL_ENABLED)) is None:
            warn_if_exposed(config.get(JM_BIND_HOST), "the JobManager's RPC endpoint",
                            INTERNAL_ENABLED.key)
        return cls(handler, secret, config.get(JM_BIND_HOST), config.get(JM_PORT),
                   idle_timeout_s=config.get(HEARTBEAT_TIMEOUT) / 1000.0)

    def connections(self) -> list[RpcConnection]:
        """The authenticated connections still open (for pushing messages to TaskManagers)."""
        with self._lock:
            return [conn for conn in self._connections if conn.is_open]

    # -- the acceptor thread ----------------------------------------------------------

    def _accept_loop(self) -> None:
        with selectors.DefaultSelector() as selector:
            selector.register(self._listener, selectors.EVENT_READ)
            selector.register(self._wake_r, selectors.EVENT_READ)
            try:
                while self._run_once(selector):
                    pass
            finally:
                for pending in list(self._pending.values()):
                    self._end_handshake(selector, pending, None)

    def _run_once(self, selector: selectors.BaseSelector) -> bool:
        """One round: accept, advance handshakes, expire the late ones; False to stop."""
        timeout = None
        if self._pending:
            earliest = min(pending.deadline for pending in self._pending.values())
            timeout = max(0.0, earliest - time.monotonic())
        for key, _ in selector.select(timeout):
            if key.fileobj is self._wake_r:
                return False
            if key.fileobj is self._listener:
                self._accept(selector)
            else:
                pending = self._pending[key.fileobj]  # type: ignore[index]
                self._advanced(selector, pending, pending.handshake.on_ready())
        now = time.monotonic()
        for pending in [p for p in self._pending.values() if p.deadline <= now]:
            self._end_handshake(selector, pending, pending.handshake.expire())
        return True

    def _refuse(self, sock: socket.socket, limit: int) -> None:
        if self._tls is None:  # a TLS client could not read it
            send_busy(sock, limit)
        sock.close()

    def _accept(self, selector: selectors.BaseSelector) -> None:
        for sock, address in self._admission.accept_waiting():
            peer = f"{address[0]}:{address[1]}"
            sock.setblocking(False)
            pending = _Pending(sock, peer, self._secret,
                               time.monotonic() + self._handshake_timeout_s, self._tls)
            self._pending[sock] = pending
            selector.register(sock, pending.events)
            self._advanced(selector, pending, pending.handshake.start())

    def _advanced(self, selector: selectors.BaseSelector, pending: _Pending,
                  ended: HandshakeEnded | None) -> None:
        if ended is not None:
            self._end_handshake(selector, pending, ended)
        elif pending.handshake.events != pending.events:  # TLS records wait for the socket
            pending.events = pending.handshake.events
            selector.modify(pending.sock, pending.events)

    def _end_handshake(self, selector: selectors.BaseSelector, pending: _Pending,
                       ended: HandshakeEnded | None) -> None:
        """``ended`` None: the server is closing."""
        del self._pending[pending.sock]
        selector.unregister(pending.sock)
        self._admission.release()
        if ended is None or ended.error is not None:
            if ended is not None:
                LOG.warning("refused RPC connection from %s: %s", pending.peer, ended.error)
            pending.sock.close()
            return
        self._connected(pending.handshake.sock, pending.peer)

    def _connected(self, sock: SecuredSocket, peer: str) -> None:
        sock.setblocking(True)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        connection = RpcConnection(sock, self._handler, peer, self._max_frame_size,
                                   self._idle_timeout_s)
        with self._lock:
            if not self._closed:
                self._connections = [c for c in self._connections if not c.finished]
                self._connections.append(connection)
                connection.start()
                return
        sock.close()

    # -- shutdown ---------------------------------------------------------------------

    def close(self) -> None:
        """Stop accepting, close every connection and join every thread; idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._wake_w.send(b"x")
        self._acceptor.join()
        for sock in (self._listener, self._wake_r, self._wake_w):
            sock.close()
        with self._lock:
            connections, self._connections = self._connections, []
        for connection in connections:
            connection.close()

    def __enter__(self) -> RpcServer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class RpcClient:
    """Connects a TaskManager (or a test) to an ``RpcServer``."""

    @staticmethod
    def connect(
        host: str,
        port: int,
        secret: bytes,
        handler: RpcHandler | None = None,
        timeout_s: float = DEFAULT_HANDSHAKE_TIMEOUT_S,
        max_frame_size: int = DEFAULT_MAX_FRAME_SIZE,
        idle_timeout_s: float | None = DEFAULT_IDLE_TIMEOUT_S,
    ) -> RpcConnection:
        """Dial, prove the secret (``AuthenticationError`` if refused) and start the
        connection; it is closed as lost if the server stays silent for ``idle_timeout_s``
        (pass ``heartbeat.timeout``; keepalives keep a healthy idle connection open). With
        TLS material in ``secret`` the connection is mutual TLS first (see the module doc)."""
        tls = internal_contexts(secret)[1]
        sock = socket.create_connection((host, port), timeout=timeout_s)
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            secured = connect_secured(sock, secret, CONTROL_PLANE, tls, timeout_s)
        except BaseException:
            sock.close()
            raise
        connection = RpcConnection(secured, handler or _NoHandler(), f"{host}:{port}",
                                   max_frame_size, idle_timeout_s)
        return connection.start()
