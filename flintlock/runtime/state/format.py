"""The on-storage format of keyed state: one blob of per-key-group blocks.

Every keyed backend writes (and reads) the same format, so a snapshot taken with one backend
restores into the other. A blob is the concatenation of one block per key group of the
writer's range, in group order; the handle keeps the byte boundaries (``offsets``), so a
restoring subtask deserialises only the blocks of the groups it owns. A block is one pickle of
``[(state_name, (keys, stored_values)), ...]`` — two parallel sequences per state — listing
only states with entries in that group; an empty group is an empty block. ``stored_value`` is
what the backend keeps per key: the value, the list, the accumulator, the dict of a map state,
or ``(value, timestamp)`` pairs for state with a time to live. (Blocks written before
2026-11-21 hold a list of ``(key, stored_value)`` pairs instead; ``entries_of`` reads both.)

Encoding cost (docs/benchmarks.md, "Checkpointing overhead"): a snapshot runs every second on
the task's own core, so per-entry Python work is what it must avoid. ``KeyGroupIndex``
remembers which keys of a table fall into which key group across snapshots; a snapshot then
hashes only the keys added since the previous one, and gathers and pickles each group's values
with C-level calls (``operator.itemgetter(*keys)(table)`` and one ``pickle.dumps``; parallel
sequences pickle in about half the time of a dict built from them, measured).

Serialisation is ``pickle`` (protocol 5, ``pickles.dumps``: the job script's classes by name
too): state values are the job's own Python objects, the same objects records are made of.
Checkpoint storage is written only by the job itself, and ``read_state`` verifies each blob's
checksum before anything is unpickled. A block holds no class of flintlock's own besides those
a job puts into state itself (windows, for instance); those are read through
``pickles.MOVED``, so moving one keeps savepoints readable.

Pure functions; called on the snapshot's asynchronous thread (encode) or the task thread
during restore (decode).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from operator import itemgetter
from typing import Any

from flintlock.runtime.state import pickles as state_pickles
from flintlock.runtime.state.keygroups import KeyGroupRange, assign_to_key_group
from flintlock.runtime.state.snapshots import KeyGroupsStateHandle, ReadState, read_blob

KeyValues = tuple[Sequence[Any], Sequence[Any]]
Entries = KeyValues | list[tuple[Any, Any]]
Block = list[tuple[str, Entries]]

PICKLE_PROTOCOL = state_pickles.PROTOCOL


def entries_of(entries: Entries) -> Iterable[tuple[Any, Any]]:
    """The ``(key, stored_value)`` pairs of a block's entries (parallel sequences, or the
    list of pairs of older blocks)."""
    if isinstance(entries, tuple):
        keys, values = entries
        return zip(keys, values, strict=True)
    return entries


def key_values(table: Mapping[Any, Any]) -> KeyValues:
    return list(table), list(table.values())


class KeyGroupIndex:
    """The keys of one state table by key group, kept up to date from snapshot to snapshot.

    ``refresh(table)`` brings the index to ``table``'s key set: the set differences are
    computed in C, and only added keys are hashed (through the backend's key → key group
    cache) and removed keys dropped from their group's list. With a stable key set a refresh
    costs nothing (``trust_size``) or one C-level comparison of the key sets. Not
    synchronised: snapshot writers of one backend may run concurrently, so the backend holds
    one lock over a refresh and the encode that reads the returned lists.
    """

    __slots__ = ("_groups", "_members")

    def __init__(self) -> None:
        self._members: dict[Any, int] = {}  # key → key group
        self._groups: dict[int, list[Any]] = {}  # key group → its keys

    def refresh(
        self, table: Mapping[Any, Any], max_parallelism: int, cache: dict[Any, int],
        trust_size: bool = False,
    ) -> dict[int, list[Any]]:
        """Key group → keys of ``table`` (the index's own lists, valid until the next refresh).

        With ``trust_size``, a table as large as the index is taken to hold the same keys
        without comparing them: the caller then reads every indexed key from the table and,
        on a ``KeyError`` (a key went, so another came), refreshes again without trust."""
        members, groups = self._members, self._groups
        if len(members) == len(table) and (trust_size or members.keys() == table.keys()):
            return groups  # the common case: no key came or went
        removed = members.keys() - table.keys()
        added = table.keys() - members.keys()
        if removed:
            dirty = {members.pop(key) for key in removed}
            for group in dirty:
                kept = [key for key in groups[group] if key in members]
                if kept:
                    groups[group] = kept
                else:
                    del groups[group]
        for key in added:
            known = cache.get(key)
            group = cache[key] = (
                assign_to_key_group(key, max_parallelism) if known is None else known)
            members[key] = group
            keys = groups.get(group)
            if keys is None:
                groups[group] = [key]
            else:
                keys.append(key)
        return groups


def encode_indexed(
    tables: Mapping[str, tuple[Mapping[Any, Any], Mapping[int, list[Any]]]],
    key_groups: KeyGroupRange,
) -> tuple[bytes, tuple[int, ...]]:
    """The blob and block boundaries of ``name → (table, key group → keys)``: per key group one
    pickle of a list of ``(name, (keys, values))``, the values gathered in C."""

    def block_of(group: int) -> Block:
        block: Block = []
        for name, (table, groups) in tables.items():
            keys = groups.get(group)
            if keys:
                values = itemgetter(*keys)(table) if len(keys) > 1 else (table[keys[0]],)
                block.append((name, (keys, values)))
        return block

    return _encode_groups(key_groups, block_of)


def group_by_key_group(
    tables: Mapping[str, Mapping[Any, Any]], max_parallelism: int,
    cache: dict[Any, int] | None = None,
) -> dict[int, Block]:
    """Split ``state name → {key: stored value}`` tables into per-key-group blocks.

    Each distinct key is hashed once, however many states hold it; with ``cache`` (a backend's
    key → key group memory, kept across snapshots) a key is hashed once in its life. For
    tables snapshotted again and again, ``KeyGroupIndex`` is cheaper.
    """
    known: dict[Any, int] = cache if cache is not None else {}
    remember = cache is not None or len(tables) > 1  # one table: a key is seen once anyway
    groups: dict[int, Block] = {}
    for name, table in tables.items():
        by_group: dict[int, dict[Any, Any]] = {}
        for key, stored in table.items():
            group = known.get(key) if remember else None
            if group is None:
                group = assign_to_key_group(key, max_parallelism)
                if remember:
                    known[key] = group
            bucket = by_group.get(group)
            if bucket is None:
                by_group[group] = {key: stored}
            else:
                bucket[key] = stored
        for group, entries in by_group.items():
            groups.setdefault(group, []).append((name, key_values(entries)))
    return groups


def encode_blocks(
    blocks: Mapping[int, Block], key_groups: KeyGroupRange
) -> tuple[bytes, tuple[int, ...]]:
    """The blob and its ``len(key_groups) + 1`` block boundaries."""
    return _encode_groups(key_groups, blocks.get)


def _encode_groups(
    key_groups: KeyGroupRange, block_of: Callable[[int], Block | None]
) -> tuple[bytes, tuple[int, ...]]:
    """One pickle per non-empty key group's block, concatenated, with the boundaries."""
    parts: list[bytes] = []
    offsets = [0]
    position = 0
    for group in key_groups:
        block = block_of(group)
        if block:
            data = state_pickles.dumps(block)
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
                yield group, state_pickles.loads(view[start:end])
