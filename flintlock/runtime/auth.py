"""Mutual authentication of a TCP connection with the per-job secret (DESIGN.md §7).

Every control-plane (RPC) and data-plane (TaskManager to TaskManager) connection runs this
handshake before a single frame is read, because the frames that follow are pickled and
pickle from an unauthenticated peer is remote code execution.

The handshake is a mutual HMAC-SHA256 challenge-response over three fixed-size messages::

    server -> client   CHALLENGE  = MAGIC | server_nonce                        (36 bytes)
    client -> server   RESPONSE   = MAGIC | client_nonce | client_proof         (68 bytes)
    server -> client   CONFIRM    = MAGIC | status | server_proof               (37 bytes)

    client_proof = HMAC(secret, "client" label | context | server_nonce | client_nonce)
    server_proof = HMAC(secret, "server" label | context | server_nonce | client_nonce)

Invariants:

- Both sides prove knowledge of the secret without sending it; proofs are compared in
  constant time (``hmac.compare_digest``).
- Fresh nonces from both sides bind each proof to one connection, so a recorded proof cannot
  be replayed on another connection; the role label stops a server proof being reflected as a
  client proof; the ``context`` label (``CONTROL_PLANE``, ``DATA_PLANE``) stops a proof made
  for the data plane being accepted on the control plane.
- A server that rejects the client's proof sends a CONFIRM with status REJECTED (and a zero
  proof) before closing, so the client reports a wrong secret rather than a vanished peer.
- Nothing here unpickles anything; the messages are fixed-size byte strings.
- A server at its cap of unauthenticated connections answers a new one with BUSY instead of
  a challenge (``busy_reply``: ``BUSY_MAGIC | limit | zeros``, the challenge's size, then
  close), so the client reports a busy endpoint (``AuthFailure.BUSY``) rather than a failed
  authentication or a vanished peer (issue 30). Plain TCP only: a TLS server's refused client
  only sees the connection closed, its TLS handshake not having begun.

The core (``ServerHandshake``, ``ClientHandshake``) does no I/O: a selector-driven transport
feeds it the bytes it reads (each message has a fixed size: ``bytes_expected``) and sends what
it returns. ``AcceptingHandshake`` is that driver for the accepting side of a non-blocking
socket (the data server's and the RPC endpoint's selector loops use it, so a client that
says nothing pins no thread; the loop enforces an absolute deadline with ``expire``).
``authenticate_server`` / ``authenticate_client`` run the core on a blocking socket.

Thread ownership: a handshake object belongs to the one thread driving its connection.
"""

from __future__ import annotations

import enum
import hashlib
import hmac
import os
import socket
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Protocol

from flintlock.common.errors import FlintlockError

MAGIC: Final = b"FLA\x01"
BUSY_MAGIC: Final = b"FLB\x01"
NONCE_SIZE: Final = 32
PROOF_SIZE: Final = hashlib.sha256().digest_size
SECRET_SIZE: Final = 32
MIN_SECRET_SIZE: Final = 16
CHALLENGE_SIZE: Final = len(MAGIC) + NONCE_SIZE
RESPONSE_SIZE: Final = len(MAGIC) + NONCE_SIZE + PROOF_SIZE
CONFIRM_SIZE: Final = len(MAGIC) + 1 + PROOF_SIZE

CONTROL_PLANE: Final = "control"
DATA_PLANE: Final = "data"

_STATUS_ACCEPTED: Final = 1
_STATUS_REJECTED: Final = 0
_CLIENT_LABEL: Final = b"flintlock-auth-v1/client"
_SERVER_LABEL: Final = b"flintlock-auth-v1/server"

NonceSource = Callable[[int], bytes]


class StreamSocket(Protocol):
    """What the handshake needs of a connected socket: a ``socket.socket``, or a
    ``runtime.tls`` ``TlsSocket`` when the handshake runs inside TLS."""

    def recv(self, size: int, /) -> bytes: ...

    def send(self, data: bytes, /) -> int: ...

    def sendall(self, data: bytes, /) -> None: ...

    def gettimeout(self) -> float | None: ...

    def settimeout(self, value: float | None, /) -> None: ...


class AuthFailure(enum.Enum):
    """Why a handshake failed."""

    WRONG_SECRET = "wrong secret"
    MALFORMED = "malformed handshake"
    TIMEOUT = "timed out"
    PEER_CLOSED = "peer closed the connection"
    ILLEGAL_STATE = "handshake step out of order"
    CERTIFICATE_REJECTED = "TLS: the peer's certificate is not trusted"
    REJECTED_BY_PEER = "TLS: the peer refused our certificate"
    TLS_FAILED = "TLS handshake failed"
    BUSY = "the endpoint is busy"


