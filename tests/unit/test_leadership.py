"""The cluster id's lease (issue 16): one leader at a time, fencing tokens that only grow, and
a leader that was frozen past its lease finds out before it writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flintlock.runtime.jobmanager.leadership import (
    FileLease,
    LeadershipLostError,
    LeadershipUnavailableError,
)
from flintlock.testing.clock import ManualClock


def _lease(tmp_path: Path, clock: ManualClock, owner: str) -> FileLease:
    return FileLease(str(tmp_path / "ha" / "c1"), "c1", 1000, clock, owner)


def _sleeping(clock: ManualClock):
    return lambda seconds: clock.advance(seconds * 1000)


def test_a_second_driver_cannot_lead_while_the_first_holds_the_lease(tmp_path):
    clock = ManualClock(1_000_000)
    first = _lease(tmp_path, clock, "a")
    assert first.acquire(0) == 1
    second = _lease(tmp_path, clock, "b")
    with pytest.raises(LeadershipUnavailableError) as refused:
        second.acquire(500, _sleeping(clock))
    assert refused.value.holder == "a" and "c1" in str(refused.value)
    first.confirm()


def test_renewal_keeps_the_lead_and_a_successor_waits_for_expiry(tmp_path):
    clock = ManualClock(1_000_000)
    first = _lease(tmp_path, clock, "a")
    first.acquire(0)
    clock.advance(600)
    first.renew()
    clock.advance(600)  # 1200 ms after the acquire, 600 after the renewal: still held
    second = _lease(tmp_path, clock, "b")
    assert second.acquire(5000, _sleeping(clock)) == 2
    assert clock.now_ms() >= 1_000_000 + 600 + 1000  # it waited for the renewed expiry


def test_a_frozen_leader_is_fenced_before_it_writes(tmp_path):
    clock = ManualClock(1_000_000)
    first = _lease(tmp_path, clock, "a")
    first.acquire(0)
    clock.advance(1500)  # frozen past its lease
    second = _lease(tmp_path, clock, "b")
    assert second.acquire(0) == 2
    with pytest.raises(LeadershipLostError, match="expired"):
        first.confirm()
    with pytest.raises(LeadershipLostError):
        first.renew()
    second.confirm()


def test_a_newer_token_fences_even_an_unexpired_lease(tmp_path):
    clock = ManualClock(1_000_000)
    first = _lease(tmp_path, clock, "a")
    first.acquire(0)
    newer = tmp_path / "ha" / "c1" / "leases" / "lease-0000000002"
    newer.write_text(json.dumps({"owner": "b", "token": 2, "expires_ms": 2_000_000}))
    with pytest.raises(LeadershipLostError, match="fenced: token 2"):
        first.confirm()


def test_release_lets_a_successor_in_at_once_and_tokens_are_never_reused(tmp_path):
    clock = ManualClock(1_000_000)
    first = _lease(tmp_path, clock, "a")
    first.acquire(0)
    first.release()
    second = _lease(tmp_path, clock, "b")
    assert second.acquire(0) == 2
    second.release()
    third = _lease(tmp_path, clock, "c")
    assert third.acquire(0) == 3


def test_the_exclusive_create_lets_only_one_contender_take_a_token(tmp_path):
    """Two contenders that saw the same newest token both try to create the next one: the
    second create fails, and that contender is not the leader."""
    clock = ManualClock(1_000_000)
    winner, loser = _lease(tmp_path, clock, "w"), _lease(tmp_path, clock, "l")
    assert winner._create(1)
    assert not loser._create(1)
    assert loser.token == 0
    with pytest.raises(LeadershipLostError, match="never acquired"):
        loser.confirm()
    winner.confirm()
