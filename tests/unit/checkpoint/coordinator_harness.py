"""A ``CheckpointCoordinator`` of a job with two source subtasks and a sink, on a manual clock
and a checkpoint directory under the test's ``tmp_path``: the ``Harness`` the coordinator
tests (and the JobManager parts' tests) feed facts to and read actions from."""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from flintlock.common.config import Configuration
from flintlock.common.ids import CheckpointId, JobId, JobVertexId, SubtaskIndex
from flintlock.runtime.checkpoint.coordinator import CheckpointCoordinator
from flintlock.runtime.checkpoint.coordinator_actions import CoordinatorAction
from flintlock.runtime.checkpoint.coordinator_settings import CheckpointTaskSets
from flintlock.runtime.checkpoint.pending import TaskId
from flintlock.runtime.checkpoint.stats import SubtaskCheckpointMetrics
from flintlock.runtime.checkpoint.storage import CheckpointStorage, CheckpointStorageLocation
from flintlock.runtime.checkpoint.store import CompletedCheckpointStore
from flintlock.runtime.network.barriers import AlignmentType, CheckpointOptions, CheckpointType
from flintlock.runtime.state.snapshots import TaskStateSnapshot
from flintlock.testing.clock import ManualClock
from tests.unit.checkpoint.file_states import file_state

JOB = JobId("c0ffee00job")
SRC0 = TaskId(JobVertexId("src"), SubtaskIndex(0))
SRC1 = TaskId(JobVertexId("src"), SubtaskIndex(1))
SINK = TaskId(JobVertexId("sink"), SubtaskIndex(0))
SOURCES = (SRC0, SRC1)
ALL = (SINK, SRC0, SRC1)  # sorted order, as the coordinator emits per-task actions
TIMEOUT = 10_000
START = 1_000.0
OPTS = CheckpointOptions(CheckpointType.CHECKPOINT, AlignmentType.ALIGNED)
SP_OPTS = CheckpointOptions(CheckpointType.SAVEPOINT, AlignmentType.ALIGNED)


class Harness:
    """The coordinator with its clock, storage and store; ``options`` are checkpointing
    settings by their key's last part (``tolerable_failed_checkpoints=5``)."""

    def __init__(self, tmp_path: Path, store: CompletedCheckpointStore | None = None,
                 last_checkpoint_id: int = 0, max_queued: int = 1000, **options: Any) -> None:
        self.tmp_path = tmp_path
        settings = {"execution.checkpointing.timeout": TIMEOUT}
        settings.update({f"execution.checkpointing.{k.replace('_', '-')}": v
                         for k, v in options.items()})
        self.config = Configuration(settings)
        self.clock = ManualClock(START)
        self.storage = CheckpointStorage(str(tmp_path / "chk"), JOB, str(tmp_path / "sp"),
                                         random.Random(7))
        self.store = store or CompletedCheckpointStore(
            self.config.get_integer("execution.checkpointing.num-retained"), self.storage.job_dir)
        self.coordinator = CheckpointCoordinator(
            JOB, self.config, CheckpointTaskSets.for_job(SOURCES, ALL), self.storage, self.store,
            self.clock, random.Random(11), last_checkpoint_id=last_checkpoint_id,
            max_queued_requests=max_queued)
        self.states: dict[tuple[int, TaskId], TaskStateSnapshot] = {}

    def all_running(self) -> None:
        for task in ALL:
            assert self.coordinator.on_task_state_changed(task, True) == []

    def location(self, checkpoint_id: int) -> str:
        return self.storage.checkpoint_location(CheckpointId(checkpoint_id)).uri

    def state(self, checkpoint_id: int, task: TaskId,
              location: str | None = None) -> TaskStateSnapshot:
        where = CheckpointStorageLocation(location or self.location(checkpoint_id),
                                          CheckpointId(checkpoint_id))
        state = file_state(where.write_state(f"{task.vertex}-{task.subtask}-{len(self.states)}",
                                            b"x" * 10))
        self.states[(checkpoint_id, task)] = state
        return state

    def ack(self, checkpoint_id: int, task: TaskId, location: str | None = None,
            metrics: SubtaskCheckpointMetrics | None = None) -> list[CoordinatorAction]:
        state = self.state(checkpoint_id, task, location)
        return self.coordinator.receive_acknowledge(
            task, CheckpointId(checkpoint_id), state, metrics or SubtaskCheckpointMetrics())

    def ack_all(self, checkpoint_id: int, location: str | None = None,
                tasks: Sequence[TaskId] = ALL) -> list[CoordinatorAction]:
        actions: list[CoordinatorAction] = []
        for task in tasks:
            actions += self.ack(checkpoint_id, task, location)
        return actions
