"""Carrying out the checkpoint coordinator's decisions on the JobManager thread.

``CheckpointCoordinator`` decides and returns actions (``coordinator_actions``); this class
does them: triggers and notifications go to the TaskManagers of the current attempt (a
notification once per TaskManager, which passes it to all its subtasks), the source
coordinators' part of a checkpoint is taken right before the first trigger goes out, timers
are scheduled on the JobManager's event loop, and savepoint requests are answered. Before the
first notification of a completed checkpoint goes out (which is when two-phase-commit sinks
commit), ``before_commit`` may veto it: a JobManager that lost its high-availability
leadership must not let anything commit.

Thread ownership: the JobManager thread only, like the coordinator it drives.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from flintlock.common.ids import CheckpointId
from flintlock.runtime import messages as msg
from flintlock.runtime.checkpoint import coordinator_actions as actions
from flintlock.runtime.checkpoint.coordinator import CheckpointCoordinator
from flintlock.runtime.enumerators import is_coordinator_task
from flintlock.runtime.jobmanager.attempt import Attempt
from flintlock.runtime.jobmanager.event_loop import EventLoop


class CheckpointActions:
    def __init__(self, coordinator: CheckpointCoordinator, loop: EventLoop,
                 current_attempt: Callable[[], Attempt | None],
                 on_stop_savepoint: Callable[[], None],
                 before_commit: Callable[[CheckpointId], bool] = lambda checkpoint_id: True
                 ) -> None:
        self.coordinator = coordinator
        self._before_commit = before_commit
        self._vetoed: set[CheckpointId] = set()
        self._loop = loop
        self._current = current_attempt
        self._on_stop_savepoint = on_stop_savepoint
        self._savepoint_requests: dict[str, Future[str]] = {}
        self._stop_after_savepoint: set[str] = set()

    # -- savepoint requests --------------------------------------------------------------

    def request_savepoint(self, request_id: str, future: Future[str], target_dir: str | None,
                          stop: bool, drain: bool = False) -> None:
        self._savepoint_requests[request_id] = future
        if stop:
            self._stop_after_savepoint.add(request_id)
        self.apply(self.coordinator.trigger_savepoint(request_id, target_dir, stop, drain))

    def fail_open_requests(self, error: BaseException) -> None:
        for future in self._savepoint_requests.values():
            if not future.done():
                future.set_exception(error)

    # -- actions -------------------------------------------------------------------------

    def apply(self, todo: list[Any]) -> None:
        """Carries out ``todo`` in order; notifications go once per TaskManager."""
        notified: set[tuple[type, CheckpointId, int]] = set()
        for action in todo:
            if isinstance(action, actions.NotifyCheckpointComplete) and self._veto(
                    action.checkpoint_id, notified):
                continue
            if isinstance(action, (actions.NotifyCheckpointComplete,
                                   actions.NotifyCheckpointAborted)):
                self._notify(action, notified)
            elif isinstance(action, actions.TriggerCheckpointOnTask):
                self._trigger(action)
            elif isinstance(action, actions.ScheduleTimeout):
                self._schedule_timeout(action.checkpoint_id, action.at_ms)
            elif isinstance(action, actions.ScheduleNextTrigger):
                self._loop.schedule(action.at_ms,
                                    lambda: self.apply(self.coordinator.on_periodic_tick()))
            elif isinstance(action, actions.FailJob):
                attempt = self._current()
                if attempt is not None:
                    attempt.failure = action.cause
                    attempt.failure_is_consequence = False
            elif isinstance(action, actions.CompleteSavepointRequest):
                self._complete_savepoint(action.request_id, action.path)
            elif isinstance(action, actions.FailSavepointRequest):
                self._fail_savepoint(action.request_id, action.error)

    def _veto(self, checkpoint_id: CheckpointId,
              notified: set[tuple[type, CheckpointId, int]]) -> bool:
        """Asks ``before_commit`` once per completed checkpoint; True: notify nobody."""
        if checkpoint_id in self._vetoed:
            return True
        if any(kind is actions.NotifyCheckpointComplete and n == checkpoint_id
               for kind, n, _ in notified):
            return False
        if not self._before_commit(checkpoint_id):
            self._vetoed.add(checkpoint_id)
            return True
        notified.add((actions.NotifyCheckpointComplete, checkpoint_id, -1))
        return False

    def _schedule_timeout(self, checkpoint_id: CheckpointId, at_ms: float) -> None:
        self._loop.schedule(at_ms, lambda: self.apply(self.coordinator.on_timeout(checkpoint_id)))

    def _trigger(self, action: actions.TriggerCheckpointOnTask) -> None:
        attempt = self._current()
        if attempt is None:
            return
        if action.checkpoint_id not in attempt.snapshotted:  # the checkpoint's first trigger
            attempt.snapshotted.add(action.checkpoint_id)
            self._snapshot_source_coordinators(attempt, action.checkpoint_id)
            if action.options.is_savepoint:  # once per TaskManager, before any barrier
                attempt.broadcast(msg.CheckpointLocation(attempt.number, action.checkpoint_id,
                                                         action.location))
        if attempt.deployed:
            attempt.send(attempt.task_manager_of(action.task), msg.TriggerCheckpoint(
                attempt.number, action.task, action.checkpoint_id, action.timestamp,
                action.options))

    def _notify(self, action: Any, notified: set[tuple[type, CheckpointId, int]]) -> None:
        attempt = self._current()
        if attempt is None or not attempt.deployed:
            return
        if is_coordinator_task(action.task):
            source = attempt.sources.get(action.task.vertex)
            if source is not None and isinstance(action, actions.NotifyCheckpointComplete):
                source.notify_checkpoint_complete(action.checkpoint_id)
            return
        tm_index = attempt.task_manager_of(action.task)
        key = (type(action), action.checkpoint_id, tm_index)
        if key in notified:
            return
        notified.add(key)
        if isinstance(action, actions.NotifyCheckpointComplete):
            attempt.send(tm_index, msg.NotifyCheckpointComplete(
                attempt.number, action.checkpoint_id, action.in_flight_data))
        else:
            attempt.send(tm_index, msg.NotifyCheckpointAborted(attempt.number,
                                                              action.checkpoint_id))

    def _snapshot_source_coordinators(self, attempt: Attempt,
                                      checkpoint_id: CheckpointId) -> None:
        """The enumerators' part of a checkpoint: taken, and acknowledged, right before the
        first trigger goes out (see ``enumerators``)."""
        for source in attempt.sources.values():
            state = source.snapshot(checkpoint_id)
            self.apply(self.coordinator.receive_acknowledge(
                source.task, checkpoint_id, state))

    def _complete_savepoint(self, request_id: str, path: str) -> None:
        future = self._savepoint_requests.pop(request_id, None)
        if future is not None and not future.done():
            future.set_result(path)
        if request_id in self._stop_after_savepoint:
            self._stop_after_savepoint.discard(request_id)
            self._on_stop_savepoint()

    def _fail_savepoint(self, request_id: str, error: BaseException) -> None:
        future = self._savepoint_requests.pop(request_id, None)
        if request_id in self._stop_after_savepoint:
            self._stop_after_savepoint.discard(request_id)
            self.apply(self.coordinator.resume_periodic())
        if future is not None and not future.done():
            future.set_exception(error)
