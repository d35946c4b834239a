"""Acknowledgements that complete nothing, and what becomes of the state they carry.

An ack counts only when it is a task's first for a pending checkpoint that expects it. Every
other ack still carries state handles that someone must own, or files leak:

* no such pending checkpoint: if the checkpoint completed (it is in the store, or among the
  last ``REMEMBERED_COMPLETED`` completed), the state may belong to it and is kept; otherwise
  (aborted, unknown, late) it is discarded;
* a duplicate: a repeated message may carry the very handles of the first ack, so they are
  kept, except when the task had finished (and its finished marker counted as its ack) before
  the asynchronous part of its last snapshot reported: those files belong to no one;
* an ack from a task the checkpoint does not expect, or for a discarded one: discarded.

Owned by the coordinator's thread, like the coordinator.
"""

from __future__ import annotations

import logging

from flintlock.common.ids import CheckpointId
from flintlock.runtime.checkpoint.finished import FinishedTaskState
from flintlock.runtime.checkpoint.pending import (
    AckResult,
    PendingCheckpoint,
    SubtaskState,
    TaskId,
    discard_quietly,
)
from flintlock.runtime.checkpoint.store import CompletedCheckpointStore

log = logging.getLogger(__name__)

REMEMBERED_COMPLETED = 16


class StrayAcks:
    """Keeps or discards the state of acks that do not count (see the module docstring)."""

    def __init__(self, store: CompletedCheckpointStore) -> None:
        self._store = store
        self._recently_completed: list[CheckpointId] = []

    def completed(self, checkpoint_id: CheckpointId) -> None:
        """Checkpoint ``checkpoint_id`` completed: late acks for it keep their state."""
        self._recently_completed.append(checkpoint_id)
        del self._recently_completed[:-REMEMBERED_COMPLETED]

    def not_pending(
        self, task: TaskId, checkpoint_id: CheckpointId, state: SubtaskState | None
    ) -> None:
        """An ack for a checkpoint that is not pending (completed, aborted or unknown)."""
        stored = any(c.checkpoint_id == checkpoint_id for c in self._store.checkpoints)
        if stored or checkpoint_id in self._recently_completed:
            log.warning("ack from %s for completed checkpoint %d ignored; its state is kept "
                        "(it may be part of the completed checkpoint)", task, checkpoint_id)
            return
        log.info("late or unknown ack from %s for checkpoint %d: state discarded",
                 task, checkpoint_id)
        discard_quietly(state, f"late ack from {task} for checkpoint {checkpoint_id}")

    def refused(
        self, pending: PendingCheckpoint, task: TaskId, result: AckResult,
        state: SubtaskState | None,
    ) -> None:
        """``pending`` did not accept the ack of ``task`` (``result`` says why)."""
        checkpoint_id = pending.checkpoint_id
        if result is not AckResult.DUPLICATE:
            log.warning("ack from %s for checkpoint %d: %s", task, checkpoint_id, result.name)
            discard_quietly(state, f"{result.name} ack from {task}")
            return
        earlier = pending.acknowledged.get(task)
        if isinstance(earlier, FinishedTaskState) and state is not None \
                and not isinstance(state, FinishedTaskState):
            log.debug("ack from %s for checkpoint %d after it finished: state discarded",
                      task, checkpoint_id)
            discard_quietly(state, f"ack from finished {task}")
            return
        log.warning("duplicate ack from %s for checkpoint %d ignored", task, checkpoint_id)
