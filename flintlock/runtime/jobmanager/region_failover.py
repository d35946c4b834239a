"""Region failover of a BATCH attempt: a failed subtask restarts its pipelined region (and the
deployed regions consuming it), not the whole job (Flink's region failover strategy).

``region_restart`` decides whether a failure can be handled so: only in an attempt scheduled
region by region, with no other region restart in progress, and when every enumerator in the
JobManager whose readers restart can take their splits back (``add_splits_back``, Flink's
``addSplitsBack``: the connectors' ``DealingEnumerator`` can; another enumerator makes the
failure restart the whole attempt, as before). ``give_back_splits`` hands them back before
the readers are deployed again; each gets them anew once it runs. The regions upstream keep
their FINISHED state: their BLOCKING results stay in their producers' spill files
(``network.blocking``) for as long as the attempt's TaskManagers live, and the restarted
consumers read them again.

What restarts, and when it is deployed again, is the ``RegionScheduler``'s; this module builds
the ``RegionRestart`` record and tells which subtasks to cancel. JobManager thread only.
"""

from __future__ import annotations

from flintlock.common.ids import SubtaskIndex
from flintlock.runtime import messages as msg
from flintlock.runtime.checkpoint.pending import TaskId
from flintlock.runtime.execution_state import ExecutionState
from flintlock.runtime.jobmanager.attempt import Attempt, RegionRestart


def region_restart(attempt: Attempt, failed: TaskId, cause: BaseException,
                   not_before_ms: float) -> RegionRestart | None:
    """The restart of ``failed``'s region, or None when the attempt must fail as a whole."""
    scheduler = attempt.regions
    if scheduler is None or attempt.region_restart is not None:
        return None
    regions = scheduler.to_restart(attempt.vertex_of(failed))
    subtasks = scheduler.subtasks(regions)
    coordinators = {attempt.sources[v.job_vertex_id] for v in subtasks
                    if v.job_vertex_id in attempt.sources}
    if not all(coordinator.can_take_splits_back for coordinator in coordinators):
        return None
    tasks = {TaskId(v.job_vertex_id, SubtaskIndex(v.subtask_index)) for v in subtasks}
    running = {task for task in tasks if task != failed
               and not attempt.states.get(task, ExecutionState.CREATED).is_terminal}
    return RegionRestart(regions, running, not_before_ms, cause)


def cancel_running(attempt: Attempt, restart: RegionRestart) -> None:
    """Cancels the restarting regions' subtasks that still run, each on its TaskManager."""
    per_tm: dict[int, set[TaskId]] = {}
    for task in restart.waiting:
        per_tm.setdefault(attempt.task_manager_of(task), set()).add(task)
    for tm_index, tasks in per_tm.items():
        attempt.send(tm_index, msg.CancelTasks(attempt.number, frozenset(tasks)))


def subtask_ended(attempt: Attempt, task: TaskId) -> bool:
    """Whether ``task``'s end was one a region restart waited for (then it counts no more)."""
    restart = attempt.region_restart
    if restart is None or task not in restart.waiting:
        return False
    restart.waiting.discard(task)
    return True


def give_back_splits(attempt: Attempt, restart: RegionRestart) -> None:
    """The restarting readers' splits go back to their enumerators."""
    assert attempt.regions is not None
    for vertex in attempt.regions.subtasks(restart.regions):
        coordinator = attempt.sources.get(vertex.job_vertex_id)
        if coordinator is not None:
            coordinator.reader_failed(int(vertex.subtask_index))


def due(attempt: Attempt, now_ms: float) -> RegionRestart | None:
    """The region restart, taken off the attempt, once its subtasks all ended and its delay
    passed; None until then."""
    restart = attempt.region_restart
    if restart is None or restart.waiting or now_ms < restart.not_before_ms:
        return None
    attempt.region_restart = None
    return restart
