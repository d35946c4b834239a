"""Task states for coordinator and store tests: real ``TaskStateSnapshot``s (the only kind the
checkpoint metadata records) holding one state file, or a few inline bytes, as operator state."""

from __future__ import annotations

from pathlib import Path

from flintlock.runtime.checkpoint.handles import ByteStateHandle, StateHandle, StreamStateHandle
from flintlock.runtime.state.snapshots import (
    OperatorId,
    OperatorStateHandle,
    OperatorSubtaskState,
    TaskStateSnapshot,
)

OPERATOR = OperatorId("op")


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
