"""Heartbeats between the JobManager and its TaskManagers, as I/O-free bookkeeping: the one
liveness mechanism of both sides (Flink's ``HeartbeatManager``).

Both directions use the same pieces: the JM monitors each registered TM and each TM monitors
its JM (``HeartbeatMonitor``), and each side sends its own heartbeats on a fixed period
(``HeartbeatSchedule``). ``HeartbeatManager`` joins the two for one side: its driver thread
feeds in what arrived and the current time (``Clock.now_ms``) and calls ``tick``, which
sends this side's heartbeat when one is due and hands every target that timed out to the
side's typed callback (``on_timeout(HeartbeatTimedOut)``). Who drives it: the JobManager's
thread for the TaskManagers of an attempt (``jobmanager.attempt``), the TaskManager's
heartbeat thread for its JobManager (``taskmanager.jobmanager_heartbeats``). Nothing here
sleeps, reads a clock or touches a socket; sending is the callback the driver passes in.

Invariants:

- A target times out when nothing was heard from it for more than ``heartbeat.timeout``
  since it was monitored or last heard from; ``check`` reports it exactly once and stops
  monitoring it (the JM then fails the job attempt, the TM exits). A heartbeat from a target
  that is not monitored (already timed out, or never registered) is ignored and counted.
- ``next_deadline_ms`` is the earliest time at which ``check`` could report something, so a
  driver can wait exactly until then.

Thread ownership: not synchronised; each instance belongs to one driver thread.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Generic, TypeVar

from flintlock.common.config import Configuration
from flintlock.common.options.cluster import HEARTBEAT_INTERVAL, HEARTBEAT_TIMEOUT

T = TypeVar("T", bound=Hashable)


@dataclass(frozen=True, slots=True)
class HeartbeatTimedOut(Generic[T]):
    """Nothing was heard from ``target`` since ``last_heard_ms`` (the timeout elapsed)."""

    target: T
    last_heard_ms: float
    detected_ms: float


class HeartbeatMonitor(Generic[T]):
    """Tracks when each target was last heard from; ``check`` returns the ones gone silent."""

    def __init__(self, timeout_ms: float) -> None:
        if timeout_ms <= 0:
            raise ValueError("the heartbeat timeout must be positive")
        self.timeout_ms = timeout_ms
        self._last_heard: dict[T, float] = {}
        self.ignored_heartbeats = 0

    @classmethod
    def from_config(cls, config: Configuration) -> HeartbeatMonitor[T]:
        return cls(config.get(HEARTBEAT_TIMEOUT))

    def monitor(self, target: T, now_ms: float) -> None:
        """Start monitoring ``target`` (registration counts as hearing from it)."""
        self._last_heard[target] = now_ms

    def unmonitor(self, target: T) -> None:
        self._last_heard.pop(target, None)

    def record_heartbeat(self, target: T, now_ms: float) -> bool:
        """Note a heartbeat; False (and counted) if ``target`` is not monitored."""
        if target not in self._last_heard:
            self.ignored_heartbeats += 1
            return False
        self._last_heard[target] = max(self._last_heard[target], now_ms)
        return True

    def check(self, now_ms: float) -> list[HeartbeatTimedOut[T]]:
        """The targets silent for longer than the timeout, each reported once, oldest first."""
        expired = [
            HeartbeatTimedOut(target, heard, now_ms)
            for target, heard in self._last_heard.items()
            if now_ms - heard > self.timeout_ms
        ]
        expired.sort(key=lambda event: event.last_heard_ms)
        for event in expired:
            del self._last_heard[event.target]
        return expired

    def timed_out_targets(self, now_ms: float) -> list[T]:
        """``check`` reduced to the targets."""
        return [event.target for event in self.check(now_ms)]

    def next_deadline_ms(self) -> float | None:
        """When the first monitored target would time out, or None if none is monitored."""
        if not self._last_heard:
            return None
        return min(self._last_heard.values()) + self.timeout_ms

    @property
    def targets(self) -> frozenset[T]:
        return frozenset(self._last_heard)


class HeartbeatSchedule:
    """When this side's next heartbeat is due: ``interval_ms`` after the previous one was sent
    (fixed delay), so two heartbeats are never closer than an interval."""

    def __init__(self, interval_ms: float, now_ms: float) -> None:
        if interval_ms <= 0:
            raise ValueError("the heartbeat interval must be positive")
        self.interval_ms = interval_ms
        self._next_ms = now_ms

    @classmethod
    def from_config(cls, config: Configuration, now_ms: float) -> HeartbeatSchedule:
        return cls(config.get(HEARTBEAT_INTERVAL), now_ms)

    def due(self, now_ms: float) -> bool:
        """True at most once per interval: a heartbeat should be sent now.

        After a long stall (a GC pause, a blocked thread) one heartbeat is sent, not one for
        every missed interval."""
        if now_ms < self._next_ms:
            return False
        self._next_ms = now_ms + self.interval_ms
        return True

    def next_due_ms(self) -> float:
        return self._next_ms


class HeartbeatManager(Generic[T]):
    """One side's heartbeats: its own sent on ``schedule``, its ``targets`` watched by
    ``monitor``. ``tick(now_ms)`` calls ``send_heartbeat()`` when a heartbeat is due, then
    ``on_timeout(event)`` once for each target that went silent (oldest first), which is no
    longer monitored afterwards. Both callbacks run on the thread that calls ``tick``."""

    def __init__(self, monitor: HeartbeatMonitor[T], schedule: HeartbeatSchedule,
                 send_heartbeat: Callable[[], None],
                 on_timeout: Callable[[HeartbeatTimedOut[T]], None]) -> None:
        self.monitor = monitor
        self.schedule = schedule
        self._send_heartbeat = send_heartbeat
        self._on_timeout = on_timeout

    @classmethod
    def from_config(cls, config: Configuration, now_ms: float,
                    send_heartbeat: Callable[[], None],
                    on_timeout: Callable[[HeartbeatTimedOut[T]], None]) -> HeartbeatManager[T]:
        """``heartbeat.interval`` for sending, ``heartbeat.timeout`` for the targets."""
        return cls(HeartbeatMonitor.from_config(config),
                   HeartbeatSchedule.from_config(config, now_ms), send_heartbeat, on_timeout)

    @property
    def timeout_ms(self) -> float:
        return self.monitor.timeout_ms

    def monitor_target(self, target: T, now_ms: float) -> None:
        """Start watching ``target`` (registration counts as hearing from it)."""
        self.monitor.monitor(target, now_ms)

    def heard_from(self, target: T, now_ms: float) -> bool:
        """A heartbeat (or any message) from ``target``; False if it is not monitored."""
        return self.monitor.record_heartbeat(target, now_ms)

    def tick(self, now_ms: float) -> None:
        """Send this side's heartbeat if due; report the targets that timed out."""
        if self.schedule.due(now_ms):
            self._send_heartbeat()
        for event in self.monitor.check(now_ms):
            self._on_timeout(event)

    def next_tick_ms(self) -> float:
        """When ``tick`` next has something to do: a heartbeat due or a target's deadline."""
        deadline = self.monitor.next_deadline_ms()
        due = self.schedule.next_due_ms()
        return due if deadline is None else min(due, deadline)
