"""The completed-checkpoint store: the retained checkpoints a restore can start from.

Keeps the newest ``execution.checkpointing.num-retained`` completed checkpoints. ``add``
first commits the new checkpoint's ``_metadata`` (the file, then its commit marker; see
``storage``), and only once that succeeded drops the oldest checkpoints beyond the retained
count and deletes their files — so a crash at any point leaves at least the previous
checkpoint readable.
A savepoint in the store (e.g. the one a job was restored from) is dropped like any other
entry but its files are never deleted: they belong to the user.

Incremental checkpoints share files (``<job_dir>/shared/``). The store's
``SharedStateRegistry`` counts, per shared file, the retained checkpoints that reference it:
a checkpoint is registered when it enters the store (``add`` after its ``_metadata`` is
written, ``add_restored``, ``recover``) and unregistered when it is dropped and discarded;
a shared file is deleted when its count reaches zero, never before. A dropped checkpoint
whose files must be kept (a savepoint, a restored checkpoint the job does not own) keeps its
references, so nothing it needs is deleted. ``CompletedCheckpoint.discard`` deletes only a
checkpoint's private files.

A restarted driver calls ``CompletedCheckpointStore.recover(job_dir)``: it scans the
``chk-<n>`` directories, loads every valid ``_metadata`` (newest first), skips an incomplete
one (no ``_metadata``, or no commit marker naming it: the driver died before finishing it),
and reports the highest checkpoint id ever used, so new ids never collide with an old
directory. The recovered checkpoints are registered again, so the restarted driver knows every
shared file's references. A committed but damaged checkpoint newer than the latest valid one is
a fallback: with ``fallback`` (``execution.checkpointing.recovery.fallback-to-older-checkpoint``)
it is skipped and recorded in ``fallbacks`` (the JobManager shows each in the job's log and
exception history); without it ``recover`` raises its ``CorruptStateError``, naming the file. A
damaged checkpoint older than a valid one is never restored anyway and is only logged.
Falling back can break exactly-once for sinks that already committed the skipped checkpoint's
output (docs/reliability.md).

On shutdown the checkpoints' properties decide what is deleted (see ``completed``): a
cancelled job keeps them only with RETAIN_ON_CANCELLATION, a failed job keeps externalized
ones, a finished job deletes all but savepoints, a suspended driver deletes nothing.

Thread ownership: owned by the coordinator's thread; not synchronised.
"""

from __future__ import annotations

import dataclasses
import logging
import re
from dataclasses import dataclass

from flintlock.common.ids import NO_CHECKPOINT, CheckpointId
from flintlock.runtime.checkpoint.completed import CompletedCheckpoint, JobTerminalStatus
from flintlock.runtime.checkpoint.metadata import read_metadata, write_metadata
from flintlock.runtime.checkpoint.shared import SharedStateRegistry
from flintlock.runtime.checkpoint.storage import (
    CHECKPOINT_PREFIX,
    METADATA_FILE,
    SHARED_DIR,
    UncommittedCheckpointError,
    canonical_uri,
    delete_directory,
    discard_state,
    join,
    resolve,
)
from flintlock.runtime.state.handles import CorruptStateError

log = logging.getLogger(__name__)
_CHECKPOINT_DIR = re.compile(rf"^{CHECKPOINT_PREFIX}(\d+)$")


@dataclass(frozen=True, slots=True)
class CheckpointFallback:
    """A damaged completed checkpoint that recovery skipped for an older one."""

    checkpoint_id: CheckpointId
    error: CorruptStateError
    restored_id: CheckpointId | None
    """The checkpoint restored instead (None: no valid checkpoint was left)."""

    def __str__(self) -> str:
        instead = (f"checkpoint {self.restored_id}" if self.restored_id is not None
                   else "no checkpoint (a fresh start)")
        return f"checkpoint {self.checkpoint_id} is damaged ({self.error}); restoring {instead}"


