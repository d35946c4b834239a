"""The credit ledgers: event lists with exact actions, and the flow-control laws by simulation."""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass, field

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flintlock.runtime.network.credit import (
    AnnounceCredit,
    AwaitFloatingBuffer,
    BacklogAnnounced,
    BufferKind,
    ChannelReleased,
    CreditAction,
    CreditEvent,
    CreditViolationError,
    DataBufferArrived,
    ExclusiveBufferRecycled,
    FloatingBufferAvailable,
    FloatingBuffersGranted,
    ReceiverCreditLedger,
    RequestFloatingBuffers,
    ReturnExclusiveBuffers,
    ReturnFloatingBuffers,
    SenderCreditLedger,
    TakeBuffer,
)

EXCLUSIVE = TakeBuffer(BufferKind.EXCLUSIVE)
FLOATING = TakeBuffer(BufferKind.FLOATING)


def run(ledger: ReceiverCreditLedger, events: list[CreditEvent]) -> list[list[CreditAction]]:
    return [ledger.handle(event) for event in events]


def test_data_buffers_use_exclusive_buffers_and_backlog_requests_floating_ones() -> None:
    ledger = ReceiverCreditLedger(2)
    assert run(ledger, [
        DataBufferArrived(), BacklogAnnounced(3),
        FloatingBuffersGranted(4, pool_exhausted=False),
        DataBufferArrived(), BacklogAnnounced(2),
    ]) == [
        [EXCLUSIVE], [RequestFloatingBuffers(4)],  # wants 3 + 2, holds 1
        [AnnounceCredit()],
        [FLOATING], [],  # floating first; wants 4, holds 4
    ]
    assert ledger.announce() == 4
    assert ledger.announce() == 0


def test_a_zero_backlog_borrows_nothing() -> None:
    ledger = ReceiverCreditLedger(2)
    assert run(ledger, [DataBufferArrived(), BacklogAnnounced(0), ExclusiveBufferRecycled()]) == [
        [EXCLUSIVE], [], [AnnounceCredit()],
    ]


def test_freed_exclusive_buffers_coalesce_into_one_announcement() -> None:
    ledger = ReceiverCreditLedger(3)
    assert run(ledger, [
        DataBufferArrived(), DataBufferArrived(), ExclusiveBufferRecycled(),
        ExclusiveBufferRecycled(),
    ]) == [[EXCLUSIVE], [EXCLUSIVE], [AnnounceCredit()], []]
    assert ledger.announce() == 2
    assert run(ledger, [DataBufferArrived(), ExclusiveBufferRecycled()]) == [
        [EXCLUSIVE], [AnnounceCredit()],
    ]


def test_surplus_floating_buffer_goes_back_when_an_exclusive_one_frees() -> None:
    ledger = ReceiverCreditLedger(1)
    assert run(ledger, [
        DataBufferArrived(), BacklogAnnounced(1),
        FloatingBuffersGranted(2, pool_exhausted=False),
        BacklogAnnounced(0),
        ExclusiveBufferRecycled(),
    ]) == [
        [EXCLUSIVE], [RequestFloatingBuffers(2)],
        [AnnounceCredit()],
        [],
        [ReturnFloatingBuffers(1)],  # holds 2 floating + 1 exclusive, wants 1
    ]
    assert ledger.statistics().empty_floating == 1
    assert ledger.announce() == 2


def test_exhausted_pool_waits_for_the_listener_then_asks_again() -> None:
    ledger = ReceiverCreditLedger(0)
    assert run(ledger, [
        BacklogAnnounced(3),
        FloatingBuffersGranted(1, pool_exhausted=True),
        BacklogAnnounced(5),  # still waiting: no new request
        FloatingBufferAvailable(),
        FloatingBuffersGranted(4, pool_exhausted=False),
    ]) == [
        [RequestFloatingBuffers(3)],
        [AnnounceCredit(), AwaitFloatingBuffer()],
        [],
        [RequestFloatingBuffers(4)],
        [],  # the announcement of the first grant is still pending
    ]
    assert ledger.announce() == 5


def test_exhausted_pool_that_still_covered_the_need_does_not_wait() -> None:
    ledger = ReceiverCreditLedger(0)
    assert run(ledger, [BacklogAnnounced(1), FloatingBuffersGranted(1, pool_exhausted=True)]) == [
        [RequestFloatingBuffers(1)], [AnnounceCredit()],
    ]


def test_data_buffer_without_an_empty_buffer_is_a_violation() -> None:
    ledger = ReceiverCreditLedger(1)
    ledger.handle(DataBufferArrived())
    with pytest.raises(CreditViolationError):
        ledger.handle(DataBufferArrived())


def test_release_returns_everything_and_later_frees_go_back_to_the_pools() -> None:
    ledger = ReceiverCreditLedger(2)
    assert run(ledger, [
        DataBufferArrived(), BacklogAnnounced(2), FloatingBuffersGranted(1, False),
        ChannelReleased(), ExclusiveBufferRecycled(), FloatingBuffersGranted(2, False),
        BacklogAnnounced(9), DataBufferArrived(), ChannelReleased(),
    ]) == [
        [EXCLUSIVE], [RequestFloatingBuffers(3)], [AnnounceCredit()],
        [ReturnExclusiveBuffers(1), ReturnFloatingBuffers(1)],
        [ReturnExclusiveBuffers(1)], [ReturnFloatingBuffers(2)],
        [], [], [],
    ]
    assert ledger.announce() == 0


