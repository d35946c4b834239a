"""The checkpoint coordinator: decides when checkpoints start, complete and fail (DESIGN.md §5).

An I/O-free decision core (STYLE.md §2): each public method takes one fact — a timer fired,
a task acknowledged, a task declined, a task stopped running — and returns the list of
``coordinator_actions`` the driver in the JobManager carries out in order. The only I/O done
is through the injected ``CheckpointStorage`` (creating a checkpoint's directory) and, in
``finalization``, the ``CompletedCheckpointStore`` (writing ``_metadata``), both synchronous.

Its parts: ``coordinator_settings`` (the task sets and options), ``trigger_timing`` (when the
next checkpoint may start), ``requests`` (the queue), ``finalization`` (a completed checkpoint
made durable), ``stray_acks`` (acks that complete nothing), ``failure_manager`` and ``stats``.

Life of a checkpoint:

1. A request (periodic tick, manual checkpoint, savepoint) enters a bounded priority queue
   (``requests``): savepoints first. The head runs when, in this order, the coordinator is
   not shut down; fewer than ``max-concurrent-checkpoints`` checkpoints are pending; at
   least ``min-pause`` passed since the last completion; every task to trigger and to ack is
   RUNNING. Savepoints skip the two middle checks. A request blocked by the concurrency
   limit or the pause waits in the queue (the pause arms the trigger timer for when it
   ends); one whose tasks are not running is refused with NOT_ALL_REQUIRED_TASKS_RUNNING.
2. Trigger: a new id (strictly greater than every id used before, also by earlier
   drivers: the store reports the highest), a ``PendingCheckpoint``, a timeout, and a
   ``TriggerCheckpointOnTask`` for every source subtask.
3. Acks collect states. Unknown/late acks have their state discarded; a decline, the
   timeout, a task leaving RUNNING or a shutdown aborts the checkpoint (its states and
   directory are discarded, every task is told).
4. The last ack completes it: the ``CompletedCheckpoint`` is written (checkpoints into the
   store, savepoints into their own directory); only then are older pending checkpoints
   subsumed and every task notified complete — two-phase-commit sinks commit then.

Counted failures go to the ``CheckpointFailureManager``; too many in a row → ``FailJob``.

Tasks are ``TaskId`` (job vertex, subtask index) pairs, see ``pending``.

Thread ownership: not synchronised. The driver calls every method from one thread (the
JobManager's coordinator thread) and owns the timers.
"""

from __future__ import annotations

import logging
import random

from flintlock.common.clock import Clock
from flintlock.common.config import Configuration
from flintlock.common.ids import NO_CHECKPOINT, CheckpointId, JobId
from flintlock.runtime.checkpoint.completed import CompletedCheckpoint, JobTerminalStatus
from flintlock.runtime.checkpoint.coordinator_actions import (
    CompleteCheckpointRequest,
    CompleteSavepointRequest,
    CoordinatorAction,
    FailCheckpointRequest,
    FailJob,
    FailSavepointRequest,
    NotifyCheckpointAborted,
    NotifyCheckpointComplete,
    ScheduleNextTrigger,
    ScheduleTimeout,
    TriggerCheckpointOnTask,
)
from flintlock.runtime.checkpoint.coordinator_settings import (
    CheckpointTaskSets,
    CoordinatorSettings,
)
from flintlock.runtime.checkpoint.failure import CheckpointError, CheckpointFailureReason
from flintlock.runtime.checkpoint.failure_manager import CheckpointFailureManager
from flintlock.runtime.checkpoint.finalization import (
    completed_checkpoint,
    discard_unstored,
    persist,
)
from flintlock.runtime.checkpoint.finished import FINISHED_TASK
from flintlock.runtime.checkpoint.metadata import resolve_savepoint
from flintlock.runtime.checkpoint.pending import AckResult, PendingCheckpoint, SubtaskState, TaskId
from flintlock.runtime.checkpoint.requests import (
    DEFAULT_MAX_QUEUED_REQUESTS,
    CheckpointRequest,
    CheckpointRequestQueue,
    RequestKind,
    savepoint_type,
)
from flintlock.runtime.checkpoint.stats import (
    DEFAULT_STATS_HISTORY,
    NO_METRICS,
    CheckpointStatistics,
    CheckpointStatsTracker,
    SubtaskCheckpointMetrics,
)
from flintlock.runtime.checkpoint.storage import CheckpointStorage, CheckpointStorageLocation
from flintlock.runtime.checkpoint.store import CompletedCheckpointStore
from flintlock.runtime.checkpoint.stray_acks import StrayAcks
from flintlock.runtime.checkpoint.trigger_timing import TriggerTiming

