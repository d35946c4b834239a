"""An in-memory data transport: the TCP transport's behaviour without sockets.

``InMemoryTransport`` has the same interface as ``runtime.network.transport.TcpTransport``
(``start``, ``address``, ``create_remote_channel``, ``client_for``, ``close``) and runs the very
same protocol messages, server and client handlers, credit ledgers and remote channels; only
the wire differs: a ``MemoryWire`` hands message objects to the peer's I/O thread instead of
encoding frames. A buffer payload is still copied into the receiving channel's own buffer
(exclusive or floating, as its ledger decides) and the sender's buffer recycled after the copy,
so credit and backpressure behave as over TCP; queued bytes count against the same water marks.

Use it in tests of anything above the transport (tasks, gates, checkpoints) that should not
open sockets; ``tests/conformance`` checks that both transports behave the same.

No sockets at all: the I/O thread is the socket-free kind (``IOThread(sockets=False)``).

Threads: each transport has its own network I/O thread (``IOThread``), like a TaskManager;
a wire belongs to its transport's I/O thread; the queued-bytes counter is shared by both ends
of a wire under its lock.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from typing import Any

from flintlock.common.config import Configuration
from flintlock.common.errors import FlintlockError
from flintlock.common.options.network import (
    WRITE_HIGH_WATER_MARK,
    WRITE_LOW_WATER_MARK,
)
from flintlock.runtime.auth import AuthenticationError, AuthFailure
from flintlock.runtime.network.buffer import NetworkBufferPool
from flintlock.runtime.network.client import ClientHandler
from flintlock.runtime.network.connection import ConnectionHandler
from flintlock.runtime.network.io_thread import IOThread
from flintlock.runtime.network.partition import ResultPartitionManager
from flintlock.runtime.network.protocol import BufferResponse, Message, PayloadAllocator
from flintlock.runtime.network.remote_channel import DataAddress
from flintlock.runtime.network.server import ServerHandler
from flintlock.runtime.network.transport import (
    ConnectFailedError,
    RemoteChannelFactory,
    TransportClosedError,
)

Completion = Callable[[], None]
_FRAME_OVERHEAD = 32  # roughly what a frame header would cost, so control messages count


class InMemoryNetwork:
    """Where in-memory transports find each other by address. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._transports: dict[DataAddress, InMemoryTransport] = {}
        self._ports = itertools.count(1)

    def register(self, transport: InMemoryTransport) -> DataAddress:
        with self._lock:
            address = ("memory", next(self._ports))
            self._transports[address] = transport
            return address

    def unregister(self, address: DataAddress) -> None:
        with self._lock:
            self._transports.pop(address, None)

    def lookup(self, address: DataAddress) -> InMemoryTransport | None:
        with self._lock:
            return self._transports.get(address)


