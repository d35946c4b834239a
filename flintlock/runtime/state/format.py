"""The on-storage format of keyed state: one blob of per-key-group blocks.

Every keyed backend writes (and reads) the same format, so a snapshot taken with one backend
restores into the other. A blob is the concatenation of one block per key group of the
writer's range, in group order; the handle keeps the byte boundaries (``offsets``), so a
restoring subtask deserialises only the blocks of the groups it owns. A block is one pickle of
``[(state_name, [(key, stored_value), ...]), ...]`` listing only states with entries in that
group; an empty group is an empty block. ``stored_value`` is what the backend keeps per key:
the value, the list, the accumulator, the dict of a map state, or ``(value, timestamp)``
pairs for state with a time to live.

Serialisation is ``pickle`` (protocol 5): state values are the job's own Python objects, the
same objects records are made of. Checkpoint storage is written only by the job itself, and
``read_state`` verifies each blob's checksum before anything is unpickled.

Pure functions; called on the snapshot's asynchronous thread (encode) or the task thread
during restore (decode).
"""

from __future__ import annotations

import pickle
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from flintlock.runtime.state.keygroups import KeyGroupRange, assign_to_key_group
from flintlock.runtime.state.snapshots import KeyGroupsStateHandle, ReadState, read_blob

Entries = list[tuple[Any, Any]]
Block = list[tuple[str, Entries]]

PICKLE_PROTOCOL = 5


def group_by_key_group(
    tables: Mapping[str, Mapping[Any, Any]], max_parallelism: int,
    cache: dict[Any, int] | None = None,
) -> dict[int, Block]:
    """Split ``state name → {key: stored value}`` tables into per-key-group blocks.

    Each distinct key is hashed once, however many states hold it; with ``cache`` (a backend's
    key → key group memory, kept across snapshots) a key is hashed once in its life.
    """
    known: dict[Any, int] = cache if cache is not None else {}
    remember = cache is not None or len(tables) > 1  # one table: a key is seen once anyway
    groups: dict[int, Block] = {}
    for name, table in tables.items():
        by_group: dict[int, Entries] = {}
        for entry in table.items():
            group = known.get(entry[0]) if remember else None
            if group is None:
                group = assign_to_key_group(entry[0], max_parallelism)
                if remember:
                    known[entry[0]] = group
            bucket = by_group.get(group)
            if bucket is None:
                by_group[group] = [entry]
            else:
                bucket.append(entry)
        for group, entries in by_group.items():
            groups.setdefault(group, []).append((name, entries))
    return groups


def encode_blocks(
    blocks: Mapping[int, Block], key_groups: KeyGroupRange
) -> tuple[bytes, tuple[int, ...]]:
    """The blob and its ``len(key_groups) + 1`` block boundaries."""
    parts: list[bytes] = []
    offsets = [0]
    position = 0
    for group in key_groups:
        block = blocks.get(group)
        if block:
            data = pickle.dumps(block, protocol=PICKLE_PROTOCOL)
            parts.append(data)
            position += len(data)
        offsets.append(position)
    return b"".join(parts), tuple(offsets)


def decode_blocks(
    handles: Iterable[KeyGroupsStateHandle], owned: KeyGroupRange, read_state: ReadState
) -> Iterator[tuple[int, Block]]:
    """Yield ``(key_group, block)`` for every non-empty group in ``owned`` among ``handles``.

    Each blob is read (and its checksum verified) once; blocks of groups outside ``owned``
    are never unpickled.
    """
    for handle in handles:
        mine = handle.intersect(owned)
        if mine is None or mine.state_size == 0:
            continue
        view = memoryview(read_blob(mine.handle, read_state))
        for group in mine.key_group_range:
            start, end = mine.block(group)
            if end > start:
                yield group, pickle.loads(view[start:end])
