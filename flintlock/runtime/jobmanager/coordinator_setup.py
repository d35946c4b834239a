"""The checkpoint side of a new JobManager: the savepoint it starts from, its checkpoint
storage, the completed-checkpoint store recovered from that storage, and the coordinator.

Recovering the store may skip damaged checkpoints (``CheckpointFallback``, shown in the job's
exception history) or, with ``execution.checkpointing.recovery.fallback-to-older-checkpoint``
off, raise the ``CorruptStateError`` naming the damaged file.

Runs on the thread that creates the JobManager.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from flintlock.common.clock import Clock
from flintlock.common.config import Configuration
from flintlock.common.ids import JobVertexId, SubtaskIndex
from flintlock.common.options import checkpointing as cp_options
from flintlock.common.options import execution as execution_options
from flintlock.graph.job_graph import JobGraph
from flintlock.runtime.checkpoint.completed import CompletedCheckpoint
from flintlock.runtime.checkpoint.coordinator import CheckpointCoordinator
from flintlock.runtime.checkpoint.coordinator_settings import CheckpointTaskSets
from flintlock.runtime.checkpoint.metadata import resolve_savepoint
from flintlock.runtime.checkpoint.pending import TaskId
from flintlock.runtime.checkpoint.storage import CheckpointStorage
from flintlock.runtime.checkpoint.store import CheckpointFallback, CompletedCheckpointStore
from flintlock.runtime.enumerators import coordinator_task, enumerated_sources


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
        storage, store, clock, rng)
    return CheckpointSetup(coordinator, storage, initial, enumerated, store.fallbacks)
