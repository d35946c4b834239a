"""The ``hashmap`` keyed state backend: state as Python dicts on the heap (the default).

Each state name owns one table, a dict ``key → stored value`` (the value, the list, the
accumulator, or the dict of a map state). The state objects over the tables, and their guarded
mode, are in ``heap_states``; this module holds the tables and takes snapshots. Key groups are
not computed on access; they are computed when a snapshot is written
(``format.KeyGroupIndex``) and restore keeps only owned groups.

Snapshot design note (copy-on-write). The synchronous part shallow-copies every table
(``dict.copy``: tens of nanoseconds per entry); the asynchronous part groups and pickles the
copies. Replacing or removing entries in the live tables cannot affect the copies, but user
values may be mutable objects shared by both: the live list of a list state, a dict of a map
state, a user object in a value state. So the synchronous part also puts the state objects of
every table holding a mutable value into *guarded* mode. (Whether a table holds only immutable
values — scalars, tuples of scalars: the accumulators of a keyed count or sum — is decided in
C; such a table needs no guard, since nothing it shares with the copy can change.) In guarded
mode the first access to a key (per state, per snapshot) replaces a non-immutable stored value
by a private deep copy before anything reads or mutates it, so the snapshot keeps the object
as it was. Guarded mode is a subclass whose methods do this first; a state object switches
class (``__class__``) on entering and leaving it, so without an in-flight snapshot the hot path
pays nothing. A guarded state object's ``_copied`` set is reset at each snapshot (every stored
object is then shared with the newest copy). Operators that use a table directly
(``direct_table``) apply the same rule through ``copied_keys``. A value the user keeps a
reference to across records and mutates later is outside this protection, as in Flink's heap
backend.

The asynchronous part keeps each table's keys indexed by key group across snapshots
(``format.KeyGroupIndex``): with a stable key set it does no per-entry Python work, each
group's values are gathered and pickled in C.

Threads: tables and state objects belong to the task thread; ``_HeapSnapshot.write`` runs on
an asynchronous thread and reads only its private copies; the guard counters are under a lock
because snapshots are released from the asynchronous thread.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from flintlock.common.clock import SYSTEM_CLOCK, Clock
from flintlock.common.ids import CheckpointId
from flintlock.common.state import (
    AggregatingStateDescriptor,
    ReducingStateDescriptor,
    State,
    StateDescriptor,
    StateKind,
)
from flintlock.runtime.state.backend import (
    DEFAULT_INLINE_THRESHOLD,
    KeyedStateBackend,
    KeyedStateStatistics,
)
from flintlock.runtime.state.errors import SnapshotReleasedError, StateBackendDisposedError
from flintlock.runtime.state.format import (
    KeyGroupIndex,
    encode_blocks,
    encode_indexed,
    entries_of,
    group_by_key_group,
)
from flintlock.runtime.state.heap_states import (
    GUARDED,
    STATE_CLASSES,
    UNGUARDED,
    HeapAggregatingState,
    HeapReducingState,
    HeapState,
    HeapValueState,
    all_immutable,
)
from flintlock.runtime.state.keygroups import KeyGroupRange
from flintlock.runtime.state.restore import check_restored_handles
from flintlock.runtime.state.snapshots import (
    KeyedStateHandle,
    KeyGroupsStateHandle,
    ReadState,
    StateWriter,
    write_blob,
)

KEY_GROUP_CACHE_MIN = 100_000


class HeapKeyedStateBackend(KeyedStateBackend):
    """Keyed state in dicts; see the module docstring for the snapshot design."""

    def __init__(
        self,
        key_group_range: KeyGroupRange,
        max_parallelism: int,
        clock: Clock = SYSTEM_CLOCK,
        inline_threshold: int = DEFAULT_INLINE_THRESHOLD,
    ) -> None:
        super().__init__(key_group_range, max_parallelism, clock, inline_threshold)
        self._tables: dict[str, dict[Any, Any]] = {}  # task thread
        self._heap_states: list[HeapState] = []  # task thread
        self._guard_lock = threading.Lock()
        self._in_flight = 0  # snapshots not yet written or released; under _guard_lock
        # id(table) → in-flight snapshots that share a mutable value of it; under _guard_lock
        self._guards: dict[int, int] = {}
        self._key_groups: dict[Any, int] = {}  # key -> key group, for snapshot writers
        self._indexes: dict[str, KeyGroupIndex] = {}  # per table; under _index_lock
        self._index_lock = threading.Lock()  # held by a snapshot writer while it encodes
        self._snapshots: weakref.WeakSet[_HeapSnapshot] = weakref.WeakSet()  # task thread
        self._disposed = False

    def _create_state(self, name: str, kind: StateKind, descriptor: StateDescriptor) -> State:
        self._check_open()
        table = self._tables.setdefault(name, {})
        state: HeapState
        if kind is StateKind.REDUCING:
            assert isinstance(descriptor, ReducingStateDescriptor)
            state = HeapReducingState(self, table, descriptor.reduce)
        elif kind is StateKind.AGGREGATING:
            assert isinstance(descriptor, AggregatingStateDescriptor)
            state = HeapAggregatingState(self, table, descriptor.agg_function)
        else:
            state = STATE_CLASSES[kind](self, table)
        with self._guard_lock:
            if id(table) in self._guards:
                state.__class__ = GUARDED[type(state)]
        self._heap_states.append(state)
        return state  # type: ignore[return-value]

    def keys(self, name: str) -> Iterator[Any]:
        return iter(list(self._tables.get(name, ())))

    def direct_table(self, descriptor: StateDescriptor) -> dict[Any, Any] | None:
        """The dict behind a value state without TTL, for operators whose per-record work is
        a plain get/put by key (keyed reduce); None when the state is not a plain value state.
        While a snapshot is in flight the caller applies copy-on-write (``copied_keys``)."""
        state = self.get_partitioned_state(descriptor)
        if descriptor.ttl_config is not None or not isinstance(state, HeapValueState):
            return None
        return state._table

    def copied_keys(self, descriptor: StateDescriptor) -> set[Any] | None:
        """While a snapshot is in flight: the keys of ``direct_table(descriptor)`` whose value
        already is private to the live table in this snapshot. An operator using the table
        directly must, for any other key, add it here and replace its value by
        ``own_value(value)`` before reading or changing it — the same copy-on-write the guarded
        state object applies. None when no snapshot is in flight (task thread)."""
        if not self._guards:
            return None
        state = self.get_partitioned_state(descriptor)
        if not isinstance(state, HeapState) or id(state._table) not in self._guards:
            return None
        return state._copied

    def key_group_cache(self) -> dict[Any, int]:
        """Key → key group, remembered across snapshots (written by snapshot threads; dict
        operations are atomic). Bounded: forgotten when it outgrows the keys held."""
        if len(self._key_groups) > max(KEY_GROUP_CACHE_MIN,
                                       2 * sum(map(len, self._tables.values()))):
            self._key_groups = {}
        return self._key_groups

    def encode_indexed(self, tables: dict[str, dict[Any, Any]]) -> tuple[bytes, tuple[int, ...]]:
        """The snapshot blob of ``tables`` (private copies), through the per-table key group
        indexes (snapshot writer threads, one at a time)."""
        with self._index_lock:
            try:  # a table as large as its index holds the same keys unless one is missing
                return encode_indexed(self._indexed(tables, True), self.key_group_range)
            except KeyError:
                return encode_indexed(self._indexed(tables, False), self.key_group_range)

    def _indexed(
        self, tables: dict[str, dict[Any, Any]], trust_size: bool
    ) -> dict[str, tuple[dict[Any, Any], dict[int, list[Any]]]]:
        # the indexes remember each key's group; the shared cache only saves hashing a key
        # again for a second table (and would double the memory for a single one)
        cache = self.key_group_cache() if len(tables) > 1 else {}
        indexed = {}
        for name, table in tables.items():
            index = self._indexes.get(name)
            if index is None:
                index = self._indexes[name] = KeyGroupIndex()
            groups = index.refresh(table, self.max_parallelism, cache, trust_size)
            indexed[name] = (table, groups)
        return indexed

    @property
    def snapshot_in_flight(self) -> bool:
        """A snapshot's asynchronous part may still read the tables (task thread reads it)."""
        return self._in_flight > 0

    def snapshot(self, checkpoint_id: CheckpointId | None = None) -> _HeapSnapshot:
        self._check_open()
        copies = {name: table.copy() for name, table in self._tables.items() if table}
        # only a table whose copy shares a mutable value needs copy-on-write (checked in C)
        guarded = frozenset(
            id(self._tables[name]) for name, copy in copies.items()
            if not all_immutable(copy.values()))
        with self._guard_lock:
            self._in_flight += 1
            for table_id in guarded:
                self._guards[table_id] = self._guards.get(table_id, 0) + 1
            for state in self._heap_states:
                if id(state._table) in guarded:
                    state._copied = set()  # every stored value is shared with this copy
                    if type(state) in GUARDED:
                        state.__class__ = GUARDED[type(state)]
        filters = self.snapshot_filters()
        snapshot = _HeapSnapshot(
            self, copies, filters, tuple(sorted(self._labels.items())), guarded)
        self._snapshots.add(snapshot)
        return snapshot

    def _release_snapshot(self, guarded: frozenset[int]) -> None:
        with self._guard_lock:
            self._in_flight -= 1
            done = set()
            for table_id in guarded:
                count = self._guards.pop(table_id) - 1
                if count:
                    self._guards[table_id] = count
                else:
                    done.add(table_id)
            for state in self._heap_states:
                if id(state._table) in done:
                    state.__class__ = UNGUARDED.get(type(state), type(state))
                    state._copied = set()

    def restore(self, handles: Sequence[KeyedStateHandle], read_state: ReadState) -> None:
        self._check_open()
        for group_block in check_restored_handles(self, handles, read_state):
            for name, entries in group_block:
                self._tables.setdefault(name, {}).update(entries_of(entries))

    def statistics(self) -> KeyedStateStatistics:
        return KeyedStateStatistics(
            "hashmap", len(self._labels), sum(map(len, self._tables.values())), self._in_flight
        )

    def dispose(self) -> None:
        """Drops all state; in-flight snapshots are released (writing one then raises)."""
        for snapshot in list(self._snapshots):
            snapshot.release()
        self._tables.clear()
        self._heap_states.clear()
        self._disposed = True

    def _check_open(self) -> None:
        if self._disposed:
            raise StateBackendDisposedError("hashmap")


