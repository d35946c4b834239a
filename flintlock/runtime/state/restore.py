"""Restoring a keyed backend: the checks every backend applies before loading blocks.

``check_restored_handles`` verifies that the handles were written with the backend's max
parallelism and that their state kinds agree with what the backend already knows, records the
restored kinds (so a later registration with another kind fails), and yields the blocks of the
key groups the backend owns. Runs on the task thread before processing starts.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from flintlock.runtime.state.errors import MaxParallelismMismatchError, StateKindMismatchError
from flintlock.runtime.state.format import Block, decode_blocks
from flintlock.runtime.state.snapshots import KeyGroupsStateHandle, ReadState

if TYPE_CHECKING:
    from flintlock.runtime.state.backend import KeyedStateBackend


def check_restored_handles(
    backend: KeyedStateBackend, handles: Sequence[KeyGroupsStateHandle], read_state: ReadState
) -> Iterator[Block]:
    """Validate ``handles`` against ``backend`` and yield the owned key groups' blocks."""
    for handle in handles:
        if handle.max_parallelism != backend.max_parallelism:
            raise MaxParallelismMismatchError(handle.max_parallelism, backend.max_parallelism)
        for name, label in handle.states:
            known = backend._labels.get(name)
            if known is not None and known != label:
                raise StateKindMismatchError(name, label, known)
            backend._labels[name] = label
    for _, block in decode_blocks(handles, backend.key_group_range, read_state):
        yield block
