"""Liveness of an authenticated connection: keepalives while it is quiet, lost when silent.

Every authenticated data connection (TaskManager to TaskManager) and RPC connection
(JobManager to TaskManager) runs one ``Liveness`` on each side, with ``heartbeat.timeout`` as
its timeout: the silence after which Flink declares a peer failed. The rules:

- Anything received counts as hearing from the peer.
- After a third of the timeout without hearing from it, ask the peer with a PING (at most
  one per third). A peer answers every PING at once with a PONG, which counts as hearing.
  So a healthy peer keeps the connection open whatever its own settings, and an idle
  connection costs one PING and one PONG per third of the timeout.
- Our own writes moving forward also count, in steps of ``PROGRESS_BYTES``: while a large
  frame is going out, a PING may be stuck behind it, yet a peer whose kernel keeps taking
  megabytes is alive. Tiny writes (PINGs into a peer that never reads) do not count, and a
  peer that never reads stops taking bytes once its buffers are full.
- After the whole timeout without hearing: the peer is lost (``PeerSilent``); the driver
  closes the connection and reports it lost, so the job fails over instead of hanging.

Who calls it: ``network.connection.SocketConnection`` (on the network I/O thread, its timers)
and ``rpc.connection.RpcConnection`` (on its reader thread, between reads). I/O-free: times
are passed in (``time.monotonic()`` seconds); nothing here sleeps, reads a clock or sends.
Not synchronised: an instance belongs to one driver thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

PROGRESS_BYTES: Final = 256 * 1024
PINGS_PER_TIMEOUT: Final = 3


@dataclass(frozen=True, slots=True)
class SendPing:
    """Ask the peer for a sign of life."""


@dataclass(frozen=True, slots=True)
class PeerSilent:
    """Nothing was heard from the peer for ``silent_s`` (at least the timeout): it is lost."""

    silent_s: float
    timeout_s: float


LivenessAction = SendPing | PeerSilent


class Liveness:
    """When to ping the peer and when to give it up; see the module doc."""

    def __init__(self, timeout_s: float, now: float) -> None:
        if timeout_s <= 0:
            raise ValueError("the idle timeout must be positive")
        self.timeout_s = timeout_s
        self.interval_s = timeout_s / PINGS_PER_TIMEOUT
        self._last_heard = now
        self._last_ping = now
        self._sent_mark = 0  # our cumulative bytes written when last counted as progress
        self._lost = False

    def received(self, now: float) -> None:
        """Bytes arrived from the peer."""
        self._last_heard = max(self._last_heard, now)

    def sent(self, now: float, total_bytes: int) -> None:
        """Our side has written ``total_bytes`` in all so far (a cumulative counter)."""
        if total_bytes - self._sent_mark >= PROGRESS_BYTES:
            self._sent_mark = total_bytes
            self.received(now)

    def poll(self, now: float) -> LivenessAction | None:
        """What to do now: ping, give the peer up (reported once), or nothing."""
        if self._lost:
            return None
        silent_s = now - self._last_heard
        if silent_s >= self.timeout_s:
            self._lost = True
            return PeerSilent(silent_s, self.timeout_s)
        if silent_s >= self.interval_s and now - self._last_ping >= self.interval_s:
            self._last_ping = now
            return SendPing()
        return None

    def next_check(self) -> float:
        """The earliest time at which ``poll`` could ask for something."""
        ping_at = max(self._last_heard, self._last_ping) + self.interval_s
        return min(ping_at, self._last_heard + self.timeout_s)