def test_sender_ledger_counts_credit_and_refuses_data_without_it() -> None:
    sender = SenderCreditLedger(1)
    sender.data_buffer_sent()
    with pytest.raises(CreditViolationError):
        sender.data_buffer_sent()
    sender.credit_added(2)
    assert sender.credit == 2
    with pytest.raises(CreditViolationError):
        sender.credit_added(0)


# ------------------------------------------------------------------------- the laws, simulated


@dataclass
class Channel:
    ledger: ReceiverCreditLedger
    sender: SenderCreditLedger
    to_send: deque[bool]  # True = data buffer, False = event
    wire: deque[tuple[bool, int]] = field(default_factory=deque)
    credit_wire: deque[int] = field(default_factory=deque)
    received: list[BufferKind | None] = field(default_factory=list)
    wants_announcement: bool = False
    waiting: bool = False
    delivered: int = 0


class Pool:
    def __init__(self, size: int) -> None:
        self.free = size
        self.listeners: list[Channel] = []


def apply(channel: Channel, pool: Pool, actions: list[CreditAction]) -> None:
    for action in actions:
        if isinstance(action, TakeBuffer):
            channel.received.append(action.kind)
        elif isinstance(action, AnnounceCredit):
            channel.wants_announcement = True
        elif isinstance(action, RequestFloatingBuffers):
            granted = min(action.count, pool.free)
            pool.free -= granted
            apply(channel, pool, channel.ledger.handle(
                FloatingBuffersGranted(granted, granted < action.count)))
        elif isinstance(action, AwaitFloatingBuffer):
            pool.listeners.append(channel)
        elif isinstance(action, ReturnFloatingBuffers):
            give_back(pool, action.count)


def give_back(pool: Pool, count: int) -> None:
    pool.free += count
    listeners, pool.listeners = pool.listeners, []
    for listener in listeners:
        apply(listener, pool, listener.ledger.handle(FloatingBufferAvailable()))


def step(rng: random.Random, channels: list[Channel], pool: Pool) -> bool:
    """One random enabled move; False when nothing is enabled."""
    moves = []
    for c in channels:
        if c.to_send and (not c.to_send[0] or c.sender.credit > 0):
            moves.append(("send", c))
        if c.wire:
            moves.append(("deliver", c))
        if c.received:
            moves.append(("consume", c))
        if c.wants_announcement:
            moves.append(("announce", c))
        if c.credit_wire:
            moves.append(("credit", c))
    if not moves:
        return False
    move, c = rng.choice(moves)
    if move == "send":
        is_data = c.to_send.popleft()
        if is_data:
            c.sender.data_buffer_sent()
        c.wire.append((is_data, sum(c.to_send)))
    elif move == "deliver":
        is_data, backlog = c.wire.popleft()
        if is_data:
            apply(c, pool, c.ledger.handle(DataBufferArrived()))
        else:
            c.received.append(None)
        apply(c, pool, c.ledger.handle(BacklogAnnounced(backlog)))
    elif move == "consume":
        kind = c.received.pop(0)
        c.delivered += 1
        if kind is BufferKind.EXCLUSIVE:
            apply(c, pool, c.ledger.handle(ExclusiveBufferRecycled()))
        elif kind is BufferKind.FLOATING:
            give_back(pool, 1)
    elif move == "announce":
        c.wants_announcement = False
        credit = c.ledger.announce()
        if credit:
            c.credit_wire.append(credit)
    else:
        c.sender.credit_added(c.credit_wire.popleft())
    return True


@settings(max_examples=150, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    exclusive=st.integers(0, 3),
    pool_size=st.integers(1, 4),
    streams=st.lists(st.lists(st.booleans(), max_size=40), min_size=1, max_size=3),
)
def test_credit_laws_hold_under_any_interleaving(
    seed: int, exclusive: int, pool_size: int, streams: list[list[bool]]
) -> None:
    rng = random.Random(seed)
    pool = Pool(pool_size)
    channels = [
        Channel(ReceiverCreditLedger(exclusive), SenderCreditLedger(exclusive), deque(s))
        for s in streams
    ]
    for c in channels:  # the first backlog comes with the partition request's response
        apply(c, pool, c.ledger.handle(BacklogAnnounced(sum(c.to_send))))
    for _ in range(10_000):
        for c in channels:
            assert c.sender.credit >= 0
            assert c.ledger.empty_buffers >= 0 and c.ledger.unannounced_credit >= 0
        if not step(rng, channels, pool):
            break
    for c, stream in zip(channels, streams, strict=True):
        assert c.delivered == len(stream)  # no deadlock: everything arrived
        # every freed buffer was announced: the sender may fill exactly the empty buffers
        assert c.ledger.unannounced_credit == 0
        assert c.sender.credit == c.ledger.empty_buffers
