"""A completed checkpoint and the properties that decide its files' lifetime (DESIGN.md §5).

A ``CompletedCheckpoint`` is one successful distributed snapshot: every task acknowledged it,
and its ``_metadata`` is (or is about to be) written by the completed-checkpoint store. It is
an immutable value (``_metadata`` records it field by field, ``metadata_json``; its class
name appears nowhere on storage) and owns the task states: only ``discard()`` deletes them,
and only when the properties allow it.

``CheckpointProperties`` say when a checkpoint's files may be deleted, after Flink's rules:

==========================  =========  ========  =========  ======  =========
kind                        subsumed   finished  cancelled  failed  suspended
==========================  =========  ========  =========  ======  =========
checkpoint (not retained)   delete     delete    delete     delete  keep
retain-on-cancellation      delete     delete    keep       keep    keep
delete-on-cancellation      delete     delete    delete     keep    keep
savepoint                   keep       keep      keep       keep    keep
==========================  =========  ========  =========  ======  =========

"suspended" is the driver going away without the job reaching a terminal state; the files
must survive so a restarted driver can recover.

Thread ownership: immutable; shared freely.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field

from flintlock.common.checkpointing import ExternalizedCheckpointRetention
from flintlock.common.errors import FlintlockError
from flintlock.common.ids import CheckpointId, JobId
from flintlock.runtime.checkpoint.pending import SubtaskState, TaskId, discard_quietly
from flintlock.runtime.checkpoint.storage import delete_directory

log = logging.getLogger(__name__)


class SavepointOwnedByUserError(FlintlockError):
    """Something tried to delete a savepoint's files; only its user may."""

    def __init__(self, location: str) -> None:
        super().__init__(location)
        self.location = location

    def __str__(self) -> str:
        return f"savepoint {self.location} belongs to the user; flintlock never deletes it"


class JobTerminalStatus(enum.Enum):
    """How the job (or the driver) ended, for deciding which checkpoint files to keep."""

    FINISHED = "finished"
    CANCELED = "canceled"
    FAILED = "failed"
    SUSPENDED = "suspended"


@dataclass(frozen=True, slots=True)
class CheckpointProperties:
    """Kind of snapshot and when its files may be deleted."""

    is_savepoint: bool = False
    periodic: bool = True
    discard_on_subsumed: bool = True
    discard_on_finished: bool = True
    discard_on_cancelled: bool = True
    discard_on_failed: bool = True
    discard_on_suspended: bool = False

    @staticmethod
    def for_checkpoint(
        retention: ExternalizedCheckpointRetention, periodic: bool = True
    ) -> CheckpointProperties:
        if retention is ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION:
            return CheckpointProperties(
                periodic=periodic, discard_on_cancelled=False, discard_on_failed=False
            )
        if retention is ExternalizedCheckpointRetention.DELETE_ON_CANCELLATION:
            return CheckpointProperties(periodic=periodic, discard_on_failed=False)
        return CheckpointProperties(periodic=periodic)

    @staticmethod
    def for_savepoint() -> CheckpointProperties:
        return CheckpointProperties(
            is_savepoint=True,
            periodic=False,
            discard_on_subsumed=False,
            discard_on_finished=False,
            discard_on_cancelled=False,
            discard_on_failed=False,
            discard_on_suspended=False,
        )

    def not_owned(self) -> CheckpointProperties:
        """The same kind, with files the job never deletes (what it was restored from:
        another job's retained checkpoint or a savepoint belongs to its user)."""
        return CheckpointProperties(self.is_savepoint, self.periodic, False, False, False, False,
                                    False)

    def discard_on_shutdown(self, status: JobTerminalStatus) -> bool:
        return {
            JobTerminalStatus.FINISHED: self.discard_on_finished,
            JobTerminalStatus.CANCELED: self.discard_on_cancelled,
            JobTerminalStatus.FAILED: self.discard_on_failed,
            JobTerminalStatus.SUSPENDED: self.discard_on_suspended,
        }[status]


def retention_from_config(value: str) -> ExternalizedCheckpointRetention:
    """The enum for ``execution.checkpointing.externalized-checkpoint-retention``'s value."""
    return ExternalizedCheckpointRetention[value.strip().upper().replace("-", "_")]


@dataclass(frozen=True, slots=True)
class CompletedCheckpoint:
    """One successful snapshot: id, times, every task's state, where its metadata lives."""

    job_id: JobId
    checkpoint_id: CheckpointId
    trigger_timestamp: int
    completion_timestamp: int
    task_states: Mapping[TaskId, SubtaskState | None]
    properties: CheckpointProperties
    location: str
    """The checkpoint's directory (a local path or an fsspec URL)."""
    metadata_path: str
    """``<location>/_metadata``: the external pointer a restore starts from."""
    extra: Mapping[str, str] = field(default_factory=dict)

    @property
    def is_savepoint(self) -> bool:
        return self.properties.is_savepoint

    @property
    def state_size(self) -> int:
        return sum(s.state_size for s in self.task_states.values() if s is not None)

    @property
    def duration_ms(self) -> int:
        return self.completion_timestamp - self.trigger_timestamp

    @property
    def holds_channel_state(self) -> bool:
        """Some task's snapshot holds in-flight data: records an unaligned barrier overtook,
        which are processed (and committed) only after this checkpoint."""
        return any(getattr(state, "has_channel_state", False)
                   for state in self.task_states.values())

    def discard(self) -> None:
        """Delete every task state's private files and the checkpoint directory (never a
        savepoint's). Shared files (incremental checkpoints) are deleted by the store's
        ``SharedStateRegistry`` once no retained checkpoint references them."""
        if self.is_savepoint:
            raise SavepointOwnedByUserError(self.location)
        for task, state in self.task_states.items():
            context = f"checkpoint {self.checkpoint_id}, task {task}"
            private = getattr(state, "discard_private", None)
            if private is None:
                discard_quietly(state, context)
                continue
            try:
                private()
            except Exception:
                log.warning("could not discard state (%s)", context, exc_info=True)
        delete_directory(self.location)

    def __str__(self) -> str:
        kind = "savepoint" if self.is_savepoint else "checkpoint"
        return f"{kind} {self.checkpoint_id} at {self.location}"
