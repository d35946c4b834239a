"""Credit-based flow control as in Flink >= 1.5: the I/O-free ledgers of both ends of a channel.

Design note. A remote channel has ``initial_credit`` exclusive buffers of its own and may borrow
floating buffers from its input gate's pool. Every buffer the receiver holds empty is one
credit: the sender may send one data buffer per credit and never more, so a data buffer always
finds a place to land and the TCP connection shared by many channels never blocks on one slow
consumer. Events (barriers, end of partition) travel without credit in unpooled memory.

Receiver side (``ReceiverCreditLedger``, one per ``RemoteInputChannel``):

- The partition request announces ``initial_credit`` (all exclusive buffers start empty).
- A data buffer arriving takes an empty buffer (floating first, so borrowed memory goes back to
  the pool soonest); if none is empty the sender broke the protocol (``CreditViolationError``).
- Every buffer carries the sender's backlog. The channel wants ``backlog + initial_credit``
  empty buffers; when a positive backlog arrives and it holds fewer, it requests floating
  buffers from the gate's pool, and when the pool is exhausted it waits for the pool's
  availability listener. A zero backlog requests nothing (as Flink >= 1.12): the sender has
  nothing queued, and borrowing a buffer per arrival only to return it when an exclusive one
  frees would churn the pool on every buffer.
- A freed exclusive buffer becomes unannounced credit, unless the channel now holds more empty
  buffers than it wants and holds a floating one: then the floating one goes back to the pool
  instead (the number of empty buffers, and so the credit, is unchanged). Granted floating
  buffers become unannounced credit too.
- Unannounced credit going from 0 to more asks the I/O thread (``AnnounceCredit``) to send an
  ``AddCredit`` with everything unannounced at that moment (``announce()``), so many frees
  coalesce into one message.

Sender side (``SenderCreditLedger``, one per subpartition view served to a remote receiver):
credit starts at the request's initial credit, grows by each AddCredit, shrinks by one per data
buffer sent; sending a data buffer at zero credit is a ``CreditViolationError``.

Laws (hypothesis-tested): credit is never negative; the sender never sends a data buffer
without credit; every freed buffer is eventually announced (at quiescence the sender's credit
equals the receiver's empty buffers).

Thread ownership: a ledger has no lock. The receiver ledger is guarded by its channel's lock
(called from the network I/O thread, the consuming task's thread and the pool's listener); the
sender ledger belongs to the network I/O thread.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from flintlock.common.errors import FlintlockError


class CreditViolationError(FlintlockError):
    """A data buffer was sent (or arrived) without credit: the peer broke the protocol."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class BufferKind(enum.Enum):
    EXCLUSIVE = "exclusive"
    FLOATING = "floating"


# ------------------------------------------------------------------------------ events (facts)


@dataclass(frozen=True, slots=True)
class DataBufferArrived:
    """The sender spent one credit: a data buffer needs an empty buffer to land in."""


@dataclass(frozen=True, slots=True)
class BacklogAnnounced:
    backlog: int


@dataclass(frozen=True, slots=True)
class ExclusiveBufferRecycled:
    """The consumer freed one of the channel's exclusive buffers."""


@dataclass(frozen=True, slots=True)
class FloatingBuffersGranted:
    """The gate's pool gave ``count`` buffers; ``pool_exhausted`` if it ran out first."""

    count: int
    pool_exhausted: bool


@dataclass(frozen=True, slots=True)
class FloatingBufferAvailable:
    """The pool's availability listener fired (a buffer may be free now)."""


@dataclass(frozen=True, slots=True)
class ChannelReleased:
    pass


CreditEvent = (
    DataBufferArrived | BacklogAnnounced | ExclusiveBufferRecycled | FloatingBuffersGranted
    | FloatingBufferAvailable | ChannelReleased
)

# ------------------------------------------------------------------------- actions (imperative)


@dataclass(frozen=True, slots=True)
class TakeBuffer:
    kind: BufferKind


_TAKE: dict[BufferKind, CreditAction] = {
    kind: TakeBuffer(kind) for kind in BufferKind
}


@dataclass(frozen=True, slots=True)
class AnnounceCredit:
    """Ask the I/O thread to send AddCredit(``announce()``) for this channel."""


@dataclass(frozen=True, slots=True)
class RequestFloatingBuffers:
    count: int


@dataclass(frozen=True, slots=True)
class AwaitFloatingBuffer:
    """Register a one-shot availability listener on the gate's pool."""


@dataclass(frozen=True, slots=True)
class ReturnFloatingBuffers:
    count: int


@dataclass(frozen=True, slots=True)
class ReturnExclusiveBuffers:
    count: int


CreditAction = (
    TakeBuffer | AnnounceCredit | RequestFloatingBuffers | AwaitFloatingBuffer
    | ReturnFloatingBuffers | ReturnExclusiveBuffers
)


@dataclass(frozen=True, slots=True)
class CreditStatistics:
    initial_credit: int
    empty_exclusive: int
    empty_floating: int
    unannounced_credit: int
    sender_backlog: int
    waiting_for_floating: bool


