"""The JobManager (driver side of a job): one concept per module.

- ``job_manager``: ``JobManager``, the job's lifecycle: attempts, restarts, status, RPC;
- ``attempt``: one attempt's TaskManagers, their heartbeats and liveness, subtask states and
  first failure;
- ``restore_plan``: what each subtask of an attempt restores;
- ``coordinator_setup``: checkpoint storage, the recovered completed-checkpoint store and the
  coordinator of a new JobManager;
- ``deployment``: sending an attempt's subtasks (all at once, or BATCH region by region as
  ``graph.region_scheduling`` decides), starting its source coordinators;
- ``region_failover``: a BATCH attempt's failed region restarting alone;
- ``history``: the exception history (attempt failures, checkpoint fallbacks);
- ``high_availability``, ``leadership``: JobManager failover (job record, job graph, lease);
- ``collect``: handing collect sinks' batches to the caller once;
- ``checkpoint_actions``: carrying out the checkpoint coordinator's decisions;
- ``event_loop``: the JobManager thread's events and timers;
- ``submission``: the pickled job graph, the job's files and dependencies;
- ``launching``: what the JobManager needs of whatever starts TaskManagers;
- ``description``, ``errors``: what it reports.

Never imports the TaskManager side (``runtime.taskmanager``, ``runtime.tasks``) or the data
plane (``runtime.network``): what it learns of them comes typed through ``runtime.messages``.
"""

from flintlock.runtime.jobmanager.description import JobDescription, JobResult, TaskDescription
from flintlock.runtime.jobmanager.errors import (
    AttemptFailedError,
    JobCancelledError,
    JobFailedError,
    JobNotPicklableError,
)
from flintlock.runtime.jobmanager.job_manager import JobManager
from flintlock.runtime.jobmanager.launching import AttemptHandle, Launcher

__all__ = [
    "AttemptFailedError", "AttemptHandle", "JobCancelledError", "JobDescription",
    "JobFailedError", "JobManager", "JobNotPicklableError", "JobResult", "Launcher",
    "TaskDescription",
]
