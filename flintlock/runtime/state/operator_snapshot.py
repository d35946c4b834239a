"""One operator's snapshot for one checkpoint: synchronous part, then asynchronous part.

The task calls ``snapshot_operator(keyed, operator)`` on its own thread when the barrier is
processed (both backends' synchronous parts: quick), emits the barrier downstream, and hands
the returned ``OperatorSnapshotInProgress`` to an asynchronous thread, which calls
``run(writer, name)`` to serialise and write everything and gets the operator's
``OperatorSubtaskState`` for the ack. If the checkpoint is aborted first, ``release()`` frees
what the synchronous part holds. Channel state handles (unaligned checkpoints) are written by
the barrier layer and attached as they are.
"""

from __future__ import annotations

from dataclasses import dataclass

from flintlock.common.ids import CheckpointId
from flintlock.runtime.state.backend import KeyedStateBackend, KeyedStateSnapshot
from flintlock.runtime.state.handles import StateHandle
from flintlock.runtime.state.operator import OperatorStateBackend, OperatorStateSnapshot
from flintlock.runtime.state.snapshots import OperatorSubtaskState, StateWriter


@dataclass(slots=True)
class OperatorSnapshotInProgress:
    """Synchronous parts taken; ``run`` is the asynchronous part."""

    keyed: KeyedStateSnapshot | None = None
    operator: OperatorStateSnapshot | None = None
    input_channel_state: tuple[StateHandle, ...] = ()
    result_subpartition_state: tuple[StateHandle, ...] = ()

    def run(self, writer: StateWriter, name: str) -> OperatorSubtaskState:
        """Write everything; ``name`` (unique per operator and subtask within a checkpoint)
        prefixes the written files."""
        try:
            keyed = self.keyed.write(writer, f"{name}-keyed") if self.keyed else None
            operator = self.operator.write(writer, f"{name}-operator") if self.operator else None
        finally:
            self.release()
        return OperatorSubtaskState(
            managed_keyed_state=(keyed,) if keyed is not None else (),
            managed_operator_state=(operator,) if operator is not None else (),
            input_channel_state=self.input_channel_state,
            result_subpartition_state=self.result_subpartition_state,
        )

    def release(self) -> None:
        if self.keyed is not None:
            self.keyed.release()
        if self.operator is not None:
            self.operator.release()


def snapshot_operator(
    keyed: KeyedStateBackend | None, operator: OperatorStateBackend | None,
    checkpoint_id: CheckpointId | None = None,
) -> OperatorSnapshotInProgress:
    """The synchronous part of one operator's snapshot (task thread)."""
    return OperatorSnapshotInProgress(
        keyed=keyed.snapshot(checkpoint_id) if keyed is not None else None,
        operator=operator.snapshot() if operator is not None else None,
    )