class CompletedCheckpointStore:
    """The newest ``num_retained`` completed checkpoints, oldest first."""

    def __init__(
        self,
        num_retained: int = 1,
        job_dir: str | None = None,
        highest_checkpoint_id: CheckpointId = NO_CHECKPOINT,
        checkpoints: list[CompletedCheckpoint] | None = None,
    ) -> None:
        if num_retained < 1:
            raise ValueError("num_retained must be at least 1")
        self.num_retained = num_retained
        self.job_dir = job_dir
        self._checkpoints = sorted(checkpoints or [], key=lambda c: c.checkpoint_id)
        self._highest_id = max(
            [highest_checkpoint_id, *(c.checkpoint_id for c in self._checkpoints)]
        )
        self.shared_state = SharedStateRegistry(
            canonical_uri(join(job_dir, SHARED_DIR)) if job_dir else None)
        for checkpoint in self._checkpoints:
            self.shared_state.register(checkpoint)
        self.fallbacks: tuple[CheckpointFallback, ...] = ()
        """What ``recover`` skipped to reach the latest valid checkpoint, newest first."""

    # -- queries ------------------------------------------------------------------------

    @property
    def checkpoints(self) -> tuple[CompletedCheckpoint, ...]:
        return tuple(self._checkpoints)

    @property
    def highest_checkpoint_id(self) -> int:
        """The highest checkpoint id ever used (completed or not); new ids must exceed it."""
        return self._highest_id

    def latest(self) -> CompletedCheckpoint | None:
        return self._checkpoints[-1] if self._checkpoints else None

    # -- changes ------------------------------------------------------------------------

    def add(self, checkpoint: CompletedCheckpoint) -> list[CompletedCheckpoint]:
        """Store ``checkpoint`` durably, then drop (and discard) the oldest beyond the
        retained count. Returns the dropped ones. If writing fails, nothing changed."""
        latest = self.latest()
        if latest is not None and checkpoint.checkpoint_id <= latest.checkpoint_id:
            raise ValueError(
                f"checkpoint {checkpoint.checkpoint_id} is not newer than {latest.checkpoint_id}"
            )
        write_metadata(checkpoint)
        self._checkpoints.append(checkpoint)
        self.shared_state.register(checkpoint)
        self._highest_id = max(self._highest_id, checkpoint.checkpoint_id)
        dropped = self._checkpoints[: -self.num_retained]
        self._checkpoints = self._checkpoints[-self.num_retained :]
        for old in dropped:
            self._discard_subsumed(old)
        return dropped

    def add_restored(self, checkpoint: CompletedCheckpoint) -> None:
        """Register a checkpoint or savepoint the job was restored from, without writing it
        (its ``_metadata`` exists already, maybe in a directory the job must not write).
        A failover before the first new checkpoint restores from it again. Its files are
        never deleted by this store: they belong to whoever made them."""
        if any(c.checkpoint_id == checkpoint.checkpoint_id for c in self._checkpoints):
            return
        restored = dataclasses.replace(checkpoint, properties=checkpoint.properties.not_owned())
        self._checkpoints = sorted([*self._checkpoints, restored], key=lambda c: c.checkpoint_id)
        self.shared_state.register(restored)
        self._highest_id = max(self._highest_id, checkpoint.checkpoint_id)

    def note_checkpoint_id(self, checkpoint_id: CheckpointId) -> None:
        """Record that ``checkpoint_id`` was used (triggered), completed or not."""
        self._highest_id = max(self._highest_id, checkpoint_id)

    def _discard_subsumed(self, checkpoint: CompletedCheckpoint) -> None:
        if not checkpoint.properties.discard_on_subsumed:
            log.info("%s left the store; its files are kept", checkpoint)
            return
        try:
            self._discard(checkpoint)
        except Exception:
            log.warning("could not discard subsumed %s", checkpoint, exc_info=True)

    def _discard(self, checkpoint: CompletedCheckpoint) -> None:
        """Unregister ``checkpoint``, delete its private files and the shared files no
        retained checkpoint references any more."""
        unreferenced = self.shared_state.unregister(checkpoint)
        checkpoint.discard()
        for handle in unreferenced:
            discard_state(handle)

    def shutdown(self, status: JobTerminalStatus) -> None:
        """The job ended (or the driver is going away): delete what the properties allow."""
        kept = []
        for checkpoint in self._checkpoints:
            if checkpoint.properties.discard_on_shutdown(status):
                self._discard(checkpoint)
            else:
                kept.append(checkpoint)
        self._checkpoints = []
        if status is not JobTerminalStatus.SUSPENDED and self.job_dir is not None:
            if not any(c.location.startswith(self.job_dir) for c in kept):
                delete_directory(self.job_dir)

    # -- recovery -----------------------------------------------------------------------

    @classmethod
    def recover(cls, job_dir: str, num_retained: int = 1, *,
                fallback: bool = True) -> CompletedCheckpointStore:
        """The store as a previous driver left it in ``job_dir`` (see the module docstring).
        Raises ``CorruptStateError`` for a damaged newest checkpoint unless ``fallback``."""
        ids = _checkpoint_ids(job_dir)
        valid: list[CompletedCheckpoint] = []
        damaged: list[tuple[CheckpointId, CorruptStateError]] = []
        for checkpoint_id in sorted(ids, reverse=True):
            loaded = _load(job_dir, checkpoint_id)
            if isinstance(loaded, CorruptStateError):
                if not valid:
                    if not fallback:
                        raise loaded
                    damaged.append((checkpoint_id, loaded))
                else:
                    log.warning("skipping damaged checkpoint %d (older than checkpoint %d): %s",
                                checkpoint_id, valid[0].checkpoint_id, loaded)
            elif loaded is not None:
                valid.append(loaded)
        store = cls(num_retained, job_dir, max(ids, default=NO_CHECKPOINT),
                    list(reversed(valid)))
        latest = store.latest()
        restored = latest.checkpoint_id if latest is not None else None
        store.fallbacks = tuple(CheckpointFallback(n, error, restored) for n, error in damaged)
        for skipped in store.fallbacks:
            log.warning("damaged checkpoint %d skipped, falling back: %s",
                        skipped.checkpoint_id, skipped)
        log.info(
            "recovered %s: latest valid %s, highest id used %d",
            job_dir, latest or "none", store.highest_checkpoint_id,
        )
        return store