class _HeapSnapshot:
    """The copied tables of one snapshot, waiting for the asynchronous write."""

    def __init__(
        self,
        backend: HeapKeyedStateBackend,
        copies: dict[str, dict[Any, Any]],
        filters: dict[str, Callable[[Any], Any]],
        labels: tuple[tuple[str, str], ...],
        guarded: frozenset[int],
    ) -> None:
        self._backend: HeapKeyedStateBackend | None = backend
        self._guarded = guarded  # tables under copy-on-write for this snapshot
        self._copies = copies
        self._filters = filters
        self._labels = labels
        self._lock = threading.Lock()

    def write(self, writer: StateWriter, name: str) -> KeyGroupsStateHandle | None:
        backend = self._backend
        try:
            if backend is None:
                raise SnapshotReleasedError("hashmap")
            encoded = self._encode(backend)
        finally:
            self.release()  # the copies are encoded: copy-on-write can stop before the I/O
        if encoded is None:
            return None
        data, offsets = encoded
        blob = write_blob(writer, name, data, backend.inline_threshold)
        return KeyGroupsStateHandle(
            backend.key_group_range, offsets, blob, backend.max_parallelism, self._labels
        )

    def _encode(self, backend: HeapKeyedStateBackend) -> tuple[bytes, tuple[int, ...]] | None:
        if not self._filters:
            return backend.encode_indexed(self._copies) if self._copies else None
        tables = {n: _filtered(t, self._filters.get(n)) for n, t in self._copies.items()}
        if not any(tables.values()):
            return None
        blocks = group_by_key_group(tables, backend.max_parallelism, backend.key_group_cache())
        return encode_blocks(blocks, backend.key_group_range)

    def release(self) -> None:
        with self._lock:
            backend, self._backend = self._backend, None
            self._copies = {}
        if backend is not None:
            backend._release_snapshot(self._guarded)


def _filtered(table: dict[Any, Any], keep: Callable[[Any], Any] | None) -> dict[Any, Any]:
    if keep is None:
        return table
    kept = {key: keep(stored) for key, stored in table.items()}
    return {key: stored for key, stored in kept.items() if stored is not None}
