"""The JobManager: runs one job from submission to its end (DESIGN.md §3, §5, §6).

It lives in the driver process. For every job attempt it expands the job graph, plans the
slots, computes what each subtask restores (the latest completed checkpoint, re-assigned to
the current parallelism), has its ``Launcher`` start the TaskManagers (a Spark barrier stage,
or threads in tests), waits for them to register, deploys, and then drives the attempt: task
states, heartbeats, and the checkpoint coordinator's decisions. A failed attempt — a task
failed, a TaskManager died or fell silent, the Spark job failed — is cancelled and the restart
strategy decides whether a new attempt restores and runs, or the job fails.

Job status: CREATED → RUNNING → FINISHED; RUNNING → FAILING → RESTARTING → RUNNING; FAILING →
FAILED; RUNNING → CANCELLING → CANCELED.

Threads: ``run()`` is the JobManager thread; it alone touches the attempt, the coordinator and
the restart strategy. RPC threads only put events into ``_events``; ``cancel``,
``trigger_savepoint`` and ``stop_with_savepoint`` may be called from any thread (they enqueue
too and wait for the answer).
"""

from __future__ import annotations

import heapq
import logging
import pickle
import queue
import random
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Protocol

import cloudpickle

from flintlock.common.clock import SYSTEM_CLOCK, Clock
from flintlock.common.config import Configuration
from flintlock.common.errors import FlintlockError
from flintlock.common.ids import CheckpointId, JobVertexId, SubtaskIndex, new_id
from flintlock.common.job_status import JobStatus
from flintlock.common.options import checkpointing as cp_options
from flintlock.common.options import cluster as cluster_options
from flintlock.common.options import execution as execution_options
from flintlock.graph.execution_graph import ExecutionGraph, build_execution_graph
from flintlock.graph.job_graph import JobGraph
from flintlock.graph.scheduling import AllocationPlan, plan_allocation_for
from flintlock.runtime import messages as msg
from flintlock.runtime.checkpoint import coordinator_actions as actions
from flintlock.runtime.checkpoint.completed import CompletedCheckpoint, JobTerminalStatus
from flintlock.runtime.checkpoint.coordinator import CheckpointCoordinator, CheckpointTaskSets
from flintlock.runtime.checkpoint.finished import FinishedTaskState
from flintlock.runtime.checkpoint.metadata import resolve_savepoint
from flintlock.runtime.checkpoint.pending import TaskId
from flintlock.runtime.checkpoint.stats import SubtaskCheckpointMetrics
from flintlock.runtime.checkpoint.storage import CheckpointStorage
from flintlock.runtime.checkpoint.store import CompletedCheckpointStore
from flintlock.runtime.enumerators import (
    EnumeratorState,
    SourceCoordinator,
    SplitAssignment,
    coordinator_task,
    enumerated_sources,
    is_coordinator_task,
)
from flintlock.runtime.messages import TaskManagerPayload
from flintlock.runtime.network.buffer import BufferPoolDestroyedError
from flintlock.runtime.network.gate import ProducerFailedError
from flintlock.runtime.restart import create_restart_strategy
from flintlock.runtime.rpc import MessageDispatcher, RpcConnection, RpcServer
from flintlock.runtime.state.assignment import assign_states
from flintlock.runtime.state.snapshots import OperatorId, OperatorSubtaskState, TaskStateSnapshot
from flintlock.runtime.tls.certificates import new_job_credentials
from flintlock.usercode.job_files import JobFiles
from flintlock.usercode.job_files import pack as pack_job_files
from flintlock.usercode.python_env import collect_dependencies
from flintlock.usercode.shipping import shipped_by_value

log = logging.getLogger(__name__)

ROOT_CAUSE_GRACE_MS = 500.0
"""How long an attempt whose first reported failure is only a consequence (``_is_consequence``)
waits for the report of the task that failed first, which names the real cause."""


class JobFailedError(FlintlockError):
    """The job failed for good; ``__cause__`` is the failure that ended its last attempt."""

    def __init__(self, job_name: str, detail: str) -> None:
        super().__init__(job_name, detail)
        self.job_name = job_name
        self.detail = detail

    def __str__(self) -> str:
        return f"job {self.job_name!r} failed: {self.detail}"


class JobNotPicklableError(FlintlockError):
    """The job graph could not be pickled for the TaskManagers (with its own modules)."""

    def __init__(self, job_name: str, detail: str) -> None:
        super().__init__(job_name, detail)
        self.job_name = job_name
        self.detail = detail

    def __str__(self) -> str:
        return (f"job {self.job_name!r} cannot be shipped to the TaskManagers: {self.detail}; "
                "hint: create unpicklable resources (locks, connections, files) in a function's "
                "open(), or set classloader.resolve-order: parent-first and install the job's "
                "modules on the cluster")


class AttemptFailedError(FlintlockError):
    """One attempt of the job failed (a task, a TaskManager, or the Spark job)."""


