"""The TCP data transport of a TaskManager: its data server, its connections, its I/O thread.

``TcpTransport`` listens on ``taskmanager.host``:``taskmanager.data.port`` (127.0.0.1 and a
free port by default) and serves the subpartitions registered in the TaskManager's
``ResultPartitionManager`` to remote consumers; it opens one connection to each producer
TaskManager its own remote input channels read from, shared by all of them (so between two
TaskManagers there is at most one connection per direction, as in Flink).

Invariants:

- Every connection proves the job secret (``runtime.auth``, mutual HMAC, context DATA_PLANE)
  before a single frame is read; on the server side the handshake runs non-blocking on the
  I/O thread (``AcceptingHandshake``) under an absolute deadline,
  ``flintlock.network.auth-timeout`` from accept. A wrong secret, garbage, a truncated or
  oversized frame or a vanished peer fails that connection and the channels on it only.
- With ``security.ssl.internal.enabled`` (the job secret then carries the job's TLS material,
  ``runtime.tls``), every connection first runs mutual TLS 1.3 against the per-job CA, within
  the same deadline and just as non-blocking (``SecuredAccept``); the secret handshake and
  every frame then travel inside TLS. A client without the job's certificate is closed when
  its TLS handshake fails, before the secret handshake starts.
- Bounds against any client (issue 14): at most ``max_pending_handshakes`` connections
  authenticate at once (``admission.Acceptor``; more are closed unread, one log line per
  burst); a frame's announced length is not allocated before its bytes arrive
  (``protocol``); an authenticated connection silent for ``heartbeat.timeout`` — keepalives
  included (``runtime.liveness``) — is closed as lost, on both sides.
- One network I/O thread per transport does all socket work; see ``io_thread``.
- ``close()`` closes every socket and joins the I/O thread: nothing is left behind.
- ``start()`` lowers the interpreter's GIL switch interval to what the configured
  ``execution.buffer-timeout`` asks for (``switch_interval_for``; never raises it): the I/O
  thread waits up to one interval for the GIL each time a busy task thread holds it. The
  TaskManager lowers it further if an operator sets a shorter timeout; see
  docs/internals/transport.md.

Who calls it: the TaskManager (creates it with the job secret, announces ``address`` to the
JobManager, creates remote input channels through ``create_remote_channel``) and tests.
"""

from __future__ import annotations

import logging
import selectors
import socket
import ssl
import sys
import threading
from dataclasses import dataclass

from flintlock.common.config import Configuration
from flintlock.common.errors import FlintlockError
from flintlock.common.ids import ChannelIndex, ResultPartitionId
from flintlock.common.options.cluster import HEARTBEAT_TIMEOUT
from flintlock.common.options.execution import BUFFER_TIMEOUT
from flintlock.common.options.network import (
    AUTH_TIMEOUT,
    BIND_HOST,
    BUFFERS_PER_CHANNEL,
    CONNECT_TIMEOUT,
    DATA_PORT,
    MAX_FRAME_SIZE,
    REQUEST_BACKOFF_INITIAL,
    REQUEST_BACKOFF_MAX,
    WRITE_HIGH_WATER_MARK,
    WRITE_LOW_WATER_MARK,
)
from flintlock.common.options.security import INTERNAL_ENABLED
from flintlock.runtime.admission import Acceptor
from flintlock.runtime.auth import DATA_PLANE, AuthenticationError, HandshakeEnded, send_busy
from flintlock.runtime.network.buffer import NetworkBufferPool
from flintlock.runtime.network.client import ClientHandler, valid_data_type
from flintlock.runtime.network.connection import SocketConnection
from flintlock.runtime.network.frame_decoder import FrameDecoder
from flintlock.runtime.network.gate import SingleInputGate
from flintlock.runtime.network.io_thread import IOThread
from flintlock.runtime.network.partition import ResultPartitionManager
from flintlock.runtime.network.remote_channel import DataAddress, RemoteInputChannel
from flintlock.runtime.network.server import ServerHandler
from flintlock.runtime.tls.accepting import SecuredAccept, SecuredSocket, connect_secured
from flintlock.runtime.tls.contexts import internal_contexts, warn_if_exposed

