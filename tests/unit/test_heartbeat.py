"""Heartbeat bookkeeping driven by a ManualClock: timeouts and the sending schedule."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flintlock.common.config import Configuration
from flintlock.runtime.heartbeat import HeartbeatMonitor, HeartbeatSchedule, HeartbeatTimedOut
from flintlock.testing.clock import ManualClock


def test_a_silent_target_times_out_once_and_a_talking_one_never():
    clock = ManualClock(1_000)
    monitor: HeartbeatMonitor[str] = HeartbeatMonitor(timeout_ms=500)
    monitor.monitor("tm-0", clock.now_ms())
    monitor.monitor("tm-1", clock.now_ms())
    reports = []
    for _ in range(4):
        clock.advance(200)
        assert monitor.record_heartbeat("tm-1", clock.now_ms())
        reports.append(monitor.check(clock.now_ms()))
    assert reports == [[], [], [HeartbeatTimedOut("tm-0", 1_000, 1_600)], []]
    assert monitor.targets == {"tm-1"}
    assert monitor.check(clock.now_ms() + 10_000) == [
        HeartbeatTimedOut("tm-1", 1_800, 11_800)
    ]


def test_exactly_the_timeout_is_not_yet_a_timeout():
    monitor: HeartbeatMonitor[int] = HeartbeatMonitor(timeout_ms=100)
    monitor.monitor(7, 0)
    assert monitor.timed_out_targets(100) == []
    assert monitor.timed_out_targets(100.5) == [7]


def test_heartbeats_from_unknown_or_dead_targets_are_ignored_and_counted():
    monitor: HeartbeatMonitor[str] = HeartbeatMonitor(timeout_ms=100)
    assert not monitor.record_heartbeat("stranger", 0)
    monitor.monitor("tm", 0)
    assert monitor.timed_out_targets(200) == ["tm"]
    assert not monitor.record_heartbeat("tm", 201)
    assert monitor.timed_out_targets(10_000) == []
    assert monitor.ignored_heartbeats == 2


def test_a_late_delivered_old_heartbeat_does_not_move_time_back():
    monitor: HeartbeatMonitor[str] = HeartbeatMonitor(timeout_ms=100)
    monitor.monitor("tm", 0)
    monitor.record_heartbeat("tm", 90)
    monitor.record_heartbeat("tm", 50)
    assert monitor.next_deadline_ms() == 190
    assert monitor.timed_out_targets(150) == []


def test_unmonitored_targets_are_forgotten():
    monitor: HeartbeatMonitor[str] = HeartbeatMonitor(timeout_ms=100)
    monitor.monitor("tm", 0)
    monitor.unmonitor("tm")
    assert monitor.next_deadline_ms() is None
    assert monitor.timed_out_targets(1_000) == []


def test_timeouts_are_reported_oldest_first():
    monitor: HeartbeatMonitor[str] = HeartbeatMonitor(timeout_ms=10)
    monitor.monitor("b", 5)
    monitor.monitor("a", 3)
    monitor.monitor("c", 7)
    assert monitor.timed_out_targets(100) == ["a", "b", "c"]


def test_the_schedule_ticks_once_per_interval_and_skips_missed_beats():
    clock = ManualClock(0)
    schedule = HeartbeatSchedule(interval_ms=100, now_ms=clock.now_ms())
    ticks = []
    for step in (0, 50, 50, 30, 70, 1_000, 10, 90):
        clock.advance(step)
        if schedule.due(clock.now_ms()):
            ticks.append(clock.now_ms())
    assert ticks == [0, 100, 200, 1_200, 1_300]
    assert schedule.next_due_ms() == 1_400


def test_options_come_from_the_configuration():
    config = Configuration({"heartbeat.interval": "2 s", "heartbeat.timeout": "30 s"})
    assert HeartbeatMonitor.from_config(config).timeout_ms == 30_000
    assert HeartbeatSchedule.from_config(config, now_ms=0).interval_ms == 2_000
    with pytest.raises(ValueError):
        HeartbeatMonitor(0)
    with pytest.raises(ValueError):
        HeartbeatSchedule(0, 0)


@given(st.lists(st.tuples(st.sampled_from("abc"), st.floats(0, 300)), max_size=40),
       st.floats(0, 2_000))
def test_a_target_times_out_iff_silent_longer_than_the_timeout(beats, check_at):
    timeout = 250.0
    monitor: HeartbeatMonitor[str] = HeartbeatMonitor(timeout)
    last = {target: 0.0 for target in "abc"}
    for target in "abc":
        monitor.monitor(target, 0.0)
    now = 0.0
    for target, gap in beats:
        now += gap
        monitor.record_heartbeat(target, now)
        last[target] = now
    at = now + check_at
    expected = sorted(t for t in "abc" if at - last[t] > timeout)
    assert sorted(monitor.timed_out_targets(at)) == expected
    deadline = monitor.next_deadline_ms()
    remaining = [last[t] + timeout for t in "abc" if t not in expected]
    assert deadline == (min(remaining) if remaining else None)


@given(st.integers(1, 500), st.lists(st.integers(0, 1_000), max_size=50))
def test_the_schedule_never_sends_two_beats_within_an_interval(interval, steps):
    schedule = HeartbeatSchedule(interval, 0.0)
    now, sent = 0.0, []
    for step in steps:
        now += step
        if schedule.due(now):
            sent.append(now)
    assert all(later - earlier >= interval for earlier, later in itertools.pairwise(sent))