def _checkpoint_ids(job_dir: str) -> list[CheckpointId]:
    fs, path = resolve(job_dir)
    if not fs.isdir(path):
        return []
    ids = []
    for entry in fs.ls(path, detail=False):
        match = _CHECKPOINT_DIR.match(str(entry).rstrip("/").rsplit("/", 1)[-1])
        if match:
            ids.append(CheckpointId(int(match.group(1))))
    return ids


def _load(job_dir: str, checkpoint_id: CheckpointId
          ) -> CompletedCheckpoint | CorruptStateError | None:
    """The checkpoint, None if it never completed, its error if it is damaged."""
    metadata_uri = join(job_dir, f"{CHECKPOINT_PREFIX}{checkpoint_id}", METADATA_FILE)
    fs, path = resolve(metadata_uri)
    if not fs.exists(path):
        log.info("checkpoint %d in %s never completed (no %s); skipped",
                 checkpoint_id, job_dir, METADATA_FILE)
        return None
    try:
        checkpoint = read_metadata(metadata_uri)
    except UncommittedCheckpointError as exc:
        log.info("checkpoint %d in %s never completed; skipped: %s", checkpoint_id, job_dir, exc)
        return None
    except CorruptStateError as exc:
        return exc
    if checkpoint.checkpoint_id != checkpoint_id:
        return CorruptStateError(
            metadata_uri, f"it holds checkpoint {checkpoint.checkpoint_id}, not {checkpoint_id}")
    return checkpoint
