"""State time to live on both backends, driven by a ManualClock."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flintlock.common.state import (
    AggregatingStateDescriptor,
    ListStateDescriptor,
    MapStateDescriptor,
    ReducingStateDescriptor,
    StateTtlConfig,
    ValueStateDescriptor,
)
from flintlock.runtime.state.heap import HeapKeyedStateBackend
from flintlock.runtime.state.keygroups import KeyGroupRange
from flintlock.runtime.state.rocksdb import RocksDBKeyedStateBackend
from flintlock.testing.clock import ManualClock

TTL = 100


class Count:
    def create_accumulator(self):
        return 0

    def add(self, value, accumulator):
        return accumulator + 1

    def get_result(self, accumulator):
        return accumulator

    def merge(self, a, b):
        return a + b


@pytest.fixture
def clock():
    return ManualClock(1_000)


@pytest.fixture(params=["hashmap", "rocksdb"])
def backend(request, tmp_path, clock):
    if request.param == "hashmap":
        created = HeapKeyedStateBackend(KeyGroupRange(0, 15), 16, clock)
    else:
        created = RocksDBKeyedStateBackend(KeyGroupRange(0, 15), 16, clock, local_dir=str(tmp_path))
    created.set_current_key("k")
    yield created
    created.dispose()


def ttl(update=StateTtlConfig.UpdateType.OnCreateAndWrite, return_expired=False):
    builder = StateTtlConfig.new_builder(TTL).set_update_type(update)
    if return_expired:
        builder = builder.return_expired_if_not_cleaned_up()
    return builder.build()


def with_ttl(descriptor, config):
    descriptor.enable_time_to_live(config)
    return descriptor


def test_value_expires_after_ttl_from_last_write(backend, clock):
    state = backend.get_partitioned_state(with_ttl(ValueStateDescriptor("v"), ttl()))
    state.update("x")
    clock.advance(TTL - 1)
    assert state.value() == "x"
    clock.advance(1)
    assert state.value() is None
    state.update("y")
    clock.advance(TTL - 1)
    state.update("z")
    clock.advance(TTL - 1)
    assert state.value() == "z"


def test_on_create_and_write_does_not_refresh_on_read(backend, clock):
    state = backend.get_partitioned_state(with_ttl(ValueStateDescriptor("v"), ttl()))
    state.update(1)
    clock.advance(60)
    assert state.value() == 1
    clock.advance(40)
    assert state.value() is None


def test_on_read_and_write_refreshes_on_read(backend, clock):
    config = ttl(StateTtlConfig.UpdateType.OnReadAndWrite)
    state = backend.get_partitioned_state(with_ttl(ValueStateDescriptor("v"), config))
    state.update(1)
    clock.advance(60)
    assert state.value() == 1
    clock.advance(60)
    assert state.value() == 1
    clock.advance(TTL)
    assert state.value() is None


def test_return_expired_if_not_cleaned_up_shows_it_once(backend, clock):
    state = backend.get_partitioned_state(
        with_ttl(ValueStateDescriptor("v"), ttl(return_expired=True))
    )
    state.update("old")
    clock.advance(TTL)
    assert state.value() == "old"
    assert state.value() is None


def test_list_elements_expire_individually(backend, clock):
    state = backend.get_partitioned_state(with_ttl(ListStateDescriptor("l"), ttl()))
    state.add("a")
    clock.advance(50)
    state.add_all(["b", "c"])
    assert state.get() == ["a", "b", "c"]
    clock.advance(50)
    assert state.get() == ["b", "c"]
    clock.advance(50)
    assert state.get() == []
    state.update(["d"])
    assert list(state) == ["d"]
    with pytest.raises(ValueError, match="None"):
        state.add(None)
    with pytest.raises(ValueError, match="None"):
        state.add_all(["e", None])
    assert state.get() == ["d"]


def test_map_entries_expire_individually(backend, clock):
    state = backend.get_partitioned_state(with_ttl(MapStateDescriptor("m"), ttl()))
    state.put("a", 1)
    clock.advance(50)
    state.put_all({"b": 2})
    assert sorted(state.items()) == [("a", 1), ("b", 2)]
    clock.advance(50)
    assert state.get("a") is None and not state.contains("a")
    assert state.keys() == ["b"] and state.values() == [2]
    assert not state.is_empty()
    clock.advance(50)
    assert state.is_empty()


def test_reducing_and_aggregating_restart_after_expiry(backend, clock):
    total = backend.get_partitioned_state(
        with_ttl(ReducingStateDescriptor("sum", lambda a, b: a + b), ttl())
    )
    count = backend.get_partitioned_state(with_ttl(AggregatingStateDescriptor("n", Count()), ttl()))
    for value in (1, 2):
        total.add(value)
        count.add(value)
    assert (total.get(), count.get()) == (3, 2)
    clock.advance(TTL)
    assert (total.get(), count.get()) == (None, None)
    total.add(5)
    count.add(5)
    assert (total.get(), count.get()) == (5, 1)
    total.clear()
    assert total.get() is None


def test_full_snapshot_cleanup_drops_expired_entries(backend, clock):
    config = StateTtlConfig.new_builder(TTL).cleanup_full_snapshot().build()
    state = backend.get_partitioned_state(with_ttl(ValueStateDescriptor("v"), config))
    backend.set_current_key("old")
    state.update(1)
    clock.advance(TTL)
    backend.set_current_key("new")
    state.update(2)
    handle = backend.snapshot().write(writer=None, name="ttl")
    restored = HeapKeyedStateBackend(KeyGroupRange(0, 15), 16, clock)
    restored.restore([handle], read_state=None)
    assert list(restored.keys("v")) == ["new"]


class TtlModel:
    """What a TTL value state must show, written independently of the implementation."""

    def __init__(self, on_read, return_expired):
        self.on_read, self.return_expired = on_read, return_expired
        self.entry = None  # (value, last access)

    def update(self, value, now):
        self.entry = (value, now)

    def read(self, now):
        if self.entry is None:
            return None
        value, stamp = self.entry
        if stamp + TTL <= now:
            self.entry = None
            return value if self.return_expired else None
        if self.on_read:
            self.entry = (value, now)
        return value


@settings(max_examples=80, deadline=None)
@given(
    steps=st.lists(
        st.one_of(
            st.tuples(st.just("update"), st.integers(0, 5)),
            st.tuples(st.just("read"), st.just(0)),
            st.tuples(st.just("advance"), st.integers(0, 2 * TTL)),
        ),
        max_size=30,
    ),
    on_read=st.booleans(),
    return_expired=st.booleans(),
)
def test_ttl_value_state_agrees_with_a_model(steps, on_read, return_expired):
    clock = ManualClock(0)
    backend = HeapKeyedStateBackend(KeyGroupRange(0, 3), 4, clock)
    backend.set_current_key("k")
    update = (
        StateTtlConfig.UpdateType.OnReadAndWrite if on_read
        else StateTtlConfig.UpdateType.OnCreateAndWrite
    )
    state = backend.get_partitioned_state(
        with_ttl(ValueStateDescriptor("v"), ttl(update, return_expired))
    )
    model = TtlModel(on_read, return_expired)
    for action, number in steps:
        if action == "update":
            state.update(number)
            model.update(number, clock.wall_ms())
        elif action == "read":
            assert state.value() == model.read(clock.wall_ms())
        else:
            clock.advance(number)
    assert state.value() == model.read(clock.wall_ms())
