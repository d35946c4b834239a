"""Deploying an attempt once its TaskManagers registered: each TaskManager gets its subtasks
with the state they restore, and the job's enumerated sources get their coordinators.

Runs on the JobManager thread, like the ``Attempt`` it changes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from flintlock.common.ids import JobVertexId, SubtaskIndex
from flintlock.runtime import messages as msg
from flintlock.runtime.checkpoint.pending import TaskId
from flintlock.runtime.enumerators import EnumeratorState, SourceCoordinator, SplitAssignment
from flintlock.runtime.execution_state import ExecutionState
from flintlock.runtime.jobmanager.attempt import Attempt
from flintlock.runtime.jobmanager.restore_plan import RestorePlan
from flintlock.runtime.jobmanager.submission import Submission

log = logging.getLogger(__name__)

Schedule = Callable[[float, Callable[[], None]], None]


def deploy_tasks(attempt: Attempt, restore: RestorePlan, submission: Submission,
                 checkpoint_dir: str) -> None:
    """Sends every TaskManager its subtasks; they all count as DEPLOYING from now."""
    for tm in attempt.plan.task_managers:
        mine = {TaskId(v.job_vertex_id, SubtaskIndex(v.subtask_index)): restore.states.get(
                    TaskId(v.job_vertex_id, SubtaskIndex(v.subtask_index)), {})
                for v in tm.subtasks}
        log.debug("attempt %d: deploying %s to TaskManager %d (finished: %s)",
                  attempt.number, sorted(mine), tm.index, sorted(restore.finished & set(mine)))
        attempt.connections[tm.index].tell(msg.DeployTasks(
            attempt.number, submission.graph_bytes, attempt.plan, dict(attempt.addresses),
            mine, checkpoint_dir, frozenset(restore.finished & set(mine)),
            submission.python_dependencies))
    for vertex in attempt.graph.vertices:
        attempt.states[TaskId(vertex.job_vertex_id, vertex.subtask_index)] = (
            ExecutionState.DEPLOYING)
    attempt.deployed = True


def start_source_coordinators(
    attempt: Attempt, restore: RestorePlan,
    enumerated: list[tuple[JobVertexId, str, Any, int]], schedule: Schedule,
    now_ms: Callable[[], float],
) -> list[SourceCoordinator]:
    """One started coordinator per enumerated source, restored from the checkpoint's
    enumerator state; ``schedule`` should drop timers once the attempt is no longer current."""
    latest = restore.checkpoint
    started = []
    for vertex, operator_id, source, parallelism in enumerated:
        coordinator = SourceCoordinator(vertex, operator_id, source, parallelism,
                                        _assignments_for(attempt), schedule, now_ms)
        restored = latest.task_states.get(coordinator.task) if latest else None
        coordinator.start(restored if isinstance(restored, EnumeratorState) else None)
        attempt.sources[vertex] = coordinator
        started.append(coordinator)
    return started


def _assignments_for(attempt: Attempt) -> Callable[[SplitAssignment], None]:
    def send(assignment: SplitAssignment) -> None:
        task = TaskId(assignment.vertex, SubtaskIndex(assignment.subtask))
        attempt.send(attempt.task_manager_of(task), msg.AssignSplits(
            attempt.number, task, assignment.operator_id, assignment.splits,
            assignment.no_more_splits))
    return send
