"""Checkpoints after some tasks finished (Flink's FLIP-147), driven as event lists."""

import random

from flintlock.common.config import Configuration
from flintlock.common.ids import CheckpointId, JobId, JobVertexId, SubtaskIndex
from flintlock.runtime.checkpoint import coordinator_actions as act
from flintlock.runtime.checkpoint.coordinator import CheckpointCoordinator
from flintlock.runtime.checkpoint.coordinator_settings import CheckpointTaskSets
from flintlock.runtime.checkpoint.finished import FINISHED_TASK
from flintlock.runtime.checkpoint.pending import TaskId
from flintlock.runtime.checkpoint.storage import CheckpointStorage
from flintlock.runtime.checkpoint.store import CompletedCheckpointStore
from flintlock.testing.clock import ManualClock
from tests.unit.checkpoint.file_states import inline_state

SRC0 = TaskId(JobVertexId("src"), SubtaskIndex(0))
SRC1 = TaskId(JobVertexId("src"), SubtaskIndex(1))
SINK = TaskId(JobVertexId("sink"), SubtaskIndex(0))


def _coordinator(tmp_path):
    storage = CheckpointStorage(str(tmp_path), JobId("job"))
    store = CompletedCheckpointStore.recover(storage.job_dir, 1)
    tasks = CheckpointTaskSets.for_job([SRC0, SRC1], [SRC0, SRC1, SINK])
    coordinator = CheckpointCoordinator(
        JobId("job"), Configuration(), tasks, storage, store, ManualClock(), random.Random(1))
    for task in (SRC0, SRC1, SINK):
        coordinator.on_task_state_changed(task, True)
    return coordinator, store


def _triggered(actions):
    return sorted(a.task for a in actions if isinstance(a, act.TriggerCheckpointOnTask))


def test_a_finished_source_is_neither_triggered_nor_awaited(tmp_path):
    coordinator, store = _coordinator(tmp_path)
    coordinator.on_task_finished(SRC0)
    actions = coordinator.trigger_checkpoint()
    assert _triggered(actions) == [SRC1]
    coordinator.receive_acknowledge(SRC1, CheckpointId(1), inline_state())
    done = coordinator.receive_acknowledge(SINK, CheckpointId(1), inline_state())
    assert any(isinstance(a, act.NotifyCheckpointComplete) for a in done)
    assert store.latest().task_states[SRC0] is FINISHED_TASK


def test_finishing_completes_a_pending_checkpoint_it_never_saw(tmp_path):
    coordinator, store = _coordinator(tmp_path)
    coordinator.trigger_checkpoint()
    coordinator.receive_acknowledge(SRC0, CheckpointId(1), inline_state())
    coordinator.receive_acknowledge(SRC1, CheckpointId(1), inline_state())
    actions = coordinator.on_task_finished(SINK)
    assert any(isinstance(a, act.NotifyCheckpointComplete) for a in actions)
    assert store.latest().task_states[SINK] is FINISHED_TASK


def test_when_every_source_finished_no_checkpoint_is_triggered(tmp_path):
    coordinator, _ = _coordinator(tmp_path)
    coordinator.on_task_finished(SRC0)
    coordinator.on_task_finished(SRC1)
    assert _triggered(coordinator.trigger_checkpoint()) == []


def test_failover_forgets_finished_tasks(tmp_path):
    coordinator, _ = _coordinator(tmp_path)
    coordinator.on_task_finished(SRC0)
    coordinator.on_failover()
    for task in (SRC0, SRC1, SINK):
        coordinator.on_task_state_changed(task, True)
    assert _triggered(coordinator.trigger_checkpoint()) == [SRC0, SRC1]
