"""What each subtask of a new attempt restores: the latest completed checkpoint (or the initial
savepoint), its operator states re-assigned to the current parallelism by key group, and which
subtasks start as finished.

Pure functions of the checkpoint and the job graph; called on the JobManager thread.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from flintlock.common.ids import JobVertexId, SubtaskIndex
from flintlock.graph.job_graph import JobGraph
from flintlock.runtime.checkpoint.completed import CompletedCheckpoint
from flintlock.runtime.checkpoint.finished import FinishedTaskState
from flintlock.runtime.checkpoint.pending import TaskId
from flintlock.runtime.state.assignment import assign_states
from flintlock.runtime.state.snapshots import OperatorId, OperatorSubtaskState, TaskStateSnapshot

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RestorePlan:
    checkpoint: CompletedCheckpoint | None = None
    """What is restored (None: a fresh start)."""
    states: dict[TaskId, dict[str, Any]] = field(default_factory=dict)
    """Per subtask, per operator id: the operator state it restores."""
    finished: frozenset[TaskId] = frozenset()
    """Subtasks the checkpoint recorded as finished: they run, but end at once."""


def plan_restore(latest: CompletedCheckpoint | None, job_graph: JobGraph,
                 allow_non_restored_state: bool) -> RestorePlan:
    """The restore plan of an attempt of ``job_graph`` from ``latest``."""
    if latest is None:
        return RestorePlan()
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
    operators = [(OperatorId(op.operator_id), v) for v in job_graph.vertices
                 for op in v.operators]
    assigned = assign_states(
        by_operator, {op: v.parallelism for op, v in operators},
        {op: v.max_parallelism for op, v in operators}, old_parallelism,
        allow_non_restored_state=allow_non_restored_state)
    states: dict[TaskId, dict[str, Any]] = {}
    for vertex in job_graph.vertices:
        for index in range(vertex.parallelism):
            states[TaskId(vertex.id, SubtaskIndex(index))] = {
                op.operator_id: assigned[OperatorId(op.operator_id)][index]
                for op in vertex.operators}
    return RestorePlan(latest, states, frozenset(finished_tasks(latest, job_graph)))


def finished_tasks(checkpoint: CompletedCheckpoint, job_graph: JobGraph) -> set[TaskId]:
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
