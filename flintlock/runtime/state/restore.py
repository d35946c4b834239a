"""Restoring a keyed backend: the checks every backend applies before loading blocks.

``validate_restored_handles`` verifies that the handles were written with the backend's max
parallelism and that their state kinds agree with what the backend already knows, and records
the restored kinds (so a later registration with another kind fails).
``check_restored_handles`` does that and then yields the blocks of the key groups the backend
owns: from full snapshots by decoding only the owned groups, from incremental RocksDB
checkpoints by opening the downloaded database read-only and reading only the owned groups
(so either backend restores either kind). Runs on the task thread before processing starts.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from flintlock.runtime.state.errors import MaxParallelismMismatchError, StateKindMismatchError
from flintlock.runtime.state.format import Block, decode_blocks
from flintlock.runtime.state.snapshots import (
    IncrementalKeyedStateHandle,
    KeyedStateHandle,
    KeyGroupsStateHandle,
    ReadState,
)

if TYPE_CHECKING:
    from flintlock.runtime.state.backend import KeyedStateBackend


def validate_restored_handles(
    backend: KeyedStateBackend, handles: Sequence[KeyedStateHandle]
) -> None:
    """Same max parallelism, compatible state kinds; records the restored kinds."""
    for handle in handles:
        if handle.max_parallelism != backend.max_parallelism:
            raise MaxParallelismMismatchError(handle.max_parallelism, backend.max_parallelism)
        for name, label in handle.states:
            known = backend._labels.get(name)
            if known is not None and known != label:
                raise StateKindMismatchError(name, label, known)
            backend._labels[name] = label


def check_restored_handles(
    backend: KeyedStateBackend, handles: Sequence[KeyedStateHandle], read_state: ReadState,
    scratch_dir: str | None = None,
) -> Iterator[Block]:
    """Validate ``handles`` against ``backend`` and yield the owned key groups' blocks
    (``scratch_dir``: where an incremental checkpoint's files are downloaded meanwhile)."""
    validate_restored_handles(backend, handles)
    full = [h for h in handles if isinstance(h, KeyGroupsStateHandle)]
    for _, block in decode_blocks(full, backend.key_group_range, read_state):
        yield block
    incremental = [h for h in handles if isinstance(h, IncrementalKeyedStateHandle)]
    if incremental:
        from flintlock.runtime.state.rocksdb_incremental import incremental_blocks

        for handle in incremental:
            yield from incremental_blocks(
                handle, backend.key_group_range, read_state, scratch_dir)