log = logging.getLogger(__name__)

Actions = list[CoordinatorAction]


class CheckpointCoordinator:
    """Triggers checkpoints, collects acks, completes or aborts (see module docstring)."""

    def __init__(
        self,
        job_id: JobId,
        config: Configuration,
        tasks: CheckpointTaskSets,
        storage: CheckpointStorage,
        store: CompletedCheckpointStore,
        clock: Clock,
        rng: random.Random,
        *,
        last_checkpoint_id: CheckpointId = NO_CHECKPOINT,
        max_queued_requests: int = DEFAULT_MAX_QUEUED_REQUESTS,
        stats_history_size: int = DEFAULT_STATS_HISTORY,
    ) -> None:
        self.job_id = job_id
        self.settings = CoordinatorSettings.from_config(config)
        self.tasks = tasks
        self._storage = storage
        self._store = store
        self._clock = clock
        self._rng = rng
        self._failures = CheckpointFailureManager(self.settings.tolerable_failures)
        self._stats = CheckpointStatsTracker(stats_history_size)
        self._queue = CheckpointRequestQueue(max_queued_requests)
        self._pending: dict[CheckpointId, PendingCheckpoint] = {}
        self._locations: dict[CheckpointId, CheckpointStorageLocation] = {}
        self._stray_acks = StrayAcks(store)
        self._running: set[TaskId] = set()
        self._finished: set[TaskId] = set()
        self._next_id = max(last_checkpoint_id, store.highest_checkpoint_id) + 1
        self._timing = TriggerTiming(self.settings, clock)
        self._stopping = False  # a stop-with-savepoint is under way: checkpoints refused
        self._shut_down = False

    # -- queries ------------------------------------------------------------------------

    @property
    def pending_checkpoints(self) -> dict[CheckpointId, PendingCheckpoint]:
        return dict(self._pending)

    @property
    def next_checkpoint_id(self) -> CheckpointId:
        return CheckpointId(self._next_id)

    @property
    def is_shut_down(self) -> bool:
        return self._shut_down

    @property
    def queued_requests(self) -> int:
        return len(self._queue)

    def statistics(self) -> CheckpointStatistics:
        return self._stats.snapshot()

    def restore_latest_checkpoint(self) -> CompletedCheckpoint | None:
        """The checkpoint a (re)start restores from (the store's latest); recorded in the
        statistics. The caller assigns its task states to the new execution attempt."""
        latest = self._store.latest()
        if latest is not None:
            self._stats.report_restored(latest.checkpoint_id)
        return latest

    def restore_savepoint(self, path: str) -> CompletedCheckpoint:
        """Restore from a savepoint or retained checkpoint (its directory or ``_metadata``).

        It joins the store (never deleted by it) so a failover before the first new
        checkpoint restores it again, and new checkpoint ids continue after its id.
        Raises ``CorruptStateError`` for a damaged or missing one.
        """
        checkpoint = resolve_savepoint(path)
        self._store.add_restored(checkpoint)
        self._next_id = max(self._next_id, checkpoint.checkpoint_id + 1)
        self._stats.report_restored(checkpoint.checkpoint_id)
        return checkpoint

    # -- facts from the driver ----------------------------------------------------------

    def start(self) -> Actions:
        """Begin periodic checkpointing: the first one after a random delay in
        [min-pause, interval] (so restarted jobs do not all checkpoint in step)."""
        if not self.settings.periodic or self._shut_down or self._stopping:
            return []
        self._timing.start_periodic(self._rng)
        return self._reschedule()

    def on_periodic_tick(self) -> Actions:
        """The trigger timer fired."""
        self._timing.timer_fired()
        actions: Actions = []
        if self._timing.periodic_is_due() and not self._queue.has_periodic:
            actions += self._enqueue(self._queue.new_request(RequestKind.PERIODIC))
        return actions + self._drain() + self._reschedule()

    def trigger_checkpoint(self, manual: bool = True, request_id: str | None = None) -> Actions:
        """Ask for a checkpoint now (``manual``) or as the periodic scheduler would."""
        kind = RequestKind.MANUAL if manual else RequestKind.PERIODIC
        actions = self._enqueue(self._queue.new_request(kind, request_id))
        return actions + self._drain() + self._reschedule()

    def trigger_savepoint(self, request_id: str, target_dir: str | None = None,
                          stop: bool = False, drain: bool = False) -> Actions:
        """Ask for a savepoint into ``target_dir`` (default: the configured savepoint dir).
        With ``stop`` (stop with a savepoint) the periodic scheduler stops first and every
        checkpoint is refused from now on: one triggered after the savepoint could complete
        before the job ends and commit output the savepoint does not hold, which a resume
        from the savepoint would then write again. ``resume_periodic`` undoes it if the
        savepoint fails. A stop's savepoint is synchronous (``savepoint_type``; ``drain``: the
        sources end their input first; docs/internals/subtask-checkpoints.md)."""
        if stop:
            self._stopping = True
            self._timing.stop_periodic()
        kind = savepoint_type(stop, drain)
        request = self._queue.new_request(RequestKind.SAVEPOINT, request_id, target_dir, kind)
        return self._enqueue(request) + self._drain() + self._reschedule()

    def resume_periodic(self) -> Actions:
        """The stop-with-savepoint failed: the job runs on, and so do its checkpoints."""
        self._stopping = False
        return self.start()

    def on_task_state_changed(self, task: TaskId, running: bool) -> Actions:
        """A task became RUNNING, or left it (finished, failed, cancelled). Queued requests
        are retried once every task is running again (not at the first one back)."""
        if running:
            self._running.add(task)
            if self._all_tasks_running():
                return self._drain() + self._reschedule()
            return []
        self._running.discard(task)
        actions: Actions = []
        for pending in self._pending_in_order():
            if task in pending.not_yet_acknowledged:
                actions += self._abort(pending, CheckpointFailureReason.TASK_FAILURE, str(task))
        return actions + self._drain() + self._reschedule()

    def on_task_finished(self, task: TaskId) -> Actions:
        """``task`` ended for good, after its final checkpoint (see ``finished``): later
        checkpoints neither trigger it nor wait for it, and record it as finished; pending
        checkpoints it has not acknowledged take the finished marker as its ack."""
        self._finished.add(task)
        self._running.discard(task)
        actions: Actions = []
        for pending in self._pending_in_order():
            if task in pending.not_yet_acknowledged:
                actions += self.receive_acknowledge(task, pending.checkpoint_id, FINISHED_TASK)
        return actions + self._drain() + self._reschedule()

    def receive_acknowledge(
        self,
        task: TaskId,
        checkpoint_id: CheckpointId,
        subtask_state: SubtaskState | None,
        metrics: SubtaskCheckpointMetrics = NO_METRICS,
    ) -> Actions:
        pending = self._pending.get(checkpoint_id)
        if pending is None:
            self._stray_acks.not_pending(task, checkpoint_id, subtask_state)
            return []
        result = pending.acknowledge(task, subtask_state)
        if result is not AckResult.SUCCESS:
            self._stray_acks.refused(pending, task, result, subtask_state)
            return []
        size = subtask_state.state_size if subtask_state is not None else 0
        written = getattr(subtask_state, "checkpointed_size", None)
        self._stats.report_ack(checkpoint_id, task, self._clock.now_ms(), size, metrics, written)
        if not pending.is_fully_acknowledged:
            return []
        return self._complete(pending) + self._drain() + self._reschedule()

    def receive_decline(
        self,
        task: TaskId,
        checkpoint_id: CheckpointId,
        reason: CheckpointFailureReason = CheckpointFailureReason.CHECKPOINT_DECLINED,
        cause: BaseException | str | None = None,
    ) -> Actions:
        pending = self._pending.get(checkpoint_id)
        if pending is None:
            log.info("decline from %s for checkpoint %d, which is not pending", task, checkpoint_id)
            return []
        detail = f"declined by {task}" + (f": {cause}" if cause is not None else "")
        return self._abort(pending, reason, detail) + self._drain() + self._reschedule()

    def on_timeout(self, checkpoint_id: CheckpointId) -> Actions:
        pending = self._pending.get(checkpoint_id)
        if pending is None:
            return []
        detail = f"after {self.settings.timeout_ms} ms"
        actions = self._abort(pending, CheckpointFailureReason.CHECKPOINT_EXPIRED, detail)
        return actions + self._drain() + self._reschedule()

    def on_failover(self) -> Actions:
        """The job is restarting: abort what is pending; tasks must report RUNNING again."""
        actions: Actions = []
        for pending in self._pending_in_order():
            actions += self._abort(pending, CheckpointFailureReason.JOB_FAILOVER_REGION)
        self._running.clear()
        self._finished.clear()
        return actions

    def shutdown(self, status: JobTerminalStatus | None = None) -> Actions:
        """Stop for good: abort pending checkpoints, refuse queued requests; with a terminal
        ``status`` also let the store delete what the retention policy allows."""
        if self._shut_down:
            return []
        self._shut_down = True
        reason = CheckpointFailureReason.CHECKPOINT_COORDINATOR_SHUTDOWN
        actions: Actions = []
        for pending in self._pending_in_order():
            actions += self._abort(pending, reason)
        for request in self._queue.drain():
            actions += self._refuse(request, reason)
        self._timing.stop_periodic()
        if status is not None:
            self._store.shutdown(status)
        return actions

    # -- requests and triggering --------------------------------------------------------

    def _enqueue(self, request: CheckpointRequest) -> Actions:
        if self._shut_down:
            return self._refuse(request, CheckpointFailureReason.CHECKPOINT_COORDINATOR_SHUTDOWN)
        refused = self._queue.offer(request)
        if refused is None:
            return []
        return self._refuse(refused, CheckpointFailureReason.TOO_MANY_CHECKPOINT_REQUESTS)

    def _drain(self) -> Actions:
        actions: Actions = []
        while (request := self._queue.peek()) is not None and not self._shut_down:
            if not request.is_savepoint and (
                    self._timing.blocked_until(self._num_pending_checkpoints()) is not None):
                break
            self._queue.poll()
            actions += self._trigger(request)
        return actions

    def _all_tasks_running(self) -> bool:
        return (self.tasks.to_trigger | self.tasks.to_ack) <= self._running | self._finished

    def _num_pending_checkpoints(self) -> int:
        return sum(1 for p in self._pending.values() if not p.is_savepoint)

    def _trigger(self, request: CheckpointRequest) -> Actions:
        if self._stopping and not request.is_savepoint:
            return self._refuse(request, CheckpointFailureReason.PERIODIC_SCHEDULER_SHUTDOWN,
                                "the job stops with a savepoint")
        now = self._clock.now_ms()
        if request.is_periodic:
            self._timing.periodic_triggered(now)
        missing = (self.tasks.to_trigger | self.tasks.to_ack) - self._running - self._finished
        if missing or self.tasks.to_trigger <= self._finished:
            detail = (f"{len(missing)} not running, e.g. {min(missing)}" if missing
                      else "every source task has finished")
            return self._refuse(request, CheckpointFailureReason.NOT_ALL_REQUIRED_TASKS_RUNNING,
                                detail)
        checkpoint_id = CheckpointId(self._next_id)
        self._next_id += 1
        self._store.note_checkpoint_id(checkpoint_id)
        try:
            location = self._init_location(checkpoint_id, request)
        except Exception as exc:
            log.warning("could not create the location of checkpoint %d", checkpoint_id,
                        exc_info=True)
            return self._refuse(request, CheckpointFailureReason.IO_EXCEPTION, _describe(exc))
        return self._start_pending(checkpoint_id, request, location, now)

    def _init_location(
        self, checkpoint_id: CheckpointId, request: CheckpointRequest
    ) -> CheckpointStorageLocation:
        if request.is_savepoint:
            return self._storage.init_savepoint(checkpoint_id, request.target_dir)
        return self._storage.init_checkpoint(checkpoint_id)

    def _start_pending(
        self, checkpoint_id: CheckpointId, request: CheckpointRequest,
        location: CheckpointStorageLocation, now: float,
    ) -> Actions:
        timestamp = self._clock.wall_ms()
        options = self.settings.options_for(request.checkpoint_type)
        pending = PendingCheckpoint(checkpoint_id, timestamp, now, options, self.tasks.to_ack,
                                    request.request_id, request.is_periodic)
        for task in self._finished & self.tasks.to_ack:
            pending.acknowledge(task, FINISHED_TASK)
        self._pending[checkpoint_id] = pending
        self._locations[checkpoint_id] = location
        self._stats.report_triggered(checkpoint_id, pending.is_savepoint, timestamp, now,
                                     len(self.tasks.to_ack))
        log.info("triggering %r at %s", pending, location.uri)
        actions: Actions = [ScheduleTimeout(checkpoint_id, now + self.settings.timeout_ms)]
        actions += [
            TriggerCheckpointOnTask(task, checkpoint_id, timestamp, options, location.uri)
            for task in sorted(self.tasks.to_trigger - self._finished)
        ]
        return actions

    def _refuse(
        self, request: CheckpointRequest, reason: CheckpointFailureReason, detail: str = ""
    ) -> Actions:
        log.info("checkpoint request %s refused: %s %s", request.kind.name, reason.name, detail)
        self._stats.report_refused(reason)
        actions = self._fail_request(request.request_id, request.is_savepoint, reason, detail)
        error = self._failures.on_failure(reason, None, request.is_savepoint, detail)
        return actions + ([FailJob(error)] if error is not None else [])

    @staticmethod
    def _fail_request(
        request_id: str | None, savepoint: bool, reason: CheckpointFailureReason, detail: str
    ) -> Actions:
        if request_id is None:
            return []
        error = CheckpointError(reason, detail)
        if savepoint:
            return [FailSavepointRequest(request_id, error)]
        return [FailCheckpointRequest(request_id, error)]

    def _reschedule(self) -> Actions:
        """Arm the trigger timer for the earliest moment something may need to start."""
        if self._shut_down:
            return []
        at = self._timing.next_timer(self._queue, self._num_pending_checkpoints())
        return [] if at is None else [ScheduleNextTrigger(at)]

    # -- completion and abortion --------------------------------------------------------

    def _complete(self, pending: PendingCheckpoint) -> Actions:
        location = self._locations.pop(pending.checkpoint_id)
        del self._pending[pending.checkpoint_id]
        completed = completed_checkpoint(self.job_id, pending, location,
                                         self.settings.properties, self._clock.wall_ms())
        try:
            persist(completed, self._store)
        except Exception as exc:
            log.error("could not store %s", completed, exc_info=True)
            discard_unstored(completed, location)
            reason = CheckpointFailureReason.FINALIZE_CHECKPOINT_FAILURE
            return self._failed(pending, reason, _describe(exc))
        return self._completed(pending, completed)

    def _completed(self, pending: PendingCheckpoint, completed: CompletedCheckpoint) -> Actions:
        checkpoint_id = completed.checkpoint_id
        now = self._clock.now_ms()
        self._timing.completed(now)
        self._stray_acks.completed(checkpoint_id)
        self._stats.report_completed(checkpoint_id, now, completed.location)
        log.info("completed %s (%d bytes)", completed, completed.state_size)
        actions: Actions = []
        if not completed.is_savepoint:
            self._failures.on_success(checkpoint_id)
            for older in self._pending_in_order():
                if older.checkpoint_id < checkpoint_id and not older.is_savepoint:
                    actions += self._abort(older, CheckpointFailureReason.CHECKPOINT_SUBSUMED)
        commit = sorted(self.tasks.to_commit)
        in_flight = completed.holds_channel_state
        actions += [NotifyCheckpointComplete(t, checkpoint_id, in_flight) for t in commit]
        if pending.request_id is not None:
            if completed.is_savepoint:
                actions.append(CompleteSavepointRequest(pending.request_id, completed.location))
            else:
                actions.append(
                    CompleteCheckpointRequest(pending.request_id, checkpoint_id, completed.location)
                )
        return actions

    def _abort(
        self, pending: PendingCheckpoint, reason: CheckpointFailureReason, detail: str = ""
    ) -> Actions:
        checkpoint_id = pending.checkpoint_id
        log.info("aborting %r: %s %s", pending, reason.name, detail)
        pending.abort(reason)
        del self._pending[checkpoint_id]
        location = self._locations.pop(checkpoint_id)
        try:
            location.dispose()
        except Exception:
            log.warning("could not delete %s", location.uri, exc_info=True)
        return self._failed(pending, reason, detail)

    def _failed(
        self, pending: PendingCheckpoint, reason: CheckpointFailureReason, detail: str
    ) -> Actions:
        checkpoint_id = pending.checkpoint_id
        self._stats.report_failed(checkpoint_id, self._clock.now_ms(), reason, detail)
        actions: Actions = [
            NotifyCheckpointAborted(t, checkpoint_id, reason) for t in sorted(self.tasks.to_commit)
        ]
        actions += self._fail_request(pending.request_id, pending.is_savepoint, reason, detail)
        error = self._failures.on_failure(reason, checkpoint_id, pending.is_savepoint, detail)
        return actions + ([FailJob(error)] if error is not None else [])

    def _pending_in_order(self) -> list[PendingCheckpoint]:
        return [self._pending[c] for c in sorted(self._pending)]


def _describe(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"
