"""Heartbeat bookkeeping driven by a ManualClock: timeouts, the sending schedule, and the
liveness of both sides built on it (the JobManager's attempt watching its TaskManagers, the
TaskManager watching its JobManager), without sockets or sleeps."""

from __future__ import annotations

import itertools
import pickle
import threading
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flintlock.common.config import Configuration
from flintlock.runtime import messages as msg
from flintlock.runtime.heartbeat import (
    HeartbeatManager,
    HeartbeatMonitor,
    HeartbeatSchedule,
    HeartbeatTimedOut,
)
from flintlock.runtime.jobmanager.attempt import Attempt, register_task_manager
from flintlock.runtime.jobmanager.errors import AttemptFailedError, TaskManagerLostError
from flintlock.runtime.taskmanager.jobmanager_heartbeats import (
    JobManagerHeartbeats,
    JobManagerLostError,
)
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


# -- the manager: one side's heartbeats, and both sides built on it --------------------------


def test_the_manager_sends_on_schedule_and_reports_a_silent_target_once():
    clock = ManualClock(0)
    sent, lost = [], []
    manager: HeartbeatManager[str] = HeartbeatManager(
        HeartbeatMonitor(300), HeartbeatSchedule(100, clock.now_ms()),
        lambda: sent.append(clock.now_ms()), lost.append)
    manager.monitor_target("peer", clock.now_ms())
    for _ in range(5):
        manager.tick(clock.now_ms())
        assert manager.heard_from("peer", clock.now_ms())
        clock.advance(100)
    assert sent == [0, 100, 200, 300, 400] and lost == []
    assert manager.next_tick_ms() == 500
    clock.advance(300)  # silent since 400
    manager.tick(clock.now_ms())
    assert lost == [HeartbeatTimedOut("peer", 400, 800)]
    manager.tick(clock.now_ms() + 10_000)
    assert len(lost) == 1 and not manager.heard_from("peer", clock.now_ms())


class _Connection:
    def __init__(self) -> None:
        self.told: list[Any] = []

    def tell(self, message: Any) -> None:
        self.told.append(message)

    def close(self) -> None:
        self.told.append("closed")


class _Attempt(Attempt):
    """An attempt whose TaskManagers in ``finished`` have only finished subtasks."""

    finished: frozenset[int] = frozenset()

    def task_manager_finished(self, tm_index: int) -> bool:
        return tm_index in self.finished


def _registered_attempt(clock: ManualClock, finished: frozenset[int] = frozenset()):
    attempt = _Attempt(3, graph=None, plan=None)  # type: ignore[arg-type]
    attempt.finished = finished
    attempt.watch_task_managers(_CONFIG, clock.now_ms())
    connections = {}
    for tm in (0, 1):
        connections[tm] = _Connection()
        reply = register_task_manager(attempt, connections[tm],  # type: ignore[arg-type]
                                      msg.RegisterTaskManager(3, tm, "127.0.0.1", 1, 1),
                                      clock.now_ms())
        assert reply.accepted
    return attempt, connections


_CONFIG = Configuration({"heartbeat.interval": "100 ms", "heartbeat.timeout": "1 s"})


def test_the_jobmanager_fails_the_attempt_when_a_task_manager_falls_silent():
    clock = ManualClock(0)
    attempt, connections = _registered_attempt(clock)
    for _ in range(10):
        clock.advance(100)
        attempt.heard_from(0, clock.now_ms())  # TaskManager 1 stays silent
        attempt.tick_heartbeats(clock.now_ms())
    assert attempt.root_cause(clock.now_ms()) is None  # exactly the timeout: not yet
    assert all(m == msg.Heartbeat(3, -1) for m in connections[0].told)
    assert len(connections[1].told) == 10  # the JobManager's own heartbeats go on
    clock.advance(1)
    attempt.tick_heartbeats(clock.now_ms())
    cause = attempt.root_cause(clock.now_ms())
    assert isinstance(cause, TaskManagerLostError) and isinstance(cause, AttemptFailedError)
    assert cause.tm_index == 1
    assert str(cause) == "TaskManager 1 sent no heartbeat for 1000 ms (heartbeat.timeout)"
    assert pickle.loads(pickle.dumps(cause)).tm_index == 1


class _Handle:
    """An attempt handle whose TaskManagers end only when cancelled (a frozen one would)."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def cancel(self) -> None:
        self.calls.append("cancel")

    def wait(self, timeout_s: float) -> bool:
        self.calls.append("wait")
        return "cancel" in self.calls


def test_release_cancels_at_once_when_a_task_manager_fell_silent():
    """A silent TaskManager acts on no release: its launcher's handle is cancelled before
    the first wait, not after ``END_WAIT_S`` of waiting in vain."""
    clock = ManualClock(0)
    attempt, _ = _registered_attempt(clock)
    attempt.handle = handle = _Handle()
    clock.advance(1_001)
    attempt.heard_from(0, clock.now_ms())
    attempt.tick_heartbeats(clock.now_ms())
    attempt.release()
    assert attempt.lost == {1}
    assert handle.calls == ["cancel", "wait"]


def test_release_waits_for_task_managers_that_still_talk():
    attempt, _ = _registered_attempt(ManualClock(0))
    attempt.handle = handle = _Handle()
    attempt.release()
    assert handle.calls == ["wait", "cancel", "wait"]  # waited first, then cancelled


def test_a_task_manager_whose_subtasks_all_finished_may_fall_silent():
    clock = ManualClock(0)
    attempt, _ = _registered_attempt(clock, finished=frozenset({1}))
    clock.advance(5_000)
    attempt.heard_from(0, clock.now_ms())
    attempt.tick_heartbeats(clock.now_ms())
    assert attempt.root_cause(clock.now_ms()) is None


def test_the_task_manager_gives_up_a_silent_jobmanager_once_and_keeps_beating_until_then():
    clock = ManualClock(0)
    beats, lost = [], []
    heartbeats = JobManagerHeartbeats(4, _CONFIG, clock, lambda: beats.append(clock.now_ms()),
                                      lost.append)
    assert heartbeats.tick() == pytest.approx(0.1)  # the first beat went at once
    for _ in range(20):  # the JobManager talks every 100 ms: never lost
        clock.advance(100)
        heartbeats.heard_from_jobmanager()
        heartbeats.tick()
    assert beats == [float(t) for t in range(0, 2_001, 100)] and lost == []
    clock.advance(1_000)
    heartbeats.tick()
    assert lost == []  # exactly the timeout
    clock.advance(1)
    heartbeats.tick()
    assert len(lost) == 1 and isinstance(lost[0], JobManagerLostError)
    assert str(lost[0]) == "TaskManager 4 lost the JobManager: no message for 1 s " \
                           "(heartbeat.timeout)"
    heartbeats.heard_from_jobmanager()  # too late: given up for good
    clock.advance(5_000)
    heartbeats.tick()
    assert len(lost) == 1


def test_the_task_manager_heartbeat_loop_ends_when_told():
    clock = ManualClock(0)
    done = threading.Event()
    beats: list[float] = []

    def beat() -> None:
        beats.append(clock.now_ms())
        done.set()

    JobManagerHeartbeats(0, _CONFIG, clock, beat, lambda error: None).run(done)
    assert beats == [0.0]
