"""The checkpoint side of a new JobManager: the savepoint it starts from, its checkpoint
storage, the completed-checkpoint store recovered from that storage, and the coordinator.

Recovering the store may skip damaged checkpoints (``CheckpointFallback``, shown in the job's
exception history) or, with ``execution.checkpointing.recovery.fallback-to-older-checkpoint``
off, raise the ``CorruptStateError`` naming the damaged file.

``execution.state-recovery.path`` is checked as ``flintlock run -s`` checks it: a path that
does not exist, or a directory without ``_metadata``, is a ``SavepointPathError`` (a
``ConfigurationError`` naming the key) rather than a corrupt ``_metadata``. New checkpoint ids
continue after the restored savepoint's id, as in Flink (issue 30).

Runs on the thread that creates the JobManager.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from flintlock.common.clock import Clock
from flintlock.common.config import Configuration
from flintlock.common.errors import ConfigurationError
from flintlock.common.ids import NO_CHECKPOINT, JobVertexId, SubtaskIndex
from flintlock.common.options import checkpointing as cp_options
from flintlock.common.options import execution as execution_options
from flintlock.graph.job_graph import JobGraph
from flintlock.runtime.checkpoint.completed import CompletedCheckpoint
from flintlock.runtime.checkpoint.coordinator import CheckpointCoordinator
from flintlock.runtime.checkpoint.coordinator_settings import CheckpointTaskSets
from flintlock.runtime.checkpoint.metadata import resolve_savepoint
from flintlock.runtime.checkpoint.pending import TaskId
from flintlock.runtime.checkpoint.storage import METADATA_FILE, CheckpointStorage, join, resolve
from flintlock.runtime.checkpoint.store import CheckpointFallback, CompletedCheckpointStore
from flintlock.runtime.enumerators import coordinator_task, enumerated_sources


class SavepointPathError(ConfigurationError):
    """``execution.state-recovery.path`` names no savepoint or retained checkpoint."""

    def __init__(self, path: str, why: str) -> None:
        super().__init__(path, why)
        self.path = path
        self.why = why

    def __str__(self) -> str:
        return (f"{execution_options.STATE_RECOVERY_PATH.key}: {self.path} {self.why}; "
                "`flintlock savepoint` and `flintlock stop` print the path to give")


def check_recovery_path(path: str) -> None:
    """Raises ``SavepointPathError`` unless ``path`` is an existing ``_metadata`` file or a
    directory holding one."""
    fs, fs_path = resolve(path)
    if not fs.exists(fs_path):
        raise SavepointPathError(path, "does not exist")
    if fs.isdir(fs_path):
        _, metadata = resolve(join(path.rstrip("/"), METADATA_FILE))
        if not fs.exists(metadata):
            raise SavepointPathError(path, "is a directory without a _metadata file (not a "
                                           "savepoint or retained checkpoint)")


@dataclass(frozen=True)
class CheckpointSetup:
    coordinator: CheckpointCoordinator
    storage: CheckpointStorage
    initial_savepoint: CompletedCheckpoint | None
    """``execution.state-recovery.path`` resolved (None: none configured)."""
    enumerated: list[tuple[JobVertexId, str, Any, int]]
    """The job's enumerated sources (vertex, operator id, source, parallelism)."""
    fallbacks: tuple[CheckpointFallback, ...]
    """Damaged checkpoints the recovered store skipped, newest first."""


def set_up_checkpointing(job_graph: JobGraph, config: Configuration, clock: Clock,
                         rng: random.Random) -> CheckpointSetup:
    initial = None
    recovery_path = config.get(execution_options.STATE_RECOVERY_PATH)
    if recovery_path:
        check_recovery_path(recovery_path)
        initial = resolve_savepoint(recovery_path)
    job_id = job_graph.job_id
    storage = CheckpointStorage.from_config(config, job_id, rng)
    store = CompletedCheckpointStore.recover(
        storage.job_dir, config.get(cp_options.NUM_RETAINED),
        fallback=config.get(cp_options.FALLBACK_TO_OLDER))
    tasks = [TaskId(v.id, SubtaskIndex(i)) for v in job_graph.vertices
             for i in range(v.parallelism)]
    sources = [TaskId(v.id, SubtaskIndex(i)) for v in job_graph.vertices
               if v.is_source for i in range(v.parallelism)]
    enumerated = enumerated_sources(job_graph)
    coordinators = [coordinator_task(vertex) for vertex, _, _, _ in enumerated]
    everyone = frozenset(tasks + coordinators)
    coordinator = CheckpointCoordinator(
        job_id, config, CheckpointTaskSets(frozenset(sources), everyone, everyone),
        storage, store, clock, rng,
        last_checkpoint_id=initial.checkpoint_id if initial is not None else NO_CHECKPOINT)
    return CheckpointSetup(coordinator, storage, initial, enumerated, store.fallbacks)
