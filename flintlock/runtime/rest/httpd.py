"""``HttpServer``: the REST endpoint's HTTP server — one selector thread, a few workers.

Design note (issue 14). The endpoint is reachable by anyone who can reach its port, token or
not, and it is closed by the job's own thread before the job's result is handed out; so no
client may hold a thread or the close. Hence:

- One *loop* thread owns every socket, all non-blocking: it accepts, reads each request
  (``wire.RequestReader``), checks its bearer token as soon as the head is in, and writes
  each response. A client that says nothing, or trickles a byte every few seconds, costs a
  socket and a few bytes in the loop, never a thread.
- Every exchange has an absolute deadline, ``request_timeout_s`` from accept to the last
  byte of the response; past it the connection is closed (with a 408 if the request was
  still arriving), however slowly its bytes came.
- At most ``max_pending_requests`` connections may be *unauthenticated* at once: accepted,
  and their token not yet checked (or their 401 not yet written). More are closed at once,
  unread (``admission.Acceptor``, the accept loop all three endpoints share; one log line per
  burst).
- An authenticated request runs on a bounded worker pool (``WORKERS`` threads, made as
  needed): the API may wait for the JobManager, the loop may not. The worker hands the
  response back to the loop, which writes it.
- ``close()`` stops accepting and answers only the requests that have fully arrived (a CLI
  polling the job's state as it ends still gets its answer), for at most ``CLOSE_GRACE_S``;
  every other connection is closed at once, whatever its client is doing. Then it joins the
  loop and the workers, whose API calls are bounded by their own timeouts. Nothing waits for
  a client's bytes.

With TLS (``security.ssl.rest.enabled``) an accepted socket is wrapped server-side and its
handshake runs on the loop like everything else (``Phase.HANDSHAKING``: non-blocking,
``SSLWantRead``/``SSLWantWrite`` wait for the socket) within the same absolute deadline and
under the same cap; a client that fails it (no certificate or an untrusted one, with
authentication-enabled; not TLS at all) is closed before a byte of its request is read.

After a response the loop shuts its side down and reads what the client still sends until it
closes or the deadline passes (a *lingering close*: closing a socket with unread bytes would
reset the connection and could destroy the response, e.g. a 413 sent before the body).

Thread ownership: ``_exchanges``, the selector and the ``Admission`` belong to the loop thread;
workers touch nothing of it but ``_post`` (a deque and the wake-up socket). ``start`` and
``close`` are called by the endpoint's owner (the job's thread).
"""

from __future__ import annotations

import contextlib
import enum
import logging
import selectors
import socket
import ssl
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Final, Protocol
from urllib.parse import parse_qs, urlsplit

from flintlock.runtime.admission import Acceptor, busy_http_reply
from flintlock.runtime.rest.http_types import HttpError, RestRequest, RestResponse
from flintlock.runtime.rest.wire import RequestHead, RequestReader, encode_response

log = logging.getLogger(__name__)

WORKERS: Final = 4
REQUEST_TIMEOUT_S: Final = 10.0
MAX_PENDING_REQUESTS: Final = 64
CLOSE_GRACE_S: Final = 2.0
_RECV_SIZE: Final = 64 * 1024


class RequestHandler(Protocol):
    """What the server serves (``api.RestApi``)."""

    def authorized(self, header: str | None) -> bool: ...

    def handle(self, request: RestRequest) -> RestResponse: ...


class Phase(enum.Enum):
    HANDSHAKING = "handshaking"  # TLS only: the handshake runs; unauthenticated
    READING = "reading"  # the request arrives; unauthenticated until its head is checked
    HANDLING = "handling"  # a worker runs the API
    WRITING = "writing"  # the response goes out
    LINGERING = "lingering"  # response sent, our side shut: reading until the client closes


class _Exchange:
    """One connection, one request (HTTP/1.0). Loop thread only."""

    __slots__ = ("admitted", "deadline", "out", "peer", "phase", "reader", "sock")

    def __init__(self, sock: socket.socket, peer: str, deadline: float) -> None:
        self.sock = sock
        self.peer = peer
        self.deadline = deadline
        self.phase = Phase.READING
        self.reader = RequestReader()
        self.out = memoryview(b"")
        self.admitted = True  # counted in the Admission until its token is checked


