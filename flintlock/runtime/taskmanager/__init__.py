"""The TaskManager (worker side of a job), one concept per module:

- ``task_manager``: ``TaskManager``, registration, deployment, the JobManager's messages,
  shutdown;
- ``jobmanager_heartbeats``: heartbeats to the JobManager and noticing it fell silent;
- ``deployment``: each subtask's ``TaskSpec`` and the checkpointing settings;
- ``reports``: what a subtask reports to the JobManager (``TaskReports``);
- ``snapshot_writing``: where snapshots are written and by whom (``SnapshotWriting``).
"""

from flintlock.runtime.taskmanager.task_manager import TaskManager, TaskManagerError

__all__ = ["TaskManager", "TaskManagerError"]