class MemoryWire:
    """One end of an in-memory connection (see the module docstring)."""

    def __init__(
        self, io: IOThread, peer: str, high: int, low: int, lock: threading.Lock,
        allocator: PayloadAllocator | None = None,
    ) -> None:
        self.io = io
        self.peer = peer
        self.other: MemoryWire | None = None
        self.handler: ConnectionHandler | None = None
        self.closer: Any = None  # the I/O thread's closer token, once registered
        self._allocator = allocator
        self._high = high
        self._low = min(low, high)
        self._lock = lock  # shared by both ends
        self._queued = 0  # bytes sent by this end not yet taken by the other; _lock
        self._writable = True  # _lock
        self._closed = False

    @property
    def writable(self) -> bool:
        return self._writable and not self._closed

    def send(self, message: Message, on_sent: Completion | None = None) -> None:
        other = self.other
        if self._closed or other is None:
            if on_sent is not None:
                on_sent()
            return
        size = _FRAME_OVERHEAD + (message.size if isinstance(message, BufferResponse) else 0)
        with self._lock:
            self._queued += size
            if self._queued > self._high:
                self._writable = False
        other.io.call_soon(lambda: other._deliver(self, message, on_sent, size))

    def _deliver(
        self, sender: MemoryWire, message: Message, on_sent: Completion | None, size: int
    ) -> None:
        """On this end's I/O thread: take one message from ``sender``."""
        received: Message | None = None
        try:
            if not self._closed:
                received = message
                if isinstance(message, BufferResponse):
                    received = self._copy_in(message)
        except FlintlockError as exc:
            self.close(exc)
        finally:
            if on_sent is not None:
                on_sent()
            sender._taken(size)
        if received is None or self._closed:
            return
        assert self.handler is not None
        try:
            self.handler.on_message(received)
        except FlintlockError as exc:
            self.close(exc)

    def _copy_in(self, message: BufferResponse) -> BufferResponse:
        target = None
        if self._allocator is not None:
            target = self._allocator.allocate(message.receiver_id, message.data_type, message.size)
        handle: object = None
        if target is not None:
            view, handle = target
            source = message.payload
            assert isinstance(source, memoryview)
            view[: message.size] = source[: message.size]
        return BufferResponse(
            message.receiver_id, message.sequence_number, message.backlog, message.data_type,
            handle, message.size,
        )

    def _taken(self, size: int) -> None:
        with self._lock:
            self._queued -= size
            resume = not self._writable and self._queued <= self._low
            if resume:
                self._writable = True
        if resume:
            self.io.call_soon(self._resume)

    def _resume(self) -> None:
        if not self._closed and self.handler is not None:
            self.handler.on_writable()

    def close(self, cause: BaseException | None = None) -> None:
        if self._closed:
            return
        self._closed = True
        if self.closer is not None:
            self.io.remove_closer(self.closer)
        other = self.other
        if other is not None:
            other.io.call_soon(lambda: other.close(None))
        if self.handler is not None:
            self.handler.on_closed(cause)


class InMemoryTransport(RemoteChannelFactory):
    """A TaskManager's transport over an ``InMemoryNetwork`` (same interface as TcpTransport)."""

    def __init__(
        self, network: InMemoryNetwork, config: Configuration, secret: bytes,
        partitions: ResultPartitionManager, network_pool: NetworkBufferPool,
        name: str = "taskmanager",
    ) -> None:
        self.config = config
        self.name = name
        self.secret = secret
        self.network_pool = network_pool
        self.partitions = partitions
        self.io = IOThread(f"flintlock-memory-network-{name}", sockets=False)
        self._network = network
        self._lock = threading.Lock()
        self._clients: dict[DataAddress, ClientHandler] = {}  # guarded by _lock
        self._closed = False
        self.address: DataAddress = ("memory", 0)

    def start(self) -> InMemoryTransport:
        self.address = self._network.register(self)
        self.io.start()
        return self

    def client_for(self, address: DataAddress) -> ClientHandler:
        with self._lock:
            if self._closed:
                raise TransportClosedError(f"transport {self.name} is closed")
            client = self._clients.get(address)
            if client is None:
                client = self._connect(address)
                self._clients[address] = client
            return client

    def _connect(self, address: DataAddress) -> ClientHandler:
        server = self._network.lookup(address)
        if server is None:
            raise ConnectFailedError(address, "no in-memory transport at this address")
        if server.secret != self.secret:
            raise AuthenticationError(AuthFailure.WRONG_SECRET, "in-memory peer has another secret")
        high, low = self.config.get(WRITE_HIGH_WATER_MARK), self.config.get(WRITE_LOW_WATER_MARK)
        lock = threading.Lock()
        client = ClientHandler(self.io, f"{address[0]}:{address[1]}", self._forget_client)
        client_end = MemoryWire(self.io, client.peer, high, low, lock, client)
        server_end = MemoryWire(server.io, self.name, high, low, lock)
        client_end.other, server_end.other = server_end, client_end
        client.attach(client_end)
        client_end.handler = client
        server.io.call_soon(lambda: server.serve(server_end))
        client_end.closer = self.io.add_closer(lambda: client_end.close(None))
        return client

    def serve(self, wire: MemoryWire) -> None:
        """On this transport's I/O thread: start serving a new incoming connection."""
        wire.handler = ServerHandler(self.io, wire, self.partitions)
        wire.closer = self.io.add_closer(lambda: wire.close(None))

    def _forget_client(self, client: ClientHandler) -> None:
        with self._lock:
            for address, known in list(self._clients.items()):
                if known is client:
                    del self._clients[address]

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._clients.clear()
        self._network.unregister(self.address)
        self.io.stop()

    def __enter__(self) -> InMemoryTransport:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
