"""One attempt of a job, as the JobManager sees it: the TaskManagers that registered, the state
of every subtask, the first failure, and how to end it.

Liveness of the attempt's TaskManagers is ``heartbeat.HeartbeatManager``'s: the attempt sends
a heartbeat to its TaskManagers every ``heartbeat.interval`` and monitors each one from its
registration; one silent for ``heartbeat.timeout`` while it still has unfinished subtasks
fails the attempt with ``TaskManagerLostError`` (``watch_task_managers``, ``tick_heartbeats``).

A BATCH attempt also has a ``RegionScheduler`` (``regions``): its subtasks start CREATED and
are deployed region by region, ``plan`` growing with them; a failed region restarts alone
(``RegionRestart``: the region's subtasks still running are cancelled, and once all ended and
the restart strategy's delay passed, the regions are deployed again).

Thread ownership: an ``Attempt`` belongs to the JobManager thread, which alone reads and writes
it (RPC threads hand their messages over as events). ``states`` is written under the
JobManager's status lock as well, because ``wait_until_running`` reads it from other threads.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from flintlock.common.config import Configuration
from flintlock.common.errors import FlintlockError
from flintlock.common.ids import CheckpointId, JobVertexId, SubtaskIndex
from flintlock.graph.execution_graph import ExecutionGraph, ExecutionVertex
from flintlock.graph.region_scheduling import RegionScheduler
from flintlock.graph.scheduling import AllocationPlan
from flintlock.runtime import messages as msg
from flintlock.runtime.checkpoint.pending import TaskId
from flintlock.runtime.enumerators import SourceCoordinator, SplitAssignment
from flintlock.runtime.execution_state import ExecutionState
from flintlock.runtime.heartbeat import HeartbeatManager, HeartbeatTimedOut
from flintlock.runtime.jobmanager.errors import TaskManagerLostError
from flintlock.runtime.jobmanager.launching import AttemptHandle
from flintlock.runtime.rpc import RpcConnection

log = logging.getLogger(__name__)

ROOT_CAUSE_GRACE_MS = 500.0
"""How long an attempt whose first reported failure is only a consequence (a task failed
because another one did) waits for the report of the task that failed first, which names
the real cause."""
END_WAIT_S = 30.0
"""How long ending an attempt waits for its TaskManagers, before and after cancelling them."""


@dataclass
class RegionRestart:
    """Pipelined regions of a BATCH attempt being restarted after ``cause``."""

    regions: frozenset[int]
    waiting: set[TaskId]
    """Their subtasks that have not ended yet (cancelled, their end not reported)."""
    not_before_ms: float
    """The restart strategy's delay: redeploy at this time at the earliest."""
    cause: BaseException


