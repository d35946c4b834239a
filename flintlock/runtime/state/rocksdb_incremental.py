"""Incremental checkpoints of the RocksDB backend (``execution.checkpointing.incremental``).

Design note. RocksDB keeps its data in immutable SST files plus a few small mutable files
(MANIFEST, CURRENT, OPTIONS, an empty WAL). A native RocksDB checkpoint
(``rocksdict.Checkpoint``) flushes the memtable and hard-links the live SST files into a new
directory: a consistent copy of the database at that instant, made in milliseconds. As in
Flink's ``RocksIncrementalSnapshotStrategy``:

* synchronous part (task thread, at the barrier): create the native checkpoint in the
  backend's working directory;
* asynchronous part: upload every SST file that no *completed* checkpoint has uploaded yet to
  ``<dir>/<job-id>/shared/`` under a unique name, reference the earlier uploads of the others,
  and write the small files as the checkpoint's private state; then delete the hard links;
* ``UploadLedger`` remembers, per checkpoint, which upload holds which SST file, and on
  ``notify_checkpoint_complete(n)`` adopts checkpoint n's files as the reusable set. Uploads
  of a checkpoint that never completed are never referenced (the JobManager deletes them with
  that checkpoint), and an upload outside the writer's own shared directory (the files of a
  checkpoint another job made, restored from) is never built on;
* the JobManager counts references to shared files over its retained checkpoints
  (``checkpoint.shared.SharedStateRegistry``) and deletes a file when none is left.

The entry keys are in the backend's key encoding (``canonical_keys``), which the handle records
(``key_encoding``): a database in an older encoding (``pickle``, before issue 27) is never
adopted; its entries are read into blocks, decoding the keys the old way, and written again.

Restore downloads the files (each verified against its SHA-256: a missing or altered file is
a ``CorruptStateError`` naming it) into a fresh directory. With the same key-group range the
directory simply becomes the backend's database (and its SST files the reusable set); after
rescaling, each downloaded database is opened read-only and only the key groups the new
subtask owns are copied, through the same per-key-group blocks as a full snapshot
(``format``). Savepoints stay full and self-contained: the asynchronous part then reads the
native checkpoint and writes the canonical format.

Threads: the native checkpoint is created on the task thread; a snapshot's upload and its
deletion run on a snapshot thread; the ledger is shared and locked.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from rocksdict import AccessType, Checkpoint, Options, Rdict

from flintlock.common.canonical_keys import ENCODING as KEY_ENCODING
from flintlock.common.canonical_keys import LEGACY_ENCODING, decode_key
from flintlock.common.errors import FlintlockError
from flintlock.common.ids import NOT_A_CHECKPOINT, CheckpointId
from flintlock.common.state import StateKind
from flintlock.runtime.state.errors import SnapshotReleasedError
from flintlock.runtime.state.format import Block, encode_blocks, key_values
from flintlock.runtime.state.handles import StateHandle, StreamStateHandle
from flintlock.runtime.state.keygroups import KeyGroupRange
from flintlock.runtime.state.rocksdb_states import loads
from flintlock.runtime.state.snapshots import (
    IncrementalKeyedStateHandle,
    KeyGroupsStateHandle,
    ReadState,
    StateWriter,
    discard_handle,
    read_blob,
    write_blob,
)

SST_SUFFIX = ".sst"


def is_map_label(label: str) -> bool:
    return label.startswith(StateKind.MAP.value)


def create_native_checkpoint(db: Any, directory: str) -> str:
    """Hard-link a consistent copy of ``db`` into a new directory under ``directory``."""
    path = os.path.join(directory, f"native-{uuid.uuid4().hex[:12]}")
    Checkpoint(db).create_checkpoint(path)
    return path


class UploadLedger:
    """Uploads of this database's SST files: per checkpoint until it completes, then the set a
    later checkpoint may reference. Shared by the task thread and snapshot threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: dict[int, dict[str, StreamStateHandle]] = {}  # under _lock
        self._confirmed: dict[str, StreamStateHandle] = {}  # under _lock

    def reusable(self, name: str, size: int, shared_uri: str) -> StreamStateHandle | None:
        """A completed checkpoint's upload of SST file ``name`` in ``shared_uri``, if any."""
        with self._lock:
            handle = self._confirmed.get(name)
        if handle is None or handle.size != size or not handle.uri.startswith(shared_uri + "/"):
            return None
        return handle

    def record(self, checkpoint_id: CheckpointId | None,
               files: Mapping[str, StreamStateHandle]) -> None:
        if checkpoint_id is None:
            return
        with self._lock:
            self._pending[checkpoint_id] = dict(files)

    def confirm(self, checkpoint_id: CheckpointId) -> None:
        """Checkpoint ``checkpoint_id`` completed: its uploads become the reusable set."""
        with self._lock:
            files = self._pending.pop(checkpoint_id, None)
            for older in [n for n in self._pending if n < checkpoint_id]:
                del self._pending[older]
            if files is not None:
                self._confirmed = files

    def abort(self, checkpoint_id: CheckpointId) -> None:
        with self._lock:
            self._pending.pop(checkpoint_id, None)

    def seed(self, files: Mapping[str, StreamStateHandle]) -> None:
        """After a restore: the restored checkpoint's uploads are this database's files."""
        with self._lock:
            self._confirmed = dict(files)
            self._pending.clear()


