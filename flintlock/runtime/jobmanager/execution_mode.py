"""What a job's execution mode changes in the JobManager's configuration (issue 29).

Checkpointing does not apply to BATCH execution, as in Flink: a BATCH job's exchanges are
BLOCKING, so a consumer reads its input only after the producer finished, and a barrier a
source emits reaches nobody before that source's end — while a source with checkpointing on
waits, before it ends, for a checkpoint taken after its last record (the final checkpoint).
Left on, every checkpoint expired and the job failed with ``TooManyCheckpointFailuresError``
instead of finishing. A BATCH job recovers by running again from its sources (restart
strategy), not from a checkpoint. So the JobManager turns periodic checkpointing off for such
a job and says so in a warning; the TaskManagers get the same configuration.

Called once, on the thread that creates the JobManager.
"""

from __future__ import annotations

import logging

from flintlock.common.config import Configuration
from flintlock.common.options import checkpointing as cp_options
from flintlock.graph.job_graph import JobGraph

log = logging.getLogger(__name__)


def is_batch(job_graph: JobGraph) -> bool:
    return job_graph.runtime_mode.strip().lower() == "batch"


def configuration_for_mode(job_graph: JobGraph, configuration: Configuration) -> Configuration:
    """``configuration``, with checkpointing off if ``job_graph`` runs in BATCH mode (a new
    ``Configuration``; the given one is not changed)."""
    interval = configuration.get(cp_options.INTERVAL)
    if not is_batch(job_graph) or interval <= 0:
        return configuration
    log.warning(
        "job %s runs in BATCH execution mode, where checkpointing does not apply: "
        "execution.checkpointing.interval (%s ms) is ignored, the job recovers by running "
        "again from its sources", job_graph.name, interval)
    return Configuration(configuration).set(cp_options.INTERVAL, -1)
