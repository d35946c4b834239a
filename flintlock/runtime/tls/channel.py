"""``TlsSocket``: TLS on a connected TCP socket, through an ``ssl.SSLObject`` over memory BIOs.

Why not ``ssl.SSLSocket``: the RPC connection reads on one thread while others send, and
OpenSSL forbids concurrent use of one TLS session; an ``SSLSocket`` would also need every
caller to handle ``SSLWantRead``/``SSLWantWrite`` and retry a write with the same buffer, and
has no ``sendmsg``. Here the socket I/O stays plain and only in-memory TLS steps take the
session lock, so a reader blocked on the socket never holds up a sender.

Design:

- ``_lock`` guards the ``SSLObject`` and both BIOs; it is held only for in-memory work,
  never across a socket call.
- ``_send_lock`` orders ciphertext on the socket: a sender takes it, encrypts under
  ``_lock``, drains the outgoing BIO and writes, so records leave in the order they were
  sealed. The reader never sends: bytes its decryption queues (alerts, TLS 1.3 key updates)
  go out with the next send (keepalives guarantee one within a third of the idle timeout).
- Reading decrypts every complete record that has arrived into ``_plain``; after a read the
  incoming BIO holds at most a partial record. So ``buffered_input`` says exactly whether
  bytes wait that the socket's readiness will not announce; a selector loop must read them
  without waiting (``SocketConnection`` and ``RpcConnection`` do).
- On a non-blocking socket a write never blocks: ciphertext the socket does not take waits in
  ``_unsent`` (``wants_write``) and goes first next time (``flush_output``). ``sendmsg`` seals
  at most ``SEND_BUDGET`` bytes per call and refuses (``BlockingIOError``) while ciphertext is
  unsent, so memory stays bounded by one budget per connection.
- End of stream without TLS's close_notify is read as end of stream, as on plain TCP: the
  protocols above already tell a clean end from a cut one (a frame cut short, a missing end
  of partition).

Thread ownership: one reader thread (``recv``, ``recv_into``, ``buffered_input``) and any
number of senders; the handshake runs before either, on the thread that owns the socket.
"""

from __future__ import annotations

import selectors
import socket
import ssl
import threading
import time
from collections.abc import Sequence
from typing import Final, cast

from flintlock.common.errors import FlintlockError
from flintlock.runtime.auth import AuthenticationError, AuthFailure
from flintlock.runtime.tls.contexts import (
    TlsHandshakeError,
    TlsRole,
    handshake_error,
)

RAW_READ_SIZE: Final = 256 * 1024
SEND_BUDGET: Final = 256 * 1024
_PLAIN_READ_SIZE: Final = 64 * 1024

Buffer = bytes | bytearray | memoryview


class TlsRecordError(FlintlockError, ConnectionError):
    """A TLS record after the handshake did not decrypt or verify (tampered, corrupt or out
    of order): the connection is lost, nothing of the record is used."""

    def __init__(self, plane: str, detail: str) -> None:
        super().__init__(plane, detail)
        self.plane = plane
        self.detail = detail

    def __str__(self) -> str:
        return f"TLS record rejected on the {self.plane} plane: {self.detail}"