class JobCancelledError(FlintlockError):
    """The job was cancelled before it finished."""


class AttemptHandle(Protocol):
    """A running set of TaskManagers (one Spark job): polled by the JobManager thread."""

    def failure(self) -> BaseException | None: ...

    def done(self) -> bool: ...

    def cancel(self) -> None: ...

    def wait(self, timeout_s: float) -> bool: ...


class Launcher(Protocol):
    """Starts the TaskManagers of one attempt, all at once. A launcher may also have
    ``install(dispatcher)`` to receive messages of its own on the JobManager's endpoint,
    ``ships_code = False`` when its TaskManagers share the driver's process (nothing of the
    job's code travels), and ``ship_job_files(files)`` to hand the job's packed files
    (``usercode.job_files``) to whatever brings them to the TaskManagers' hosts."""

    def available_slots(self) -> int | None: ...

    def launch(self, payloads: list[TaskManagerPayload], description: str) -> AttemptHandle: ...


@dataclass(frozen=True)
class TaskDescription:
    vertex_name: str
    vertex_id: str
    subtask: int
    state: str
    time: Any = None
    """The latest ``TaskTimeStatistics`` (busy / backpressured / idle ms per second)."""


@dataclass(frozen=True)
class JobDescription:
    """What ``JobManager.describe`` returns; ``checkpoints`` is the coordinator's
    ``CheckpointStatistics``."""

    job_id: str
    name: str
    status: str
    attempt: int
    start_time_ms: int
    tasks: tuple[TaskDescription, ...]
    checkpoints: Any


@dataclass
class JobResult:
    job_id: str
    status: JobStatus
    net_runtime_ms: int
    attempts: int
    error: BaseException | None = None


@dataclass
class _Attempt:
    number: int
    graph: ExecutionGraph
    plan: AllocationPlan
    handle: AttemptHandle | None = None
    connections: dict[int, RpcConnection] = field(default_factory=dict)
    addresses: dict[int, msg.DataAddress] = field(default_factory=dict)
    last_heartbeat: dict[int, float] = field(default_factory=dict)
    states: dict[TaskId, str] = field(default_factory=dict)
    times: dict[TaskId, Any] = field(default_factory=dict)
    deployed: bool = False
    sources: dict[JobVertexId, SourceCoordinator] = field(default_factory=dict)
    snapshotted: set[int] = field(default_factory=set)
    failure: BaseException | None = None
    started_ms: float = 0.0
    ended: bool = False
    failed_at_ms: float = 0.0
    checkpointing_started: bool = False


