"""Keyed snapshots: restore(snapshot(state)) == state, copy-on-write isolation, rescaling,
corrupted files and discarding."""

import pickle
import threading

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flintlock.common.state import (
    ListStateDescriptor,
    ValueStateDescriptor,
)
from flintlock.runtime.state.assignment import assign_states
from flintlock.runtime.state.errors import (
    MaxParallelismMismatchError,
    SnapshotReleasedError,
    StateKindMismatchError,
)
from flintlock.runtime.state.handles import (
    ByteStateHandle,
    CorruptStateError,
)
from flintlock.runtime.state.heap import HeapKeyedStateBackend
from flintlock.runtime.state.heap_states import HeapValueState
from flintlock.runtime.state.keygroups import KeyGroupRange, assign_key_to_operator
from flintlock.runtime.state.operator import OperatorStateBackend
from flintlock.runtime.state.operator_snapshot import snapshot_operator
from flintlock.runtime.state.snapshots import OperatorSubtaskState, TaskStateSnapshot
from tests.unit.state.state_operations import (
    LIST,
    MAP,
    SUM,
    VALUE,
    FileStorage,
    apply,
    contents,
    make_backend,
    operations,
)

PAIRS = [(a, b) for a in ("hashmap", "rocksdb") for b in ("hashmap", "rocksdb")]
FIXTURE_OK = [HealthCheck.function_scoped_fixture]


@pytest.mark.parametrize(("source", "target"), PAIRS)
@settings(max_examples=15, deadline=None, suppress_health_check=FIXTURE_OK)
@given(ops=operations, threshold=st.sampled_from([0, 1 << 20]))
def test_restore_of_snapshot_equals_state(tmp_path, source, target, ops, threshold):
    storage = FileStorage(tmp_path / "chk")
    full = KeyGroupRange(0, 15)
    original = make_backend(source, tmp_path, full, 16, threshold)
    restored = make_backend(target, tmp_path, full, 16)
    try:
        apply(original, ops)
        expected = contents(original)
        handle = original.snapshot().write(storage, f"keyed-{source}-{target}")
        assert (handle is None) == (not expected)
        restored.restore([handle] if handle else [], storage.read_state)
        assert contents(restored) == expected
    finally:
        original.dispose()
        restored.dispose()


def check_rescaling(tmp_path, kind, ops, max_parallelism, old, new):
    """Snapshot ``old`` subtasks, restore ``new`` ones: each key lands exactly in its subtask
    and the union is the original state."""
    old, new = min(old, max_parallelism), min(new, max_parallelism)
    storage = FileStorage(tmp_path / "rescale")

    def subtask(parallelism, index):
        owned = KeyGroupRange.for_subtask(max_parallelism, parallelism, index)
        return make_backend(kind, tmp_path, owned, max_parallelism)

    olds = [subtask(old, i) for i in range(old)]
    reference = HeapKeyedStateBackend(KeyGroupRange(0, max_parallelism - 1), max_parallelism)
    apply(reference, ops)
    for op in ops:
        apply(olds[assign_key_to_operator(op[0], max_parallelism, old)], [op])
    states = {}
    for index, backend in enumerate(olds):
        handle = backend.snapshot().write(storage, f"old-{index}")
        states[index] = OperatorSubtaskState(managed_keyed_state=(handle,) if handle else ())
        backend.dispose()
    assigned = assign_states({"op": states}, {"op": new}, {"op": max_parallelism})["op"]
    union = {}
    for index in range(new):
        backend = subtask(new, index)
        backend.restore(assigned[index].managed_keyed_state, storage.read_state)
        mine = contents(backend)
        backend.dispose()
        for _, key in mine:
            assert assign_key_to_operator(key, max_parallelism, new) == index
        assert not union.keys() & mine.keys()
        union.update(mine)
    assert union == contents(reference)


@settings(max_examples=60, deadline=None, suppress_health_check=FIXTURE_OK)
@given(
    ops=operations,
    max_parallelism=st.integers(1, 12),
    old=st.integers(1, 12),
    new=st.integers(1, 12),
)
def test_rescaling_moves_every_key_to_exactly_its_subtask(tmp_path, ops, max_parallelism, old, new):
    check_rescaling(tmp_path, "hashmap", ops, max_parallelism, old, new)


@settings(max_examples=8, deadline=None, suppress_health_check=FIXTURE_OK)
@given(
    ops=operations,
    max_parallelism=st.integers(1, 8),
    old=st.integers(1, 3),
    new=st.integers(1, 3),
)
def test_rescaling_rocksdb_subtasks(tmp_path, ops, max_parallelism, old, new):
    check_rescaling(tmp_path, "rocksdb", ops, max_parallelism, old, new)