class TlsSocket:
    """A connected socket speaking TLS; see the module doc. Socket calls it does not define
    (``fileno``, ``setsockopt``, timeouts, ``shutdown``, ``close``) go to the TCP socket."""

    def __init__(self, sock: socket.socket, context: ssl.SSLContext, role: TlsRole,
                 plane: str) -> None:
        self._sock = sock
        self._plane = plane
        self._incoming = ssl.MemoryBIO()
        self._outgoing = ssl.MemoryBIO()
        self._tls = context.wrap_bio(self._incoming, self._outgoing,
                                     server_side=role is TlsRole.SERVER)
        self._lock = threading.Lock()  # the SSLObject and the BIOs
        self._send_lock = threading.Lock()  # order of ciphertext; guards _unsent
        self._unsent = memoryview(b"")  # sealed, not yet taken by the socket
        self._plain = bytearray()  # decrypted, not yet returned; reader only
        self._plain_start = 0  # reader only
        self._eof = False  # the peer's end of stream has been read; reader only
        self._raw = bytearray(RAW_READ_SIZE)  # reader only
        self._raw_view = memoryview(self._raw)
        self.handshake_done = False

    # -- handshake ---------------------------------------------------------------------

    def handshake_step(self) -> bool:
        """On a non-blocking socket: take what has arrived, advance the handshake, send what
        it produced. True once complete; raises ``TlsHandshakeError`` (refused or not TLS)
        or ``AuthenticationError`` PEER_CLOSED."""
        try:
            self.flush_output()
            raw = self._sock.recv(RAW_READ_SIZE)
        except (BlockingIOError, InterruptedError):
            raw = None
        except OSError as exc:
            raise AuthenticationError(AuthFailure.PEER_CLOSED,
                                      f"{self._plane}: during the TLS handshake: {exc}") from exc
        if raw == b"":
            raise AuthenticationError(AuthFailure.PEER_CLOSED,
                                      f"{self._plane}: during the TLS handshake")
        with self._lock:
            if raw:
                self._incoming.write(raw)
            try:
                self._tls.do_handshake()
            except ssl.SSLWantReadError:
                pass
            except ssl.SSLError as exc:
                self._send_now(self._outgoing.read())  # the alert that tells the peer why
                raise handshake_error(exc, self._plane) from exc
            else:
                self.handshake_done = True
            produced = self._outgoing.read()
        try:
            self._send_sealed(produced)
        except OSError as exc:
            raise AuthenticationError(AuthFailure.PEER_CLOSED,
                                      f"{self._plane}: during the TLS handshake: {exc}") from exc
        if self.handshake_done:
            self._decrypt()
        return self.handshake_done

    def handshake(self, timeout_s: float) -> None:
        """The whole handshake on a blocking socket, under one absolute deadline."""
        previous = self._sock.gettimeout()
        deadline = time.monotonic() + timeout_s
        self._sock.setblocking(False)
        try:
            with selectors.DefaultSelector() as selector:
                selector.register(self._sock, selectors.EVENT_READ)
                while not self.handshake_step() or self.wants_write:
                    events = selectors.EVENT_READ | (
                        selectors.EVENT_WRITE if self.wants_write else 0)
                    selector.modify(self._sock, events)
                    remaining = deadline - time.monotonic()
                    if remaining <= 0 or not selector.select(remaining):
                        raise AuthenticationError(
                            AuthFailure.TIMEOUT,
                            f"{self._plane}: no TLS handshake within {timeout_s:g} s")
        finally:
            self._sock.settimeout(previous)

    # -- reading (one thread) --------------------------------------------------------------

    @property
    def buffered_input(self) -> bool:
        """Decrypted bytes wait here that no socket readiness will announce."""
        return self._plain_start < len(self._plain)

    def recv(self, size: int) -> bytes:
        buffer = bytearray(size)
        n = self.recv_into(buffer)
        return bytes(buffer[:n])

    def recv_into(self, buffer: Buffer, nbytes: int = 0) -> int:
        """Decrypted bytes into ``buffer``: what is buffered, else what the socket has (a
        non-blocking socket with no complete record raises ``BlockingIOError``); 0 at end of
        stream. Records are opened straight into ``buffer``; what does not fit is kept."""
        target = memoryview(buffer).cast("B")
        if nbytes:
            target = target[:nbytes]
        if self.buffered_input:
            return self._take_buffered(target)
        while len(target):
            filled = self._open_into(target)
            if filled or self._eof:
                return filled
            self._receive()
        return 0

    def _take_buffered(self, target: memoryview) -> int:
        n = min(len(target), len(self._plain) - self._plain_start)
        target[:n] = self._plain[self._plain_start:self._plain_start + n]
        self._plain_start += n
        if self._plain_start == len(self._plain):
            self._plain.clear()
            self._plain_start = 0
        return n

    def _open_into(self, target: memoryview) -> int:
        """Opens the complete records that have arrived into ``target``; if it fills up, the
        rest go to ``_plain`` (so that no decrypted byte hides inside the TLS session)."""
        filled = 0
        with self._lock:
            while filled < len(target):
                try:
                    n = cast(int, self._tls.read(len(target) - filled, target[filled:]))
                except ssl.SSLWantReadError:
                    return filled
                except (ssl.SSLZeroReturnError, ssl.SSLEOFError):
                    self._eof = True
                    return filled
                except ssl.SSLError as exc:
                    raise self._read_error(exc) from exc
                if not n:
                    self._eof = True
                    return filled
                filled += n
        self._decrypt()
        return filled

    def _receive(self) -> None:
        """Reads what the socket has into the incoming BIO (``BlockingIOError`` if nothing;
        an end of stream is passed on to the TLS session)."""
        n = self._sock.recv_into(self._raw)
        with self._lock:
            if n:
                self._incoming.write(self._raw_view[:n])
            else:
                self._incoming.write_eof()

    def _decrypt(self) -> None:
        """Every complete record in the incoming BIO into ``_plain``."""
        if self._plain_start:
            del self._plain[:self._plain_start]
            self._plain_start = 0
        with self._lock:
            while True:
                try:
                    chunk = self._tls.read(_PLAIN_READ_SIZE)
                except ssl.SSLWantReadError:
                    return
                except (ssl.SSLZeroReturnError, ssl.SSLEOFError):
                    self._eof = True
                    return
                except ssl.SSLError as exc:
                    raise self._read_error(exc) from exc
                if not chunk:
                    self._eof = True
                    return
                self._plain += chunk

    def _read_error(self, exc: ssl.SSLError) -> ConnectionError:
        error = handshake_error(exc, self._plane)
        if error.reason is not AuthFailure.TLS_FAILED:
            return error  # TLS 1.3: a client hears that its certificate was refused here
        return TlsRecordError(self._plane, exc.reason or str(exc))

    # -- sending (any thread) --------------------------------------------------------------

    @property
    def wants_write(self) -> bool:
        """Sealed bytes wait for the socket to take them (non-blocking socket)."""
        return bool(len(self._unsent))

    def flush_output(self) -> bool:
        """Send what waits without blocking; True when nothing waits any more."""
        with self._send_lock:
            return self._flush_unsent()

    def sendall(self, data: Buffer) -> None:
        with self._send_lock:
            sealed = self._seal((data,))
            pending, self._unsent = bytes(self._unsent) + sealed, memoryview(b"")
            self._sock.sendall(pending)

    def send(self, data: Buffer, flags: int = 0) -> int:
        """Seals all of ``data``; a blocking socket sends it all (``flags`` apply to the
        first attempt), a non-blocking one keeps what it cannot take for ``flush_output``."""
        with self._send_lock:
            self._send_sealed(self._seal((data,)), flags)
        return len(memoryview(data))

    def sendmsg(self, buffers: Sequence[Buffer]) -> int:
        """For a non-blocking socket: seals up to ``SEND_BUDGET`` bytes of ``buffers`` and
        sends what the socket takes; returns how many bytes of ``buffers`` were sealed (all
        of them will reach the peer). ``BlockingIOError`` while earlier bytes wait."""
        with self._send_lock:
            if not self._flush_unsent():
                raise BlockingIOError("earlier TLS records are still unsent")
            taken: list[memoryview] = []
            budget = SEND_BUDGET
            for buffer in buffers:
                view = memoryview(buffer).cast("B")
                taken.append(view[:budget])
                budget -= len(taken[-1])
                if budget <= 0:
                    break
            self._send_sealed(self._seal(taken))
            return SEND_BUDGET - max(budget, 0)

    def _seal(self, buffers: Sequence[Buffer]) -> bytes:
        with self._lock:
            try:
                for buffer in buffers:
                    if len(buffer):
                        self._tls.write(buffer)
            except ssl.SSLError as exc:
                raise TlsRecordError(self._plane, f"cannot seal a record: {exc}") from exc
            return self._outgoing.read()

    def _send_sealed(self, sealed: bytes, flags: int = 0) -> None:
        """Under ``_send_lock``, or before anyone else sends (the handshake)."""
        if sealed:
            self._unsent = memoryview(bytes(self._unsent) + sealed if self._unsent else sealed)
        if not len(self._unsent):
            return
        if self._sock.gettimeout() != 0.0:  # blocking: sealed bytes must all go out
            try:
                sent = self._sock.send(self._unsent, flags)
            except (BlockingIOError, InterruptedError):
                sent = 0
            if sent < len(self._unsent):
                self._sock.sendall(self._unsent[sent:])
            self._unsent = memoryview(b"")
            return
        self._flush_unsent()

    def _flush_unsent(self) -> bool:
        while len(self._unsent):
            try:
                sent = self._sock.send(self._unsent)
            except (BlockingIOError, InterruptedError):
                return False
            self._unsent = self._unsent[sent:]
        return True

    def _send_now(self, data: bytes) -> None:
        """Best effort, never blocking: an alert on the way out of a failed handshake."""
        try:
            self._sock.send(data, socket.MSG_DONTWAIT)
        except OSError:
            pass

    # -- the TCP socket ----------------------------------------------------------------------

    def fileno(self) -> int:
        return self._sock.fileno()

    def setblocking(self, flag: bool) -> None:
        self._sock.setblocking(flag)

    def settimeout(self, value: float | None) -> None:
        self._sock.settimeout(value)

    def gettimeout(self) -> float | None:
        return self._sock.gettimeout()

    def setsockopt(self, level: int, option: int, value: int) -> None:
        self._sock.setsockopt(level, option, value)

    def getpeername(self) -> object:
        return self._sock.getpeername()

    def shutdown(self, how: int) -> None:
        self._sock.shutdown(how)

    def close(self) -> None:
        self._sock.close()

    def __repr__(self) -> str:
        return f"TlsSocket({self._plane}, fd={self._sock.fileno()})"


__all__ = ["TlsHandshakeError", "TlsRecordError", "TlsSocket"]