class HttpServer:
    """Serves a ``RequestHandler`` on a listening socket bound at construction."""

    def __init__(self, host: str, port: int, *, request_timeout_s: float = REQUEST_TIMEOUT_S,
                 max_pending_requests: int = MAX_PENDING_REQUESTS,
                 tls: ssl.SSLContext | None = None) -> None:
        self._tls = tls
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self._listener = socket.create_server((host, port), family=family, backlog=128)
        self._listener.setblocking(False)
        self.server_address: tuple[str, int] = self._listener.getsockname()[:2]
        self._request_timeout_s = request_timeout_s
        self._admission = Acceptor(self._listener, max_pending_requests,
                                   f"REST endpoint {self.server_address[1]}", self._refuse_busy)
        self._exchanges: dict[socket.socket, _Exchange] = {}
        self._posted: deque[Callable[[], None]] = deque()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._listener, selectors.EVENT_READ)
        self._selector.register(self._wake_r, selectors.EVENT_READ)
        self._handler: RequestHandler | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._thread: threading.Thread | None = None
        self._closing_by: float | None = None  # set by _drain: the end of the grace

    def start(self, handler: RequestHandler, name: str) -> None:
        self._handler = handler
        self._pool = ThreadPoolExecutor(WORKERS, thread_name_prefix=f"{name}-worker")
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Stops accepting, answers what has fully arrived (bounded), closes every
        connection, joins the loop and the workers."""
        if self._thread is not None:
            self._post(self._drain)
            self._thread.join()
        else:
            self._shut_down()
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
        for sock in (self._wake_r, self._wake_w):
            sock.close()

    # -- any thread -------------------------------------------------------------------

    def _post(self, task: Callable[[], None]) -> None:
        self._posted.append(task)
        try:
            self._wake_w.send(b"\0")
        except OSError:  # the loop has ended (nothing to deliver to), or the pipe is full
            pass

    # -- the loop thread --------------------------------------------------------------

    def _loop(self) -> None:
        try:
            while self._closing_by is None or self._exchanges:
                self._run_once()
        finally:
            self._shut_down()

    def _shut_down(self) -> None:
        for exchange in list(self._exchanges.values()):
            self._close(exchange)
        self._selector.close()
        self._listener.close()

    def _drain(self) -> None:
        """Closing: no new connection; a request that has fully arrived is still answered
        (until the grace ends); every other connection is closed now."""
        self._closing_by = time.monotonic() + CLOSE_GRACE_S
        self._accept()
        self._selector.unregister(self._listener)
        self._listener.close()
        for exchange in list(self._exchanges.values()):
            if exchange.phase is Phase.READING:
                self._read(exchange)  # what has arrived already, without waiting
        for exchange in list(self._exchanges.values()):
            if exchange.phase in (Phase.HANDSHAKING, Phase.READING, Phase.LINGERING):
                self._close(exchange)
            else:
                exchange.deadline = min(exchange.deadline, self._closing_by)

    def _run_once(self) -> None:
        timeout = None
        if self._exchanges:
            earliest = min(exchange.deadline for exchange in self._exchanges.values())
            timeout = max(0.0, earliest - time.monotonic())
        for key, _ in self._selector.select(timeout):
            if key.fileobj is self._listener:
                self._accept()
            elif key.fileobj is self._wake_r:
                self._run_posted()
            else:
                exchange = self._exchanges.get(key.fileobj)  # type: ignore[call-overload]
                if exchange is not None:
                    self._on_ready(exchange)
        now = time.monotonic()
        for exchange in [e for e in self._exchanges.values() if e.deadline <= now]:
            self._expire(exchange)

    def _run_posted(self) -> None:
        try:
            self._wake_r.recv(4096)
        except BlockingIOError:
            pass
        while self._posted:
            self._posted.popleft()()

    def _accept(self) -> None:
        for sock, address in self._admission.accept_waiting():
            sock.setblocking(False)
            if self._tls is not None:
                sock = self._tls.wrap_socket(sock, server_side=True,
                                             do_handshake_on_connect=False)
            deadline = time.monotonic() + self._request_timeout_s
            exchange = _Exchange(sock, f"{address[0]}:{address[1]}",
                                 min(deadline, self._closing_by or deadline))
            if self._tls is not None:
                exchange.phase = Phase.HANDSHAKING
            self._exchanges[sock] = exchange
            self._selector.register(sock, selectors.EVENT_READ)

    def _refuse_busy(self, sock: socket.socket, limit: int) -> None:
        """Answers 503 "busy" (plain HTTP only: a TLS client gets the close) and closes; never
        blocks: what does not fit the socket's buffer at once is not sent."""
        try:
            if self._tls is None:
                sock.setblocking(False)
                with contextlib.suppress(BlockingIOError):
                    sock.recv(65536)  # what arrived is dropped, so close sends no reset first
                sock.send(busy_http_reply(limit))
                sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        finally:
            sock.close()

    def _on_ready(self, exchange: _Exchange) -> None:
        if exchange.phase is Phase.HANDSHAKING:
            self._handshake(exchange)
        elif exchange.phase is Phase.WRITING:
            self._write(exchange)
        else:
            self._read(exchange)

    def _handshake(self, exchange: _Exchange) -> None:
        sock = exchange.sock
        assert isinstance(sock, ssl.SSLSocket)
        try:
            sock.do_handshake()
        except ssl.SSLWantReadError:
            self._selector.modify(sock, selectors.EVENT_READ)
            return
        except ssl.SSLWantWriteError:
            self._selector.modify(sock, selectors.EVENT_WRITE)
            return
        except OSError as exc:  # ssl.SSLError included: refused, or not TLS at all
            log.info("REST endpoint %s: TLS handshake with %s failed: %s",
                     self.server_address[1], exchange.peer, exc)
            self._close(exchange)
            return
        exchange.phase = Phase.READING
        self._selector.modify(sock, selectors.EVENT_READ)
        self._read(exchange)  # the request may have come with the handshake

    def _read(self, exchange: _Exchange) -> None:
        try:
            data = exchange.sock.recv(_RECV_SIZE)
        except (BlockingIOError, InterruptedError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
            return
        except OSError:
            data = b""
        if not data:  # the client went away mid-request, or finished lingering
            self._close(exchange)
            return
        if exchange.phase is not Phase.READING:
            return  # bytes past the request: dropped
        try:
            exchange.reader.feed(data)
        except HttpError as error:
            self._respond(exchange, _error_response(error))
            return
        self._advance(exchange)
        sock = exchange.sock
        if (isinstance(sock, ssl.SSLSocket) and exchange.phase is Phase.READING
                and sock.pending()):
            self._read(exchange)  # decrypted bytes no readiness will announce

    def _advance(self, exchange: _Exchange) -> None:
        """After the head: check the token (a 401 at once, the body unread); once the
        request is complete, hand it to a worker (the socket rests meanwhile)."""
        head, handler = exchange.reader.head, self._handler
        if head is None or handler is None:
            return
        request = _request(head, exchange.reader.body)
        if exchange.admitted:
            if not handler.authorized(head.authorization):
                self._respond(exchange, handler.handle(request))  # a 401; nothing routed
                return
            self._release(exchange)
        if exchange.reader.complete:
            exchange.phase = Phase.HANDLING
            self._selector.unregister(exchange.sock)
            assert self._pool is not None
            self._pool.submit(self._handle, handler, exchange, request)

    def _handle(self, handler: RequestHandler, exchange: _Exchange, request: RestRequest
                ) -> None:
        """On a worker: the API call, then back to the loop with the response."""
        try:
            response = handler.handle(request)
        except Exception:
            log.exception("REST request %s %s failed", request.method, request.path)
            response = RestResponse(500, {"errors": ["internal error; see the job's log"]})
        self._post(lambda: self._handled(exchange, response))

    def _handled(self, exchange: _Exchange, response: RestResponse) -> None:
        if self._exchanges.get(exchange.sock) is exchange:  # else: past its deadline, closed
            self._selector.register(exchange.sock, selectors.EVENT_WRITE)
            self._respond(exchange, response)

    def _respond(self, exchange: _Exchange, response: RestResponse) -> None:
        exchange.phase = Phase.WRITING
        exchange.out = memoryview(encode_response(response.status, response.body,
                                                  response.headers, response.content_type))
        self._selector.modify(exchange.sock, selectors.EVENT_WRITE)
        self._write(exchange)

    def _write(self, exchange: _Exchange) -> None:
        try:
            sent = exchange.sock.send(exchange.out)
        except (BlockingIOError, InterruptedError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
            return
        except OSError:
            self._close(exchange)
            return
        exchange.out = exchange.out[sent:]
        if len(exchange.out):
            return
        exchange.phase = Phase.LINGERING
        try:
            exchange.sock.shutdown(socket.SHUT_WR)
        except OSError:
            self._close(exchange)
            return
        self._selector.modify(exchange.sock, selectors.EVENT_READ)

    def _expire(self, exchange: _Exchange) -> None:
        if exchange.phase is Phase.READING:
            late = encode_response(408, {"errors": [
                f"request not received within {self._request_timeout_s:g} s"]})
            try:  # best effort, never waiting
                exchange.sock.send(late)
            except OSError:
                pass
        self._close(exchange)

    def _close(self, exchange: _Exchange) -> None:
        self._exchanges.pop(exchange.sock, None)
        try:
            self._selector.unregister(exchange.sock)
        except (KeyError, ValueError):
            pass
        exchange.sock.close()
        self._release(exchange)

    def _release(self, exchange: _Exchange) -> None:
        if not exchange.admitted:
            return
        exchange.admitted = False
        self._admission.release()


def _request(head: RequestHead, body: Callable[[], bytes]) -> RestRequest:
    url = urlsplit(head.target)
    return RestRequest(head.method, url.path, parse_qs(url.query), head.authorization, body)


def _error_response(error: HttpError) -> RestResponse:
    return RestResponse(error.status, {"errors": [error.message]}, error.headers)
