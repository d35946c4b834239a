"""``Liveness``: pings while a connection is quiet, the peer given up once it stays silent."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flintlock.runtime.liveness import PROGRESS_BYTES, Liveness, PeerSilent, SendPing


def test_a_quiet_peer_is_pinged_each_third_then_given_up() -> None:
    liveness = Liveness(3.0, now=0.0)
    assert liveness.next_check() == 1.0
    assert liveness.poll(0.5) is None
    assert liveness.poll(1.0) == SendPing()
    assert liveness.poll(1.5) is None  # at most one ping per third
    assert liveness.next_check() == 2.0
    assert liveness.poll(2.0) == SendPing()
    assert liveness.next_check() == 3.0
    assert liveness.poll(3.0) == PeerSilent(3.0, 3.0)
    assert liveness.poll(9.0) is None  # reported once


def test_hearing_from_the_peer_restarts_the_clock() -> None:
    liveness = Liveness(3.0, now=0.0)
    assert liveness.poll(1.0) == SendPing()
    liveness.received(1.1)  # the PONG
    assert liveness.next_check() == pytest.approx(2.1)
    assert liveness.poll(2.0) is None
    assert liveness.poll(2.1) == SendPing()
    liveness.received(2.2)
    assert liveness.poll(3.1) is None  # 0.9 s quiet
    assert liveness.poll(3.2) == SendPing()


def test_a_large_write_moving_forward_counts_as_hearing() -> None:
    liveness = Liveness(3.0, now=0.0)
    liveness.sent(2.5, PROGRESS_BYTES - 1)  # small writes: pings into a peer that never reads
    assert liveness.poll(3.0) == PeerSilent(3.0, 3.0)
    liveness = Liveness(3.0, now=0.0)
    liveness.sent(2.5, PROGRESS_BYTES)
    assert liveness.poll(3.0) is None
    liveness.sent(5.0, PROGRESS_BYTES + 10)  # no new step of progress
    assert liveness.poll(5.5) == PeerSilent(3.0, 3.0)


def test_the_timeout_must_be_positive() -> None:
    with pytest.raises(ValueError):
        Liveness(0.0, now=0.0)


@given(st.lists(st.tuples(st.floats(0.0, 2.0), st.booleans()), max_size=60))
def test_lost_exactly_when_silent_for_the_timeout(events: list[tuple[float, bool]]) -> None:
    """Whatever the peer does, the peer is given up at the first poll at least a timeout
    after it was last heard, never before, and pinged at most once per third."""
    liveness = Liveness(3.0, now=0.0)
    now, heard, last_ping = 0.0, 0.0, float("-inf")
    for step, peer_answers in events:
        now += step
        action = liveness.poll(now)
        if now - heard >= 3.0:
            assert action == PeerSilent(now - heard, 3.0)
            return
        if isinstance(action, SendPing):
            assert now - last_ping >= 1.0 and now - heard >= 1.0
            last_ping = now
        else:
            assert action is None
        assert liveness.next_check() >= now
        if peer_answers:
            liveness.received(now)
            heard = now