@pytest.mark.parametrize("kind", ["hashmap", "rocksdb"])
def test_changes_after_the_synchronous_part_do_not_alter_the_snapshot(tmp_path, kind):
    backend = make_backend(kind, tmp_path, KeyGroupRange(0, 7), 8)
    apply(backend, [("a", "value", 1), ("a", "list", 2), ("a", "map", 3), ("b", "sum", 4)])
    expected = contents(backend)
    pending = backend.snapshot()
    backend.set_current_key("a")
    backend.get_partitioned_state(VALUE).value().append("mutated in place")
    backend.get_partitioned_state(LIST).add(99)
    backend.get_partitioned_state(MAP).get(0)["n"] = "mutated in place"
    backend.get_partitioned_state(MAP).put(7, "new")
    backend.set_current_key("b")
    backend.get_partitioned_state(SUM).add(100)
    backend.get_partitioned_state(VALUE).update(["new key"])
    backend.set_current_key("a")
    live = backend.get_partitioned_state(VALUE).value()
    storage = FileStorage(tmp_path / "cow")
    result = {}
    writer = threading.Thread(target=lambda: result.update(h=pending.write(storage, "cow")))
    writer.start()
    writer.join(timeout=30)
    assert not writer.is_alive()
    restored = HeapKeyedStateBackend(KeyGroupRange(0, 7), 8)
    restored.restore([result["h"]], storage.read_state)
    assert contents(restored) == expected
    # the heap backend hands out the stored object; RocksDB returns a fresh copy on every read
    assert live == ([1, "mutated in place"] if kind == "hashmap" else [1])
    backend.dispose()


def test_heap_states_leave_guarded_mode_when_snapshots_finish(tmp_path):
    backend = HeapKeyedStateBackend(KeyGroupRange(0, 7), 8)
    state = backend.get_partitioned_state(VALUE)
    backend.set_current_key("k")
    state.update([1])
    first, second = backend.snapshot(), backend.snapshot()
    assert type(state) is not HeapValueState
    first.write(FileStorage(tmp_path), "first")
    assert type(state) is not HeapValueState
    second.release()
    second.release()
    assert type(state) is HeapValueState
    late = backend.get_partitioned_state(ListStateDescriptor("late"))
    late.add(1)
    pending = backend.snapshot()
    assert type(late).__name__.startswith("Guarded")
    pending.release()
    assert type(late).__name__ == "HeapListState"


def test_a_table_of_immutable_values_needs_no_copy_on_write(tmp_path):
    backend = HeapKeyedStateBackend(KeyGroupRange(0, 7), 8)
    counts = backend.get_partitioned_state(SUM)  # ints
    pairs = backend.get_partitioned_state(ValueStateDescriptor("pairs"))  # tuples of scalars
    nested = backend.get_partitioned_state(ValueStateDescriptor("nested"))  # a list inside
    for key in range(20):
        backend.set_current_key(key)
        counts.add(key)
        pairs.update((key, "x", 1.5, None))
        nested.update((key, [key]))
    pending = backend.snapshot()
    assert type(counts).__name__ == "HeapReducingState"
    assert type(pairs).__name__ == "HeapValueState"
    assert type(nested).__name__ == "GuardedHeapValueState"
    assert backend.copied_keys(ValueStateDescriptor("pairs")) is None
    assert backend.copied_keys(ValueStateDescriptor("nested")) == set()
    backend.set_current_key(3)
    nested.value()[1].append("mutated in place")
    pairs.update((3, [], 0.0, None))  # a mutable value arriving later is not in the copy
    storage = FileStorage(tmp_path / "immutable")
    restored = HeapKeyedStateBackend(KeyGroupRange(0, 7), 8)
    restored.restore([pending.write(storage, "immutable")], storage.read_state)
    restored.set_current_key(3)
    assert restored.get_partitioned_state(ValueStateDescriptor("nested")).value() == (3, [3])
    assert restored.get_partitioned_state(ValueStateDescriptor("pairs")).value() == (
        3, "x", 1.5, None)
    assert type(nested).__name__ == "HeapValueState"


@pytest.mark.parametrize("kind", ["hashmap", "rocksdb"])
def test_corrupted_state_file_raises_the_readers_error_naming_the_file(tmp_path, kind):
    backend = make_backend(kind, tmp_path, KeyGroupRange(0, 7), 8)
    apply(backend, [(i, "value", i) for i in range(20)])
    storage = FileStorage(tmp_path / "corrupt")
    handle = backend.snapshot().write(storage, "keyed-0")
    path = tmp_path / "corrupt" / "keyed-0"
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    restored = make_backend(kind, tmp_path, KeyGroupRange(0, 7), 8)
    with pytest.raises(CorruptStateError) as caught:
        restored.restore([handle], storage.read_state)
    assert str(path) in str(caught.value)
    backend.dispose()
    restored.dispose()