class AuthenticationError(FlintlockError, ConnectionError):
    """The peer did not prove the job secret; the connection must be closed unused."""

    def __init__(self, reason: AuthFailure, detail: str = "") -> None:
        super().__init__(reason, detail)
        self.reason = reason
        self.detail = detail

    def __str__(self) -> str:
        suffix = f": {self.detail}" if self.detail else ""
        if self.reason is AuthFailure.BUSY:
            return f"{self.reason.value}{suffix}"
        return f"authentication failed ({self.reason.value}){suffix}"


class HandshakeState(enum.Enum):
    """Where a handshake is; each side moves strictly forward through its own states."""

    START = "start"
    AWAITING_RESPONSE = "awaiting response"
    AWAITING_CHALLENGE = "awaiting challenge"
    AWAITING_CONFIRM = "awaiting confirm"
    AUTHENTICATED = "authenticated"
    FAILED = "failed"


def busy_reply(limit: int) -> bytes:
    """What a connection over the cap gets before it is closed (one ``send``)."""
    body = BUSY_MAGIC + min(limit, 2**32 - 1).to_bytes(4, "big")
    return body + bytes(CHALLENGE_SIZE - len(body))


def send_busy(sock: socket.socket, limit: int) -> None:
    """Tells a connection refused over the cap that the endpoint is busy (best effort: one
    non-blocking ``send``; the caller closes the socket)."""
    try:
        sock.setblocking(False)
        sock.send(busy_reply(limit))
    except OSError:
        pass  # the client went away first: nothing to tell


def new_job_secret() -> bytes:
    """A fresh per-job secret: 32 bytes from the operating system's CSPRNG."""
    return os.urandom(SECRET_SIZE)


def _check_secret(secret: bytes) -> bytes:
    if not isinstance(secret, (bytes, bytearray)) or len(secret) < MIN_SECRET_SIZE:
        raise ValueError(f"a job secret must be at least {MIN_SECRET_SIZE} bytes")
    return bytes(secret)


def _proof(secret: bytes, label: bytes, context: str, server_nonce: bytes, nonce: bytes) -> bytes:
    ctx = context.encode("utf-8")
    message = label + len(ctx).to_bytes(2, "big") + ctx + server_nonce + nonce
    return hmac.new(secret, message, hashlib.sha256).digest()


def _expect(message: bytes, size: int, name: str) -> bytes:
    data = bytes(message)
    if len(data) != size:
        raise AuthenticationError(
            AuthFailure.MALFORMED, f"{name} has {len(data)} bytes, not {size}"
        )
    if data[: len(MAGIC)] != MAGIC:
        raise AuthenticationError(AuthFailure.MALFORMED, f"{name} does not start with {MAGIC!r}")
    return data[len(MAGIC):]


class _Handshake:
    def __init__(self, secret: bytes, context: str, nonce_source: NonceSource | None) -> None:
        self._secret = _check_secret(secret)
        self._context = context
        self._nonce_source: NonceSource = nonce_source or os.urandom
        self.state = HandshakeState.START

    def _require(self, state: HandshakeState, step: str) -> None:
        if self.state is not state:
            raise AuthenticationError(
                AuthFailure.ILLEGAL_STATE, f"{step} called in state {self.state.value}"
            )

    def _fail(self, reason: AuthFailure, detail: str) -> AuthenticationError:
        self.state = HandshakeState.FAILED
        return AuthenticationError(reason, detail)

    @property
    def authenticated(self) -> bool:
        return self.state is HandshakeState.AUTHENTICATED


class ServerHandshake(_Handshake):
    """The accepting side: ``challenge()`` → send; read RESPONSE_SIZE; ``receive_response``
    → send the CONFIRM it returns (also on rejection, then raise the pending error)."""

    def __init__(
        self, secret: bytes, context: str, nonce_source: NonceSource | None = None
    ) -> None:
        super().__init__(secret, context, nonce_source)
        self._server_nonce = b""

    @property
    def bytes_expected(self) -> int:
        return RESPONSE_SIZE if self.state is HandshakeState.AWAITING_RESPONSE else 0

    def challenge(self) -> bytes:
        self._require(HandshakeState.START, "challenge")
        self._server_nonce = self._nonce_source(NONCE_SIZE)
        self.state = HandshakeState.AWAITING_RESPONSE
        return MAGIC + self._server_nonce

    def receive_response(self, message: bytes) -> tuple[bytes, AuthenticationError | None]:
        """The CONFIRM to send, and the error to raise after sending it (None: accepted)."""
        self._require(HandshakeState.AWAITING_RESPONSE, "receive_response")
        try:
            body = _expect(message, RESPONSE_SIZE, "response")
        except AuthenticationError as exc:
            self.state = HandshakeState.FAILED
            return MAGIC + bytes([_STATUS_REJECTED]) + bytes(PROOF_SIZE), exc
        client_nonce, client_proof = body[:NONCE_SIZE], body[NONCE_SIZE:]
        expected = _proof(self._secret, _CLIENT_LABEL, self._context, self._server_nonce,
                          client_nonce)
        if not hmac.compare_digest(expected, client_proof):
            error = self._fail(AuthFailure.WRONG_SECRET,
                               f"client proof does not match the job secret ({self._context})")
            return MAGIC + bytes([_STATUS_REJECTED]) + bytes(PROOF_SIZE), error
        server_proof = _proof(self._secret, _SERVER_LABEL, self._context, self._server_nonce,
                              client_nonce)
        self.state = HandshakeState.AUTHENTICATED
        return MAGIC + bytes([_STATUS_ACCEPTED]) + server_proof, None


