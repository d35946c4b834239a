"""Task states for coordinator and store tests: real ``TaskStateSnapshot``s (the only kind the
checkpoint metadata records) holding one state file, or a few inline bytes, as operator state;
and the store tests' storage and completed checkpoints (``make_storage``, ``make_checkpoint``)."""

from __future__ import annotations

import random
from pathlib import Path

from flintlock.common.ids import CheckpointId, JobId, JobVertexId, SubtaskIndex
from flintlock.runtime.checkpoint.completed import CheckpointProperties, CompletedCheckpoint
from flintlock.runtime.checkpoint.pending import TaskId
from flintlock.runtime.checkpoint.storage import CheckpointStorage
from flintlock.runtime.state.handles import ByteStateHandle, StateHandle, StreamStateHandle
from flintlock.runtime.state.snapshots import (
    OperatorId,
    OperatorStateHandle,
    OperatorSubtaskState,
    TaskStateSnapshot,
)

OPERATOR = OperatorId("op")
JOB = JobId("job-store")
TASK = TaskId(JobVertexId("map"), SubtaskIndex(0))


def file_state(handle: StateHandle) -> TaskStateSnapshot:
    """A task's state: ``handle``'s file (discarding the state deletes it)."""
    operator = OperatorSubtaskState(managed_operator_state=(OperatorStateHandle({}, handle),))
    return TaskStateSnapshot({OPERATOR: operator})


def inline_state(data: bytes = b"x") -> TaskStateSnapshot:
    """A task's state of ``len(data)`` bytes kept in the metadata itself."""
    return file_state(ByteStateHandle(data))


def handle_of(state: object) -> StreamStateHandle:
    assert isinstance(state, TaskStateSnapshot), state
    handle = state.subtask_states[OPERATOR].managed_operator_state[0].handle
    assert isinstance(handle, StreamStateHandle), handle
    return handle


def exists(state: object) -> bool:
    """The state's file is still there."""
    return Path(handle_of(state).uri).exists()


def make_storage(tmp_path: Path) -> CheckpointStorage:
    """Checkpoint and savepoint directories of ``JOB`` under ``tmp_path``."""
    return CheckpointStorage(str(tmp_path / "chk"), JOB, str(tmp_path / "sp"), random.Random(1))


def make_checkpoint(
    storage: CheckpointStorage, n: int, props: CheckpointProperties | None = None
) -> CompletedCheckpoint:
    """Checkpoint (or savepoint) ``n`` of ``JOB`` in ``storage``: one state file of ``TASK``."""
    props = props or CheckpointProperties()
    if props.is_savepoint:
        location = storage.init_savepoint(CheckpointId(n))
    else:
        location = storage.init_checkpoint(CheckpointId(n))
    state = file_state(location.write_state("map-0", f"state of {n}".encode()))
    return CompletedCheckpoint(JOB, CheckpointId(n), n * 10, n * 10 + 5, {TASK: state}, props,
                               location.uri, location.metadata_uri)