# -- reading a database into canonical blocks ---------------------------------------------


def key_bytes(key: bytes) -> bytes:
    """The encoded state key inside a RocksDB key (see ``rocksdb``'s key layout)."""
    length = int.from_bytes(key[4:8], "big")
    return key[8 : 8 + length]


class UnknownKeyEncodingError(FlintlockError, ValueError):
    """A checkpoint's RocksDB database keys its entries in an encoding this version does not
    know (written by a newer flintlock?)."""

    def __init__(self, encoding: str) -> None:
        super().__init__(encoding)
        self.encoding = encoding

    def __str__(self) -> str:
        return (f"unknown key encoding {self.encoding!r} of an incremental RocksDB checkpoint "
                f"(known: {KEY_ENCODING!r}, {LEGACY_ENCODING!r})")


def _map_entry(encoding: str, user_key_bytes: bytes, value: bytes) -> tuple[Any, Any]:
    """(user key, value) of a map state's entry."""
    if encoding == KEY_ENCODING:
        user_key, stored = loads(value)
        return user_key, stored
    return loads(user_key_bytes), loads(value)  # pickle: the user key is in the entry key


class BlockCollector:
    """Turns RocksDB entries (in key order) into per-key-group blocks of the shared format;
    ``key_encoding`` is that of the database's entry keys (an older one is read too)."""

    def __init__(
        self, names: Mapping[bytes, str], is_map: Mapping[str, bool],
        filters: Mapping[str, Callable[[Any], Any]] | None = None,
        key_encoding: str = KEY_ENCODING,
    ) -> None:
        if key_encoding not in (KEY_ENCODING, LEGACY_ENCODING):
            raise UnknownKeyEncodingError(key_encoding)
        self._names = names
        self._is_map = is_map
        self._filters = filters or {}
        self._encoding = key_encoding
        self._decode: Callable[[bytes], Any] = (
            decode_key if key_encoding == KEY_ENCODING else loads)
        self._tables: dict[int, dict[str, dict[bytes, Any]]] = {}

    def add(self, key: bytes, value: bytes) -> None:
        group = int.from_bytes(key[0:2], "big")
        name = self._names[key[2:4]]
        encoded_key = key_bytes(key)
        by_key = self._tables.setdefault(group, {}).setdefault(name, {})
        if self._is_map[name]:
            user_key, stored = _map_entry(self._encoding, key[8 + len(encoded_key) :], value)
            by_key.setdefault(encoded_key, {})[user_key] = stored
        else:
            by_key[encoded_key] = loads(value)

    def blocks(self) -> dict[int, Block]:
        return {group: self._block(by_name) for group, by_name in self._tables.items()}

    def _block(self, by_name: dict[str, dict[bytes, Any]]) -> Block:
        block: Block = []
        for name, by_key in by_name.items():
            keep = self._filters.get(name)
            decode = self._decode
            entries = {decode(k): v if keep is None else keep(v) for k, v in by_key.items()}
            entries = {k: v for k, v in entries.items() if v is not None}
            if entries:
                block.append((name, key_values(entries)))
        return block


