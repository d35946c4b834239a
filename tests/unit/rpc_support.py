"""What the RPC tests share: the secret, the messages a test server understands, the
``Recorder`` that handles them (and records what it saw), and ways to connect to it."""

from __future__ import annotations

import queue
import socket
import threading
from dataclasses import dataclass

from flintlock.runtime.auth import CONTROL_PLANE, authenticate_client
from flintlock.runtime.rpc import MessageDispatcher, RpcClient, RpcConnection, RpcServer

SECRET = b"k" * 32
WAIT_S = 10.0


@dataclass(frozen=True)
class Echo:
    text: str


@dataclass(frozen=True)
class Note:
    text: str


@dataclass(frozen=True)
class Fail:
    kind: str


@dataclass(frozen=True)
class Block:
    release: str


@dataclass(frozen=True)
class AskBack:
    text: str


@dataclass(frozen=True)
class Goodbye:
    pass


class Unpicklable(Exception):
    def __reduce__(self):
        raise TypeError("not picklable")


class Recorder:
    """A server-side handler that records what it saw, for tests to wait on."""

    def __init__(self) -> None:
        self.notes: queue.Queue[str] = queue.Queue()
        self.disconnects: queue.Queue[BaseException | None] = queue.Queue()
        self.released = threading.Event()
        self.dispatcher = (
            MessageDispatcher()
            .register(Echo, lambda conn, msg: f"echo:{msg.text}")
            .register(Note, lambda conn, msg: self.notes.put(msg.text))
            .register(Fail, self._fail)
            .register(Block, lambda conn, msg: self.released.wait(WAIT_S))
            .register(AskBack, lambda conn, msg: conn.call(Echo(msg.text), WAIT_S))
            .register(Goodbye, lambda conn, msg: conn.close())
            .on_disconnect(lambda conn, cause: self.disconnects.put(cause))
        )

    @staticmethod
    def _fail(conn: RpcConnection, msg: Fail) -> object:
        if msg.kind == "unpicklable":
            raise Unpicklable("cannot travel")
        raise ValueError(f"bad value {msg.kind}")


def connect(server: RpcServer, handler: MessageDispatcher | None = None) -> RpcConnection:
    """A client connection to ``server`` (``handler`` for what the server pushes)."""
    host, port = server.address
    return RpcClient.connect(host, port, SECRET, handler)


def authenticated_raw_socket(server: RpcServer) -> socket.socket:
    """A socket past the authentication handshake, for writing raw frames."""
    sock = socket.create_connection(server.address, timeout=WAIT_S)
    authenticate_client(sock, SECRET, CONTROL_PLANE, WAIT_S)
    return sock
