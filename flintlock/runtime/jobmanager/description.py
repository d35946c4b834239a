"""What the JobManager tells about a job: its description (REST, CLI) and its result."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flintlock.common.job_status import JobStatus
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


@dataclass
class JobResult:
    job_id: str
    status: JobStatus
    net_runtime_ms: int
    attempts: int
    error: BaseException | None = None