def open_read_only(path: str) -> Any:
    return Rdict(path, Options(raw_mode=True), access_type=AccessType.read_only())


def read_groups(db: Any, key_groups: Iterable[int], collector: BlockCollector) -> None:
    """Feed every entry of ``key_groups`` in ``db`` to ``collector``."""
    for group in key_groups:
        prefix = group.to_bytes(2, "big")
        for key, value in db.items(from_key=prefix):
            if not key.startswith(prefix):
                break
            collector.add(key, value)


def download(handle: IncrementalKeyedStateHandle, directory: str, read_state: ReadState) -> None:
    """Write every file of ``handle`` into ``directory`` (verified: ``CorruptStateError``
    names a missing or altered file)."""
    os.makedirs(directory, exist_ok=True)
    for name, file_handle in (*handle.shared, *handle.private):
        data = read_blob(file_handle, read_state)
        with open(os.path.join(directory, name), "wb") as file:
            file.write(data)


def incremental_blocks(
    handle: IncrementalKeyedStateHandle, owned: KeyGroupRange, read_state: ReadState,
    scratch_dir: str | None = None,
) -> Iterator[Block]:
    """The blocks of the key groups in ``owned`` that ``handle``'s database holds (for a
    restore that cannot adopt the database whole: rescaling, or the heap backend)."""
    common = handle.key_group_range.intersection(owned)
    if len(common) == 0:
        return
    directory = tempfile.mkdtemp(prefix="flintlock-restore-", dir=scratch_dir)
    try:
        download(handle, os.path.join(directory, "db"), read_state)
        db = open_read_only(os.path.join(directory, "db"))
        try:
            layout = StateLayout(dict(handle.state_ids), handle.states, {}, handle.key_encoding)
            collector = layout.collector(with_filters=False)
            read_groups(db, common, collector)
        finally:
            db.close()
        blocks = collector.blocks()
        for group in common:
            if blocks.get(group):
                yield blocks[group]
    finally:
        shutil.rmtree(directory, ignore_errors=True)


# -- the snapshot -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BackendIdentity:
    """What a snapshot needs to know about the backend that took it."""

    backend_id: str  # names this database's uploads
    key_group_range: KeyGroupRange
    max_parallelism: int
    inline_threshold: int


@dataclass(frozen=True, slots=True)
class StateLayout:
    """The states in the database at the snapshot: ids, kinds, snapshot-time TTL filters,
    the encoding of the keys."""

    state_ids: Mapping[str, bytes]
    labels: tuple[tuple[str, str], ...]
    filters: Mapping[str, Callable[[Any], Any]]
    key_encoding: str = KEY_ENCODING

    def collector(self, with_filters: bool) -> BlockCollector:
        labels = dict(self.labels)
        names = {state_id: name for name, state_id in self.state_ids.items()}
        return BlockCollector(
            names, {name: is_map_label(labels.get(name, "")) for name in names.values()},
            self.filters if with_filters else None, self.key_encoding)


