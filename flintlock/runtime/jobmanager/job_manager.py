"""The JobManager: runs one job from submission to its end (DESIGN.md §3, §5, §6).

It lives in the driver process. For every job attempt it expands the job graph, plans the
slots, computes what each subtask restores (``restore_plan``), has its ``Launcher`` start the
TaskManagers (a Spark barrier stage, or threads in tests), waits for them to register, deploys,
and then drives the attempt (``Attempt``): task states, heartbeats, and the checkpoint
coordinator's decisions (``CheckpointActions``). A BATCH attempt is deployed region by region
(``graph.region_scheduling``): a pipelined region once the BLOCKING results it reads are
finished, into the slots finished regions gave back, so the job needs only the slots of its
widest region; a failed subtask there restarts only its region (``region_failover``), if the
restart strategy allows, re-reading the finished regions' results. A failed attempt — a
task failed, a TaskManager died or fell silent, the Spark job failed — is ended and the restart
strategy decides whether a new attempt restores and runs, or the job fails.

Job status: CREATED → RUNNING → FINISHED; RUNNING → FAILING → RESTARTING → RUNNING; FAILING →
FAILED; RUNNING → CANCELLING → CANCELED; RUNNING → SUSPENDED when HA leadership is lost.

Threads: ``run()`` is the JobManager thread; it alone touches the attempt, the coordinator and
the restart strategy. RPC threads only put events on the ``EventLoop``; ``cancel``,
``trigger_savepoint``, ``stop_with_savepoint`` and ``describe`` may be called from any thread
(they enqueue too and wait for the answer).
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from flintlock.common.clock import SYSTEM_CLOCK, Clock
from flintlock.common.config import Configuration
from flintlock.common.ids import CheckpointId, new_id
from flintlock.common.job_status import JobStatus
from flintlock.common.options import checkpointing as cp_options
from flintlock.common.options import cluster as cluster_options
from flintlock.common.options import execution as execution_options
from flintlock.graph.execution_graph import build_execution_graph
from flintlock.graph.job_graph import JobGraph
from flintlock.graph.region_scheduling import (
    DeployRegion,
    RegionScheduler,
    allocation_of,
    create_region_scheduler,
)
from flintlock.graph.scheduling import AllocationPlan, plan_allocation_for
from flintlock.runtime.checkpoint.completed import JobTerminalStatus
from flintlock.runtime.checkpoint.coordinator import CheckpointCoordinator
from flintlock.runtime.checkpoint.pending import TaskId
from flintlock.runtime.execution_state import ExecutionState
from flintlock.runtime.jobmanager import region_failover
from flintlock.runtime.jobmanager.attempt import Attempt
from flintlock.runtime.jobmanager.checkpoint_actions import CheckpointActions
from flintlock.runtime.jobmanager.collect import CollectDelivery
from flintlock.runtime.jobmanager.deployment import (
    deploy_regions,
    deploy_tasks,
    start_source_coordinators,
)
from flintlock.runtime.jobmanager.description import JobDescription, JobResult, describe_job
from flintlock.runtime.jobmanager.errors import (
    AttemptFailedError,
    DistinctFailures,
    JobCancelledError,
    JobFailedError,
    describe,
    failure_traceback,
)
from flintlock.runtime.jobmanager.event_loop import EventLoop
from flintlock.runtime.jobmanager.execution_mode import configuration_for_mode, is_batch
from flintlock.runtime.jobmanager.history import JobEvent, JobEventKind, JobHistory
from flintlock.runtime.jobmanager.job_start import start_job
from flintlock.runtime.jobmanager.launching import Launcher
from flintlock.runtime.jobmanager.leadership import LeadershipLostError
from flintlock.runtime.jobmanager.restore_plan import RestorePlan, plan_restore
from flintlock.runtime.jobmanager.rpc_handlers import JobManagerRpc
from flintlock.runtime.jobmanager.status_board import JobStatusBoard
from flintlock.runtime.jobmanager.submission import prepare_submission
from flintlock.runtime.messages import TaskManagerPayload
from flintlock.runtime.metrics.output_tail import TaskManagerOutputs
from flintlock.runtime.restart import RestartDecision, create_restart_strategy
from flintlock.runtime.rpc import RpcServer
from flintlock.runtime.state.errors import StateError
from flintlock.runtime.tls.certificates import new_job_credentials

log = logging.getLogger(__name__)

@dataclass(frozen=True)
class _AttemptEnd:
    cause: BaseException | None
    """Why the attempt ended; None: the job finished."""


STOP_FINISH_WAIT_S = 60.0
"""After a stop-with-savepoint completed, how long the tasks may take to finish by themselves
before the attempt is ended anyway (they have nothing left to process: normally
milliseconds)."""
"""How long a registering TaskManager's RPC thread waits for the JobManager thread."""


