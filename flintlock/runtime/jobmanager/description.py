"""What the JobManager tells about a job: its description (REST, CLI) and its result.

Frozen values (``JobResult`` is filled once, at the end): safe to hand to any thread."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flintlock.common.job_status import JobStatus
from flintlock.graph.job_graph import JobGraph
from flintlock.runtime.jobmanager.attempt import Attempt
from flintlock.runtime.jobmanager.history import JobEvent
from flintlock.runtime.metrics.report import SubtaskMetricsReport


@dataclass(frozen=True)
class TaskDescription:
    vertex_name: str
    vertex_id: str
    subtask: int
    state: str
    metrics: SubtaskMetricsReport | None = None
    """The latest metrics its TaskManager reported with a heartbeat (None: none yet)."""


@dataclass(frozen=True)
class TaskManagerDescription:
    index: int
    host: str
    data_port: int
    pid: int
    """The process id on ``host`` (what an operator, or a fault-injection test, signals)."""


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
    events: tuple[JobEvent, ...] = ()
    """The job's exception history (attempt failures, checkpoint fallbacks), oldest first."""
    recovered: bool = False
    """This JobManager took the job over from high-availability storage (a driver failover)."""
    task_managers: tuple[TaskManagerDescription, ...] = ()
    """The current attempt's registered TaskManagers, by index."""
    events_truncated: bool = False
    """Older events were dropped from ``events`` (the history keeps the newest)."""


@dataclass
class JobResult:
    job_id: str
    status: JobStatus
    net_runtime_ms: int
    attempts: int
    error: BaseException | None = None


def describe_job(job_id: str, job_graph: JobGraph, status: JobStatus, attempt_number: int,
                 attempt: Attempt | None, start_wall_ms: int, checkpoints: Any,
                 events: tuple[JobEvent, ...], recovered: bool = False,
                 events_truncated: bool = False) -> JobDescription:
    """The description of a job whose current attempt is ``attempt`` (JobManager thread)."""
    names = {v.id: v.name for v in job_graph.vertices}
    metrics = attempt.times if attempt else {}
    tasks = tuple(
        TaskDescription(names.get(task.vertex, str(task.vertex)), str(task.vertex),
                        int(task.subtask), state.value, metrics.get(task))
        for task, state in sorted((attempt.states if attempt else {}).items(),
                                  key=lambda item: (str(item[0].vertex), item[0].subtask)))
    return JobDescription(
        job_id=job_id, name=job_graph.name, status=status.name, attempt=attempt_number,
        start_time_ms=start_wall_ms, tasks=tasks, checkpoints=checkpoints, events=events,
        events_truncated=events_truncated, recovered=recovered, task_managers=tuple(
            TaskManagerDescription(index, *attempt.addresses[index], attempt.pids.get(index, -1))
            for index in sorted(attempt.addresses)) if attempt else ())
