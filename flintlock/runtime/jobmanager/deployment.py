"""Deploying an attempt once its TaskManagers registered: each TaskManager gets its subtasks
with the state they restore, and the job's enumerated sources get their coordinators.

A STREAMING attempt is deployed at once (``deploy_tasks``). A BATCH attempt is deployed region
by region (``deploy_regions``): the attempt's ``RegionScheduler`` says which pipelined regions
go into which slots now; each TaskManager gets a ``DeployTasks`` with its part of them and a
plan naming where every subtask deployed so far runs (the producers its consumers read).

Runs on the JobManager thread, like the ``Attempt`` it changes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from flintlock.common.ids import JobVertexId, ResultPartitionId, SubtaskIndex
from flintlock.graph.execution_graph import ExecutionVertex
from flintlock.graph.region_scheduling import DeployRegion, ReleaseResults, allocation_of
from flintlock.graph.scheduling import AllocationPlan
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


def deploy_regions(attempt: Attempt, deployments: list[DeployRegion], restore: RestorePlan,
                   submission: Submission, checkpoint_dir: str, first: bool = False) -> None:
    """Sends each TaskManager its subtasks of the regions in ``deployments`` (``first``:
    every TaskManager gets a deployment, empty if no region of the first round is its,
    so none waits for one in vain); they count as DEPLOYING from now."""
    regions = attempt.regions
    assert regions is not None
    new = [v for deployment in deployments for v in deployment.locations]
    if not new and not first:
        return
    num_tms = attempt.plan.num_task_managers
    spt = attempt.plan.slots_per_task_manager
    attempt.plan = allocation_of(regions.locations, regions.locations, regions.graph.groups,
                                 spt, num_tms)
    now = allocation_of(regions.locations, new, regions.graph.groups, spt, num_tms)
    for tm in now.task_managers:
        if tm.subtasks or first:
            _send_deployment(attempt, tm.index, tm.subtasks, now, restore, submission,
                             checkpoint_dir)
    with_states = {_task_id(v): ExecutionState.DEPLOYING for v in new}
    attempt.states.update(with_states)
    attempt.deployed = True
    for assignment in attempt.take_pending_splits(set(with_states)):
        _assignments_for(attempt)(assignment)


def release_results(attempt: Attempt, releases: list[ReleaseResults]) -> None:
    """Tells each TaskManager which of its finished BLOCKING results no one reads again."""
    regions = attempt.regions
    assert regions is not None
    per_tm: dict[int, set[ResultPartitionId]] = {}
    for release in releases:
        for vertex in regions.graph.regions[release.region]:
            blocking = {p.id for p in attempt.graph.produced_partitions(vertex)
                        if not p.partition_type.is_pipelined}
            if blocking:
                per_tm.setdefault(attempt.plan.task_manager_of(vertex), set()).update(blocking)
    for tm_index, partitions in sorted(per_tm.items()):
        attempt.send(tm_index, msg.ReleasePartitions(attempt.number, frozenset(partitions)))


def _task_id(vertex: ExecutionVertex) -> TaskId:
    return TaskId(vertex.job_vertex_id, SubtaskIndex(vertex.subtask_index))


def _send_deployment(attempt: Attempt, tm_index: int, subtasks: tuple[ExecutionVertex, ...],
                     plan: AllocationPlan, restore: RestorePlan, submission: Submission,
                     checkpoint_dir: str) -> None:
    mine = {_task_id(v): restore.states.get(_task_id(v), {}) for v in subtasks}
    log.debug("attempt %d: deploying %s to TaskManager %d", attempt.number, sorted(mine),
              tm_index)
    attempt.connections[tm_index].tell(msg.DeployTasks(
        attempt.number, submission.graph_bytes, plan, dict(attempt.addresses), mine,
        checkpoint_dir, frozenset(restore.finished & set(mine)),
        submission.python_dependencies))


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
        if task not in attempt.states or attempt.states[task] is ExecutionState.CREATED:
            attempt.pending_splits.append(assignment)  # its region is not deployed yet
            return
        attempt.send(attempt.task_manager_of(task), msg.AssignSplits(
            attempt.number, task, assignment.operator_id, assignment.splits,
            assignment.no_more_splits))
    return send