class JobManager:
    _coordinator: CheckpointCoordinator
    _storage: CheckpointStorage
    _initial_savepoint: CompletedCheckpoint | None
    _restored_checkpoint: CompletedCheckpoint | None = None
    _restored_finished: set[TaskId]
    _enumerated: list[tuple[JobVertexId, str, Any, int]]

    def __init__(
        self, job_graph: JobGraph, configuration: Configuration, launcher: Launcher, *,
        clock: Clock = SYSTEM_CLOCK, rng: random.Random | None = None,
        on_collect: Callable[[str, list[Any]], None] | None = None,
    ) -> None:
        self.job_graph = job_graph
        self.job_id = str(job_graph.job_id)
        self.config = configuration
        self._launcher = launcher
        self._clock = clock
        self._rng = rng or random.Random()
        self._on_collect = on_collect
        self._secret = new_job_credentials(configuration)  # TLS material if internal TLS
        self._events: queue.Queue[tuple[Callable[[], None], str]] = queue.Queue()
        self._timers: list[tuple[float, int, Callable[[], None]]] = []
        self._timer_seq = 0
        self.status = JobStatus.CREATED
        self._status_lock = threading.Lock()
        self._status_changed = threading.Condition(self._status_lock)
        self._attempt: _Attempt | None = None
        self._attempt_number = -1
        self._cancel_requested = False
        self._stop_requested = False
        self._savepoint_requests: dict[str, Future[str]] = {}
        self._stop_after_savepoint: set[str] = set()
        self._delivered_collect: set[tuple[str, int, int]] = set()
        self._checkpointing = configuration.get(cp_options.INTERVAL) > 0
        self._restart = create_restart_strategy(
            configuration, self._checkpointing, clock, self._rng)
        ships_code = getattr(launcher, "ships_code", True)
        job_files = pack_job_files(configuration) if ships_code else None
        self._python_dependencies = collect_dependencies(configuration, job_files)
        self._graph_bytes = _pickle_job_graph(job_graph, configuration, ships_code, job_files)
        log.debug("job %s: job graph pickled (%d bytes)", self.job_id, len(self._graph_bytes))
        if job_files is not None and job_files.files:
            ship = getattr(launcher, "ship_job_files", None)
            if ship is not None:
                ship(job_files.files)
        self._start_wall_ms = clock.wall_ms()
        self._restored_finished = set()
        self._server = RpcServer.from_config(configuration, self._dispatcher(), self._secret)
        self._setup_checkpointing()

    # -- public (any thread) -------------------------------------------------------------

    @property
    def address(self) -> tuple[str, int]:
        return self._server.address

    def get_status(self) -> JobStatus:
        with self._status_lock:
            return self.status

    def wait_for_status(self, wanted: set[JobStatus], timeout_s: float) -> bool:
        with self._status_lock:
            return self._status_changed.wait_for(lambda: self.status in wanted, timeout_s)

    def wait_until_running(self, timeout_s: float) -> bool:
        """Waits until every subtask of the current attempt has reached RUNNING: it reports
        RUNNING, or already FINISHED (a bounded source may end before its consumers have
        opened)."""
        with self._status_lock:
            return self._status_changed.wait_for(self._all_running, timeout_s)

    def _all_running(self) -> bool:
        attempt = self._attempt
        return attempt is not None and attempt.deployed and _all_started(attempt)

    def cancel(self) -> None:
        self._enqueue(self._on_cancel_request, "cancel")

    def trigger_savepoint(self, target_dir: str | None = None, stop: bool = False) -> Future[str]:
        future: Future[str] = Future()
        request_id = new_id(self._rng)

        def request() -> None:
            self._savepoint_requests[request_id] = future
            if stop:
                self._stop_after_savepoint.add(request_id)
            self._apply(self._coordinator.trigger_savepoint(request_id, target_dir, stop))

        self._enqueue(request, "savepoint")
        return future

    def stop_with_savepoint(self, target_dir: str | None = None) -> Future[str]:
        return self.trigger_savepoint(target_dir, stop=True)

    def describe(self, timeout_s: float = 10.0) -> JobDescription:
        """A consistent snapshot of the job for the REST endpoint and the CLI (taken on the
        JobManager thread; once the job has ended, taken directly)."""
        if self.status.is_globally_terminal_state():
            return self._describe_now()
        future: Future[JobDescription] = Future()
        self._enqueue(lambda: future.set_result(self._describe_now()), "describe")
        return future.result(timeout_s)

    def _describe_now(self) -> JobDescription:
        attempt = self._attempt
        names = {v.id: v.name for v in self.job_graph.vertices}
        times = attempt.times if attempt else {}
        tasks = tuple(
            TaskDescription(names.get(task.vertex, str(task.vertex)), str(task.vertex),
                            int(task.subtask), state, times.get(task))
            for task, state in sorted((attempt.states if attempt else {}).items(),
                                      key=lambda item: (str(item[0].vertex), item[0].subtask)))
        return JobDescription(
            job_id=self.job_id, name=self.job_graph.name, status=self.status.name,
            attempt=self._attempt_number, start_time_ms=self._start_wall_ms, tasks=tasks,
            checkpoints=self._coordinator.statistics())

    # -- the JobManager thread -----------------------------------------------------------

    def run(self) -> JobResult:
        started = time.monotonic()
        error: BaseException | None = None
        try:
            self._set_status(JobStatus.RUNNING)
            error = self._run_attempts()
        except BaseException:
            self._finish(JobStatus.FAILED, JobTerminalStatus.FAILED)
            raise
        finally:
            self._server.close()
        runtime = int((time.monotonic() - started) * 1000)
        return JobResult(self.job_id, self.status, runtime, self._attempt_number + 1, error)

    def _run_attempts(self) -> BaseException | None:
        while True:
            outcome = self._run_attempt()
            if outcome is None:
                self._finish(JobStatus.FINISHED, JobTerminalStatus.FINISHED)
                return None
            if isinstance(outcome, JobCancelledError):
                self._finish(JobStatus.CANCELED, JobTerminalStatus.CANCELED)
                return outcome
            self._set_status(JobStatus.FAILING)
            decision = self._restart.on_failure(outcome)
            if not decision.restart:
                self._finish(JobStatus.FAILED, JobTerminalStatus.FAILED)
                error = JobFailedError(self.job_graph.name, _describe(outcome))
                error.__cause__ = outcome
                return error
            log.warning("job %s attempt %d failed (%s); restarting in %d ms (%s)",
                        self.job_id, self._attempt_number, _describe(outcome),
                        decision.delay_ms, decision.reason)
            self._set_status(JobStatus.RESTARTING)
            if self._sleep_unless_cancelled(decision.delay_ms / 1000.0):
                self._finish(JobStatus.CANCELED, JobTerminalStatus.CANCELED)
                return JobCancelledError(self.job_graph.name)
            self._set_status(JobStatus.RUNNING)

    def _run_attempt(self) -> BaseException | None:
        """Runs one attempt to its end: None when the job finished, else why it did not."""
        self._attempt_number += 1
        graph = build_execution_graph(self.job_graph, self._attempt_number)
        plan = plan_allocation_for(graph, self.config, self._launcher.available_slots())
        attempt = self._attempt = _Attempt(self._attempt_number, graph, plan,
                                           started_ms=self._clock.now_ms())
        restored = self._restored_states(graph)
        payloads = [
            TaskManagerPayload(self.job_id, attempt.number, tm.index, *self.address,
                               self._secret, self.config.raw_items())
            for tm in plan.task_managers
        ]
        attempt.handle = self._launcher.launch(
            payloads, f"flintlock job {self.job_graph.name} attempt {attempt.number}")
        try:
            return self._drive(attempt, restored)
        finally:
            self._end_attempt(attempt)

    def _drive(
        self, attempt: _Attempt, restored: Mapping[TaskId, Mapping[str, Any]]
    ) -> BaseException | None:
        heartbeat_timeout_ms = self.config.get(cluster_options.HEARTBEAT_TIMEOUT)
        heartbeat_interval_ms = self.config.get(cluster_options.HEARTBEAT_INTERVAL)
        registration_ms = self.config.get(cluster_options.REGISTRATION_TIMEOUT)
        last_beat_ms = self._clock.now_ms()
        while True:
            if self._clock.now_ms() - last_beat_ms >= heartbeat_interval_ms:
                last_beat_ms = self._clock.now_ms()
                self._broadcast(msg.Heartbeat(attempt.number, -1))
            if self._cancel_requested:
                return JobCancelledError(self.job_graph.name)
            if self._stop_requested:
                return None
            if attempt.failure is not None and not (
                    _is_consequence(attempt.failure)
                    and self._clock.now_ms() - attempt.failed_at_ms < ROOT_CAUSE_GRACE_MS):
                return attempt.failure
            if attempt.deployed and _all_finished(attempt):
                return None
            handle_failure = attempt.handle.failure() if attempt.handle else None
            if handle_failure is not None:
                return handle_failure
            if attempt.handle is not None and attempt.handle.done() and not _all_finished(attempt):
                return AttemptFailedError("the TaskManagers ended before the job finished")
            if not attempt.deployed:
                if len(attempt.addresses) == attempt.plan.num_task_managers:
                    self._deploy(attempt, restored)
                elif self._clock.now_ms() - attempt.started_ms > registration_ms:
                    return AttemptFailedError(
                        f"only {len(attempt.addresses)} of {attempt.plan.num_task_managers} "
                        f"TaskManagers registered within {registration_ms} ms")
            silent = self._silent_task_managers(attempt, heartbeat_timeout_ms)
            if silent:
                return AttemptFailedError(
                    f"TaskManager {silent[0]} sent no heartbeat for {heartbeat_timeout_ms} ms "
                    "(heartbeat.timeout)")
            self._process_events(0.1)

    def _process_events(self, max_wait_s: float) -> None:
        now = self._clock.now_ms()
        while self._timers and self._timers[0][0] <= now:
            _, _, callback = heapq.heappop(self._timers)
            callback()
        wait = max_wait_s
        if self._timers:
            wait = min(wait, max(0.0, (self._timers[0][0] - now) / 1000.0))
        try:
            action, _ = self._events.get(timeout=wait)
        except queue.Empty:
            return
        action()
        while True:
            try:
                action, _ = self._events.get_nowait()
            except queue.Empty:
                return
            action()

    def _enqueue(self, action: Callable[[], None], description: str) -> None:
        self._events.put((action, description))

    def _schedule(self, at_ms: float, callback: Callable[[], None]) -> None:
        self._timer_seq += 1
        heapq.heappush(self._timers, (at_ms, self._timer_seq, callback))

    def _sleep_unless_cancelled(self, seconds: float) -> bool:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self._cancel_requested:
                return True
            self._process_events(min(0.1, max(0.0, deadline - time.monotonic())))
        return self._cancel_requested

    def _set_status(self, status: JobStatus) -> None:
        with self._status_lock:
            self.status = status
            self._status_changed.notify_all()

    def _finish(self, status: JobStatus, terminal: JobTerminalStatus) -> None:
        self._apply(self._coordinator.shutdown(terminal))
        for future in self._savepoint_requests.values():
            if not future.done():
                future.set_exception(JobCancelledError(f"job ended ({status.name})"))
        self._set_status(status)

    # -- attempts ------------------------------------------------------------------------

    def _deploy(self, attempt: _Attempt, restored: Mapping[TaskId, Mapping[str, Any]]) -> None:
        checkpoint_dir = self._storage.checkpoint_dir
        for tm in attempt.plan.task_managers:
            mine = {
                TaskId(v.job_vertex_id, SubtaskIndex(v.subtask_index)): restored.get(
                    TaskId(v.job_vertex_id, SubtaskIndex(v.subtask_index)), {})
                for v in tm.subtasks
            }
            log.debug("attempt %d: deploying %s to TaskManager %d (finished: %s)",
                      attempt.number, sorted(mine), tm.index,
                      sorted(self._restored_finished & set(mine)))
            attempt.connections[tm.index].tell(msg.DeployTasks(
                attempt.number, self._graph_bytes, attempt.plan, dict(attempt.addresses),
                mine, checkpoint_dir, frozenset(self._restored_finished & set(mine)),
                self._python_dependencies))
        for vertex in attempt.graph.vertices:
            attempt.states[TaskId(vertex.job_vertex_id, vertex.subtask_index)] = "DEPLOYING"
        attempt.deployed = True
        self._start_source_coordinators(attempt)

    def _start_source_coordinators(self, attempt: _Attempt) -> None:
        latest = self._restored_checkpoint
        for vertex, operator_id, source, parallelism in self._enumerated:
            coordinator = SourceCoordinator(
                vertex, operator_id, source, parallelism, self._assignments_for(attempt),
                self._schedule_for(attempt), self._clock.now_ms)
            restored = latest.task_states.get(coordinator.task) if latest else None
            coordinator.start(restored if isinstance(restored, EnumeratorState) else None)
            attempt.sources[vertex] = coordinator
            self._apply(self._coordinator.on_task_state_changed(coordinator.task, True))

    def _schedule_for(self, attempt: _Attempt) -> Callable[[float, Callable[[], None]], None]:
        """Timers that die with the attempt."""
        def schedule(at_ms: float, callback: Callable[[], None]) -> None:
            self._schedule(at_ms, lambda: callback() if self._attempt is attempt else None)
        return schedule

    def _assignments_for(self, attempt: _Attempt) -> Callable[[SplitAssignment], None]:
        def send(assignment: SplitAssignment) -> None:
            task = TaskId(assignment.vertex, SubtaskIndex(assignment.subtask))
            self._send(attempt, self._task_manager_of(attempt, task), msg.AssignSplits(
                attempt.number, task, assignment.operator_id, assignment.splits,
                assignment.no_more_splits))
        return send

    def _end_attempt(self, attempt: _Attempt) -> None:
        attempt.ended = True
        for source in attempt.sources.values():
            source.close()
        self._apply(self._coordinator.on_failover())
        for connection in list(attempt.connections.values()):
            try:
                connection.tell(msg.CancelTasks(attempt.number))
                connection.tell(msg.ReleaseTaskManager(attempt.number))
            except FlintlockError:
                pass
        handle = attempt.handle
        if handle is not None and not handle.wait(30.0):
            handle.cancel()
            handle.wait(30.0)
        for connection in list(attempt.connections.values()):
            connection.close()

    def _silent_task_managers(self, attempt: _Attempt, timeout_ms: int) -> list[int]:
        now = self._clock.now_ms()
        return [index for index, seen in attempt.last_heartbeat.items()
                if now - seen > timeout_ms and not _tm_finished(attempt, index)]

    def _restored_states(self, graph: ExecutionGraph) -> dict[TaskId, dict[str, Any]]:
        latest = self._coordinator.restore_latest_checkpoint() or self._initial_savepoint
        self._restored_checkpoint = latest
        self._restored_finished = set()
        if latest is None:
            return {}
        self._restored_finished = _finished_tasks(latest, graph.job_graph)
        by_operator: dict[OperatorId, dict[int, OperatorSubtaskState]] = {}
        subtasks_per_vertex: dict[JobVertexId, int] = {}
        vertex_of: dict[OperatorId, JobVertexId] = {}
        for task, snapshot in latest.task_states.items():
            if task.subtask < 0:
                continue
            log.debug("checkpoint %d holds for %s: %r", latest.checkpoint_id, task,
                      {op: state.state_size for op, state in snapshot.subtask_states.items()}
                      if isinstance(snapshot, TaskStateSnapshot) else snapshot)
            subtasks_per_vertex[task.vertex] = subtasks_per_vertex.get(task.vertex, 0) + 1
            if isinstance(snapshot, TaskStateSnapshot):
                for operator_id, state in snapshot.subtask_states.items():
                    by_operator.setdefault(operator_id, {})[int(task.subtask)] = state
                    vertex_of[operator_id] = task.vertex
        old_parallelism = {op: subtasks_per_vertex[vertex] for op, vertex in vertex_of.items()}
        job_graph = graph.job_graph
        operators = [(OperatorId(op.operator_id), v) for v in job_graph.vertices
                     for op in v.operators]
        assigned = assign_states(
            by_operator, {op: v.parallelism for op, v in operators},
            {op: v.max_parallelism for op, v in operators}, old_parallelism,
            allow_non_restored_state=self.config.get(execution_options.ALLOW_NON_RESTORED_STATE))
        restored: dict[TaskId, dict[str, Any]] = {}
        for vertex in job_graph.vertices:
            for index in range(vertex.parallelism):
                restored[TaskId(vertex.id, SubtaskIndex(index))] = {
                    op.operator_id: assigned[OperatorId(op.operator_id)][index]
                    for op in vertex.operators}
        log.info("job %s restores checkpoint %d", self.job_id, latest.checkpoint_id)
        return restored

    # -- checkpointing -------------------------------------------------------------------

    def _setup_checkpointing(self) -> None:
        self._initial_savepoint = None
        recovery_path = self.config.get(execution_options.STATE_RECOVERY_PATH)
        if recovery_path:
            self._initial_savepoint = resolve_savepoint(recovery_path)
        job_id = self.job_graph.job_id
        storage = self._storage = CheckpointStorage.from_config(self.config, job_id, self._rng)
        store = CompletedCheckpointStore.recover(
            storage.job_dir, self.config.get(cp_options.NUM_RETAINED))
        tasks = [TaskId(v.id, SubtaskIndex(i)) for v in self.job_graph.vertices
                 for i in range(v.parallelism)]
        sources = [TaskId(v.id, SubtaskIndex(i)) for v in self.job_graph.vertices
                   if v.is_source for i in range(v.parallelism)]
        self._enumerated = enumerated_sources(self.job_graph)
        coordinators = [coordinator_task(vertex) for vertex, _, _, _ in self._enumerated]
        everyone = frozenset(tasks + coordinators)
        self._coordinator = CheckpointCoordinator(
            job_id, self.config, CheckpointTaskSets(frozenset(sources), everyone, everyone),
            storage, store, self._clock, self._rng)

    def _apply(self, todo: list[Any]) -> None:
        """Carries out the coordinator's actions; notifications go once per TaskManager
        (which passes them to all its subtasks), not once per subtask."""
        notified: set[tuple[type, int, int]] = set()
        for action in todo:
            if isinstance(action, (actions.NotifyCheckpointComplete,
                                   actions.NotifyCheckpointAborted)):
                self._notify(action, notified)
            else:
                self._apply_one(action)

    def _notify(self, action: Any, notified: set[tuple[type, int, int]]) -> None:
        attempt = self._attempt
        if attempt is None or not attempt.deployed:
            return
        if is_coordinator_task(action.task):
            source = attempt.sources.get(action.task.vertex)
            if source is not None and isinstance(action, actions.NotifyCheckpointComplete):
                source.notify_checkpoint_complete(action.checkpoint_id)
            return
        tm_index = self._task_manager_of(attempt, action.task)
        key = (type(action), int(action.checkpoint_id), tm_index)
        if key in notified:
            return
        notified.add(key)
        if isinstance(action, actions.NotifyCheckpointComplete):
            self._send(attempt, tm_index, msg.NotifyCheckpointComplete(
                attempt.number, action.checkpoint_id, action.in_flight_data))
        else:
            self._send(attempt, tm_index,
                       msg.NotifyCheckpointAborted(attempt.number, action.checkpoint_id))

    def _apply_one(self, action: Any) -> None:
        attempt = self._attempt
        number = attempt.number if attempt else 0
        coordinator = self._coordinator
        if isinstance(action, actions.TriggerCheckpointOnTask):
            if attempt is not None and action.checkpoint_id not in attempt.snapshotted:
                attempt.snapshotted.add(action.checkpoint_id)
                self._snapshot_source_coordinators(attempt, action.checkpoint_id)
            if action.options.is_savepoint:
                self._broadcast(msg.CheckpointLocation(
                    number, action.checkpoint_id, action.location))
            if attempt is not None and attempt.deployed:
                self._send(attempt, self._task_manager_of(attempt, action.task),
                           msg.TriggerCheckpoint(number, action.task, action.checkpoint_id,
                                                 action.timestamp, action.options,
                                                 action.location))
        elif isinstance(action, actions.ScheduleTimeout):
            cid = action.checkpoint_id
            self._schedule(action.at_ms, lambda: self._apply(coordinator.on_timeout(cid)))
        elif isinstance(action, actions.ScheduleNextTrigger):
            self._schedule(action.at_ms, lambda: self._apply(coordinator.on_periodic_tick()))
        elif isinstance(action, actions.FailJob):
            if attempt is not None:
                attempt.failure = action.cause
        elif isinstance(action, actions.CompleteSavepointRequest):
            self._complete_savepoint(action.request_id, action.path)
        elif isinstance(action, actions.FailSavepointRequest):
            future = self._savepoint_requests.pop(action.request_id, None)
            if action.request_id in self._stop_after_savepoint:
                self._stop_after_savepoint.discard(action.request_id)
                self._apply(self._coordinator.resume_periodic())
            if future is not None and not future.done():
                future.set_exception(action.error)

    def _snapshot_source_coordinators(self, attempt: _Attempt, checkpoint_id: int) -> None:
        """The enumerators' part of a checkpoint: taken, and acknowledged, right before the
        first trigger goes out (see ``enumerators``)."""
        for source in attempt.sources.values():
            state = source.snapshot(checkpoint_id)
            self._apply(self._coordinator.receive_acknowledge(
                source.task, CheckpointId(checkpoint_id), state))

    def _complete_savepoint(self, request_id: str, path: str) -> None:
        future = self._savepoint_requests.pop(request_id, None)
        if future is not None and not future.done():
            future.set_result(path)
        if request_id in self._stop_after_savepoint:
            self._stop_after_savepoint.discard(request_id)
            self._stop_requested = True

    @staticmethod
    def _task_manager_of(attempt: _Attempt, task: TaskId) -> int:
        vertex = next(v for v in attempt.graph.vertices
                      if v.job_vertex_id == task.vertex and v.subtask_index == task.subtask)
        return attempt.plan.task_manager_of(vertex)

    def _send(self, attempt: _Attempt, tm_index: int, message: object) -> None:
        connection = attempt.connections.get(tm_index)
        if connection is None:
            return
        try:
            connection.tell(message)
        except FlintlockError as exc:
            log.warning("could not send %s to TaskManager %d: %s",
                        type(message).__name__, tm_index, exc)

    def _broadcast(self, message: object) -> None:
        attempt = self._attempt
        if attempt is None:
            return
        for connection in attempt.connections.values():
            try:
                connection.tell(message)
            except FlintlockError:
                pass

    # -- RPC (dispatcher threads → events) ----------------------------------------------

    def _dispatcher(self) -> MessageDispatcher:
        d = MessageDispatcher()
        d.register(msg.RegisterTaskManager, self._on_register)
        for kind, handler, after_end in (
            (msg.TaskStateUpdate, self._on_task_state, False),
            (msg.AcknowledgeCheckpoint, self._on_ack, True),  # late: state discarded
            (msg.DeclineCheckpoint, self._on_decline, True),
            (msg.Heartbeat, self._on_heartbeat, True),
            (msg.CollectBatch, self._on_collect_batch, True),
        ):
            d.register(kind, self._deferred(handler, after_end))
        install = getattr(self._launcher, "install", None)
        if install is not None:
            install(d)
        return d

    def _deferred(
        self, handler: Callable[[Any], None], after_end: bool,
    ) -> Callable[[RpcConnection, Any], None]:
        def enqueue(connection: RpcConnection, message: Any) -> None:
            self._enqueue(lambda: self._if_current(message, handler, after_end),
                          type(message).__name__)
        return enqueue

    def _if_current(
        self, message: Any, handler: Callable[[Any], None], after_end: bool,
    ) -> None:
        """Runs ``handler`` for a message of the current attempt. Once the attempt is ending
        (its failover reset the coordinator), only messages marked ``after_end`` still count:
        a task of the dying attempt reporting FINISHED late would otherwise be recorded by the
        coordinator as finished for the restored attempt too, which then never triggers that
        task's restored copy (docs/known-issues.md)."""
        attempt = self._attempt
        if attempt is None or message.attempt != attempt.number:
            return
        if attempt.ended and not after_end:
            return
        handler(message)

    def _on_register(
        self, connection: RpcConnection, message: msg.RegisterTaskManager
    ) -> msg.Registered:
        done = threading.Event()
        reply: list[msg.Registered] = []

        def register() -> None:
            attempt = self._attempt
            if attempt is None or message.attempt != attempt.number:
                reply.append(msg.Registered(False, f"attempt {message.attempt} is not current"))
            else:
                attempt.connections[message.tm_index] = connection
                attempt.addresses[message.tm_index] = (message.host, message.data_port)
                attempt.last_heartbeat[message.tm_index] = self._clock.now_ms()
                log.debug("attempt %d: TaskManager %d registered", attempt.number,
                          message.tm_index)
                reply.append(msg.Registered(True))
            done.set()

        self._enqueue(register, "register")
        if not done.wait(30.0):
            return msg.Registered(False, "the JobManager is busy")
        return reply[0]

    def _on_heartbeat(self, message: msg.Heartbeat) -> None:
        attempt = self._attempt
        assert attempt is not None
        attempt.last_heartbeat[message.tm_index] = self._clock.now_ms()
        attempt.times.update(message.tasks)

    def _on_task_state(self, message: msg.TaskStateUpdate) -> None:
        attempt = self._attempt
        assert attempt is not None
        log.debug("attempt %d: task %s is %s", attempt.number, message.task, message.state)
        with self._status_lock:
            attempt.states[message.task] = message.state
            self._status_changed.notify_all()
        coordinator = self._coordinator
        if message.state == "RUNNING":
            source = attempt.sources.get(message.task.vertex)
            if source is not None:
                source.add_reader(int(message.task.subtask))
            self._apply(coordinator.on_task_state_changed(message.task, True))
            self._start_checkpointing_once_started(attempt)
        elif message.state == "FINISHED":
            self._apply(coordinator.on_task_finished(message.task))
            self._start_checkpointing_once_started(attempt)
        elif message.state in ("FAILED", "CANCELED") and not (
                self._cancel_requested or self._stop_requested):
            cause = message.error.to_exception() if message.error else None
            failure = cause or AttemptFailedError(f"task {message.task} {message.state}")
            # The first failure wins, except that a task's own error replaces a consumer's
            # report that its producer failed (which may arrive first).
            if attempt.failure is None or (
                    _is_consequence(attempt.failure) and not _is_consequence(failure)):
                attempt.failure = failure
                attempt.failed_at_ms = self._clock.now_ms()

    def _start_checkpointing_once_started(self, attempt: _Attempt) -> None:
        """Periodic checkpoints begin once every subtask has reached RUNNING. A subtask that
        already FINISHED counts: a source restored as finished ends at once, possibly before
        the others report RUNNING, and requiring RUNNING of all at the same moment would then
        never start checkpointing for the attempt (so a bounded source could never take its
        final checkpoint, and two-phase-commit sinks would never commit again)."""
        if attempt.checkpointing_started or not _all_started(attempt):
            return
        if _all_finished(attempt):
            return  # nothing left to checkpoint: the job is ending
        attempt.checkpointing_started = True
        self._apply(self._coordinator.start())

    def _on_ack(self, message: msg.AcknowledgeCheckpoint) -> None:
        m = message.metrics
        metrics = SubtaskCheckpointMetrics(
            alignment_duration_ms=float(m.get("alignment_duration_ms", 0.0)),
            start_delay_ms=float(m.get("start_delay_ms", 0.0)),
            bytes_persisted_during_alignment=int(
                m.get("channel_state_bytes", m.get("bytes_processed_during_alignment", 0))),
            unaligned=bool(m.get("unaligned", 0.0)),
        )
        self._apply(self._coordinator.receive_acknowledge(
            message.task, CheckpointId(message.checkpoint_id), message.state, metrics))

    def _on_decline(self, message: msg.DeclineCheckpoint) -> None:
        cause = message.error.to_exception() if message.error else None
        self._apply(self._coordinator.receive_decline(
            message.task, CheckpointId(message.checkpoint_id), message.reason, cause))

    def _on_collect_batch(self, message: msg.CollectBatch) -> None:
        if message.token is not None:
            key = (message.collect_id, *message.token)
            if key in self._delivered_collect:
                return
            self._delivered_collect.add(key)
        if self._on_collect is not None:
            self._on_collect(message.collect_id, message.records)

    def _on_cancel_request(self) -> None:
        if self.status.is_globally_terminal_state():
            return
        self._cancel_requested = True
        self._set_status(JobStatus.CANCELLING)


