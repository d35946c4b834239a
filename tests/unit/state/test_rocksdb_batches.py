"""The RocksDB backend a batch at a time (issue 31): ``entry_keys`` gives exactly the entry keys
``set_current_key`` + ``entry_key`` give, and ``RocksValueState.reduce_batch`` leaves the
database and emits exactly what the per-record ``value()`` / ``update()`` loop does."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flintlock.common.canonical_keys import encode_key
from flintlock.common.state import ValueStateDescriptor
from flintlock.runtime.state import rocksdb as rocksdb_module
from flintlock.runtime.state.keygroups import KeyGroupRange, assign_to_key_group
from flintlock.runtime.state.rocksdb import RocksDBKeyedStateBackend
from tests.unit.state.key_recipes import EQUAL_PAIRS, build

FIXTURE_OK = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
DESCRIPTOR = ValueStateDescriptor("acc", None)
_NAMES = itertools.count()
INT_EDGES = [0, 1, -1, 127, 128, -128, -129, 255, 256, 2**31, -(2**31) - 1, 2**63 - 1,
             -(2**63), 2**63, -(2**63) - 1, 2**100, True, False]


@pytest.fixture
def backend(tmp_path):
    created = RocksDBKeyedStateBackend(KeyGroupRange(0, 127), 128, local_dir=str(tmp_path))
    yield created
    created.dispose()


def _one_by_one(backend: RocksDBKeyedStateBackend, state_id: bytes, keys: list) -> list:
    out = []
    for key in keys:
        backend.set_current_key(key)
        out.append(backend.entry_key(state_id))
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=FIXTURE_OK)
@given(ints=st.lists(st.integers(min_value=-(2**70), max_value=2**70)), pairs=st.lists(EQUAL_PAIRS))
def test_batch_entry_keys_are_the_per_key_entry_keys(backend, ints, pairs):
    keys = INT_EDGES + ints + [build(part) for pair in pairs for part in pair]
    assert backend.entry_keys(b"\x00\x03", keys) == _one_by_one(backend, b"\x00\x03", keys)


def _reduce_one_by_one(backend, descriptor, keys, records, reduce):
    state = backend.get_partitioned_state(descriptor)
    out = []
    for key, record in zip(keys, records, strict=True):
        backend.set_current_key(key)
        acc = state.value()
        acc = record if acc is None else reduce(acc, record)
        state.update(acc)
        out.append(acc)
    return out


def _reduce(acc, record):
    """Mutates its accumulator (a fresh copy per read must keep earlier outputs intact) and
    clears the state (returns None) when a record says so."""
    if record == ["clear"]:
        return None
    acc.append(record[0])
    return acc


@pytest.fixture
def two_backends(tmp_path):
    made = [RocksDBKeyedStateBackend(KeyGroupRange(0, 127), 128, local_dir=str(tmp_path))
            for _ in range(2)]
    yield made
    for backend in made:
        backend.dispose()


@settings(max_examples=60, deadline=None, suppress_health_check=FIXTURE_OK)
@given(st.lists(st.lists(st.tuples(st.sampled_from([1, 2, "a", (1, "b"), 2**64]),
                                   st.one_of(st.integers(0, 9), st.just("clear"))),
                         max_size=12), max_size=4))
def test_reduce_batch_is_the_per_record_loop(two_backends, batches):
    per_record, batched = two_backends
    descriptor = ValueStateDescriptor(f"acc-{next(_NAMES)}", None)  # fresh per example
    state = batched.batch_value_state(descriptor)
    assert state is not None
    per_record.get_partitioned_state(descriptor)  # the same state id in both databases
    for batch in batches:
        keys = [key for key, _ in batch]
        records = [[record] for _, record in batch]
        want = _reduce_one_by_one(per_record, descriptor, keys, records, _reduce)
        assert state.reduce_batch(keys, records, _reduce) == want
        assert dict(batched.db.items()) == dict(per_record.db.items())
        if keys:
            assert batched.current_key == keys[-1]


def test_a_state_with_time_to_live_is_not_offered_for_batches(backend):
    from flintlock.common.state import StateTtlConfig
    from flintlock.common.time import Duration

    descriptor = ValueStateDescriptor("ttl", None)
    descriptor.enable_time_to_live(StateTtlConfig.new_builder(Duration.of_seconds(5)).build())
    assert backend.batch_value_state(descriptor) is None
    assert backend.batch_value_state(DESCRIPTOR) is not None


C_ENTRY_KEYS = pytest.mark.skipif(rocksdb_module._CROCKS is None,
                                  reason="_crocks is not built (FLINTLOCK_PURE_PYTHON)")


MAX_PARALLELISMS = (1, 2, 7, 128, 32768)


@pytest.fixture(scope="module")
def backends_by_max_parallelism(tmp_path_factory):
    made = {n: RocksDBKeyedStateBackend(KeyGroupRange(0, n - 1), n,
                                        local_dir=str(tmp_path_factory.mktemp("crocks")))
            for n in MAX_PARALLELISMS}
    yield made
    for backend in made.values():
        backend.dispose()


@C_ENTRY_KEYS
@settings(max_examples=40, deadline=None, suppress_health_check=FIXTURE_OK)
@given(ints=st.lists(st.integers(min_value=-(2**70), max_value=2**70)),
       near=st.lists(st.integers(min_value=-(2**64), max_value=2**64)), pairs=st.lists(EQUAL_PAIRS),
       max_parallelism=st.sampled_from(MAX_PARALLELISMS),
       state_id=st.binary(min_size=2, max_size=2))
def test_c_entry_keys_are_the_python_twins(backends_by_max_parallelism, ints, near, pairs,
                                           max_parallelism, state_id):
    backend = backends_by_max_parallelism[max_parallelism]
    keys = INT_EDGES + ints + near + [build(part) for pair in pairs for part in pair]
    assert (rocksdb_module._CROCKS.entry_keys(keys, state_id, max_parallelism,
                                              backend._cached_encoding)
            == backend._entry_keys_py(state_id, keys))


@C_ENTRY_KEYS
def test_c_entry_keys_reject_bad_arguments_with_typed_errors(backend):
    entry_keys = rocksdb_module._CROCKS.entry_keys
    with pytest.raises(TypeError):
        entry_keys([1], "not bytes", 128, backend._cached_encoding)
    with pytest.raises(ValueError):
        entry_keys([1], b"\x00\x00", 0, backend._cached_encoding)
    with pytest.raises(TypeError):
        entry_keys(["a"], b"\x00\x00", 128, lambda key: "not a pair")
    with pytest.raises(ZeroDivisionError):  # an error of the fallback passes through
        entry_keys(["a"], b"\x00\x00", 128, lambda key: 1 / 0)


@settings(max_examples=40, deadline=None, suppress_health_check=FIXTURE_OK)
@given(ints=st.lists(st.integers(min_value=-(2**70), max_value=2**70)), pairs=st.lists(EQUAL_PAIRS))
def test_a_keys_encoding_is_encode_key_and_its_key_group(backend, ints, pairs):
    """``_encode_key`` (C for ints where built) against the canonical functions themselves."""
    for key in INT_EDGES + ints + [build(part) for pair in pairs for part in pair]:
        encoded = encode_key(key)
        group = assign_to_key_group(key, backend.max_parallelism)
        assert backend._encode_key(key) == (group.to_bytes(2, "big"),
                                            len(encoded).to_bytes(4, "big") + encoded)
