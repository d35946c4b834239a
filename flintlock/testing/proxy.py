"""Connections that break on cue: every TCP connection a module dials goes through a proxy
the test can cut (reset both ends) or silence (drop every byte, keep both ends open: what a
dead link, a pulled cable or a firewall dropping packets looks like).

Two ways in:

* ``interpose(monkeypatch, module)`` replaces the ``socket`` module seen by ``module`` (the
  data plane's ``flintlock.runtime.network.transport``, the control plane's
  ``flintlock.runtime.rpc.server``) with one whose ``create_connection`` dials through a
  ``FaultyLink``; everything else is the real ``socket``. For jobs on TaskManager threads (the
  patch is in this process).
* ``Forwarder(target, links)`` listens on 127.0.0.1 and relays every connection it accepts to
  ``target`` through a ``FaultyLink``: a process that hands out addresses (the JobManager's
  RPC address in the TaskManagers' payloads, the data addresses it collects at registration)
  hands out a forwarder's instead, and then every connection of TaskManager processes passes
  through it, whatever process dialled.

Either way the links of one plane are kept by a ``Links`` (oldest first). Another process (the
test, when the JobManager runs in a driver subprocess) breaks them through ``RemoteLinks``:
a request file in a directory, carried out by a thread of the process holding the links.

Threads: two pump threads per link copy bytes each way until either side closes; one accept
thread per forwarder; one thread serves remote requests. ``cut``, ``silence`` and ``close``
may be called from any thread.
"""

from __future__ import annotations

import json
import os
import socket
import struct
import threading
import types
from collections.abc import Mapping
from typing import Any

from flintlock.testing.waiting import wait_for


class FaultyLink:
    """One proxied connection: the dialler ↔ ``near`` | this proxy | ``far`` ↔ the real peer
    at ``address``."""

    def __init__(self, near: socket.socket, address: tuple[str, int],
                 timeout: float | None) -> None:
        self.address = address
        self._silent = threading.Event()
        self._lock = threading.Lock()
        self._closed = False
        self._near = near
        try:
            self._far = socket.create_connection(address, timeout=timeout)
        except OSError:
            near.close()
            raise
        self._far.settimeout(None)
        self._near.settimeout(None)
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


class Links:
    """The links of one plane, oldest first."""

    def __init__(self) -> None:
        self.links: list[FaultyLink] = []
        self._lock = threading.Lock()

    def add(self, link: FaultyLink) -> FaultyLink:
        with self._lock:
            self.links.append(link)
        return link

    def open_links(self) -> list[FaultyLink]:
        with self._lock:
            return [link for link in self.links if not link.closed]

    def close(self) -> None:
        with self._lock:
            links = list(self.links)
        for link in links:
            link.close()


class Interposer(Links):
    """The links dialled through one patched module."""

    def create_connection(self, address: tuple[str, int], timeout: Any = None,
                          *args: Any, **kwargs: Any) -> socket.socket:
        with socket.create_server(("127.0.0.1", 0)) as listener:
            dialler = socket.create_connection(listener.getsockname(), timeout=timeout)
            near, _ = listener.accept()
        try:
            self.add(FaultyLink(near, (address[0], int(address[1])), timeout))
        except OSError:
            dialler.close()
            raise
        return dialler


class Forwarder:
    """Listens on 127.0.0.1 (``address``) and relays each accepted connection to ``target``
    through a ``FaultyLink`` kept in ``links``. A connection whose target refuses it is
    closed, as the target itself would have refused it."""

    def __init__(self, target: tuple[str, int], links: Links) -> None:
        self.target = target
        self._links = links
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.address: tuple[str, int] = self._listener.getsockname()[:2]
        threading.Thread(target=self._accept, daemon=True,
                         name=f"flintlock-test-forward-{target[1]}").start()

    def _accept(self) -> None:
        while True:
            try:
                near, _ = self._listener.accept()
            except OSError:
                return  # closed
            try:
                self._links.add(FaultyLink(near, self.target, None))
            except OSError:
                pass  # FaultyLink closed ``near``: the dialler sees the refusal as a reset

    def close(self) -> None:
        self._listener.close()


class RemoteLinks:
    """Breaks links held by another process, through request files in ``directory``.

    The process holding the links calls ``serve(planes)``; the test calls ``break_link``,
    which writes ``<n>.request`` (plane and how) and waits for ``<n>.done``, written once the
    newest open link of that plane was cut or silenced; it names the link's address. A
    request that was done is never carried out again, so a process started later (a
    restarted driver) serving the same directory only takes new requests."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = os.fspath(directory)
        os.makedirs(self.directory, exist_ok=True)

    def _path(self, number: int, kind: str) -> str:
        return os.path.join(self.directory, f"{number:04d}.{kind}")

    def break_link(self, plane: str, how: str, timeout_s: float) -> str:
        """Cut (``how="cut"``) or silence the newest open link of ``plane``; returns which."""
        if how not in ("cut", "silence"):
            raise ValueError(f"how must be cut or silence, not {how!r}")
        number = sum(1 for name in os.listdir(self.directory) if name.endswith(".request"))
        with open(self._path(number, "tmp"), "w") as out:
            json.dump({"plane": plane, "how": how}, out)
        os.replace(self._path(number, "tmp"), self._path(number, "request"))
        done = self._path(number, "done")
        wait_for(lambda: os.path.exists(done), timeout_s=timeout_s,
                 message=f"no process broke a {plane} link ({how})")
        with open(done) as result:
            return result.read()

    def serve(self, planes: Mapping[str, Links], poll_s: float = 0.02) -> threading.Event:
        """Carry out requests on a daemon thread until the returned event is set."""
        stop = threading.Event()
        threading.Thread(target=self._serve, args=(planes, poll_s, stop), daemon=True,
                         name="flintlock-test-remote-links").start()
        return stop

    def _serve(self, planes: Mapping[str, Links], poll_s: float, stop: threading.Event) -> None:
        while not stop.wait(poll_s):
            for name in sorted(os.listdir(self.directory)):
                number = int(name.split(".")[0]) if name.endswith(".request") else -1
                if number >= 0 and not os.path.exists(self._path(number, "done")):
                    self._carry_out(number, planes)

    def _carry_out(self, number: int, planes: Mapping[str, Links]) -> None:
        with open(self._path(number, "request")) as request:
            wanted = json.load(request)
        links = planes[wanted["plane"]].open_links()
        if not links:
            return  # none yet: asked again at the next poll
        victim = links[-1]
        getattr(victim, "cut" if wanted["how"] == "cut" else "silence")()
        with open(self._path(number, "tmp"), "w") as out:
            out.write(f"{wanted['plane']}-{wanted['how']} {victim.address} "
                      f"of {len(links)} open (process {os.getpid()})")
        os.replace(self._path(number, "tmp"), self._path(number, "done"))


def interpose(monkeypatch: Any, module: types.ModuleType) -> Interposer:
    """Route ``module``'s ``socket.create_connection`` through faulty links (undone with the
    monkeypatch)."""
    interposer = Interposer()
    shim = types.SimpleNamespace(**{name: getattr(socket, name) for name in dir(socket)
                                    if not name.startswith("__")})
    shim.create_connection = interposer.create_connection
    monkeypatch.setattr(module, "socket", shim)
    return interposer
