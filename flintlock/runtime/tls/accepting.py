"""Securing an internal connection: TLS when the job has it, then the job-secret handshake.

``SecuredAccept`` is the accepting side on a non-blocking socket, driven by a selector loop
(the data server's I/O thread, the RPC acceptor): ``start()``, then ``on_ready()`` whenever
the socket is ready for ``events``, until one returns ``HandshakeEnded``; the loop owns the
absolute deadline (``expire()``) and re-registers the socket when ``events`` changes. A
client that says nothing, or trickles its TLS handshake, holds no thread; a client without
the job's certificate fails the TLS handshake and is closed before the secret handshake
starts (``TlsHandshakeError``); nothing it sent is read beyond TLS records.

``connect_secured`` is the connecting side on a blocking socket: the TLS handshake under one
absolute deadline, then the secret handshake; it returns the socket to use from then on.

Why both (defence in depth, docs/security.md): TLS authenticates with the job certificate
and protects every frame; the secret handshake still proves the job secret and binds the
connection to its plane (a data-plane connection cannot be replayed as a control-plane one),
costs one round trip per connection and keeps the plain-TCP and TLS paths one protocol.
"""

from __future__ import annotations

import selectors
import socket
import ssl

from flintlock.runtime.auth import (
    AcceptingHandshake,
    AuthenticationError,
    AuthFailure,
    HandshakeEnded,
    authenticate_client,
)
from flintlock.runtime.tls.channel import TlsSocket
from flintlock.runtime.tls.contexts import TlsRole

SecuredSocket = socket.socket | TlsSocket


class SecuredAccept:
    """The accepting side of one connection; see the module doc. Loop thread only."""

    def __init__(self, sock: socket.socket, secret: bytes, plane: str,
                 tls: ssl.SSLContext | None) -> None:
        self._secret = secret
        self._plane = plane
        self._tls = TlsSocket(sock, tls, TlsRole.SERVER, plane) if tls is not None else None
        self.sock: SecuredSocket = self._tls if self._tls is not None else sock
        self._handshake = (AcceptingHandshake(sock, secret, plane) if self._tls is None
                           else None)
        self.ended: HandshakeEnded | None = None
        self._held: HandshakeEnded | None = None  # accepted, its CONFIRM not yet on the socket

    @property
    def events(self) -> int:
        """What the loop should wait for on this socket."""
        writing = self._tls is not None and self._tls.wants_write
        return selectors.EVENT_READ | (selectors.EVENT_WRITE if writing else 0)

    def start(self) -> HandshakeEnded | None:
        if self._handshake is not None:
            return self._end_with(self._handshake.start())
        return self._advance_tls()

    def on_ready(self) -> HandshakeEnded | None:
        if self.ended is not None:
            return self.ended
        if self._tls is not None and self._tls.wants_write:
            try:
                self._tls.flush_output()
            except OSError as exc:
                return self._end(AuthenticationError(
                    AuthFailure.PEER_CLOSED, f"{self._plane}: sending TLS records: {exc}"))
        if self._held is not None:
            return self._end_with(self._held)
        if self._handshake is None:
            return self._advance_tls()
        return self._end_with(self._handshake.on_readable())

    def expire(self) -> HandshakeEnded:
        if self.ended is not None:
            return self.ended
        if self._handshake is not None:
            self.ended = self._handshake.expire()
            return self.ended
        return self._end(AuthenticationError(
            AuthFailure.TIMEOUT, f"{self._plane}: no TLS handshake by the deadline"))

    def _advance_tls(self) -> HandshakeEnded | None:
        assert self._tls is not None
        try:
            if not self._tls.handshake_step():
                return None
        except AuthenticationError as exc:
            return self._end(exc)
        self._handshake = AcceptingHandshake(self._tls, self._secret, self._plane)
        return self._end_with(self._handshake.start())

    def _end_with(self, ended: HandshakeEnded | None) -> HandshakeEnded | None:
        """Ends with ``ended``; an acceptance only once the socket took our last records (the
        client waits for the CONFIRM before it sends anything that would wake us)."""
        if ended is None:
            return None
        if ended.error is None and self._tls is not None and self._tls.wants_write:
            self._held = ended
            return None
        self.ended = ended
        return ended

    def _end(self, error: AuthenticationError) -> HandshakeEnded:
        self.ended = HandshakeEnded(error)
        return self.ended


def connect_secured(sock: socket.socket, secret: bytes, plane: str,
                    tls: ssl.SSLContext | None, timeout_s: float) -> SecuredSocket:
    """TLS (if ``tls``) and the secret handshake on a connected blocking socket; raises
    ``AuthenticationError`` (``TlsHandshakeError`` for TLS). The caller closes ``sock`` on
    error."""
    if tls is None:
        authenticate_client(sock, secret, plane, timeout_s)
        return sock
    secured = TlsSocket(sock, tls, TlsRole.CLIENT, plane)
    secured.handshake(timeout_s)
    authenticate_client(secured, secret, plane, timeout_s)
    return secured
