"""Incremental checkpoints of the RocksDB backend: only new SST files are uploaded, completed
uploads are referenced, restore (same and other parallelism, into either backend), savepoints
stay full, and a missing or altered shared file is a typed error naming it."""

from __future__ import annotations

import random
import uuid
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flintlock.common.config import Configuration
from flintlock.common.ids import CheckpointId, JobId
from flintlock.common.state import ValueStateDescriptor
from flintlock.runtime.checkpoint.storage import CheckpointStorage, read_state
from flintlock.runtime.state.assignment import assign_states
from flintlock.runtime.state.factory import create_keyed_state_backend
from flintlock.runtime.state.handles import CorruptStateError
from flintlock.runtime.state.heap import HeapKeyedStateBackend
from flintlock.runtime.state.keygroups import KeyGroupRange, assign_key_to_operator
from flintlock.runtime.state.rocksdb import RocksDBKeyedStateBackend
from flintlock.runtime.state.snapshots import (
    IncrementalKeyedStateHandle,
    KeyGroupsStateHandle,
    OperatorSubtaskState,
)
from tests.unit.state.state_operations import apply, contents, operations

COUNT = ValueStateDescriptor("count")
FIXTURE_OK = [HealthCheck.function_scoped_fixture]


FULL = KeyGroupRange(0, 15)


def make(tmp_path, key_groups=FULL, max_parallelism=16):
    return RocksDBKeyedStateBackend(key_groups, max_parallelism, inline_threshold=0,
                                    local_dir=str(tmp_path), incremental=True)


def put(backend, keys, value):
    state = backend.get_partitioned_state(COUNT)
    for key in keys:
        backend.set_current_key(key)
        state.update(value)


def checkpoint(backend, storage, n, complete=True):
    handle = backend.snapshot(n).write(storage.init_checkpoint(CheckpointId(n)), f"op-{n}")
    if complete:
        backend.notify_checkpoint_complete(n)
    return handle


@pytest.fixture
def storage(tmp_path):
    return CheckpointStorage(str(tmp_path / "chk"), JobId("job-incremental"),
                             str(tmp_path / "sp"), random.Random(5))


def test_the_option_and_its_older_name_select_incremental_rocksdb(tmp_path):
    for key in ("execution.checkpointing.incremental", "state.backend.incremental"):
        config = Configuration().set_string("state.backend.type", "rocksdb").set_string(key, "true")
        config.set_string("state.backend.local-dir", str(tmp_path))
        backend = create_keyed_state_backend(config, KeyGroupRange(0, 3), 4)
        assert isinstance(backend, RocksDBKeyedStateBackend) and backend.incremental
        backend.dispose()
    default = create_keyed_state_backend(
        Configuration().set_string("state.backend.type", "rocksdb"), KeyGroupRange(0, 3), 4)
    assert not default.incremental  # type: ignore[attr-defined]
    default.dispose()


def test_a_second_checkpoint_uploads_only_the_new_sst_files(tmp_path, storage):
    backend = make(tmp_path)
    try:
        put(backend, range(2000), "first")
        first = checkpoint(backend, storage, 1)
        assert isinstance(first, IncrementalKeyedStateHandle)
        assert first.uploaded == {h.uri for _, h in first.shared} and first.shared
        put(backend, range(10), "second")
        second = checkpoint(backend, storage, 2)
        assert isinstance(second, IncrementalKeyedStateHandle)
        reused = {h.uri for _, h in second.shared} - second.uploaded
        assert reused == first.uploaded  # the first checkpoint's SST files are referenced
        assert len(second.uploaded) == 1  # the flushed memtable: one new SST file
        new_bytes = sum(h.size for _, h in second.shared if h.uri in second.uploaded)
        assert new_bytes < sum(h.size for _, h in first.shared) / 4
        assert second.checkpointed_size < second.state_size
        subtask = OperatorSubtaskState((second,))
        assert (subtask.state_size, subtask.checkpointed_size) == (
            second.state_size, second.checkpointed_size)
        assert all(uri.startswith(storage.job_dir + "/shared/") for uri in second.uploaded)
    finally:
        backend.dispose()


def test_uploads_of_a_checkpoint_not_known_to_be_complete_are_never_referenced(tmp_path, storage):
    backend = make(tmp_path)
    try:
        put(backend, range(500), 1)
        first = checkpoint(backend, storage, 1, complete=False)
        put(backend, range(5), 2)
        second = checkpoint(backend, storage, 2, complete=False)
        backend.notify_checkpoint_aborted(1)
        assert {h.uri for _, h in second.shared} == second.uploaded  # all uploaded anew
        assert not first.uploaded & second.uploaded
    finally:
        backend.dispose()