log = logging.getLogger(__name__)

MIN_SWITCH_INTERVAL_S = 0.0005
MAX_SWITCH_INTERVAL_S = 0.005  # Python's own default
MAX_PENDING_HANDSHAKES = 128


def switch_interval_for(buffer_timeout_ms: int) -> float:
    """The GIL switch interval for a job whose shortest buffer timeout is
    ``buffer_timeout_ms``: a quarter of it, between 0.5 ms and Python's default 5 ms (0, a
    flush after every record, asks for the shortest; -1, only full buffers, for the longest).

    A thread that must wake (the network I/O thread, an output flusher) while a task thread
    computes waits up to one interval for the GIL; every such hand-off also costs the task
    thread a forced switch. A job that asks for millisecond latency gets prompt hand-offs; one
    that batches for 100 ms (the default) keeps its task threads running. In an A/B over six
    interleaved pairs, 5 ms instead of 0.5 ms raised small-record exchange throughput from a
    median 59 % to 72.5 % of the bare reference (docs/benchmarks.md)."""
    if buffer_timeout_ms < 0:
        return MAX_SWITCH_INTERVAL_S
    quarter = buffer_timeout_ms / 4000.0
    return min(MAX_SWITCH_INTERVAL_S, max(MIN_SWITCH_INTERVAL_S, quarter))


def lower_switch_interval(seconds: float) -> None:
    """Lowers the process's GIL switch interval to ``seconds`` (never raises it: another job's
    TaskManager in this process may need it short)."""
    if sys.getswitchinterval() > seconds:
        sys.setswitchinterval(seconds)


class TransportClosedError(FlintlockError):
    """The transport was closed; no new connection or channel can be made."""


class ConnectFailedError(FlintlockError, ConnectionError):
    """Opening a data connection to a producer TaskManager failed."""

    def __init__(self, address: DataAddress, detail: str) -> None:
        super().__init__(address, detail)
        self.address = address
        self.detail = detail

    def __str__(self) -> str:
        return f"cannot connect to data server {self.address[0]}:{self.address[1]}: {self.detail}"


@dataclass(frozen=True, slots=True)
class ConnectionStatistics:
    peer: str
    serving: bool
    queued_bytes: int
    max_queued_bytes: int
    bytes_sent: int
    bytes_received: int
    keepalives_sent: int
    keepalives_received: int


@dataclass(frozen=True, slots=True)
class TransportStatistics:
    address: DataAddress
    connections: tuple[ConnectionStatistics, ...]
    rejected_connections: int


class RemoteChannelFactory:
    """``create_remote_channel`` for a transport with ``config``, ``network_pool`` and
    ``client_for`` (shared by the TCP and the in-memory transport)."""

    config: Configuration
    network_pool: NetworkBufferPool
    io: IOThread

    def client_for(self, address: DataAddress) -> ClientHandler:
        raise NotImplementedError

    def create_remote_channel(
        self, gate: SingleInputGate, channel_index: ChannelIndex,
        partition_id: ResultPartitionId, subpartition_index: int, producer_address: DataAddress,
    ) -> RemoteInputChannel:
        return RemoteInputChannel(
            gate, channel_index, partition_id, subpartition_index, self, producer_address,
            self.network_pool, self.config.get(BUFFERS_PER_CHANNEL),
            self.config.get(REQUEST_BACKOFF_INITIAL), self.config.get(REQUEST_BACKOFF_MAX),
        )


