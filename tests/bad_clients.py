"""Clients that misbehave on purpose, for the tests of every endpoint's resource bounds
(issue 14): sockets that connect and say nothing, and a client that trickles its bytes.

Nothing here sleeps to let the server "catch up": each helper reports what the peer did
(``Trickler.closed_by_peer``, ``bytes_sent``), and the tests wait for those facts with a bound.
"""

from __future__ import annotations

import select
import socket
import threading
import time

WAIT_S = 10.0


def open_silent(address: tuple[str, int], count: int) -> list[socket.socket]:
    """``count`` connected sockets that will never send a byte."""
    sockets = []
    for _ in range(count):
        sock = socket.create_connection(address, timeout=WAIT_S)
        sockets.append(sock)
    return sockets


def closed_by_peer(sock: socket.socket, timeout_s: float = WAIT_S) -> bool:
    """Reads (and drops) what the peer sends until it closes; False if it is still open
    after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        ready, _, _ = select.select([sock], [], [], remaining)
        if not ready:
            return False
        try:
            if not sock.recv(65536):
                return True
        except OSError:  # reset: closed as well
            return True


class Trickler:
    """Sends ``data`` one byte every ``period_s`` on its own thread, until the peer closes the
    connection or everything was sent. ``closed_by_peer`` is set when the peer closed first."""

    def __init__(self, address: tuple[str, int], data: bytes, period_s: float,
                 skip: int = 0) -> None:
        self.sock = socket.create_connection(address, timeout=WAIT_S)
        self._data = data
        self._period_s = period_s
        self._skip = skip  # bytes to read from the peer before trickling (a challenge)
        self.bytes_sent = 0
        self.closed_by_peer = threading.Event()
        self.finished_sending = threading.Event()
        self.started_sending = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="test-trickler", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._read_exactly(self._skip)
            for byte in self._data:
                self.sock.sendall(bytes([byte]))
                self.bytes_sent += 1
                self.started_sending.set()
                if self._peer_closed_within(self._period_s) or self._stop.is_set():
                    return
            self.finished_sending.set()
        except OSError:
            self.closed_by_peer.set()

    def _read_exactly(self, count: int) -> None:
        while count > 0:
            chunk = self.sock.recv(count)
            if not chunk:
                raise ConnectionResetError("closed before the expected bytes")
            count -= len(chunk)

    def _peer_closed_within(self, period_s: float) -> bool:
        ready, _, _ = select.select([self.sock], [], [], period_s)
        if ready and not self.sock.recv(65536):
            self.closed_by_peer.set()
            return True
        return False

    def close(self) -> None:
        self._stop.set()
        self._thread.join(WAIT_S)
        self.sock.close()


def close_all(sockets: list[socket.socket]) -> None:
    for sock in sockets:
        sock.close()