def test_restore_with_the_same_key_groups_adopts_the_files_and_builds_on_them(tmp_path, storage):
    original = make(tmp_path)
    put(original, range(300), "a")
    put(original, range(0, 300, 7), "b")
    handle = checkpoint(original, storage, 1)
    expected = contents_of(original)
    original.dispose()
    restored = make(tmp_path)
    try:
        restored.restore([handle], read_state)
        assert contents_of(restored) == expected
        put(restored, [1000], "c")
        after = checkpoint(restored, storage, 2)
        assert {h.uri for _, h in handle.shared} <= {h.uri for _, h in after.shared}
        assert len(after.uploaded) == 1
    finally:
        restored.dispose()


def contents_of(backend):
    state = backend.get_partitioned_state(COUNT)
    found = {}
    for key in backend.keys(COUNT.name):
        backend.set_current_key(key)
        found[key] = state.value()
    return found


@settings(max_examples=12, deadline=None, suppress_health_check=FIXTURE_OK)
@given(ops=operations, old=st.integers(1, 3), new=st.integers(1, 4), target=st.sampled_from(
    ["rocksdb", "incremental", "hashmap"]))
def test_rescaled_restore_keeps_each_key_in_exactly_its_subtask(tmp_path, ops, old, new, target):
    max_parallelism = 8
    storage = CheckpointStorage(str(tmp_path / f"chk-{uuid.uuid4().hex}"), JobId("j"))
    reference = HeapKeyedStateBackend(KeyGroupRange(0, max_parallelism - 1), max_parallelism)
    apply(reference, ops)
    states = {}
    for index in range(old):
        backend = make(tmp_path, KeyGroupRange.for_subtask(max_parallelism, old, index),
                       max_parallelism)
        apply(backend, [op for op in ops
                        if assign_key_to_operator(op[0], max_parallelism, old) == index])
        handle = backend.snapshot(1).write(
            storage.init_checkpoint(CheckpointId(1)), f"old-{index}")
        states[index] = OperatorSubtaskState((handle,) if handle else ())
        backend.dispose()
    assigned = assign_states({"op": states}, {"op": new}, {"op": max_parallelism})["op"]
    union = {}
    for index in range(new):
        owned = KeyGroupRange.for_subtask(max_parallelism, new, index)
        if target == "hashmap":
            backend = HeapKeyedStateBackend(owned, max_parallelism)
        else:
            backend = RocksDBKeyedStateBackend(owned, max_parallelism, local_dir=str(tmp_path),
                                               incremental=target == "incremental")
        backend.restore(assigned[index].managed_keyed_state, read_state)
        mine = contents(backend)
        backend.dispose()
        assert all(assign_key_to_operator(key, max_parallelism, new) == index for _, key in mine)
        assert not union.keys() & mine.keys()
        union.update(mine)
    assert union == contents(reference)


def test_a_savepoint_is_written_full_and_self_contained(tmp_path, storage):
    backend = make(tmp_path)
    try:
        put(backend, range(100), "v")
        checkpoint(backend, storage, 1)
        location = storage.init_savepoint(CheckpointId(2))
        handle = backend.snapshot(2).write(location, "op-sp")
        assert isinstance(handle, KeyGroupsStateHandle)
        assert handle.handle.uri.startswith(location.uri)  # type: ignore[union-attr]
        restored = HeapKeyedStateBackend(KeyGroupRange(0, 15), 16)
        restored.restore([handle], read_state)
        assert contents_of(restored) == {key: "v" for key in range(100)}
    finally:
        backend.dispose()


@pytest.mark.parametrize("damage", ["delete", "alter"])
def test_a_missing_or_altered_shared_file_is_an_error_naming_it(tmp_path, storage, damage):
    backend = make(tmp_path)
    put(backend, range(200), "v")
    handle = checkpoint(backend, storage, 1)
    backend.dispose()
    victim = Path(handle.shared[0][1].uri)
    if damage == "delete":
        victim.unlink()
    else:
        data = bytearray(victim.read_bytes())
        data[len(data) // 2] ^= 0xFF
        victim.write_bytes(bytes(data))
    for target in (make(tmp_path), HeapKeyedStateBackend(KeyGroupRange(0, 15), 16)):
        try:
            with pytest.raises(CorruptStateError) as raised:
                target.restore([handle], read_state)
            assert raised.value.uri == str(victim)
            assert str(victim) in str(raised.value)
        finally:
            target.dispose()


def test_an_empty_database_writes_no_state(tmp_path, storage):
    backend = make(tmp_path)
    try:
        backend.get_partitioned_state(COUNT)
        assert checkpoint(backend, storage, 1) is None
    finally:
        backend.dispose()


def test_dispose_during_an_in_flight_snapshot_refuses_the_write(tmp_path, storage):
    backend = make(tmp_path)
    put(backend, range(10), "v")
    snapshot = backend.snapshot(1)
    backend.dispose()
    from flintlock.runtime.state.errors import SnapshotReleasedError

    with pytest.raises(SnapshotReleasedError):
        snapshot.write(storage.init_checkpoint(CheckpointId(1)), "late")