class TcpTransport(RemoteChannelFactory):
    """A TaskManager's data server and client connections over TCP."""

    def __init__(
        self, config: Configuration, secret: bytes, partitions: ResultPartitionManager,
        network_pool: NetworkBufferPool, name: str = "taskmanager",
        max_pending_handshakes: int = MAX_PENDING_HANDSHAKES,
    ) -> None:
        self.config = config
        self.name = name
        self._secret = secret
        self._partitions = partitions
        self.network_pool = network_pool
        self.io = IOThread(f"flintlock-network-{name}")
        self._max_frame = config.get(MAX_FRAME_SIZE)
        self._high = config.get(WRITE_HIGH_WATER_MARK)
        self._low = config.get(WRITE_LOW_WATER_MARK)
        self._auth_timeout_s = config.get(AUTH_TIMEOUT) / 1000.0
        self._idle_timeout_s = config.get(HEARTBEAT_TIMEOUT) / 1000.0
        self._max_pending = max_pending_handshakes
        self._admission: Acceptor | None = None  # I/O thread; from start()
        self._lock = threading.Lock()
        self._clients: dict[DataAddress, ClientHandler] = {}  # guarded by _lock
        self._connections: dict[int, tuple[SocketConnection, bool]] = {}  # guarded by _lock
        self._connect_lock = threading.Lock()
        self._listener: socket.socket | None = None
        self._closed = False
        self.address: DataAddress = ("", 0)
        self.rejected_connections = 0  # I/O thread
        self._tls_server, self._tls_client = internal_contexts(
            secret, required=config.get(INTERNAL_ENABLED))

    def start(self) -> TcpTransport:
        host, port = self.config.get(BIND_HOST), self.config.get(DATA_PORT)
        listener = socket.create_server((host, port), backlog=128)
        listener.setblocking(False)
        self._listener = listener
        self.address = (host, listener.getsockname()[1])
        self._admission = Acceptor(listener, self._max_pending, f"data server {self.name}",
                                   self._refuse)
        if self._tls_server is None:
            warn_if_exposed(host, f"data server {self.name}", INTERNAL_ENABLED.key)
        lower_switch_interval(switch_interval_for(self.config.get(BUFFER_TIMEOUT)))
        self.io.selector.register(listener, selectors.EVENT_READ, self._accept)
        self.io.add_closer(listener.close)
        self.io.start()
        return self

    # -- consumer side (any thread) -----------------------------------------------------------

    def client_for(self, address: DataAddress) -> ClientHandler:
        """The connection to ``address``, opened and authenticated on first use (blocking)."""
        address = (address[0], int(address[1]))
        with self._connect_lock:
            with self._lock:
                if self._closed:
                    raise TransportClosedError(f"transport {self.name} is closed")
                client = self._clients.get(address)
            if client is not None:
                return client
            client = self._connect(address)
            with self._lock:
                self._clients[address] = client
            return client

    def _connect(self, address: DataAddress) -> ClientHandler:
        timeout_s = float(self.config.get(CONNECT_TIMEOUT))  # Flink's unit: seconds
        try:
            sock = socket.create_connection(address, timeout=timeout_s)
        except OSError as exc:
            raise ConnectFailedError(address, str(exc)) from exc
        try:
            secured = connect_secured(sock, self._secret, DATA_PLANE, self._tls_client,
                                      self._auth_timeout_s)
        except AuthenticationError:
            sock.close()
            raise
        secured.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        secured.setblocking(False)
        peer = f"{address[0]}:{address[1]}"
        client = ClientHandler(self.io, peer, self._forget_client)
        decoder = FrameDecoder(self._max_frame, client, valid_data_type)
        conn = SocketConnection(self.io, secured, decoder, self._high, self._low, peer,
                                self._idle_timeout_s)
        client.attach(conn)
        self._track(conn, serving=False)
        self.io.call_soon(lambda: conn.start(client))
        return client

    def _forget_client(self, client: ClientHandler) -> None:
        with self._lock:
            for address, known in list(self._clients.items()):
                if known is client:
                    del self._clients[address]
            if client.wire is not None:
                self._connections.pop(id(client.wire), None)

    def _track(self, conn: SocketConnection, serving: bool) -> None:
        with self._lock:
            self._connections[id(conn)] = (conn, serving)

    def _untrack(self, conn: SocketConnection) -> None:
        with self._lock:
            self._connections.pop(id(conn), None)

    def statistics(self) -> TransportStatistics:
        with self._lock:
            connections = list(self._connections.values())
        return TransportStatistics(
            self.address,
            tuple(
                ConnectionStatistics(
                    c.peer, serving, c.queued_bytes, c.max_queued_bytes, c.bytes_sent,
                    c.bytes_received, c.keepalives_sent, c.keepalives_received,
                )
                for c, serving in connections
            ),
            self.rejected_connections,
        )

    # -- server side (I/O thread) ---------------------------------------------------------------

    def _accept(self, mask: int) -> None:
        assert self._admission is not None
        for sock, peer in self._admission.accept_waiting():
            _Authenticating(self, sock, f"{peer[0]}:{peer[1]}", self._tls_server).begin()

    def _refuse(self, sock: socket.socket, limit: int) -> None:
        if self._tls_server is None:  # a TLS client could not read it
            send_busy(sock, limit)
        sock.close()
        self.rejected_connections += 1

    def _handshake_ended(self, sock: SecuredSocket, peer: str, ended: HandshakeEnded) -> None:
        assert self._admission is not None
        self._admission.release()
        if ended.error is None:
            self._authenticated(sock, peer)
        else:
            self._rejected(sock, peer, ended.error)

    def _authenticated(self, sock: SecuredSocket, peer: str) -> None:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        decoder = FrameDecoder(self._max_frame)
        conn = SocketConnection(self.io, sock, decoder, self._high, self._low, peer,
                                self._idle_timeout_s)
        handler = ServerHandler(self.io, conn, self._partitions)
        handler.on_close_callbacks.append(lambda: self._untrack(conn))
        self._track(conn, serving=True)
        conn.start(handler)

    def _rejected(self, sock: SecuredSocket, peer: str, cause: BaseException) -> None:
        self.rejected_connections += 1
        log.warning("data server %s rejected a connection from %s: %s", self.name, peer, cause)
        sock.close()

    # -- shutdown -------------------------------------------------------------------------------

    def close(self) -> None:
        """Closes every connection and the server, then joins the I/O thread."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._clients.clear()
        self.io.stop()

    def __enter__(self) -> TcpTransport:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class _Authenticating:
    """A connection accepted but not yet authenticated (non-blocking, on the I/O thread):
    TLS when the job has it, then the secret handshake, under one absolute deadline."""

    def __init__(self, transport: TcpTransport, sock: socket.socket, peer: str,
                 tls: ssl.SSLContext | None) -> None:
        self._transport = transport
        self._sock = sock
        self._peer = peer
        self._accept = SecuredAccept(sock, transport._secret, DATA_PLANE, tls)
        self._events = selectors.EVENT_READ
        self._done = False
        self._closer: int | None = None

    def begin(self) -> None:
        io = self._transport.io
        self._sock.setblocking(False)
        io.selector.register(self._sock, self._events, self._on_ready)
        self._closer = io.add_closer(self._abort)
        io.call_later(self._transport._auth_timeout_s, self._on_timeout)
        self._finish(self._accept.start())

    def _abort(self) -> None:
        """The transport is closing: drop the connection without a verdict."""
        self._done = True
        self._sock.close()

    def _on_timeout(self) -> None:
        if not self._done:
            self._finish(self._accept.expire())

    def _on_ready(self, mask: int) -> None:
        self._finish(self._accept.on_ready())

    def _finish(self, ended: HandshakeEnded | None) -> None:
        if self._done:
            return
        if ended is None:
            if self._accept.events != self._events:  # TLS records wait for the socket
                self._events = self._accept.events
                self._transport.io.selector.modify(self._sock, self._events, self._on_ready)
            return
        self._done = True
        if self._closer is not None:
            self._transport.io.remove_closer(self._closer)
        try:
            self._transport.io.selector.unregister(self._sock)
        except (KeyError, ValueError):
            pass
        self._transport._handshake_ended(self._accept.sock, self._peer, ended)