def _is_consequence(failure: BaseException) -> bool:
    """A task failed only because another one did, whose own report names the cause: a
    consumer saw its producer fail, or a producer found its output pool destroyed because
    its consumer failed and released the partition."""
    return isinstance(failure, (ProducerFailedError, BufferPoolDestroyedError))


def _finished_tasks(checkpoint: CompletedCheckpoint, job_graph: JobGraph) -> set[TaskId]:
    """The subtasks to deploy as finished. Unchanged parallelism: those recorded finished.
    Rescaled: every subtask of a vertex all of whose old subtasks had finished, else none."""
    finished: set[TaskId] = set()
    for vertex in job_graph.vertices:
        old = {task: state for task, state in checkpoint.task_states.items()
               if task.vertex == vertex.id and task.subtask >= 0}
        done = {task for task, state in old.items() if isinstance(state, FinishedTaskState)}
        if not done:
            continue
        if len(old) == vertex.parallelism:
            finished |= done
        elif len(done) == len(old):
            finished |= {TaskId(vertex.id, SubtaskIndex(i)) for i in range(vertex.parallelism)}
    return finished


def _pickle_job_graph(job_graph: JobGraph, config: Configuration, ship_code: bool,
                      job_files: JobFiles | None) -> bytes:
    """The job graph for the TaskManagers; with ``ship_code``, the job's own modules that its
    files do not cover travel by value inside it (``flintlock.usercode.shipping``)."""
    try:
        if not ship_code:
            return bytes(cloudpickle.dumps(job_graph))
        covered = job_files.covers if job_files is not None else (lambda module: False)
        with shipped_by_value(config, covered):
            return bytes(cloudpickle.dumps(job_graph))
    except (TypeError, AttributeError, pickle.PicklingError) as exc:
        raise JobNotPicklableError(job_graph.name, f"{type(exc).__name__}: {exc}") from exc


def _all_started(attempt: _Attempt) -> bool:
    """Every subtask reported RUNNING at some point (it is RUNNING or already FINISHED)."""
    return bool(attempt.states) and all(
        s in ("RUNNING", "FINISHED") for s in attempt.states.values())


def _all_finished(attempt: _Attempt) -> bool:
    return bool(attempt.states) and all(s == "FINISHED" for s in attempt.states.values())


def _tm_finished(attempt: _Attempt, tm_index: int) -> bool:
    tm = attempt.plan.task_managers[tm_index]
    return all(attempt.states.get(TaskId(v.job_vertex_id, v.subtask_index)) == "FINISHED"
               for v in tm.subtasks)


def _describe(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"
