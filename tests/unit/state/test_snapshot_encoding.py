"""The key group index behind the heap backend's snapshot encoding, and repeated snapshots of
one backend whose key set changes between them (the index is kept across snapshots)."""

import pickle
import uuid

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flintlock.common.state import ValueStateDescriptor
from flintlock.runtime.state.format import (
    KeyGroupIndex,
    decode_blocks,
    encode_indexed,
    entries_of,
)
from flintlock.runtime.state.handles import ByteStateHandle
from flintlock.runtime.state.heap import HeapKeyedStateBackend
from flintlock.runtime.state.keygroups import KeyGroupRange, assign_to_key_group
from flintlock.runtime.state.snapshots import KeyGroupsStateHandle
from tests.unit.state.state_operations import (
    FileStorage,
    apply,
    contents,
    make_backend,
    operations,
)

FIXTURE_OK = [HealthCheck.function_scoped_fixture]


def by_group(table, max_parallelism):
    groups = {}
    for key in table:
        groups.setdefault(assign_to_key_group(key, max_parallelism), set()).add(key)
    return groups


@settings(max_examples=60, deadline=None)
@given(rounds=st.lists(st.sets(st.integers(-300, 300) | st.text(max_size=2)), max_size=6))
def test_index_always_equals_a_fresh_grouping_of_the_table(rounds):
    index, cache = KeyGroupIndex(), {}
    for keys in rounds:
        table = dict.fromkeys(keys, 0)
        groups = index.refresh(table, 16, cache)
        assert {g: set(ks) for g, ks in groups.items()} == by_group(table, 16)
        assert all(len(ks) == len(set(ks)) for ks in groups.values())


def test_encode_indexed_blocks_are_per_group_key_values_that_decode_back():
    full = KeyGroupRange(0, 7)
    values = {key: (key, key * 2) for key in range(100)}
    names = {key: f"n{key}" for key in range(0, 100, 3)}
    index_a, index_b, cache = KeyGroupIndex(), KeyGroupIndex(), {}
    tables = {"a": (values, index_a.refresh(values, 8, cache)),
              "b": (names, index_b.refresh(names, 8, cache))}
    data, offsets = encode_indexed(tables, full)
    handle = KeyGroupsStateHandle(full, offsets, ByteStateHandle(data), 8)
    for group in full:
        start, end = handle.block(group)
        block = pickle.loads(data[start:end]) if end > start else []
        for _, (keys, stored) in block:
            assert len(keys) == len(stored)
            assert all(assign_to_key_group(key, 8) == group for key in keys)
    restored = {"a": {}, "b": {}}
    for _, block in decode_blocks([handle], full, storage_unused):
        for name, entries in block:
            restored[name].update(entries_of(entries))
    assert restored == {"a": values, "b": names}


def storage_unused(handle):
    raise AssertionError(f"inline state needs no storage, asked for {handle}")


def test_blocks_in_the_older_list_format_still_restore(tmp_path):
    """Checkpoints written before the dict blocks hold lists of (key, value) pairs."""
    storage = FileStorage(tmp_path / "old")
    full = KeyGroupRange(0, 3)
    parts, offsets = [], [0]
    for group in full:
        pairs = [(k, k * 10) for k in range(40) if assign_to_key_group(k, 4) == group]
        data = pickle.dumps([("value", pairs)], protocol=5) if pairs else b""
        parts.append(data)
        offsets.append(offsets[-1] + len(data))
    handle = KeyGroupsStateHandle(
        full, tuple(offsets), storage.write_state("old", b"".join(parts)), 4,
        (("value", "VALUE"),))
    for kind in ("hashmap", "rocksdb"):
        backend = make_backend(kind, tmp_path, full, 4)
        try:
            backend.restore([handle], storage.read_state)
            assert sorted(backend.keys("value")) == list(range(40))
        finally:
            backend.dispose()


@settings(max_examples=25, deadline=None, suppress_health_check=FIXTURE_OK)
@given(rounds=st.lists(operations, min_size=1, max_size=4))
def test_each_of_repeated_snapshots_restores_the_state_of_its_moment(tmp_path, rounds):
    storage = FileStorage(tmp_path / "repeated")
    full = KeyGroupRange(0, 15)
    backend = HeapKeyedStateBackend(full, 16, inline_threshold=0)
    taken = []
    try:
        for ops in rounds:
            apply(backend, ops)
            handle = backend.snapshot().write(storage, f"round-{uuid.uuid4().hex}")
            taken.append((contents(backend), handle))
        for expected, handle in taken:
            restored = HeapKeyedStateBackend(full, 16)
            restored.restore([handle] if handle else [], storage.read_state)
            assert contents(restored) == expected
    finally:
        backend.dispose()


def test_a_key_swapped_for_another_between_snapshots_is_noticed(tmp_path):
    """Same number of keys, not the same keys: the index must not trust the size alone."""
    storage = FileStorage(tmp_path / "swap")
    full = KeyGroupRange(0, 15)
    backend = HeapKeyedStateBackend(full, 16, inline_threshold=0)
    state = backend.get_partitioned_state(ValueStateDescriptor("v"))
    try:
        for round_keys in ([1, 2, 3], [1, 3, 4], [5, 6, 7]):
            for key in list(backend.keys("v")):
                backend.set_current_key(key)
                state.clear()
            for key in round_keys:
                backend.set_current_key(key)
                state.update(key * 10)
            handle = backend.snapshot().write(storage, f"swap-{uuid.uuid4().hex}")
            restored = HeapKeyedStateBackend(full, 16)
            restored.restore([handle], storage.read_state)
            assert sorted(restored.keys("v")) == round_keys
    finally:
        backend.dispose()
