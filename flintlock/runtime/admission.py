"""Admission of connections that have proved nothing yet: a cap, and when to say so.

Every endpoint that anyone may connect to — a TaskManager's data server, the JobManager's RPC
endpoint, a job's REST endpoint — holds each new connection for a while before it knows who
is at the other end (the job-secret handshake, or a request's bearer token). Each endpoint
counts those connections with one ``Admission``: a connection is admitted while fewer than
``limit`` are pending, and refused otherwise (the endpoint closes it at once, unread). A
pending connection is released when it proves itself, fails, or reaches its deadline.

Invariants:

- At most ``limit`` connections are pending at any time; ``release`` never goes below zero
  (an unbalanced release is a bug: ``AdmissionError``).
- Refusals are reported in *bursts*, so a flood costs one log line, not one per connection:
  the first refusal of a burst says so (``Refused.first_of_burst``); the burst ends when the
  pending count has fallen to half the limit (hysteresis, like the write water marks: a
  flood that keeps the endpoint near its cap stays one burst), and the ``release`` that ends
  it returns how many connections the burst refused.

A refused HTTP connection gets a short answer before it is closed, ``busy_http_reply``: ``503
Service Unavailable`` with ``Retry-After`` and Flink's ``{"errors": [...]}`` saying the endpoint
is busy, so a client reports "busy, retry" rather than a failed authentication or a dead
driver (issue 30). A refused data or RPC connection (plain TCP) gets ``auth.send_busy``: the
handshake's BUSY message in place of its challenge, which the client's handshake reports as
``AuthFailure.BUSY``.

``Acceptor`` is the accept loop the three endpoints share (issue 29; before, each had its own
copy): it accepts every connection waiting on the listening socket, admits it or refuses it
(the endpoint's busy reply, then close; one warning per burst), and hands the admitted ones to
the endpoint, which calls ``Acceptor.release`` once each has proved itself or failed (an info
line when that ends a burst).

Who calls it: the selector loops of ``network.transport``, ``rpc.server`` and
``rest.httpd``. ``Admission`` is I/O-free; neither is synchronised: an instance belongs to its
loop's thread.
"""

from __future__ import annotations

import json
import logging
import socket
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from flintlock.common.errors import FlintlockError

log = logging.getLogger(__name__)


class AdmissionError(FlintlockError):
    """A connection was released that was never admitted."""


@dataclass(frozen=True, slots=True)
class Admitted:
    """The connection may proceed; release it when it has proved itself or failed."""


@dataclass(frozen=True, slots=True)
class Refused:
    """The endpoint is at its cap: close the connection now. Log it if ``first_of_burst``."""

    limit: int
    first_of_burst: bool


@dataclass(frozen=True, slots=True)
class BurstEnded:
    """A burst of refusals ended: ``refused`` connections were closed unread during it."""

    refused: int


def busy_http_reply(limit: int, retry_after_s: int = 1) -> bytes:
    """The whole HTTP response a refused connection gets (one ``send``, then close)."""
    body = json.dumps({"errors": [f"busy: {limit} connections are waiting to authenticate "
                                  "(the limit); retry in a moment"]}).encode("ascii")
    head = ("HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
            f"Retry-After: {retry_after_s}\r\nContent-Length: {len(body)}\r\n"
            "Connection: close\r\n\r\n").encode("ascii")
    return head + body


class Admission:
    """Counts pending (unauthenticated) connections against ``limit``."""

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError("the limit of pending connections must be positive")
        self.limit = limit
        self.pending = 0
        self._refused_in_burst = 0
        self.refused_total = 0

    def admit(self) -> Admitted | Refused:
        """A connection was accepted: let it proceed, or refuse it if ``limit`` are pending."""
        if self.pending < self.limit:
            self.pending += 1
            return Admitted()
        self._refused_in_burst += 1
        self.refused_total += 1
        return Refused(self.limit, first_of_burst=self._refused_in_burst == 1)

    def release(self) -> BurstEnded | None:
        """A pending connection proved itself, failed or timed out."""
        if self.pending <= 0:
            raise AdmissionError("released a connection that was never admitted")
        self.pending -= 1
        if self._refused_in_burst and self.pending <= self.limit // 2:
            refused, self._refused_in_burst = self._refused_in_burst, 0
            return BurstEnded(refused)
        return None


RefuseBusy = Callable[[socket.socket, int], None]
"""How an endpoint answers a connection refused at the cap ``limit``, and closes it."""


class Acceptor:
    """The accept loop of one endpoint's non-blocking listening socket (see the module
    docstring); ``endpoint`` names it in the log ("RPC endpoint 6123")."""

    def __init__(self, listener: socket.socket, limit: int, endpoint: str,
                 refuse: RefuseBusy) -> None:
        self._listener = listener
        self.admission = Admission(limit)
        self.endpoint = endpoint
        self._refuse = refuse

    def accept_waiting(self) -> Iterator[tuple[socket.socket, Any]]:
        """Every connection waiting to be accepted and admitted, with its peer's address;
        refused ones are answered and closed on the way."""
        while True:
            try:
                sock, address = self._listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:
                log.warning("%s cannot accept: %s", self.endpoint, exc)
                return
            decision = self.admission.admit()
            if isinstance(decision, Refused):
                self._refuse(sock, decision.limit)
                if decision.first_of_burst:
                    log.warning("%s: %d unauthenticated connections are pending (the limit); "
                                "closing new ones unread until they clear", self.endpoint,
                                decision.limit)
                continue
            yield sock, address

    @property
    def pending(self) -> int:
        """Admitted connections not released yet."""
        return self.admission.pending

    def release(self) -> None:
        """An admitted connection proved itself, failed or reached its deadline."""
        burst = self.admission.release()
        if isinstance(burst, BurstEnded):
            log.info("%s: the flood ended; %d unauthenticated connections were closed unread",
                     self.endpoint, burst.refused)
