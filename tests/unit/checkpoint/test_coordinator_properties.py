"""Laws of the checkpoint coordinator under arbitrary sequences of facts (hypothesis).

- a checkpoint is triggered at most once, with ids strictly increasing;
- never more than ``max-concurrent-checkpoints`` checkpoints are pending, and none is
  triggered sooner than ``min-pause`` after the last completion (savepoints exempt);
- a savepoint is never subsumed;
- a task is notified complete only for a checkpoint every task acknowledged, and only once
  its ``_metadata`` is durable; completed checkpoint ids strictly increase;
- nothing is lost and nothing leaks: once the coordinator is shut down, a state file exists
  exactly when its checkpoint is retained in the store or is a completed savepoint.
"""

from __future__ import annotations

import random
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import event, given, settings
from hypothesis import strategies as st

from flintlock.common.config import Configuration
from flintlock.common.ids import CheckpointId, JobId, JobVertexId, SubtaskIndex
from flintlock.runtime.checkpoint.coordinator import CheckpointCoordinator
from flintlock.runtime.checkpoint.coordinator_actions import (
    CompleteSavepointRequest,
    CoordinatorAction,
    NotifyCheckpointAborted,
    NotifyCheckpointComplete,
    TriggerCheckpointOnTask,
)
from flintlock.runtime.checkpoint.coordinator_settings import CheckpointTaskSets
from flintlock.runtime.checkpoint.failure import CheckpointFailureReason as R
from flintlock.runtime.checkpoint.pending import TaskId
from flintlock.runtime.checkpoint.storage import CheckpointStorage, CheckpointStorageLocation
from flintlock.runtime.checkpoint.store import CompletedCheckpointStore
from flintlock.runtime.state.snapshots import TaskStateSnapshot
from flintlock.testing.clock import ManualClock
from tests.unit.checkpoint.file_states import exists, file_state

JOB = JobId("prop-job")
SRC = (TaskId(JobVertexId("src"), SubtaskIndex(0)), TaskId(JobVertexId("src"), SubtaskIndex(1)))
ALL = (*SRC, TaskId(JobVertexId("sink"), SubtaskIndex(0)))


ops = st.lists(
    st.one_of(
        st.tuples(st.just("trigger")),
        st.tuples(st.just("trigger")),
        st.tuples(st.just("savepoint")),
        st.tuples(st.just("tick"), st.integers(0, 120)),
        st.tuples(st.just("ack"), st.integers(0, 5), st.integers(0, 2)),
        st.tuples(st.just("ack_all"), st.integers(0, 5)),
        st.tuples(st.just("ack_all"), st.integers(0, 5)),
        st.tuples(st.just("decline"), st.integers(0, 5),
                  st.sampled_from([R.CHECKPOINT_DECLINED, R.CHECKPOINT_DECLINED_TASK_NOT_READY])),
        st.tuples(st.just("timeout"), st.integers(0, 5)),
        st.tuples(st.just("task"), st.booleans()),
    ),
    min_size=4,
    max_size=40,
)


