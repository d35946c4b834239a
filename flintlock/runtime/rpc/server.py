"""The JobManager's RPC endpoint and the TaskManager's way in (``RpcClient.connect``).

``RpcServer`` listens on ``jobmanager.bind-host``:``jobmanager.rpc.port`` (127.0.0.1 and a free
port by default). Its *acceptor* thread waits on the listening socket and a wake-up socket
pair; each accepted socket gets a short-lived *handshake* thread that authenticates it with
the job secret (context ``CONTROL_PLANE``) and, only on success, wraps it in an
``RpcConnection`` dispatching to the server's handler. A wrong secret or garbage is logged and
the socket closed: nothing is unpickled, the handler never hears of it, other connections are
unaffected.

``RpcClient.connect`` dials, authenticates (raising ``AuthenticationError`` on a wrong secret)
and returns a started ``RpcConnection`` whose handler receives what the server pushes.

Thread ownership: ``_connections`` and ``_handshakes`` are guarded by ``_lock`` (acceptor,
handshake threads and ``close()`` touch them). ``close()`` stops the acceptor, wakes
handshakes still waiting for their client, closes every connection and joins every thread
this server started: nothing is left running.
"""

from __future__ import annotations

import logging
import selectors
import socket
import threading
from typing import Final

from flintlock.common.config import Configuration
from flintlock.common.options.cluster import JM_BIND_HOST, JM_PORT
from flintlock.runtime.auth import CONTROL_PLANE, authenticate_client, authenticate_server
from flintlock.runtime.rpc.connection import RpcConnection, RpcHandler
from flintlock.runtime.rpc.errors import UnknownMessageError
from flintlock.runtime.rpc.frames import DEFAULT_MAX_FRAME_SIZE

LOG = logging.getLogger(__name__)
DEFAULT_HANDSHAKE_TIMEOUT_S: Final = 10.0


class _NoHandler:
    """The handler of a client that expects nothing from the server: a push is an error."""

    def on_message(self, connection: RpcConnection, message: object) -> object:
        raise UnknownMessageError(type(message).__qualname__)

    def on_disconnected(self, connection: RpcConnection, cause: BaseException | None) -> None:
        return None


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
    ) -> None:
        self._handler = handler
        self._secret = secret
        self._max_frame_size = max_frame_size
        self._handshake_timeout_s = handshake_timeout_s
        self._lock = threading.Lock()
        self._connections: list[RpcConnection] = []  # guarded by _lock
        # handshakes in progress and their sockets; guarded by _lock
        self._handshakes: dict[threading.Thread, socket.socket] = {}
        self._closed = False  # guarded by _lock
        self._listener = socket.create_server((host, port), backlog=128)
        self._wake_r, self._wake_w = socket.socketpair()
        self.address: tuple[str, int] = self._listener.getsockname()[:2]
        self._acceptor = threading.Thread(
            target=self._accept_loop, name=f"flintlock-rpc-acceptor-{self.address[1]}",
            daemon=True,
        )
        self._acceptor.start()

    @classmethod
    def from_config(
        cls, config: Configuration, handler: RpcHandler, secret: bytes
    ) -> RpcServer:
        return cls(handler, secret, config.get(JM_BIND_HOST), config.get(JM_PORT))

    def connections(self) -> list[RpcConnection]:
        """The authenticated connections still open (for pushing messages to TaskManagers)."""
        with self._lock:
            return [conn for conn in self._connections if conn.is_open]

    # -- acceptor and handshake threads ----------------------------------------------

    def _accept_loop(self) -> None:
        with selectors.DefaultSelector() as selector:
            selector.register(self._listener, selectors.EVENT_READ)
            selector.register(self._wake_r, selectors.EVENT_READ)
            while True:
                ready = {key.fileobj for key, _ in selector.select()}
                if self._wake_r in ready:
                    return
                try:
                    sock, address = self._listener.accept()
                except OSError as exc:
                    LOG.warning("RPC accept failed: %s", exc)
                    continue
                self._start_handshake(sock, f"{address[0]}:{address[1]}")

    def _start_handshake(self, sock: socket.socket, peer: str) -> None:
        thread = threading.Thread(
            target=self._handshake, args=(sock, peer), name=f"flintlock-rpc-handshake-{peer}",
            daemon=True,
        )
        with self._lock:
            if self._closed:
                sock.close()
                return
            self._handshakes[thread] = sock
        thread.start()

    def _handshake(self, sock: socket.socket, peer: str) -> None:
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            authenticate_server(sock, self._secret, CONTROL_PLANE, self._handshake_timeout_s)
        except Exception as exc:
            LOG.warning("refused RPC connection from %s: %s", peer, exc)
            sock.close()
            self._handshake_done(None)
            return
        connection = RpcConnection(sock, self._handler, peer, self._max_frame_size)
        self._handshake_done(connection)

    def _handshake_done(self, connection: RpcConnection | None) -> None:
        with self._lock:
            self._handshakes.pop(threading.current_thread(), None)
            if connection is not None and not self._closed:
                self._connections = [c for c in self._connections if not c.finished]
                self._connections.append(connection)
                connection.start()
                return
        if connection is not None:
            connection.close()

    # -- shutdown ---------------------------------------------------------------------

    def close(self) -> None:
        """Stop accepting, close every connection and join every thread; idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            handshakes = dict(self._handshakes)
        self._wake_w.send(b"x")
        self._acceptor.join()
        for sock in (self._listener, self._wake_r, self._wake_w):
            sock.close()
        for thread, sock in handshakes.items():
            _shutdown(sock)
            thread.join()
        with self._lock:
            connections, self._connections = self._connections, []
        for connection in connections:
            connection.close()

    def __enter__(self) -> RpcServer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _shutdown(sock: socket.socket) -> None:
    """Wake a thread blocked reading ``sock`` (a handshake still waiting for its client)."""
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


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
    ) -> RpcConnection:
        """Dial, prove the secret (``AuthenticationError`` if refused) and start the connection."""
        sock = socket.create_connection((host, port), timeout=timeout_s)
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            authenticate_client(sock, secret, CONTROL_PLANE, timeout_s)
        except BaseException:
            sock.close()
            raise
        connection = RpcConnection(sock, handler or _NoHandler(), f"{host}:{port}", max_frame_size)
        return connection.start()
