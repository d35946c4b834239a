"""The JobManager's RPC side: what each message from a TaskManager does.

``JobManagerRpc(job_manager).dispatcher()`` is the ``MessageDispatcher`` of the JobManager's
RPC server. Registration is answered on the dispatcher thread once the JobManager's event
loop has handled it; every other message (task states, checkpoint acks and declines,
heartbeats, collected results) becomes an event of that loop, and counts only for the
attempt it was sent by (``_if_current``). Handlers run on the event loop's thread and own
what the ``JobManager`` owns there.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from flintlock.graph.region_scheduling import DeployRegion, ReleaseResults
from flintlock.runtime import messages as msg
from flintlock.runtime.execution_state import ExecutionState
from flintlock.runtime.jobmanager import region_failover
from flintlock.runtime.jobmanager.attempt import register_task_manager
from flintlock.runtime.jobmanager.deployment import release_results
from flintlock.runtime.jobmanager.errors import AttemptFailedError, note_failed_task
from flintlock.runtime.rpc import MessageDispatcher, RpcConnection

if TYPE_CHECKING:
    from flintlock.runtime.jobmanager.job_manager import JobManager

log = logging.getLogger(__name__)

REGISTER_REPLY_S = 30.0
"""How long a registering TaskManager waits for the event loop's answer."""


class JobManagerRpc:
    """The handlers of one JobManager's RPC messages (module docstring)."""

    def __init__(self, job_manager: JobManager) -> None:
        self._jm = job_manager

    def dispatcher(self) -> MessageDispatcher:
        d = MessageDispatcher()
        d.register(msg.RegisterTaskManager, self._on_register)
        for kind, handler, after_end in (
            (msg.TaskStateUpdate, self._on_task_state, False),
            (msg.AcknowledgeCheckpoint, self._on_ack, True),  # late: state discarded
            (msg.DeclineCheckpoint, self._on_decline, True),
            (msg.Heartbeat, self._on_heartbeat, True),
            (msg.CollectBatch, self._jm._collect.deliver, True),
        ):
            d.register(kind, self._deferred(handler, after_end))
        install = getattr(self._jm._launcher, "install", None)
        if install is not None:
            install(d)
        return d

    def _deferred(
        self, handler: Callable[[Any], None], after_end: bool,
    ) -> Callable[[RpcConnection, Any], None]:
        def enqueue(connection: RpcConnection, message: Any) -> None:
            self._jm._loop.enqueue(lambda: self._if_current(message, handler, after_end),
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
        attempt = self._jm._attempt
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
            reply.append(register_task_manager(self._jm._attempt, connection, message,
                                               self._jm._clock.now_ms()))
            done.set()

        self._jm._loop.enqueue(register, "register")
        if not done.wait(REGISTER_REPLY_S):
            return msg.Registered(False, "the JobManager is busy")
        return reply[0]

    def _on_heartbeat(self, message: msg.Heartbeat) -> None:
        attempt = self._jm._attempt
        assert attempt is not None
        attempt.heard_from(message.tm_index, self._jm._clock.now_ms())
        attempt.times.update(message.tasks)
        self._jm.output.add(attempt.number, message.tm_index, message.logs, message.stdout)

    def _on_task_state(self, message: msg.TaskStateUpdate) -> None:
        attempt = self._jm._attempt
        assert attempt is not None
        log.debug("attempt %d: task %s is %s", attempt.number, message.task, message.state)
        with self._jm._status.changing():
            attempt.states[message.task] = message.state
        if message.state.is_terminal and region_failover.subtask_ended(attempt, message.task):
            self._jm._redeploy_regions(attempt)  # a restarting region's subtask ended
            return
        coordinator = self._jm._coordinator
        if message.state is ExecutionState.RUNNING:
            source = attempt.sources.get(message.task.vertex)
            if source is not None:
                source.add_reader(int(message.task.subtask))
            self._jm._checkpoints.apply(coordinator.on_task_state_changed(message.task, True))
            self._jm._start_checkpointing_once_started(attempt)
        elif message.state is ExecutionState.FINISHED:
            self._jm._checkpoints.apply(coordinator.on_task_finished(message.task))
            self._jm._start_checkpointing_once_started(attempt)
            if attempt.regions is not None:
                actions = attempt.regions.subtask_finished(attempt.vertex_of(message.task))
                release_results(attempt, [a for a in actions if isinstance(a, ReleaseResults)])
                self._jm._deploy_regions(
                    attempt, [a for a in actions if isinstance(a, DeployRegion)])
        elif message.state in (ExecutionState.FAILED, ExecutionState.CANCELED) and not (
                self._jm._cancel_requested or self._jm._stop_requested):
            cause = message.error.to_exception() if message.error else None
            failure = cause or AttemptFailedError(
                f"task {message.task} {message.state.value}")
            if cause is not None and not message.consequence:
                note_failed_task(cause, self._jm.job_graph, message.task)
            if self._jm._fail_over_region(attempt, message.task, failure):
                return
            attempt.record_failure(failure, message.consequence, self._jm._clock.now_ms())

    def _on_ack(self, message: msg.AcknowledgeCheckpoint) -> None:
        self._jm._checkpoints.apply(self._jm._coordinator.receive_acknowledge(
            message.task, message.checkpoint_id, message.state, message.metrics))

    def _on_decline(self, message: msg.DeclineCheckpoint) -> None:
        cause = message.error.to_exception() if message.error else None
        self._jm._checkpoints.apply(self._jm._coordinator.receive_decline(
            message.task, message.checkpoint_id, message.reason, cause))