class IncrementalSnapshot:
    """A native checkpoint waiting for its asynchronous upload (``KeyedStateSnapshot``)."""

    def __init__(
        self,
        path: str,
        checkpoint_id: CheckpointId | None,
        identity: BackendIdentity,
        layout: StateLayout,
        ledger: UploadLedger,
        on_release: Callable[[IncrementalSnapshot], None],
    ) -> None:
        self._path: str | None = path
        self._checkpoint_id = checkpoint_id
        self._identity = identity
        self._layout = layout
        self._ledger = ledger
        self._on_release = on_release
        self._lock = threading.Lock()  # held while the native checkpoint is read
        self._cancelled = False

    def write(
        self, writer: StateWriter, name: str
    ) -> IncrementalKeyedStateHandle | KeyGroupsStateHandle | None:
        try:
            with self._lock:
                path = self._path
                if path is None:
                    raise SnapshotReleasedError("rocksdb")
                if not any(f.endswith(SST_SUFFIX) for f in os.listdir(path)):
                    return None  # the memtable was flushed: no SST file, no state
                shared_uri = getattr(writer, "shared_uri", None)
                if shared_uri is None:  # a savepoint (or a writer that shares nothing): full
                    return self._write_full(path, writer, name)
                return self._upload(path, writer, name, shared_uri)
        finally:
            self.release()

    def _write_full(self, path: str, writer: StateWriter, name: str) -> KeyGroupsStateHandle | None:
        identity = self._identity
        collector = self._layout.collector(with_filters=True)
        db = open_read_only(path)
        try:
            read_groups(db, identity.key_group_range, collector)
        finally:
            db.close()
        blocks = collector.blocks()
        if not any(blocks.values()):
            return None
        data, offsets = encode_blocks(blocks, identity.key_group_range)
        blob = write_blob(writer, name, data, identity.inline_threshold)
        return KeyGroupsStateHandle(identity.key_group_range, offsets, blob,
                                    identity.max_parallelism, self._layout.labels)

    def _upload(
        self, path: str, writer: Any, name: str, shared_uri: str
    ) -> IncrementalKeyedStateHandle:
        identity = self._identity
        shared: list[tuple[str, StreamStateHandle]] = []
        private: list[tuple[str, StateHandle]] = []
        uploaded: list[StreamStateHandle] = []
        try:
            for file_name in sorted(os.listdir(path)):
                if self._cancelled:
                    raise SnapshotReleasedError("rocksdb")
                file_path = os.path.join(path, file_name)
                if not file_name.endswith(SST_SUFFIX):
                    data = _read(file_path)
                    private.append((file_name, write_blob(
                        writer, f"{name}-{file_name}", data, identity.inline_threshold)))
                    continue
                handle = self._ledger.reusable(
                    file_name, os.path.getsize(file_path), shared_uri)
                if handle is None:
                    unique = f"{identity.backend_id}-{uuid.uuid4().hex[:8]}-{file_name}"
                    handle = writer.write_shared_state(unique, _read(file_path))
                    uploaded.append(handle)
                shared.append((file_name, handle))
        except BaseException:
            for handle in uploaded:  # never referenced by anyone: gone with this attempt
                discard_handle(handle)
            raise
        self._ledger.record(self._checkpoint_id, dict(shared))
        return IncrementalKeyedStateHandle(
            identity.key_group_range, identity.max_parallelism, self._layout.labels,
            identity.backend_id,
            NOT_A_CHECKPOINT if self._checkpoint_id is None else self._checkpoint_id,
            tuple(shared), tuple(private), tuple(sorted(self._layout.state_ids.items())),
            frozenset(h.uri for h in uploaded), self._layout.key_encoding,
        )

    def release(self) -> None:
        """Delete the native checkpoint's hard links (idempotent; stops a running upload at the
        next file and waits for it)."""
        self._cancelled = True
        with self._lock:
            path, self._path = self._path, None
        if path is not None:
            shutil.rmtree(path, ignore_errors=True)
            self._on_release(self)


def _read(path: str) -> bytes:
    with open(path, "rb") as file:
        return file.read()
