"""What a new JobManager does before it can run its job: lead, recover, set up checkpointing.

With high availability configured, the JobManager first leads the job's cluster id
(``JobHighAvailability.start``): a job an earlier driver left unfinished is recovered and its
job graph replaces the submitted one. Then the checkpoint side is set up
(``coordinator_setup``): storage, the completed-checkpoint store, the savepoint to start from.
If that fails, the high-availability record is left SUSPENDED for a driver that can restore
it. ``JobStart.notes`` are what the start found worth the job's exception history (a
recovery, checkpoints skipped as damaged).

Runs on the thread that creates the JobManager.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from flintlock.common.clock import Clock
from flintlock.common.config import Configuration
from flintlock.common.job_status import JobStatus
from flintlock.graph.job_graph import JobGraph
from flintlock.runtime.jobmanager.coordinator_setup import CheckpointSetup, set_up_checkpointing
from flintlock.runtime.jobmanager.high_availability import JobHighAvailability
from flintlock.runtime.jobmanager.history import JobEventKind
from flintlock.runtime.jobmanager.leadership import LeadershipLostError


@dataclass(frozen=True)
class JobStart:
    """The job to run and what it runs with."""

    job_graph: JobGraph
    """The submitted job, or the one recovered from high-availability storage."""
    ha: JobHighAvailability | None
    checkpoints: CheckpointSetup

    def notes(self) -> Iterator[tuple[JobEventKind, str, str]]:
        """(kind, name, message) of each event of the start for the exception history."""
        if self.ha is not None and self.ha.recovered:
            yield (JobEventKind.JOB_RECOVERED, "JobRecovered",
                   f"recovered from high-availability cluster id {self.ha.cluster_id!r}")
        for fallback in self.checkpoints.fallbacks:
            yield JobEventKind.CHECKPOINT_FALLBACK, "CheckpointFallback", str(fallback)


def start_job(
    submitted: JobGraph, config: Configuration, clock: Clock, rng: random.Random,
    on_leadership_lost: Callable[[LeadershipLostError], None],
) -> JobStart:
    """Lead (with high availability), recover or register the job, set up checkpointing."""
    ha = JobHighAvailability.from_config(config, clock)
    job_graph = submitted if ha is None else ha.start(submitted, on_leadership_lost)
    try:
        checkpoints = set_up_checkpointing(job_graph, config, clock, rng)
    except BaseException:
        if ha is not None:  # the record stays for a driver that can restore it
            ha.job_ended(JobStatus.SUSPENDED)
        raise
    return JobStart(job_graph, ha, checkpoints)
