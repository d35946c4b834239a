"""The shared-state registry: reference counts of files shared between retained checkpoints.

Incremental checkpoints (``execution.checkpointing.incremental`` on the RocksDB backend)
upload each immutable SST file once, under ``<dir>/<job-id>/shared/``, and later checkpoints
reference the upload. A shared file may therefore be deleted only when no retained checkpoint
references it any more. The completed-checkpoint store owns one registry and keeps it in step
with its retained checkpoints:

* ``register(checkpoint)`` when a checkpoint enters the store (added after its ``_metadata``
  was written, restored from, or recovered by a restarted driver from ``_metadata`` files);
* ``unregister(checkpoint)`` when it leaves (subsumed beyond ``num-retained``, or at
  shutdown); it returns the files nobody references any more, and the store deletes them.

Only files under this job's own ``shared/`` directory are ever returned for deletion: a job
restored from another job's retained checkpoint references that job's files, which belong to
their owner (Flink's NO_CLAIM restore mode); the backend never builds on them (it re-uploads
what lies outside its own shared directory).

A checkpoint that never completed is not registered: its own uploads are deleted with its
state (``OperatorSubtaskState.discard``), and no other checkpoint can reference them, since a
backend reuses only uploads of checkpoints it was told had completed.

Checkpoints are opaque here (``SubtaskState``): a task state that has ``shared_handles()``
contributes them. Pure bookkeeping, no I/O; owned by the store's (the coordinator's) thread.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from flintlock.runtime.checkpoint.completed import CompletedCheckpoint
from flintlock.runtime.state.handles import StreamStateHandle


@dataclass(frozen=True, slots=True)
class SharedStateStatistics:
    """What the registry tracks (for logs, tests and benchmarks)."""

    files: int
    bytes: int
    references: int


def shared_handles_of(checkpoint: CompletedCheckpoint) -> tuple[StreamStateHandle, ...]:
    """Every shared file ``checkpoint`` references, each once."""
    found: dict[str, StreamStateHandle] = {}
    for state in checkpoint.task_states.values():
        handles = getattr(state, "shared_handles", None)
        if handles is not None:
            for handle in handles():
                found.setdefault(handle.uri, handle)
    return tuple(found.values())


class SharedStateRegistry:
    """Reference counts of shared files over the registered checkpoints."""

    def __init__(self, shared_dir: str | None = None) -> None:
        self.shared_dir = shared_dir.rstrip("/") + "/" if shared_dir else None
        self._counts: dict[str, int] = {}  # uri → registered checkpoints referencing it
        self._handles: dict[str, StreamStateHandle] = {}
        self._registered: dict[int, tuple[str, ...]] = {}  # checkpoint id → its uris

    def register(self, checkpoint: CompletedCheckpoint) -> None:
        """Count ``checkpoint``'s references (a second registration of it changes nothing)."""
        if checkpoint.checkpoint_id in self._registered:
            return
        handles = shared_handles_of(checkpoint)
        self._registered[checkpoint.checkpoint_id] = tuple(h.uri for h in handles)
        for handle in handles:
            self._counts[handle.uri] = self._counts.get(handle.uri, 0) + 1
            self._handles.setdefault(handle.uri, handle)

    def unregister(self, checkpoint: CompletedCheckpoint) -> list[StreamStateHandle]:
        """Drop ``checkpoint``'s references; the files of this job no checkpoint references
        any more (to be deleted by the caller)."""
        unreferenced = []
        for uri in self._registered.pop(checkpoint.checkpoint_id, ()):
            count = self._counts[uri] - 1
            if count:
                self._counts[uri] = count
                continue
            del self._counts[uri]
            handle = self._handles.pop(uri)
            if self.owns(uri):
                unreferenced.append(handle)
        return unreferenced

    def owns(self, uri: str) -> bool:
        """The file lies in this job's shared directory (so this job may delete it)."""
        return self.shared_dir is not None and uri.startswith(self.shared_dir)

    def references(self, uri: str) -> int:
        return self._counts.get(uri, 0)

    def registered(self) -> Iterable[int]:
        return tuple(sorted(self._registered))

    def statistics(self) -> SharedStateStatistics:
        return SharedStateStatistics(
            len(self._counts),
            sum(self._handles[uri].size for uri in self._counts),
            sum(self._counts.values()),
        )