def test_restore_rejects_another_max_parallelism_and_another_kind(tmp_path):
    backend = HeapKeyedStateBackend(KeyGroupRange(0, 7), 8)
    apply(backend, [("a", "value", 1)])
    handle = backend.snapshot().write(FileStorage(tmp_path), "k")
    with pytest.raises(MaxParallelismMismatchError):
        HeapKeyedStateBackend(KeyGroupRange(0, 15), 16).restore([handle], None)
    restored = HeapKeyedStateBackend(KeyGroupRange(0, 7), 8)
    restored.restore([handle], None)
    with pytest.raises(StateKindMismatchError):
        restored.get_partitioned_state(ListStateDescriptor("value"))


def test_operator_snapshot_bundle_and_discard(tmp_path):
    storage = FileStorage(tmp_path / "chk-1")
    keyed = HeapKeyedStateBackend(KeyGroupRange(0, 7), 8, inline_threshold=0)
    apply(keyed, [(i, "list", i) for i in range(10)])
    operator = OperatorStateBackend(inline_threshold=0)
    operator.get_list_state(ListStateDescriptor("offsets")).add(42)
    state = snapshot_operator(keyed, operator).run(storage, "op-0")
    assert len(state.managed_keyed_state) == 1 and len(state.managed_operator_state) == 1
    snapshot = pickle.loads(pickle.dumps(TaskStateSnapshot({"op": state})))
    files = sorted(p.name for p in (tmp_path / "chk-1").iterdir())
    assert files == ["op-0-keyed", "op-0-operator"]
    assert snapshot.state_size == sum(p.stat().st_size for p in (tmp_path / "chk-1").iterdir())
    (tmp_path / "chk-1" / "op-0-operator").unlink()
    snapshot.discard()
    snapshot.discard()
    assert list((tmp_path / "chk-1").iterdir()) == []


def test_small_state_stays_inline_and_empty_state_writes_nothing(tmp_path):
    backend = HeapKeyedStateBackend(KeyGroupRange(0, 7), 8)
    assert backend.snapshot().write(FileStorage(tmp_path / "x"), "empty") is None
    apply(backend, [("a", "value", 1)])
    handle = backend.snapshot().write(FileStorage(tmp_path / "x"), "small")
    assert isinstance(handle.handle, ByteStateHandle)
    assert list((tmp_path / "x").iterdir()) == []


@pytest.mark.parametrize("kind", ["hashmap", "rocksdb"])
def test_released_or_disposed_snapshot_refuses_to_write(tmp_path, kind):
    backend = make_backend(kind, tmp_path, KeyGroupRange(0, 7), 8)
    apply(backend, [("a", "value", 1)])
    released = backend.snapshot()
    released.release()
    with pytest.raises(SnapshotReleasedError):
        released.write(FileStorage(tmp_path / "r"), "released")
    pending = backend.snapshot()
    backend.dispose()
    with pytest.raises(SnapshotReleasedError) as caught:
        pending.write(FileStorage(tmp_path / "d"), "disposed")
    assert pickle.loads(pickle.dumps(caught.value)).backend == kind


@pytest.mark.parametrize("kind", ["hashmap", "rocksdb"])
def test_with_the_real_checkpoint_storage_round_trip_corruption_and_discard(tmp_path, kind):
    from flintlock.runtime.checkpoint.storage import CheckpointStorage, read_state

    location = CheckpointStorage(str(tmp_path / "chk"), "job").init_checkpoint(1)
    backend = make_backend(kind, tmp_path, KeyGroupRange(0, 7), 8)
    apply(backend, [(i, "map", i) for i in range(30)])
    operator = OperatorStateBackend(inline_threshold=0)
    operator.get_union_list_state(ListStateDescriptor("offsets")).add_all([1, 2])
    state = snapshot_operator(backend, operator).run(location, f"op-{kind}")
    assigned = assign_states({"op": {0: state}}, {"op": 2}, {"op": 8})["op"]
    union = {}
    for index in range(2):
        restored = make_backend(
            kind, tmp_path, KeyGroupRange.for_subtask(8, 2, index), 8
        )
        restored.restore(assigned[index].managed_keyed_state, read_state)
        union.update(contents(restored))
        restored.dispose()
    assert union == contents(backend)
    keyed_file = state.managed_keyed_state[0].handle
    path = keyed_file.uri.removeprefix("file://")
    with open(path, "r+b") as file:
        file.truncate(keyed_file.size - 1)
    with pytest.raises(CorruptStateError) as caught:
        make_backend("hashmap", tmp_path, KeyGroupRange(0, 7), 8).restore(
            state.managed_keyed_state, read_state
        )
    assert path in str(caught.value)
    TaskStateSnapshot({"op": state}).discard()
    assert [p.name for p in (tmp_path / "chk").rglob("op-*")] == []
    backend.dispose()