@dataclass
class Attempt:
    number: int
    graph: ExecutionGraph
    plan: AllocationPlan
    handle: AttemptHandle | None = None
    connections: dict[int, RpcConnection] = field(default_factory=dict)
    addresses: dict[int, msg.DataAddress] = field(default_factory=dict)
    heartbeats: HeartbeatManager[int] | None = None
    """Heartbeats to and from the registered TaskManagers (``watch_task_managers``)."""
    pids: dict[int, int] = field(default_factory=dict)
    """Process id of each registered TaskManager (on its host)."""
    states: dict[TaskId, ExecutionState] = field(default_factory=dict)
    times: dict[TaskId, Any] = field(default_factory=dict)
    deployed: bool = False
    sources: dict[JobVertexId, SourceCoordinator] = field(default_factory=dict)
    snapshotted: set[CheckpointId] = field(default_factory=set)
    failure: BaseException | None = None
    failure_is_consequence: bool = False
    started_ms: float = 0.0
    ended: bool = False
    failed_at_ms: float = 0.0
    checkpointing_started: bool = False
    regions: RegionScheduler | None = None
    """BATCH: deploys the attempt region by region (None: everything at once)."""
    region_restart: RegionRestart | None = None
    pending_splits: list[SplitAssignment] = field(default_factory=list)
    """Split assignments for subtasks whose region is not deployed yet."""
    lost: set[int] = field(default_factory=set)
    """TaskManagers that fell silent (heartbeat timeout): ``release`` does not wait for them."""

    def vertex_of(self, task: TaskId) -> ExecutionVertex:
        parallelism = self.graph.job_graph.vertex(task.vertex).parallelism
        return ExecutionVertex(task.vertex, task.subtask, parallelism)

    def take_pending_splits(self, deployed: set[TaskId]) -> list[SplitAssignment]:
        """The held assignments for subtasks in ``deployed``, removed from the list."""
        taken = [a for a in self.pending_splits
                 if TaskId(a.vertex, SubtaskIndex(a.subtask)) in deployed]
        self.pending_splits = [a for a in self.pending_splits if a not in taken]
        return taken

    # -- what the subtasks report --------------------------------------------------------

    def all_started(self) -> bool:
        """Every subtask reported RUNNING at some point (it is RUNNING or already
        FINISHED)."""
        return bool(self.states) and all(s.has_started for s in self.states.values())

    def all_finished(self) -> bool:
        return bool(self.states) and all(
            s is ExecutionState.FINISHED for s in self.states.values())

    def task_manager_finished(self, tm_index: int) -> bool:
        if self.regions is not None and not self.regions.all_finished:
            return False  # later regions may still be deployed to it, or read its results
        tm = self.plan.task_managers[tm_index]
        return all(
            self.states.get(TaskId(v.job_vertex_id, v.subtask_index)) is ExecutionState.FINISHED
            for v in tm.subtasks)

    # -- liveness of the TaskManagers ----------------------------------------------------

    def watch_task_managers(self, config: Configuration, now_ms: float) -> None:
        """Start heartbeats (``heartbeat.interval``, ``heartbeat.timeout``); TaskManagers are
        monitored from their registration on."""
        self.heartbeats = HeartbeatManager.from_config(config, now_ms, self._send_heartbeat,
                                                       self._task_manager_silent)

    def tick_heartbeats(self, now_ms: float) -> None:
        """Send the attempt's heartbeat if due; fail the attempt if a TaskManager fell silent."""
        if self.heartbeats is not None:
            self.heartbeats.tick(now_ms)

    def heard_from(self, tm_index: int, now_ms: float) -> None:
        """A heartbeat from TaskManager ``tm_index``."""
        if self.heartbeats is not None:
            self.heartbeats.heard_from(tm_index, now_ms)

    def _send_heartbeat(self) -> None:
        self.broadcast(msg.Heartbeat(self.number, -1))

    def _task_manager_silent(self, event: HeartbeatTimedOut[int]) -> None:
        """A TaskManager timed out: the attempt fails, unless its subtasks all finished."""
        if self.task_manager_finished(event.target) or self.heartbeats is None:
            return
        self.lost.add(event.target)
        self.record_failure(TaskManagerLostError(event.target, self.heartbeats.timeout_ms),
                            consequence=False, now_ms=event.detected_ms)

    def record_failure(self, failure: BaseException, consequence: bool, now_ms: float) -> None:
        """The first failure wins, except that a task's own error replaces a report that
        was only a consequence of it (which may arrive first)."""
        if self.failure is None or (self.failure_is_consequence and not consequence):
            self.failure = failure
            self.failure_is_consequence = consequence
            self.failed_at_ms = now_ms

    def root_cause(self, now_ms: float) -> BaseException | None:
        """The failure that ends the attempt, once it is known: a consequence waits
        ``ROOT_CAUSE_GRACE_MS`` for its cause."""
        if self.failure is None:
            return None
        if self.failure_is_consequence and now_ms - self.failed_at_ms < ROOT_CAUSE_GRACE_MS:
            return None
        return self.failure

    # -- talking to the TaskManagers -----------------------------------------------------

    def task_manager_of(self, task: TaskId) -> int:
        vertex = next(v for v in self.graph.vertices
                      if v.job_vertex_id == task.vertex and v.subtask_index == task.subtask)
        return self.plan.task_manager_of(vertex)

    def send(self, tm_index: int, message: object) -> None:
        connection = self.connections.get(tm_index)
        if connection is None:
            return
        try:
            connection.tell(message)
        except FlintlockError as exc:
            log.warning("could not send %s to TaskManager %d: %s",
                        type(message).__name__, tm_index, exc)

    def broadcast(self, message: object) -> None:
        for connection in self.connections.values():
            try:
                connection.tell(message)
            except FlintlockError:
                pass

    def release(self) -> None:
        """Ends the attempt's TaskManagers: cancel and release them, wait for the launcher's
        handle (cancelling it if they do not end), close the connections. With a TaskManager
        lost (silent: frozen, or cut off), the handle is cancelled at once: that TaskManager
        acts on no message, so waiting ``END_WAIT_S`` for it would only delay the restart."""
        self.broadcast(msg.CancelTasks(self.number))
        self.broadcast(msg.ReleaseTaskManager(self.number))
        handle = self.handle
        if handle is not None and self.lost:
            handle.cancel()
        if handle is not None and not handle.wait(END_WAIT_S):
            handle.cancel()
            handle.wait(END_WAIT_S)
        for connection in list(self.connections.values()):
            connection.close()


def register_task_manager(attempt: Attempt | None, connection: RpcConnection,
                          message: msg.RegisterTaskManager, now_ms: float) -> msg.Registered:
    """Records a TaskManager of the current ``attempt`` (JobManager thread); the reply."""
    if attempt is None or message.attempt != attempt.number:
        return msg.Registered(False, f"attempt {message.attempt} is not current")
    attempt.connections[message.tm_index] = connection
    attempt.addresses[message.tm_index] = (message.host, message.data_port)
    if attempt.heartbeats is not None:
        attempt.heartbeats.monitor_target(message.tm_index, now_ms)
    attempt.pids[message.tm_index] = message.pid
    log.debug("attempt %d: TaskManager %d registered", attempt.number, message.tm_index)
    return msg.Registered(True)