class JobManager:
    def __init__(
        self, job_graph: JobGraph, configuration: Configuration, launcher: Launcher, *,
        clock: Clock = SYSTEM_CLOCK, rng: random.Random | None = None,
        on_collect: Callable[[str, list[Any]], None] | None = None,
    ) -> None:
        self._leadership_lost: LeadershipLostError | None = None
        self._loop = EventLoop(clock)
        self._rng = rng or random.Random()
        configuration = configuration_for_mode(job_graph, configuration)
        start = start_job(job_graph, configuration, clock, self._rng, lambda lost: (
            self._loop.enqueue(lambda: self._lose_leadership(lost), "leadership lost")))
        self._ha, self._setup, job_graph = start.ha, start.checkpoints, start.job_graph
        self.job_graph = job_graph
        self.job_id = str(job_graph.job_id)
        self.config = configuration
        self._launcher = launcher
        self._clock = clock
        self._collect = CollectDelivery(on_collect)
        self._secret = new_job_credentials(configuration)  # TLS material if internal TLS
        self._status = JobStatusBoard(JobStatus.CREATED)
        self._attempt: Attempt | None = None
        self._attempt_number = -1
        self._cancel_requested = self._stop_requested = False
        self._stop_deadline = 0.0
        self._checkpointing = configuration.get(cp_options.INTERVAL) > 0
        self._restart = create_restart_strategy(
            configuration, self._checkpointing, clock, self._rng)
        self._submission = prepare_submission(job_graph, configuration, launcher)
        self._failures = DistinctFailures()
        self._decided: RestartDecision | None = None  # a refused region failover's
        self._start_wall_ms = clock.wall_ms()
        self._restore, self._history = RestorePlan(), JobHistory()
        self.output = TaskManagerOutputs()  # TaskManagers' log/stdout tails (any thread)
        for kind, name, message in start.notes():
            self._record(kind, name, message)
        self._checkpoints = CheckpointActions(
            self._setup.coordinator, self._loop, lambda: self._attempt, self._stop,
            self._confirm_commit)
        self._server = RpcServer.from_config(configuration, JobManagerRpc(self).dispatcher(),
                                             self._secret)

    @property
    def _coordinator(self) -> CheckpointCoordinator:
        return self._checkpoints.coordinator

    # -- public (any thread) -------------------------------------------------------------

    @property
    def address(self) -> tuple[str, int]:
        return self._server.address

    def get_status(self) -> JobStatus:
        return self._status.current

    def wait_for_status(self, wanted: set[JobStatus], timeout_s: float) -> bool:
        return self._status.wait_for_status(wanted, timeout_s)

    def wait_until_running(self, timeout_s: float) -> bool:
        """Waits until every subtask of the current attempt has reached RUNNING: it reports
        RUNNING, or already FINISHED (a bounded source may end before its consumers have
        opened)."""
        def all_running() -> bool:
            attempt = self._attempt
            return attempt is not None and attempt.deployed and attempt.all_started()

        return self._status.wait_for(all_running, timeout_s)

    def cancel(self) -> None:
        self._loop.enqueue(self._on_cancel_request, "cancel")

    def trigger_savepoint(self, target_dir: str | None = None, stop: bool = False,
                          drain: bool = False) -> Future[str]:
        future: Future[str] = Future()
        request_id = new_id(self._rng)
        self._loop.enqueue(
            lambda: self._checkpoints.request_savepoint(request_id, future, target_dir, stop,
                                                        drain),
            "savepoint")
        return future

    def stop_with_savepoint(self, target_dir: str | None = None,
                            drain: bool = False) -> Future[str]:
        """A synchronous savepoint, then the job finishes; ``drain`` first advances every
        source to the end of event time (Flink's ``--drain``)."""
        return self.trigger_savepoint(target_dir, stop=True, drain=drain)

    def describe(self, timeout_s: float = 10.0) -> JobDescription:
        """A consistent snapshot of the job for the REST endpoint and the CLI (taken on the
        JobManager thread; before it runs or once the job has ended, taken directly)."""
        status = self._status.current
        if status is JobStatus.CREATED or status.is_globally_terminal_state():
            return self._describe_now()
        future: Future[JobDescription] = Future()
        self._loop.enqueue(lambda: future.set_result(self._describe_now()), "describe")
        return future.result(timeout_s)

    def _describe_now(self) -> JobDescription:
        return describe_job(self.job_id, self.job_graph, self._status.current, self._attempt_number,
                            self._attempt, self._start_wall_ms, self._coordinator.statistics(),
                            self._history.entries(), bool(self._ha and self._ha.recovered),
                            events_truncated=self._history.truncated)

    def _record(self, kind: JobEventKind, name: str, message: str) -> None:
        """An entry of the job's exception history, also logged as a warning."""
        log.warning("job %s: %s: %s", self.job_id, name, message)
        self._history.record(JobEvent(self._clock.wall_ms(), self._attempt_number, kind,
                                      name, message))

    # -- the job's lifecycle (JobManager thread) -----------------------------------------

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
        return JobResult(self.job_id, self._status.current, runtime, self._attempt_number + 1,
                         error)

    def _run_attempts(self) -> BaseException | None:
        while True:
            outcome = self._run_attempt()
            if outcome is None:
                self._finish(JobStatus.FINISHED, JobTerminalStatus.FINISHED)
                return None
            if isinstance(outcome, JobCancelledError):
                self._finish(JobStatus.CANCELED, JobTerminalStatus.CANCELED)
                return outcome
            if isinstance(outcome, LeadershipLostError):
                log.error("job %s suspended: %s", self.job_id, outcome)
                self._finish(JobStatus.SUSPENDED, JobTerminalStatus.SUSPENDED)
                return outcome
            self._set_status(JobStatus.FAILING)
            self._history.record(JobEvent(self._clock.wall_ms(), self._attempt_number,
                                          JobEventKind.ATTEMPT_FAILED,
                                          type(outcome).__name__, str(outcome),
                                          failure_traceback(outcome)))
            decision, self._decided = self._decided or self._restart.on_failure(outcome), None
            if not decision.restart:
                log.error("job %s failed for good: %s (%s)", self.job_id, describe(outcome),
                          decision.reason)
                self._finish(JobStatus.FAILED, JobTerminalStatus.FAILED)
                error = JobFailedError(self.job_graph.name, describe(outcome))
                error.__cause__ = outcome
                return error
            log.warning("job %s attempt %d failed (%s); restarting in %d ms (%s)%s",
                        self.job_id, self._attempt_number, describe(outcome),
                        decision.delay_ms, decision.reason, self._failures.log_suffix(outcome))
            self._set_status(JobStatus.RESTARTING)
            if self._wait_to_restart(decision.delay_ms / 1000.0):
                self._finish(JobStatus.CANCELED, JobTerminalStatus.CANCELED)
                return JobCancelledError(self.job_graph.name)
            if self._leadership_lost is None:  # else the next attempt suspends at once
                self._set_status(JobStatus.RUNNING)

    def _wait_to_restart(self, seconds: float) -> bool:
        """Waits out a restart delay, handling events meanwhile. Ends early when the job is
        cancelled (True) or this JobManager lost its leadership (False: no attempt starts,
        and the job is suspended now rather than after the delay)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self._cancel_requested:
                return True
            if self._leadership_lost is not None:
                return False
            self._loop.process(min(0.1, max(0.0, deadline - time.monotonic())))
        return self._cancel_requested

    def _set_status(self, status: JobStatus) -> None:
        self._status.set(status)

    def _finish(self, status: JobStatus, terminal: JobTerminalStatus) -> None:
        self._checkpoints.apply(self._coordinator.shutdown(terminal))
        self._checkpoints.fail_open_requests(JobCancelledError(f"job ended ({status.name})"))
        if self._ha is not None:
            self._ha.job_ended(status)
        self._set_status(status)

    def _confirm_commit(self, checkpoint_id: CheckpointId) -> bool:
        """Whether sinks may commit ``checkpoint_id``: with HA, only while still the leader
        (the pointer is recorded first)."""
        if self._ha is None:
            return True
        try:
            self._ha.checkpoint_completed(checkpoint_id, self.config.get(cp_options.NUM_RETAINED))
        except LeadershipLostError as exc:
            self._lose_leadership(exc)
            return False
        return True

    def _lose_leadership(self, error: LeadershipLostError) -> None:
        self._leadership_lost = self._leadership_lost or error

    def _stop(self) -> None:
        """A stop-with-savepoint's savepoint completed: its tasks finish by themselves (they
        were notified of the completion and process nothing more); the attempt ends as
        finished once they have, or at ``STOP_FINISH_WAIT_S`` at the latest."""
        self._stop_requested = True
        self._stop_deadline = time.monotonic() + STOP_FINISH_WAIT_S

    # -- one attempt ---------------------------------------------------------------------

    def _run_attempt(self) -> BaseException | None:
        """Runs one attempt to its end: None when the job finished, else why it did not."""
        if self._leadership_lost is not None:  # lost while waiting to restart: start nothing
            return self._leadership_lost
        self._attempt_number += 1
        latest = self._coordinator.restore_latest_checkpoint() or self._setup.initial_savepoint
        try:
            self._restore = plan_restore(latest, self.job_graph, self.config.get(
                execution_options.ALLOW_NON_RESTORED_STATE))
        except StateError as exc:  # the state does not fit this job: no attempt can start
            return exc
        if latest is not None:
            log.info("job %s restores checkpoint %d", self.job_id, latest.checkpoint_id)
        graph = build_execution_graph(self.job_graph, self._attempt_number)
        regions: RegionScheduler | None = None
        if is_batch(self.job_graph):
            regions = create_region_scheduler(graph, self.config.get(
                cluster_options.NUM_TASK_SLOTS), self._launcher.available_slots())
            plan: AllocationPlan = allocation_of(
                {}, (), regions.graph.groups, self.config.get(cluster_options.NUM_TASK_SLOTS),
                regions.num_task_managers)
        else:
            plan = plan_allocation_for(graph, self.config, self._launcher.available_slots())
        attempt = self._attempt = Attempt(self._attempt_number, graph, plan,
                                          started_ms=self._clock.now_ms(), regions=regions)
        payloads = [
            TaskManagerPayload(self.job_id, attempt.number, tm.index, *self.address,
                               self._secret, self.config.raw_items())
            for tm in plan.task_managers
        ]
        attempt.handle = self._launcher.launch(
            payloads, f"flintlock job {self.job_graph.name} attempt {attempt.number}")
        try:
            return self._drive(attempt)
        finally:
            self._end_attempt(attempt)

    def _drive(self, attempt: Attempt) -> BaseException | None:
        attempt.watch_task_managers(self.config, self._clock.now_ms())
        while True:
            attempt.tick_heartbeats(self._clock.now_ms())
            end = self._check(attempt)
            if end is not None:
                return end.cause
            self._loop.process(0.1)

    def _check(self, attempt: Attempt) -> _AttemptEnd | None:
        """How the attempt ended, or None while it runs; deploys once every TaskManager has
        registered."""
        now = self._clock.now_ms()
        if self._cancel_requested:
            return _AttemptEnd(JobCancelledError(self.job_graph.name))
        if self._leadership_lost is not None:
            return _AttemptEnd(self._leadership_lost)
        if self._stop_requested and (attempt.all_finished()
                                     or time.monotonic() >= self._stop_deadline):
            return _AttemptEnd(None)
        cause = attempt.root_cause(now)
        if cause is not None:
            return _AttemptEnd(cause)
        if attempt.deployed and attempt.all_finished():
            return _AttemptEnd(None)
        handle = attempt.handle
        if handle is not None and (failure := handle.failure()) is not None:
            return _AttemptEnd(failure)
        if handle is not None and handle.done() and not attempt.all_finished():
            return _AttemptEnd(AttemptFailedError("the TaskManagers ended before the job finished"))
        if not attempt.deployed:
            registration_ms = self.config.get(cluster_options.REGISTRATION_TIMEOUT)
            if len(attempt.addresses) == attempt.plan.num_task_managers:
                self._deploy(attempt)
            elif now - attempt.started_ms > registration_ms:
                return _AttemptEnd(AttemptFailedError(
                    f"only {len(attempt.addresses)} of {attempt.plan.num_task_managers} "
                    f"TaskManagers registered within {registration_ms} ms"))
        return None

    def _deploy(self, attempt: Attempt) -> None:
        if attempt.regions is None:
            deploy_tasks(attempt, self._restore, self._submission,
                         self._setup.storage.checkpoint_dir)
        else:
            with self._status.changing():
                attempt.states.update({TaskId(v.job_vertex_id, v.subtask_index):
                                       ExecutionState.CREATED for v in attempt.graph.vertices})
            self._deploy_regions(attempt, attempt.regions.start(), first=True)

        def schedule(at_ms: float, callback: Callable[[], None]) -> None:
            """Timers that die with the attempt."""
            self._loop.schedule(at_ms, lambda: callback() if self._attempt is attempt else None)

        for source in start_source_coordinators(attempt, self._restore, self._setup.enumerated,
                                                schedule, self._clock.now_ms):
            self._checkpoints.apply(self._coordinator.on_task_state_changed(source.task, True))

    def _deploy_regions(self, attempt: Attempt, deployments: list[DeployRegion],
                        first: bool = False) -> None:
        with self._status.changing():
            deploy_regions(attempt, deployments, self._restore, self._submission,
                           self._setup.storage.checkpoint_dir, first)

    # -- region failover (BATCH) ---------------------------------------------------------

    def _fail_over_region(self, attempt: Attempt, task: TaskId, failure: BaseException) -> bool:
        """Restarts ``task``'s region (see ``region_failover``) if it can and the restart
        strategy allows; False: the attempt fails as a whole."""
        restart = region_failover.region_restart(attempt, task, failure, 0.0)
        if restart is None:
            return False
        decision = self._restart.on_failure(failure)
        if not decision.restart:
            self._decided = decision
            return False
        restart.not_before_ms = self._clock.now_ms() + decision.delay_ms
        attempt.region_restart = restart
        self._history.record(JobEvent(
            self._clock.wall_ms(), self._attempt_number, JobEventKind.REGION_RESTARTED,
            type(failure).__name__, f"{failure} (task {task}; {len(restart.regions)} "
            f"pipelined region(s) restart, the others keep their results)"))
        log.warning("job %s: task %s failed (%s); restarting %d pipelined region(s) in %d ms "
                    "(%s)", self.job_id, task, describe(failure), len(restart.regions),
                    decision.delay_ms, decision.reason)
        region_failover.cancel_running(attempt, restart)
        self._loop.schedule(restart.not_before_ms, lambda: self._redeploy_regions(attempt))
        self._redeploy_regions(attempt)
        return True

    def _redeploy_regions(self, attempt: Attempt) -> None:
        """Deploys the restarting regions again once their subtasks ended and the delay
        passed (called at the delay and at every end the restart waited for)."""
        if attempt is not self._attempt or attempt.ended or attempt.regions is None:
            return
        restart = region_failover.due(attempt, self._clock.now_ms())
        if restart is None:
            return
        region_failover.give_back_splits(attempt, restart)
        with self._status.changing():
            for vertex in attempt.regions.subtasks(restart.regions):
                attempt.states[TaskId(vertex.job_vertex_id, vertex.subtask_index)] = (
                    ExecutionState.CREATED)
        self._deploy_regions(attempt, attempt.regions.restarted(restart.regions))

    def _end_attempt(self, attempt: Attempt) -> None:
        attempt.ended = True
        for source in attempt.sources.values():
            source.close()
        self._checkpoints.apply(self._coordinator.on_failover())
        attempt.release()

    # -- checkpointing -------------------------------------------------------------------

    def _start_checkpointing_once_started(self, attempt: Attempt) -> None:
        """Periodic checkpoints begin once every subtask has reached RUNNING. A subtask that
        already FINISHED counts: a source restored as finished ends at once, possibly before
        the others report RUNNING, and requiring RUNNING of all at the same moment would then
        never start checkpointing for the attempt (so a bounded source could never take its
        final checkpoint, and two-phase-commit sinks would never commit again)."""
        if attempt.checkpointing_started or not attempt.all_started():
            return
        if attempt.all_finished():
            return  # nothing left to checkpoint: the job is ending
        attempt.checkpointing_started = True
        self._checkpoints.apply(self._coordinator.start())

    def _on_cancel_request(self) -> None:
        if self._status.current.is_globally_terminal_state():
            return
        self._cancel_requested = True
        self._set_status(JobStatus.CANCELLING)
