"""Finalizing a checkpoint: from its last acknowledgement to a stored ``CompletedCheckpoint``.

Once every task acknowledged, the pending checkpoint hands its states over
(``completed_checkpoint``) and the result is made durable (``persist``): a checkpoint joins
the completed-checkpoint store, which writes its ``_metadata`` and then drops what the
retention policy no longer keeps; a savepoint writes its own ``_metadata`` into its directory
and never joins the store. Only after ``persist`` returned may the coordinator subsume older
checkpoints and tell the tasks (two-phase-commit sinks commit then). When ``persist`` fails,
``discard_unstored`` deletes the states and the directory: nothing refers to them.

Called by the coordinator on its thread; ``persist`` and ``discard_unstored`` do the I/O.
"""

from __future__ import annotations

import dataclasses

from flintlock.common.ids import JobId
from flintlock.runtime.checkpoint.completed import CheckpointProperties, CompletedCheckpoint
from flintlock.runtime.checkpoint.metadata import write_metadata
from flintlock.runtime.checkpoint.pending import PendingCheckpoint, discard_quietly
from flintlock.runtime.checkpoint.storage import CheckpointStorageLocation
from flintlock.runtime.checkpoint.store import CompletedCheckpointStore


def completed_checkpoint(
    job_id: JobId, pending: PendingCheckpoint, location: CheckpointStorageLocation,
    checkpoint_properties: CheckpointProperties, completion_timestamp: int,
) -> CompletedCheckpoint:
    """The completed checkpoint of fully acknowledged ``pending``, which it marks completed.
    ``checkpoint_properties``: those of a (non-savepoint) checkpoint of this job."""
    if pending.is_savepoint:
        properties = CheckpointProperties.for_savepoint()
    else:
        properties = dataclasses.replace(checkpoint_properties, periodic=pending.periodic)
    return CompletedCheckpoint(
        job_id=job_id,
        checkpoint_id=pending.checkpoint_id,
        trigger_timestamp=pending.trigger_timestamp,
        completion_timestamp=completion_timestamp,
        task_states=pending.mark_completed(),
        properties=properties,
        location=location.uri,
        metadata_path=location.metadata_uri,
    )


def persist(completed: CompletedCheckpoint, store: CompletedCheckpointStore) -> None:
    """Make ``completed`` durable: a savepoint's ``_metadata``, or the store's."""
    if completed.is_savepoint:
        write_metadata(completed)
    else:
        store.add(completed)


def discard_unstored(completed: CompletedCheckpoint, location: CheckpointStorageLocation) -> None:
    """``persist`` failed: delete the states and the directory of ``completed``."""
    for task, state in completed.task_states.items():
        discard_quietly(state, f"unstored checkpoint {completed.checkpoint_id}, task {task}")
    location.dispose()
