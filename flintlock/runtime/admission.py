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

Who calls it: the selector loops of ``network.transport``, ``rpc.server`` and
``rest.server``. I/O-free and not synchronised: an instance belongs to its loop's thread.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from flintlock.common.errors import FlintlockError


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