class ClientHandshake(_Handshake):
    """The connecting side: read CHALLENGE_SIZE; ``receive_challenge`` → send; read
    CONFIRM_SIZE; ``receive_confirm`` (raises unless the server proved the secret)."""

    def __init__(
        self, secret: bytes, context: str, nonce_source: NonceSource | None = None
    ) -> None:
        super().__init__(secret, context, nonce_source)
        self.state = HandshakeState.AWAITING_CHALLENGE
        self._server_nonce = b""
        self._client_nonce = b""

    @property
    def bytes_expected(self) -> int:
        sizes = {
            HandshakeState.AWAITING_CHALLENGE: CHALLENGE_SIZE,
            HandshakeState.AWAITING_CONFIRM: CONFIRM_SIZE,
        }
        return sizes.get(self.state, 0)

    def receive_challenge(self, message: bytes) -> bytes:
        self._require(HandshakeState.AWAITING_CHALLENGE, "receive_challenge")
        if message.startswith(BUSY_MAGIC):
            self.state = HandshakeState.FAILED
            limit = int.from_bytes(message[len(BUSY_MAGIC):len(BUSY_MAGIC) + 4], "big")
            raise AuthenticationError(AuthFailure.BUSY, f"{limit} connections are waiting to "
                                      f"authenticate (the limit); retry in a moment")
        try:
            self._server_nonce = _expect(message, CHALLENGE_SIZE, "challenge")
        except AuthenticationError:
            self.state = HandshakeState.FAILED
            raise
        self._client_nonce = self._nonce_source(NONCE_SIZE)
        proof = _proof(self._secret, _CLIENT_LABEL, self._context, self._server_nonce,
                       self._client_nonce)
        self.state = HandshakeState.AWAITING_CONFIRM
        return MAGIC + self._client_nonce + proof

    def receive_confirm(self, message: bytes) -> None:
        self._require(HandshakeState.AWAITING_CONFIRM, "receive_confirm")
        try:
            body = _expect(message, CONFIRM_SIZE, "confirm")
        except AuthenticationError:
            self.state = HandshakeState.FAILED
            raise
        status, server_proof = body[0], body[1:]
        if status != _STATUS_ACCEPTED:
            raise self._fail(AuthFailure.WRONG_SECRET,
                             f"the server rejected our proof of the job secret ({self._context})")
        expected = _proof(self._secret, _SERVER_LABEL, self._context, self._server_nonce,
                          self._client_nonce)
        if not hmac.compare_digest(expected, server_proof):
            raise self._fail(AuthFailure.WRONG_SECRET,
                             f"the server could not prove the job secret ({self._context})")
        self.state = HandshakeState.AUTHENTICATED


# -- non-blocking accepting side -----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HandshakeEnded:
    """The accepting handshake is over: ``error`` None means the client proved the secret."""

    error: AuthenticationError | None


