"""The asynchronous part of one subtask's checkpoint (Flink's ``AsyncCheckpointRunnable``):
write the channel state and every operator's snapshot parts, then acknowledge — unless the
checkpoint was aborted meanwhile.

Cancellation. The task thread calls ``cancel`` when the checkpoint machine says the checkpoint
is aborted (``CancelAsyncPart``). The run checks between its writes; once cancelled it writes
nothing more, deletes every file it already wrote (``OperatorSubtaskState.discard``: its own
files, never shared ones it only references) and does not acknowledge. ``cancel`` and the
acknowledgement exclude each other under one lock: a checkpoint is either acknowledged or
cleaned up, never both; a cancel that comes after the acknowledgement changes nothing (the
coordinator discards the state of an aborted checkpoint itself).

Threads: ``run`` on the TaskManager's snapshot executor; ``cancel`` on the task thread.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from flintlock.common.ids import CheckpointId
from flintlock.runtime.checkpoint.channel_state import ChannelStateSnapshot
from flintlock.runtime.checkpoint.failure import CheckpointFailureReason
from flintlock.runtime.state.operator_snapshot import OperatorSnapshotInProgress
from flintlock.runtime.state.snapshots import (
    OperatorId,
    OperatorSubtaskState,
    StateWriter,
    TaskStateSnapshot,
)
from flintlock.runtime.tasks.channel_state_io import write_channel_state

log = logging.getLogger(__name__)

Acknowledge = Callable[[CheckpointId, TaskStateSnapshot, Mapping[str, float]], None]
DeclineAsync = Callable[[CheckpointId, CheckpointFailureReason, BaseException], None]


@dataclass(frozen=True, slots=True)
class AsyncPartInputs:
    """What the synchronous part handed over (immutable once submitted)."""

    checkpoint_id: CheckpointId
    parts: Mapping[str, OperatorSnapshotInProgress]
    head_operator_id: str
    writer: StateWriter
    prefix: str
    """Names the files: vertex and subtask, unique within the checkpoint."""
    metrics: Mapping[str, float]
    channels: ChannelStateSnapshot | None


class AsyncCheckpointRun:
    """One checkpoint's asynchronous part (see the module docstring)."""

    def __init__(self, inputs: AsyncPartInputs, acknowledge: Acknowledge,
                 decline: DeclineAsync, on_done: Callable[[CheckpointId], None]) -> None:
        self.inputs = inputs
        self._acknowledge = acknowledge
        self._decline = decline
        self._on_done = on_done
        self._lock = threading.Lock()
        self._cancelled = False  # guarded by _lock
        self._acknowledged = False  # guarded by _lock

    @property
    def checkpoint_id(self) -> CheckpointId:
        return self.inputs.checkpoint_id

    def cancel(self) -> None:
        """Stop before the acknowledgement (task thread)."""
        with self._lock:
            self._cancelled = True

    @property
    def cancelled(self) -> bool:
        with self._lock:
            return self._cancelled

    def run(self) -> None:
        """Write, then acknowledge or clean up (snapshot executor thread)."""
        written: list[OperatorSubtaskState] = []
        try:
            states = self._write(written)
        except Exception as exc:
            self._release_parts()
            _discard(written)
            if not self.cancelled:
                self._decline(self.checkpoint_id,
                              CheckpointFailureReason.CHECKPOINT_ASYNC_EXCEPTION, exc)
            return
        finally:
            self._on_done(self.checkpoint_id)
        with self._lock:
            if not self._cancelled:
                self._acknowledged = True
                self._acknowledge(self.checkpoint_id, TaskStateSnapshot(states),
                                  self.inputs.metrics)
                return
        log.info("checkpoint %d aborted during its asynchronous part: its files deleted",
                 self.checkpoint_id)
        _discard(written)

    def _write(self, written: list[OperatorSubtaskState]) -> dict[OperatorId, OperatorSubtaskState]:
        inputs = self.inputs
        channels = inputs.channels
        if channels is not None and not channels.is_empty:
            head = inputs.parts[inputs.head_operator_id]
            head.input_channel_state, head.result_subpartition_state = write_channel_state(
                channels, inputs.writer, f"{inputs.prefix}-channels")
            written.append(OperatorSubtaskState(
                input_channel_state=head.input_channel_state,
                result_subpartition_state=head.result_subpartition_state))
        states: dict[OperatorId, OperatorSubtaskState] = {}
        parts = list(inputs.parts.items())
        for index, (operator_id, part) in enumerate(parts):
            if self.cancelled:
                for _, unwritten in parts[index:]:
                    unwritten.release()
                return states
            state = part.run(inputs.writer, f"{inputs.prefix}-{operator_id[:8]}")
            states[OperatorId(operator_id)] = state
            written.append(_without_channels(state))
        return states

    def _release_parts(self) -> None:
        for part in self.inputs.parts.values():
            part.release()


def _without_channels(state: OperatorSubtaskState) -> OperatorSubtaskState:
    """``state``'s operator files only (its channel state is discarded on its own)."""
    return OperatorSubtaskState(managed_keyed_state=state.managed_keyed_state,
                                managed_operator_state=state.managed_operator_state)


def _discard(states: list[OperatorSubtaskState]) -> None:
    for state in states:
        try:
            state.discard()
        except Exception:
            log.warning("could not delete a cancelled checkpoint's files", exc_info=True)