class ReceiverCreditLedger:
    """The receiver's accounting for one remote channel (see the module's design note)."""

    def __init__(self, initial_credit: int) -> None:
        if initial_credit < 0:
            raise ValueError(f"initial credit must be >= 0, got {initial_credit}")
        self.initial_credit = initial_credit
        self._exclusive = initial_credit  # empty exclusive buffers held
        self._floating = 0  # empty floating buffers held
        self._unannounced = 0
        self._backlog = 0
        self._waiting = False
        self._released = False

    @property
    def empty_buffers(self) -> int:
        return self._exclusive + self._floating

    @property
    def unannounced_credit(self) -> int:
        return self._unannounced

    def statistics(self) -> CreditStatistics:
        return CreditStatistics(
            self.initial_credit, self._exclusive, self._floating, self._unannounced,
            self._backlog, self._waiting,
        )

    def announce(self) -> int:
        """Take all unannounced credit (the I/O thread sends it as one AddCredit)."""
        credit, self._unannounced = self._unannounced, 0
        return credit

    def handle(self, event: CreditEvent) -> list[CreditAction]:
        """The ledger's one entry point for tests and rare events. The three events of every
        buffer have direct methods (``take_buffer``, ``backlog_announced``,
        ``exclusive_recycled``) that the channel calls without building an event object."""
        if isinstance(event, DataBufferArrived):
            kind = self.take_buffer()
            return [] if kind is None else [_TAKE[kind]]
        if isinstance(event, BacklogAnnounced):
            return self.backlog_announced(event.backlog)
        if isinstance(event, ExclusiveBufferRecycled):
            return self.exclusive_recycled()
        if isinstance(event, FloatingBuffersGranted):
            return self._on_granted(event.count, event.pool_exhausted)
        if isinstance(event, FloatingBufferAvailable):
            self._waiting = False
            return self._request_if_short()
        return self._on_released()

    def take_buffer(self) -> BufferKind | None:
        """``DataBufferArrived``: which empty buffer the data lands in (None once released)."""
        if self._released:
            return None
        if self._floating:
            self._floating -= 1
            return BufferKind.FLOATING
        if self._exclusive:
            self._exclusive -= 1
            return BufferKind.EXCLUSIVE
        raise CreditViolationError("a data buffer arrived but the channel holds no empty buffer")

    def backlog_announced(self, backlog: int) -> list[CreditAction]:
        """``BacklogAnnounced``: the sender's backlog, carried by every buffer."""
        if backlog < 0:
            raise ValueError(f"backlog must be >= 0, got {backlog}")
        self._backlog = backlog
        return self._request_if_short() if backlog else []

    def exclusive_recycled(self) -> list[CreditAction]:
        """``ExclusiveBufferRecycled``: the consumer freed one of the exclusive buffers."""
        if self._released:
            return [ReturnExclusiveBuffers(1)]
        self._exclusive += 1
        if self._floating and self.empty_buffers > self._required():
            self._floating -= 1
            return [ReturnFloatingBuffers(1)]
        return self._add_unannounced(1)

    def _required(self) -> int:
        return self._backlog + self.initial_credit

    def _request_if_short(self) -> list[CreditAction]:
        short = self._required() - self.empty_buffers
        if self._released or self._waiting or short <= 0:
            return []
        return [RequestFloatingBuffers(short)]

    def _on_granted(self, count: int, exhausted: bool) -> list[CreditAction]:
        if self._released:
            return [ReturnFloatingBuffers(count)] if count else []
        self._floating += count
        actions = self._add_unannounced(count)
        if exhausted and self.empty_buffers < self._required():
            self._waiting = True
            actions.append(AwaitFloatingBuffer())
        return actions

    def _add_unannounced(self, count: int) -> list[CreditAction]:
        was_zero = self._unannounced == 0
        self._unannounced += count
        return [AnnounceCredit()] if was_zero and count > 0 else []

    def _on_released(self) -> list[CreditAction]:
        if self._released:
            return []
        self._released = True
        actions: list[CreditAction] = []
        if self._exclusive:
            actions.append(ReturnExclusiveBuffers(self._exclusive))
        if self._floating:
            actions.append(ReturnFloatingBuffers(self._floating))
        self._exclusive = self._floating = self._unannounced = 0
        return actions


class SenderCreditLedger:
    """The sender's credit for one subpartition view served to one remote receiver."""

    def __init__(self, initial_credit: int) -> None:
        if initial_credit < 0:
            raise CreditViolationError(f"initial credit must be >= 0, got {initial_credit}")
        self._credit = initial_credit

    @property
    def credit(self) -> int:
        return self._credit

    def credit_added(self, credit: int) -> None:
        if credit <= 0:
            raise CreditViolationError(f"AddCredit must add a positive credit, got {credit}")
        self._credit += credit

    def data_buffer_sent(self) -> None:
        if self._credit <= 0:
            raise CreditViolationError("a data buffer was about to be sent without credit")
        self._credit -= 1
