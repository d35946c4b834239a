"""The ``rocksdb`` keyed state backend: state in an embedded RocksDB (``rocksdict``), on disk.

For state larger than memory. Chosen over SQLite by measurement (docs/internals/state.md).
Each subtask's backend owns a private database directory under ``state.backend.local-dir``,
deleted by ``dispose()``; it is a working copy, never the durable state (the WAL is off:
recovery restores from checkpoints, as in Flink).

Key layout (raw bytes, so that one key group is one contiguous key range)::

    key group (2 bytes, big endian) | state id (2 bytes) | len(k) (4 bytes) | canonical(k)
    [| canonical(user key)]

``canonical`` is ``common.canonical_keys``: equal keys are equal bytes in every process and
under every hash seed (``1``, ``1.0`` and ``True`` are one key, as in the heap backend's dict),
and the bytes decode (snapshots, rescaling, ``keys``). The user-key suffix exists only for
map state (one RocksDB entry per map entry). Values are in ``values``' format (compact for
plain ints, floats, strs and flat tuples of them, else pickles, ``pickles.dumps``) of the
stored value (the value, the whole list, the accumulator, or for a map entry the pair of user
key and value). Unlike the heap backend, this backend hashes the key to its key group in
``set_current_key``, because the key group is part of every RocksDB key; the encodings of
recent str/int/bytes/tuple keys are cached (bounded), so a hot key is hashed and encoded once.
Until issue 27 the key was ``pickle(k)`` (equal keys that pickle differently were different
entries); a checkpoint in that encoding (``IncrementalKeyedStateHandle.key_encoding``) is
migrated on restore: read through its blocks and written again in canonical form.

Snapshots: the synchronous part opens a RocksDB iterator (``Rdict.items()`` creates it at
once), which pins a consistent view of the database (memtables and SST files) as of that
instant; the asynchronous part walks it in key
order and writes the same per-key-group format as the heap backend, so either backend restores
the other's snapshots. (``rocksdict.Snapshot`` iteration in rocksdict 0.3.29 sees later
writes, so it is not used.) With ``execution.checkpointing.incremental`` the snapshot is a
native RocksDB checkpoint instead, and only new SST files are uploaded (``rocksdb_incremental``).

Threads: the database and state objects belong to the task thread; a snapshot's iterator is
used only by the asynchronous thread that writes it.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import uuid
import zlib
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from rocksdict import BlockBasedOptions, Options, Rdict

from flintlock.common.canonical_keys import ENCODING as KEY_ENCODING
from flintlock.common.canonical_keys import decode_key, encode_key
from flintlock.common.clock import SYSTEM_CLOCK, Clock
from flintlock.common.ids import CheckpointId
from flintlock.common.key_encoding import pack_int64
from flintlock.common.state import (
    AggregatingStateDescriptor,
    ReducingStateDescriptor,
    State,
    StateDescriptor,
    StateKind,
)
from flintlock.runtime.state.backend import (
    DEFAULT_INLINE_THRESHOLD,
    NO_KEY,
    KeyedStateBackend,
    KeyedStateStatistics,
)
from flintlock.runtime.state.crocks import load_crocks
from flintlock.runtime.state.errors import (
    NoCurrentKeyError,
    SnapshotReleasedError,
    StateBackendDisposedError,
)
from flintlock.runtime.state.format import Block, encode_blocks, entries_of
from flintlock.runtime.state.keygroups import KeyGroupRange, assign_to_key_group
from flintlock.runtime.state.restore import check_restored_handles, validate_restored_handles
from flintlock.runtime.state.rocksdb_incremental import (
    BackendIdentity,
    BlockCollector,
    IncrementalSnapshot,
    StateLayout,
    UploadLedger,
    create_native_checkpoint,
    download,
    is_map_label,
    key_bytes,
)
from flintlock.runtime.state.rocksdb_states import (
    NO_WAL,
    RocksAggregatingState,
    RocksListState,
    RocksMapState,
    RocksReducingState,
    RocksValueState,
    dumps,
)
from flintlock.runtime.state.snapshots import (
    IncrementalKeyedStateHandle,
    KeyedStateHandle,
    KeyGroupsStateHandle,
    ReadState,
    StateWriter,
    write_blob,
)
from flintlock.runtime.state.user_keys import encode_user_key

# Encoded keys are remembered for these exact types (cheap to hash); equal keys share their
# canonical bytes, so a dict hit by an equal key of another type is still right.
_CACHEABLE_KEY_TYPES = frozenset({str, int, bytes, tuple})
_KEY_CACHE_SIZE = 65_536
_2_63 = 2**63
_INT_HEADS = tuple((2 + size).to_bytes(4, "big") + b"i" + bytes((size,)) for size in range(10))
"""Per byte count of a 64-bit int (1..9): the entry's length prefix, the canonical tag and
the canonical length (``canonical_keys.encode_key``'s int form)."""


_CROCKS = load_crocks()  # entry keys in C, or None



class RocksDBKeyedStateBackend(KeyedStateBackend):
    """Keyed state in a private RocksDB; see the module docstring."""

    def __init__(
        self,
        key_group_range: KeyGroupRange,
        max_parallelism: int,
        clock: Clock = SYSTEM_CLOCK,
        inline_threshold: int = DEFAULT_INLINE_THRESHOLD,
        local_dir: str | None = None,
        incremental: bool = False,
    ) -> None:
        super().__init__(key_group_range, max_parallelism, clock, inline_threshold)
        self.incremental = incremental
        if local_dir is not None:
            os.makedirs(local_dir, exist_ok=True)
        self._directory = tempfile.mkdtemp(prefix="flintlock-rocksdb-", dir=local_dir)
        self.db: Any = _open(os.path.join(self._directory, "db"))
        self._identity = BackendIdentity(
            uuid.uuid4().hex[:12], key_group_range, max_parallelism, inline_threshold)
        self._ledger = UploadLedger()  # incremental checkpoints' uploads
        self._state_ids: dict[str, bytes] = {}  # name → 2-byte id; task thread
        self._kinds: dict[str, StateKind] = {}  # name → storage kind
        self._snapshots: set[_RocksSnapshot | IncrementalSnapshot] = set()  # in flight;
        # under _snapshots_lock
        self._snapshots_lock = threading.Lock()
        self.key_group_prefix = b""  # 2-byte key group of the current key
        self.key_suffix = b""  # len + canonical bytes of the current key
        self._key_cache: dict[Any, tuple[bytes, bytes]] = {}  # recent keys → encoding
        self._group_prefixes = tuple(group.to_bytes(2, "big") for group in range(max_parallelism))

    def set_current_key(self, key: Any) -> None:
        self.current_key = key
        cacheable = type(key) in _CACHEABLE_KEY_TYPES
        encoded = self._key_cache.get(key) if cacheable else None
        if encoded is None:
            encoded = self._encode_key(key)
            if cacheable:
                if len(self._key_cache) >= _KEY_CACHE_SIZE:
                    self._key_cache.clear()
                self._key_cache[key] = encoded
        self.key_group_prefix, self.key_suffix = encoded

    def entry_keys(self, state_id: bytes, keys: Sequence[Any]) -> list[bytes]:
        """The RocksDB key of each key's entry in a state: ``set_current_key`` then
        ``entry_key`` for a whole batch, leaving the current key as it was. A 64-bit int key
        is encoded inline (the same bytes as ``encode_key`` and ``key_group_index``, with no
        call; a state of a million keys misses any cache), in C where ``_crocks`` is built
        (``_entry_keys_py`` is its Python twin), any other key through the cache."""
        if _CROCKS is not None:
            return _CROCKS.entry_keys(keys, state_id, self.max_parallelism,  # type: ignore[no-any-return]
                                      self._cached_encoding)
        return self._entry_keys_py(state_id, keys)

    def _cached_encoding(self, key: Any) -> tuple[bytes, bytes]:
        """``_encode_key(key)``, remembered for the cacheable key types."""
        if type(key) not in _CACHEABLE_KEY_TYPES:
            return self._encode_key(key)
        cache = self._key_cache
        encoded = cache.get(key)
        if encoded is None:
            encoded = self._encode_key(key)
            if len(cache) >= _KEY_CACHE_SIZE:
                cache.clear()
            cache[key] = encoded
        return encoded

    def _entry_keys_py(self, state_id: bytes, keys: Iterable[Any]) -> list[bytes]:
        """``entry_keys`` in Python: the twin of ``_crocks.entry_keys``."""
        groups, heads, cached = self._group_prefixes, _INT_HEADS, self._cached_encoding
        crc32, pack, max_parallelism = zlib.crc32, pack_int64, self.max_parallelism
        out: list[bytes] = []
        append = out.append
        for key in keys:
            if type(key) is int and -_2_63 <= key < _2_63:
                value = crc32(pack(key))
                value = ((value ^ (value >> 16)) * 0x45D9F3B) & 0xFFFFFFFF
                data = key.to_bytes((key.bit_length() + 8) // 8, "big", signed=True)
                append(groups[(value ^ (value >> 16)) % max_parallelism] + state_id
                       + heads[len(data)] + data)
                continue
            encoded = cached(key)
            append(encoded[0] + state_id + encoded[1])
        return out

    def batch_value_state(self, descriptor: StateDescriptor) -> RocksValueState | None:
        """The value state of ``descriptor`` when it is a plain one (no TTL), for operators
        that read and write it a batch at a time (``RocksValueState.reduce_batch``)."""
        if descriptor.ttl_config is not None:
            return None
        state = self.get_partitioned_state(descriptor)
        return state if isinstance(state, RocksValueState) else None

    def _encode_key(self, key: Any) -> tuple[bytes, bytes]:
        """(2-byte key group, length-prefixed canonical bytes) of ``key``; an int in C where
        ``_crocks`` is built (a state of a million keys misses the cache on most records)."""
        if _CROCKS is not None and type(key) is int:
            entry: bytes = _CROCKS.entry_keys((key,), b"", self.max_parallelism,
                                              self._encode_key_py)[0]
            return entry[:2], entry[2:]
        return self._encode_key_py(key)

    def _encode_key_py(self, key: Any) -> tuple[bytes, bytes]:
        """``_encode_key`` through ``encode_key`` and ``assign_to_key_group``, for any key."""
        encoded = encode_key(key)
        group = assign_to_key_group(key, self.max_parallelism)
        return group.to_bytes(2, "big"), len(encoded).to_bytes(4, "big") + encoded

    def entry_key(self, state_id: bytes) -> bytes:
        """The RocksDB key of the current key's entry in a state."""
        if self.current_key is NO_KEY:
            raise NoCurrentKeyError()
        return self.key_group_prefix + state_id + self.key_suffix

    def _state_id(self, name: str) -> bytes:
        state_id = self._state_ids.get(name)
        if state_id is None:
            state_id = self._state_ids[name] = len(self._state_ids).to_bytes(2, "big")
        return state_id

    def _create_state(self, name: str, kind: StateKind, descriptor: StateDescriptor) -> State:
        db = self._open_db()
        state_id = self._state_id(name)
        self._kinds[name] = kind
        if kind is StateKind.VALUE:
            return RocksValueState(self, db, state_id)
        if kind is StateKind.LIST:
            return RocksListState(self, db, state_id)
        if kind is StateKind.MAP:
            return RocksMapState(self, db, state_id)
        if kind is StateKind.REDUCING:
            assert isinstance(descriptor, ReducingStateDescriptor)
            return RocksReducingState(self, db, state_id, descriptor.reduce)
        assert isinstance(descriptor, AggregatingStateDescriptor)
        return RocksAggregatingState(self, db, state_id, descriptor.agg_function)

    def keys(self, name: str) -> Iterator[Any]:
        state_id = self._state_ids.get(name)
        if state_id is None:
            return iter(())
        db = self._open_db()
        found: dict[bytes, None] = {}
        for group in self.key_group_range:
            start = group.to_bytes(2, "big") + state_id
            for key, _ in db.items(from_key=start):
                if not key.startswith(start):
                    break
                found[key_bytes(key)] = None
        return iter([decode_key(encoded) for encoded in found])

    def snapshot(self, checkpoint_id: CheckpointId | None = None
                 ) -> _RocksSnapshot | IncrementalSnapshot:
        db = self._open_db()
        snapshot: _RocksSnapshot | IncrementalSnapshot
        if self.incremental:
            layout = StateLayout(dict(self._state_ids), tuple(sorted(self._labels.items())),
                                 self.snapshot_filters(), KEY_ENCODING)
            snapshot = IncrementalSnapshot(
                create_native_checkpoint(db, self._directory), checkpoint_id, self._identity,
                layout, self._ledger, self._forget_snapshot)
        else:
            iterator = db.items()  # its RocksDB iterator pins the database as of now
            snapshot = _RocksSnapshot(
                self, iterator, {sid: name for name, sid in self._state_ids.items()},
                dict(self._kinds), tuple(sorted(self._labels.items())),
            )
        with self._snapshots_lock:
            self._snapshots.add(snapshot)
        return snapshot

    def _forget_snapshot(self, snapshot: _RocksSnapshot | IncrementalSnapshot) -> None:
        with self._snapshots_lock:
            self._snapshots.discard(snapshot)

    def notify_checkpoint_complete(self, checkpoint_id: CheckpointId) -> None:
        self._ledger.confirm(checkpoint_id)

    def notify_checkpoint_aborted(self, checkpoint_id: CheckpointId) -> None:
        self._ledger.abort(checkpoint_id)

    def restore(self, handles: Sequence[KeyedStateHandle], read_state: ReadState) -> None:
        self._open_db()
        if self._adopt(handles, read_state):
            return
        self._load_blocks(
            check_restored_handles(self, handles, read_state, scratch_dir=self._directory))

    def _adopt(self, handles: Sequence[KeyedStateHandle], read_state: ReadState) -> bool:
        """Restore one incremental handle of exactly this key-group range into a still empty
        backend by making its files this backend's database. False if that does not apply."""
        if len(handles) != 1 or self._state_ids:
            return False
        handle = handles[0]
        if (not isinstance(handle, IncrementalKeyedStateHandle)
                or handle.key_group_range != self.key_group_range
                or handle.key_encoding != KEY_ENCODING):  # an older encoding: migrate it
            return False
        validate_restored_handles(self, handles)
        restored_dir = os.path.join(self._directory, f"restored-{uuid.uuid4().hex[:8]}")
        download(handle, restored_dir, read_state)
        self.db.close()
        shutil.rmtree(os.path.join(self._directory, "db"), ignore_errors=True)
        self.db = _open(restored_dir)
        labels = dict(handle.states)
        for name, state_id in handle.state_ids:
            self._state_ids[name] = state_id
            is_map = is_map_label(labels.get(name, ""))
            self._kinds.setdefault(name, StateKind.MAP if is_map else StateKind.VALUE)
        self._ledger.seed(dict(handle.shared))
        return True

    def _load_blocks(self, blocks: Iterator[Block]) -> None:
        db = self.db
        previous = self.current_key
        for block in blocks:
            for name, entries in block:
                state_id = self._state_id(name)
                is_map = self._labels[name].startswith(StateKind.MAP.value)
                self._kinds.setdefault(name, StateKind.MAP if is_map else StateKind.VALUE)
                for key, stored in entries_of(entries):
                    self.set_current_key(key)
                    entry = self.entry_key(state_id)
                    if is_map:
                        for user_key, value in stored.items():
                            db[entry + encode_user_key(user_key)] = dumps((user_key, value))
                    else:
                        db[entry] = dumps(stored)
        if previous is NO_KEY:
            self.current_key = NO_KEY
        else:
            self.set_current_key(previous)

    def statistics(self) -> KeyedStateStatistics:
        entries = self._open_db().property_int_value("rocksdb.estimate-num-keys") or 0
        return KeyedStateStatistics("rocksdb", len(self._labels), entries, len(self._snapshots))

    def dispose(self) -> None:
        """Stops in-flight snapshots (they raise ``SnapshotReleasedError``), then deletes the
        database: an iterator must never outlive its database."""
        with self._snapshots_lock:
            in_flight = list(self._snapshots)
        for snapshot in in_flight:
            snapshot.release()
        db, self.db = self.db, None
        if db is not None:
            db.close()
        shutil.rmtree(self._directory, ignore_errors=True)

    def _open_db(self) -> Any:
        if self.db is None:
            raise StateBackendDisposedError("rocksdb")
        return self.db


def _open(path: str) -> Any:
    """The working database at ``path`` (created if missing), WAL off, with bloom filters
    for point reads: a whole-key filter on each memtable (a key's first read, which finds
    nothing, skips the skiplist) and a full 10-bit filter in each SST file (after a flush —
    every incremental checkpoint flushes — a read skips the level-0 files that do not hold
    its key). Issue 31: together ~30 % of the keyed reduce's CPU with a flush every 100,000
    records, ~15-25 % without (docs/benchmarks.md). Files written without filters (restored
    from older checkpoints) are read as before."""
    options = Options(raw_mode=True)
    options.create_if_missing(True)
    options.set_memtable_whole_key_filtering(True)
    options.set_memtable_prefix_bloom_ratio(0.1)
    table = BlockBasedOptions()
    table.set_bloom_filter(10, False)
    options.set_block_based_table_factory(table)
    db: Any = Rdict(path, options)
    db.set_write_options(NO_WAL)
    return db


class _RocksSnapshot:
    """A pinned iterator over the database (``Rdict.items()``), waiting for the asynchronous
    write."""

    def __init__(
        self,
        backend: RocksDBKeyedStateBackend,
        iterator: Any,
        names: dict[bytes, str],
        kinds: dict[str, StateKind],
        labels: tuple[tuple[str, str], ...],
    ) -> None:
        self._backend = backend
        self._iterator: Any = iterator
        self._names = names
        self._kinds = kinds
        self._labels = labels
        self._filters = backend.snapshot_filters()
        self._lock = threading.Lock()  # held while the iterator is in use
        self._cancelled = False

    def write(self, writer: StateWriter, name: str) -> KeyGroupsStateHandle | None:
        try:
            blocks = self._read_blocks()
            if not any(blocks.values()):
                return None
            backend = self._backend
            data, offsets = encode_blocks(blocks, backend.key_group_range)
            blob = write_blob(writer, name, data, backend.inline_threshold)
            return KeyGroupsStateHandle(
                backend.key_group_range, offsets, blob, backend.max_parallelism, self._labels
            )
        finally:
            self.release()

    def _read_blocks(self) -> dict[int, Block]:
        collector = BlockCollector(
            self._names, {name: kind is StateKind.MAP for name, kind in self._kinds.items()},
            self._filters)
        with self._lock:
            iterator = self._iterator
            if iterator is None:
                raise SnapshotReleasedError("rocksdb")
            for key, value in iterator:
                if self._cancelled:
                    raise SnapshotReleasedError("rocksdb")
                collector.add(key, value)
        return collector.blocks()

    def release(self) -> None:
        """Idempotent; from any thread. Stops a running write and waits until the iterator is
        no longer in use, then drops it."""
        self._cancelled = True
        with self._lock:
            self._iterator = None
        self._backend._forget_snapshot(self)