class AcceptingHandshake:
    """The accepting side on a connected non-blocking socket, driven by a selector loop:
    ``start()`` sends the challenge; ``on_readable()`` takes what has arrived and, once the
    response is complete, sends the CONFIRM. Each returns ``HandshakeEnded`` when the
    handshake is over (then the socket is the caller's again), None while it goes on. The
    caller owns the deadline: past it, ``expire()`` ends the handshake as timed out."""

    def __init__(self, sock: StreamSocket, secret: bytes, context: str) -> None:
        self._sock = sock
        self._handshake = ServerHandshake(secret, context)
        self._received = bytearray()
        self.ended: HandshakeEnded | None = None

    def start(self) -> HandshakeEnded | None:
        try:  # 36 bytes into an empty send buffer: never partial
            self._sock.send(self._handshake.challenge())
        except OSError as exc:
            return self._end(_peer_closed("sending the challenge", exc))
        return None

    def on_readable(self) -> HandshakeEnded | None:
        if self.ended is not None:
            return self.ended
        try:
            chunk = self._sock.recv(self._handshake.bytes_expected - len(self._received))
        except (BlockingIOError, InterruptedError):
            return None
        except OSError as exc:
            return self._end(_peer_closed("reading the response", exc))
        if not chunk:
            return self._end(AuthenticationError(
                AuthFailure.PEER_CLOSED,
                f"after {len(self._received)} of {RESPONSE_SIZE} bytes of the response"))
        self._received += chunk
        if len(self._received) < self._handshake.bytes_expected:
            return None
        return self._respond()

    def _respond(self) -> HandshakeEnded:
        confirm, error = self._handshake.receive_response(bytes(self._received))
        try:
            self._sock.send(confirm)
        except OSError as exc:
            return self._end(error or _peer_closed("sending the confirm", exc))
        return self._end(error)

    def expire(self) -> HandshakeEnded:
        """The deadline passed before the client proved the secret."""
        if self.ended is not None:
            return self.ended
        return self._end(AuthenticationError(
            AuthFailure.TIMEOUT, f"no complete response by the deadline "
                                 f"({len(self._received)} of {RESPONSE_SIZE} bytes)"))

    def _end(self, error: AuthenticationError | None) -> HandshakeEnded:
        self.ended = HandshakeEnded(error)
        return self.ended


def _peer_closed(what: str, cause: OSError) -> AuthenticationError:
    error = AuthenticationError(AuthFailure.PEER_CLOSED, f"{what}: {cause}")
    error.__cause__ = cause
    return error


# -- blocking socket helpers --------------------------------------------------------------


def _recv_exactly(sock: StreamSocket, size: int, what: str) -> bytes:
    chunks = bytearray()
    while len(chunks) < size:
        try:
            chunk = sock.recv(size - len(chunks))
        except AuthenticationError:  # e.g. TLS under the handshake: the peer refused us
            raise
        except TimeoutError as exc:
            raise AuthenticationError(AuthFailure.TIMEOUT, f"waiting for the {what}") from exc
        except OSError as exc:
            raise AuthenticationError(
                AuthFailure.PEER_CLOSED, f"reading the {what}: {exc}"
            ) from exc
        if not chunk:
            raise AuthenticationError(
                AuthFailure.PEER_CLOSED, f"after {len(chunks)} of {size} bytes of the {what}"
            )
        chunks += chunk
    return bytes(chunks)


def _send(sock: StreamSocket, data: bytes, what: str) -> None:
    try:
        sock.sendall(data)
    except AuthenticationError:
        raise
    except TimeoutError as exc:
        raise AuthenticationError(AuthFailure.TIMEOUT, f"sending the {what}") from exc
    except OSError as exc:
        raise AuthenticationError(AuthFailure.PEER_CLOSED, f"sending the {what}: {exc}") from exc


class _Deadline:
    """Sets a socket timeout for the handshake and restores the previous one afterwards."""

    def __init__(self, sock: StreamSocket, timeout_s: float) -> None:
        self._sock = sock
        self._timeout_s = timeout_s
        self._previous: float | None = None

    def __enter__(self) -> None:
        self._previous = self._sock.gettimeout()
        self._sock.settimeout(self._timeout_s)

    def __exit__(self, *exc_info: object) -> None:
        try:
            self._sock.settimeout(self._previous)
        except OSError:
            pass


def authenticate_server(
    sock: StreamSocket, secret: bytes, context: str, timeout_s: float
) -> None:
    """Run the accepting side on a connected blocking socket; raise ``AuthenticationError``.

    ``timeout_s`` bounds each read and write of the handshake, not the whole: a client that
    trickles its response holds the calling thread longer. Endpoints that accept anyone's
    connections use ``AcceptingHandshake`` with an absolute deadline instead."""
    handshake = ServerHandshake(secret, context)
    with _Deadline(sock, timeout_s):
        _send(sock, handshake.challenge(), "challenge")
        response = _recv_exactly(sock, RESPONSE_SIZE, "response")
        confirm, error = handshake.receive_response(response)
        try:
            _send(sock, confirm, "confirm")
        except AuthenticationError:
            if error is None:
                raise
        if error is not None:
            raise error


def authenticate_client(
    sock: StreamSocket, secret: bytes, context: str, timeout_s: float
) -> None:
    """Run the connecting side on a connected blocking socket; raise ``AuthenticationError``."""
    handshake = ClientHandshake(secret, context)
    with _Deadline(sock, timeout_s):
        challenge = _recv_exactly(sock, CHALLENGE_SIZE, "challenge")
        _send(sock, handshake.receive_challenge(challenge), "response")
        handshake.receive_confirm(_recv_exactly(sock, CONFIRM_SIZE, "confirm"))