class World:
    def __init__(self, root: Path, max_concurrent: int, min_pause: int, retained: int) -> None:
        config = Configuration({
            "execution.checkpointing.interval": 100,
            "execution.checkpointing.timeout": 1000,
            "execution.checkpointing.min-pause": min_pause,
            "execution.checkpointing.max-concurrent-checkpoints": max_concurrent,
            "execution.checkpointing.tolerable-failed-checkpoints": 3,
            "execution.checkpointing.num-retained": retained,
        })
        self.max_concurrent = max_concurrent
        self.min_pause = min_pause
        self.last_completion: float | None = None
        self.savepoint_ids: set[int] = set()
        self.clock = ManualClock(0)
        storage = CheckpointStorage(str(root / "chk"), JOB, str(root / "sp"), random.Random(0))
        self.store = CompletedCheckpointStore(retained, storage.job_dir)
        self.coordinator = CheckpointCoordinator(
            JOB, config, CheckpointTaskSets.for_job(SRC, ALL), storage, self.store, self.clock,
            random.Random(0))
        self.locations: dict[int, str] = {}
        self.triggered: set[tuple[int, TaskId]] = set()
        self.acked: dict[int, set[TaskId]] = {}
        self.states: dict[tuple[int, TaskId], TaskStateSnapshot] = {}
        self.completed: list[int] = []
        self.savepoints: set[int] = set()
        for task in ALL:
            self.coordinator.on_task_state_changed(task, True)
        self.check(self.coordinator.start())

    def pending_id(self, index: int) -> CheckpointId:
        pending = sorted(self.coordinator.pending_checkpoints)
        return pending[index % len(pending)] if pending else CheckpointId(index + 1)

    def apply(self, op: tuple[Any, ...]) -> None:
        kind, *args = op
        c = self.coordinator
        if kind == "trigger":
            self.check(c.trigger_checkpoint())
        elif kind == "savepoint":
            self.check(c.trigger_savepoint("sp"))
        elif kind == "tick":
            self.clock.advance(args[0])
            self.check(c.on_periodic_tick())
        elif kind == "ack":
            self.ack(self.pending_id(args[0]), ALL[args[1]])
        elif kind == "ack_all":
            checkpoint_id = self.pending_id(args[0])
            for task in ALL:
                self.ack(checkpoint_id, task)
        elif kind == "decline":
            self.check(c.receive_decline(ALL[0], self.pending_id(args[0]), args[1]))
        elif kind == "timeout":
            self.check(c.on_timeout(self.pending_id(args[0])))
        else:
            self.check(c.on_task_state_changed(ALL[0], args[0]))

    def ack(self, checkpoint_id: CheckpointId, task: TaskId) -> None:
        if (checkpoint_id, task) in self.states or checkpoint_id not in self.locations:
            return  # duplicates have no defined fate (they may share files); not generated
        where = CheckpointStorageLocation(self.locations[checkpoint_id], checkpoint_id)
        state = file_state(where.write_state(f"{task.vertex}-{task.subtask}", b"s" * 8))
        self.states[(checkpoint_id, task)] = state
        if checkpoint_id in self.coordinator.pending_checkpoints:
            self.acked.setdefault(checkpoint_id, set()).add(task)
        self.check(self.coordinator.receive_acknowledge(task, checkpoint_id, state))

    def check(self, actions: list[CoordinatorAction]) -> None:
        for action in actions:
            if isinstance(action, TriggerCheckpointOnTask):
                key = (action.checkpoint_id, action.task)
                assert key not in self.triggered
                assert all(action.checkpoint_id >= n for n, _ in self.triggered)
                self.triggered.add(key)
                self.locations[action.checkpoint_id] = action.location
                if action.options.is_savepoint:
                    self.savepoint_ids.add(action.checkpoint_id)
                elif self.last_completion is not None:
                    assert self.clock.now_ms() >= self.last_completion + self.min_pause
            elif isinstance(action, NotifyCheckpointAborted):
                assert not (action.checkpoint_id in self.savepoint_ids
                            and action.reason is R.CHECKPOINT_SUBSUMED)
            elif isinstance(action, CompleteSavepointRequest):
                self.savepoints.add(int(self.completed[-1]))
            elif isinstance(action, NotifyCheckpointComplete) and action.task == ALL[-1]:
                n = action.checkpoint_id
                assert self.acked.get(n) == set(ALL)
                assert Path(self.locations[n], "_metadata").exists()
                self.completed.append(n)
                self.last_completion = self.clock.now_ms()
        regular = [p for p in self.coordinator.pending_checkpoints.values() if not p.is_savepoint]
        assert len(regular) <= self.max_concurrent
        store_ids = [c.checkpoint_id for c in self.store.checkpoints]
        assert store_ids == sorted(set(store_ids))
        assert len(store_ids) <= self.store.num_retained

    def check_no_loss_no_leak(self) -> None:
        retained = {c.checkpoint_id for c in self.store.checkpoints} | self.savepoints
        for (checkpoint_id, _task), state in self.states.items():
            assert exists(state) is (checkpoint_id in retained), checkpoint_id


@settings(max_examples=150, deadline=None)
@given(ops, st.sampled_from([1, 2]), st.sampled_from([0, 50]), st.sampled_from([1, 2]))
def test_coordinator_laws(
    script: list[tuple[Any, ...]], max_concurrent: int, min_pause: int, retained: int
) -> None:
    with tempfile.TemporaryDirectory() as root:
        world = World(Path(root), max_concurrent, min_pause, retained)
        for op in script:
            world.apply(op)
        world.check(world.coordinator.shutdown())
        event(f"completed {min(len(world.completed), 3)}+")
        regular = [n for n in world.completed if n not in world.savepoints]
        assert regular == sorted(set(regular))
        world.check_no_loss_no_leak()
