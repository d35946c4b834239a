"""The TaskManager's side of the heartbeats: it sends its own (with its subtasks' metrics)
every ``heartbeat.interval`` and monitors its JobManager, through the same
``heartbeat.HeartbeatManager`` the JobManager uses for its TaskManagers.

Any message from the JobManager counts as hearing from it (``heard_from_jobmanager``). When
nothing came for ``heartbeat.timeout``, ``on_lost(JobManagerLostError)`` is called once: the
TaskManager cancels its subtasks and ends, since it must never outlive its job.

Thread ownership: ``heard_from_jobmanager`` from any thread (the RPC dispatcher; it writes
one float); ``tick`` and ``run`` on the TaskManager's heartbeat thread, which alone owns the
``HeartbeatManager`` and calls both callbacks.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Final

from flintlock.common.clock import Clock
from flintlock.common.config import Configuration
from flintlock.common.errors import FlintlockError
from flintlock.runtime.heartbeat import HeartbeatManager, HeartbeatTimedOut

JOBMANAGER: Final = "jobmanager"
"""The one target a TaskManager monitors."""


class JobManagerLostError(FlintlockError):
    """Nothing came from the JobManager for ``heartbeat.timeout``."""

    def __init__(self, tm_index: int, timeout_ms: float) -> None:
        super().__init__(tm_index, timeout_ms)
        self.tm_index = tm_index
        self.timeout_ms = timeout_ms

    def __str__(self) -> str:
        return (f"TaskManager {self.tm_index} lost the JobManager: no message for "
                f"{self.timeout_ms / 1000:.0f} s (heartbeat.timeout)")


class JobManagerHeartbeats:
    """Heartbeats to the JobManager and its liveness, for TaskManager ``tm_index``."""

    def __init__(self, tm_index: int, config: Configuration, clock: Clock,
                 send_heartbeat: Callable[[], None],
                 on_lost: Callable[[JobManagerLostError], None]) -> None:
        self._tm_index = tm_index
        self._clock = clock
        self._on_lost = on_lost
        now = clock.now_ms()
        self._last_contact_ms = now  # written by the RPC dispatcher, read by tick
        self._manager: HeartbeatManager[str] = HeartbeatManager.from_config(
            config, now, send_heartbeat, self._timed_out)
        self._manager.monitor_target(JOBMANAGER, now)

    def heard_from_jobmanager(self) -> None:
        """Any thread: a message from the JobManager arrived."""
        self._last_contact_ms = self._clock.now_ms()

    def tick(self) -> float:
        """Heartbeat thread: send a heartbeat if due, report a silent JobManager; returns the
        seconds until the next tick is due."""
        now = self._clock.now_ms()
        self._manager.heard_from(JOBMANAGER, self._last_contact_ms)
        self._manager.tick(now)
        return max(0.0, self._manager.next_tick_ms() - now) / 1000.0

    def run(self, done: threading.Event) -> None:
        """Heartbeat thread: ticks until ``done`` is set."""
        wait_s = self.tick()
        while not done.wait(wait_s):
            wait_s = self.tick()

    def _timed_out(self, event: HeartbeatTimedOut[str]) -> None:
        self._on_lost(JobManagerLostError(self._tm_index, self._manager.timeout_ms))
