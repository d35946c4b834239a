"""Keyed state semantics, identical on both backends (hashmap and rocksdb)."""

import pickle

import pytest

from flintlock.common.config import Configuration
from flintlock.common.options import state as state_options
from flintlock.common.state import (
    AggregatingStateDescriptor,
    ListStateDescriptor,
    MapStateDescriptor,
    ReducingStateDescriptor,
    StateTtlConfig,
    ValueStateDescriptor,
)
from flintlock.runtime.state.errors import (
    NoCurrentKeyError,
    StateBackendDisposedError,
    StateBackendUnavailableError,
    StateKindMismatchError,
)
from flintlock.runtime.state.factory import create_keyed_state_backend
from flintlock.runtime.state.heap import HeapKeyedStateBackend
from flintlock.runtime.state.keygroups import KeyGroupRange
from flintlock.runtime.state.rocksdb import RocksDBKeyedStateBackend
from tests.unit.state.key_recipes import Point


class Average:
    def create_accumulator(self):
        return [0, 0]

    def add(self, value, accumulator):
        return [accumulator[0] + value, accumulator[1] + 1]

    def get_result(self, accumulator):
        return accumulator[0] / accumulator[1]

    def merge(self, a, b):
        return [a[0] + b[0], a[1] + b[1]]


@pytest.fixture(params=["hashmap", "rocksdb"])
def backend(request, tmp_path):
    if request.param == "hashmap":
        created = HeapKeyedStateBackend(KeyGroupRange(0, 127), 128)
    else:
        created = RocksDBKeyedStateBackend(KeyGroupRange(0, 127), 128, local_dir=str(tmp_path))
    yield created
    created.dispose()


def test_value_state_is_none_until_updated_and_per_key(backend):
    state = backend.get_partitioned_state(ValueStateDescriptor("count"))
    backend.set_current_key("a")
    assert state.value() is None
    state.update(1)
    backend.set_current_key("b")
    assert state.value() is None
    state.update(10)
    backend.set_current_key("a")
    assert state.value() == 1
    state.update(None)
    assert state.value() is None
    backend.set_current_key("b")
    state.clear()
    assert state.value() is None


def test_list_state(backend):
    state = backend.get_partitioned_state(ListStateDescriptor("items"))
    backend.set_current_key(("k", 1))
    assert list(state.get()) == []
    state.add(1)
    state.add_all([2, 3])
    assert list(state.get()) == [1, 2, 3]
    assert list(state) == [1, 2, 3]
    state.update([9])
    assert list(state.get()) == [9]
    state.update([])
    assert list(state.get()) == []
    state.add(4)
    state.clear()
    assert list(state.get()) == []
    with pytest.raises(ValueError, match="None"):
        state.add(None)
    with pytest.raises(ValueError, match="None"):
        state.add_all([5, None])
    with pytest.raises(ValueError, match="None"):
        state.update([None])
    assert list(state.get()) == []


def test_map_state(backend):
    state = backend.get_partitioned_state(MapStateDescriptor("map"))
    backend.set_current_key(7)
    assert state.is_empty()
    assert state.get("x") is None
    assert not state.contains("x")
    state.put("x", 1)
    state.put_all({"y": 2, "z": 3})
    state["w"] = 0
    assert state.get("y") == 2 and state["x"] == 1
    assert "z" in state and state.contains("z")
    assert sorted(state.items()) == [("w", 0), ("x", 1), ("y", 2), ("z", 3)]
    assert sorted(state.keys()) == ["w", "x", "y", "z"]
    assert sorted(state.values()) == [0, 1, 2, 3]
    assert sorted(state) == ["w", "x", "y", "z"]
    state.remove("x")
    del state["w"]
    assert sorted(state.keys()) == ["y", "z"]
    backend.set_current_key(8)
    assert state.is_empty()
    backend.set_current_key(7)
    state.clear()
    assert state.is_empty() and list(state.items()) == []


def test_reducing_state_with_function_object_and_callable(backend):
    class Maximum:
        def reduce(self, a, b):
            return max(a, b)

    total = backend.get_partitioned_state(ReducingStateDescriptor("sum", lambda a, b: a + b))
    biggest = backend.get_partitioned_state(ReducingStateDescriptor("max", Maximum()))
    backend.set_current_key("k")
    assert total.get() is None
    for value in (3, 1, 4):
        total.add(value)
        biggest.add(value)
    assert total.get() == 8 and biggest.get() == 4
    total.clear()
    assert total.get() is None


def test_aggregating_state(backend):
    state = backend.get_partitioned_state(AggregatingStateDescriptor("avg", Average()))
    backend.set_current_key("k")
    assert state.get() is None
    for value in (1, 2, 6):
        state.add(value)
    assert state.get() == 3
    state.clear()
    assert state.get() is None


