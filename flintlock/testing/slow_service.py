"""A stub remote service for async I/O tests and benchmarks: a TCP server on 127.0.0.1 that
answers each request line after a fixed latency, as a model server or lookup service would.

Protocol: the client sends one UTF-8 line, the server waits ``latency_s`` (without blocking
other requests: one asyncio task per request) and replies with ``"<line>:ok"``. Requests on one
connection are answered in the order they arrive. The server runs its own event loop on a
daemon thread; ``address`` is ``(host, port)`` and travels to TaskManager processes as plain
data. ``requests`` counts the lines answered (server thread writes, anyone reads).

Clients: ``query_async(address, line)`` opens a connection per request from a coroutine;
``AsyncClient`` keeps one connection and pipelines the requests of one event loop on it (what
an ``AsyncFunction`` with a client created in ``open`` does); ``BlockingClient`` keeps one
socket per thread and blocks for each answer (what a plain ``map`` does). Clients pickle
without their connections and connect on first use.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from collections import deque
from typing import Any

HOST = "127.0.0.1"


class SlowService:
    def __init__(self, latency_s: float = 0.01) -> None:
        self.latency_s = latency_s
        self.requests = 0
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._server: asyncio.base_events.Server | None = None
        self._thread = threading.Thread(target=self._run, name="slow-service", daemon=True)
        self.address: tuple[str, int] = (HOST, 0)

    def __enter__(self) -> SlowService:
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def start(self) -> None:
        self._thread.start()
        self._ready.wait()

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._server = self._loop.run_until_complete(
            asyncio.start_server(self._serve, HOST, 0))
        self.address = self._server.sockets[0].getsockname()[:2]
        self._ready.set()
        try:
            self._loop.run_forever()
        finally:
            self._server.close()
            pending = asyncio.all_tasks(self._loop)
            for task in pending:
                task.cancel()
            self._loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            self._loop.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        replies: asyncio.Queue[asyncio.Task[bytes] | None] = asyncio.Queue()
        sender = asyncio.ensure_future(self._send(replies, writer))
        try:
            while line := await reader.readline():
                await replies.put(asyncio.ensure_future(self._answer(line)))
            await replies.put(None)
            await sender
        except (asyncio.CancelledError, ConnectionError):  # the service stops, or the peer left
            sender.cancel()

    async def _answer(self, line: bytes) -> bytes:
        await asyncio.sleep(self.latency_s)
        return line.rstrip(b"\n") + b":ok\n"

    async def _send(self, replies: asyncio.Queue[asyncio.Task[bytes] | None],
                    writer: asyncio.StreamWriter) -> None:
        try:
            while (task := await replies.get()) is not None:
                writer.write(await task)
                self.requests += 1
                await writer.drain()
        except ConnectionError:
            pass
        finally:
            writer.close()

    def stop(self) -> None:
        if self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(5.0)


async def query_async(address: tuple[str, int], line: str) -> str:
    """One request on its own connection; the reply without its newline."""
    reader, writer = await asyncio.open_connection(*address)
    try:
        writer.write(line.encode() + b"\n")
        await writer.drain()
        return (await reader.readline()).decode().rstrip("\n")
    finally:
        writer.close()


class AsyncClient:
    """One pipelined connection per client: answers come back in request order, so each
    request waits on a future queued when it was sent (its event loop only)."""

    def __init__(self, address: tuple[str, int]) -> None:
        self.address: tuple[str, int] = (str(address[0]), int(address[1]))
        self._connecting: asyncio.Task[asyncio.StreamWriter] | None = None
        self._waiting: deque[asyncio.Future[str]] = deque()
        self._reader_task: asyncio.Task[None] | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {"address": self.address, "_connecting": None, "_waiting": deque(),
                "_reader_task": None}

    async def query(self, line: str) -> str:
        if self._connecting is None:
            self._connecting = asyncio.ensure_future(self._connect())
        writer = await self._connecting
        answer: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._waiting.append(answer)
        writer.write(line.encode() + b"\n")
        return await answer

    async def _connect(self) -> asyncio.StreamWriter:
        reader, writer = await asyncio.open_connection(*self.address)
        self._reader_task = asyncio.ensure_future(self._read(reader))
        return writer

    async def _read(self, reader: asyncio.StreamReader) -> None:
        while line := await reader.readline():
            self._waiting.popleft().set_result(line.decode().rstrip("\n"))
        while self._waiting:
            self._waiting.popleft().set_exception(ConnectionError("the service closed"))


class BlockingClient:
    """A blocking client with one connection per thread (picklable: connects lazily)."""

    def __init__(self, address: tuple[str, int]) -> None:
        self.address: tuple[str, int] = (str(address[0]), int(address[1]))
        self._local: threading.local | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {"address": self.address, "_local": None}

    def query(self, line: str) -> str:
        if self._local is None:
            self._local = threading.local()
        conn = getattr(self._local, "conn", None)
        if conn is None:
            sock = socket.create_connection(self.address)
            conn = self._local.conn = sock.makefile("rwb")
        conn.write(line.encode() + b"\n")
        conn.flush()
        return conn.readline().decode().rstrip("\n")
