"""Connections that break on cue: every TCP connection a module dials goes through a proxy
the test can cut (reset both ends) or silence (drop every byte, keep both ends open: what a
dead link, a pulled cable or a firewall dropping packets looks like).

``interpose(monkeypatch, module)`` replaces the ``socket`` module seen by ``module`` (the
data plane's ``flintlock.runtime.network.transport``, the control plane's
``flintlock.runtime.rpc.server``) with one whose ``create_connection`` dials through a
``FaultyLink``; everything else is the real ``socket``. It returns an ``Interposer`` that
lists the links in the order they were made. For jobs on TaskManager threads (the patch is
in this process).

Threads: two pump threads per link copy bytes each way until either side closes; ``cut``,
``silence`` and ``close`` may be called from any thread.
"""

from __future__ import annotations

import socket
import struct
import threading
import types
from typing import Any


class FaultyLink:
    """One proxied connection: the dialler's socket ↔ this proxy ↔ the real peer."""

    def __init__(self, address: tuple[str, int], timeout: float | None) -> None:
        self.address = address
        self._silent = threading.Event()
        self._lock = threading.Lock()
        self._closed = False
        with socket.create_server(("127.0.0.1", 0)) as listener:
            self.dialler = socket.create_connection(listener.getsockname(), timeout=timeout)
            self._near, _ = listener.accept()
        try:
            self._far = socket.create_connection(address, timeout=timeout)
        except OSError:
            self._near.close()
            self.dialler.close()
            raise
        self._far.settimeout(None)
        for source, target in ((self._near, self._far), (self._far, self._near)):
            threading.Thread(target=self._pump, args=(source, target), daemon=True,
                             name=f"flintlock-test-link-{address[1]}").start()

    def _pump(self, source: socket.socket, target: socket.socket) -> None:
        while True:
            try:
                data = source.recv(65536)
            except OSError:
                data = b""
            if not data:
                self.close()
                return
            if self._silent.is_set():
                continue  # dropped on the floor; neither end hears of it
            try:
                target.sendall(data)
            except OSError:
                self.close()
                return

    def silence(self) -> None:
        """From now on deliver nothing either way; both ends stay open."""
        self._silent.set()

    def cut(self) -> None:
        """Reset both ends (RST, as a crashed host's kernel or a middlebox would)."""
        linger = struct.pack("ii", 1, 0)
        for sock in (self._near, self._far):
            try:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger)
            except OSError:
                pass
        self.close()

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        for sock in (self._near, self._far):
            try:
                sock.close()
            except OSError:
                pass

    @property
    def closed(self) -> bool:
        return self._closed


class Interposer:
    """The links dialled through one patched module, oldest first."""

    def __init__(self) -> None:
        self.links: list[FaultyLink] = []
        self._lock = threading.Lock()

    def create_connection(self, address: tuple[str, int], timeout: Any = None,
                          *args: Any, **kwargs: Any) -> socket.socket:
        link = FaultyLink((address[0], int(address[1])), timeout)
        with self._lock:
            self.links.append(link)
        return link.dialler

    def open_links(self) -> list[FaultyLink]:
        with self._lock:
            return [link for link in self.links if not link.closed]

    def close(self) -> None:
        with self._lock:
            links = list(self.links)
        for link in links:
            link.close()


def interpose(monkeypatch: Any, module: types.ModuleType) -> Interposer:
    """Route ``module``'s ``socket.create_connection`` through faulty links (undone with the
    monkeypatch)."""
    interposer = Interposer()
    shim = types.SimpleNamespace(**{name: getattr(socket, name) for name in dir(socket)
                                    if not name.startswith("__")})
    shim.create_connection = interposer.create_connection
    monkeypatch.setattr(module, "socket", shim)
    return interposer