def test_same_state_object_per_name_and_kind_mismatch(backend):
    first = backend.get_partitioned_state(ValueStateDescriptor("s"))
    assert backend.get_partitioned_state(ValueStateDescriptor("s")) is first
    with pytest.raises(StateKindMismatchError) as caught:
        backend.get_partitioned_state(ListStateDescriptor("s"))
    assert "value" in str(caught.value) and "list" in str(caught.value)
    ttl = ValueStateDescriptor("s")
    ttl.enable_time_to_live(StateTtlConfig.new_builder(10).build())
    with pytest.raises(StateKindMismatchError):
        backend.get_partitioned_state(ttl)
    error = pickle.loads(pickle.dumps(caught.value))
    assert (error.name, error.existing, error.requested) == ("s", "value", "list")


def test_state_access_without_a_current_key_is_a_typed_error(backend):
    state = backend.get_partitioned_state(ValueStateDescriptor("v"))
    with pytest.raises(NoCurrentKeyError):
        state.value()
    with pytest.raises(NoCurrentKeyError):
        backend.get_current_key()
    backend.set_current_key("a")
    assert backend.get_current_key() == "a"


def test_keys_and_apply_to_all_keys(backend):
    descriptor = ValueStateDescriptor("v")
    state = backend.get_partitioned_state(descriptor)
    for key in ("a", "b", "c"):
        backend.set_current_key(key)
        state.update(key.upper())
    backend.set_current_key("b")
    assert sorted(backend.keys("v")) == ["a", "b", "c"]
    seen = []

    def visit(key, visited):
        seen.append((key, visited.value()))
        visited.update(visited.value() * 2)

    backend.apply_to_all_keys(descriptor, visit)
    assert sorted(seen) == [("a", "A"), ("b", "B"), ("c", "C")]
    assert backend.get_current_key() == "b"
    assert state.value() == "BB"
    assert list(backend.keys("unknown")) == []


def test_disposed_backend_refuses_use(backend):
    backend.dispose()
    with pytest.raises(StateBackendDisposedError):
        backend.get_partitioned_state(ValueStateDescriptor("late"))


def test_factory_follows_configuration(tmp_path):
    config = Configuration()
    assert isinstance(
        create_keyed_state_backend(config, KeyGroupRange(0, 7), 8), HeapKeyedStateBackend
    )
    config.set_string(state_options.BACKEND.key, "rocksdb")
    config.set_string(state_options.LOCAL_DIR.key, str(tmp_path))
    rocks = create_keyed_state_backend(config, KeyGroupRange(0, 7), 8)
    assert isinstance(rocks, RocksDBKeyedStateBackend)
    rocks.dispose()
    assert list(tmp_path.iterdir()) == []
    config.set_string(state_options.BACKEND.key, "sqlite")
    with pytest.raises(StateBackendUnavailableError, match="rocksdb"):
        create_keyed_state_backend(config, KeyGroupRange(0, 7), 8)


def test_statistics_count_states_entries_and_snapshots(backend):
    state = backend.get_partitioned_state(ValueStateDescriptor("v"))
    backend.get_partitioned_state(ListStateDescriptor("l"))
    for key in range(5):
        backend.set_current_key(key)
        state.update(key)
    pending = backend.snapshot()
    statistics = backend.statistics()
    assert (statistics.states, statistics.entries, statistics.snapshots_in_flight) == (2, 5, 1)
    pending.release()
    assert backend.statistics().snapshots_in_flight == 0


def test_equal_keys_are_one_entry_whatever_was_cached(backend):
    """1, 1.0 and True are equal keys: one entry in either backend (the RocksDB backend keyed
    them by their pickles, three entries, until issue 27)."""
    state = backend.get_partitioned_state(ValueStateDescriptor("v"))
    for key, value in ((1, "int"), (1.0, "float"), (True, "bool"), (1, "int again")):
        backend.set_current_key(key)
        state.update(value)
    for key in (1.0, True, 1):
        backend.set_current_key(key)
        assert state.value() == "int again"


def test_equal_keys_whose_pickles_differ_are_one_key(backend):
    """A dataclass holding one string object twice pickles differently from one holding two
    equal strings; the RocksDB backend once made them two entries (docs/known-issues.md,
    fixed by issue 27)."""
    word = "word-1"
    state = backend.get_partitioned_state(ValueStateDescriptor("count"))
    backend.set_current_key(Point(word, word))
    state.update(1)
    backend.set_current_key(Point(word, "".join(list(word))))
    assert state.value() == 1
