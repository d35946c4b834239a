"""The RocksDB backend's state values (issue 31, ``runtime/state/values``): the compact format
round-trips plain values with their types, everything else stays a pickle, values written as
pickles before the format existed still read, corrupt compact bytes are a typed error, and
``_crocks``' encode / decode / fold are exactly their Python twins."""

from __future__ import annotations

import math
import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flintlock.common.state import ValueStateDescriptor
from flintlock.runtime.state import pickles, values
from flintlock.runtime.state.crocks import load_crocks
from flintlock.runtime.state.errors import StateValueFormatError
from flintlock.runtime.state.keygroups import KeyGroupRange
from flintlock.runtime.state.rocksdb import RocksDBKeyedStateBackend
from flintlock.runtime.state.rocksdb_states import NO_WAL

CROCKS = load_crocks()
NEEDS_C = pytest.mark.skipif(CROCKS is None, reason="_crocks is not built (FLINTLOCK_PURE_PYTHON)")

SCALARS = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70), st.floats(allow_nan=True),
    st.text(), st.none(), st.booleans(), st.binary(max_size=4))
VALUES = st.one_of(
    SCALARS, st.tuples(SCALARS, SCALARS), st.lists(SCALARS, max_size=3).map(tuple),
    st.lists(SCALARS, max_size=3), st.tuples(st.tuples(st.integers()), st.integers()))


def _same(a, b) -> bool:
    """Equal, of the same types, NaN equal to NaN (and -0.0 told from 0.0)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float):
        if math.isnan(a):
            return math.isnan(b)
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    return a == b


@settings(max_examples=120, deadline=None)
@given(VALUES)
def test_every_value_round_trips_with_its_types(value):
    data = values.encode_value_py(value)
    assert _same(values.decode_value_py(data), value)
    assert _same(values.decode_value_py(memoryview(data)), value)


@pytest.mark.parametrize("value, compact", [
    ((7, 1), True), ((0, 127, 128, -128, -129, 255, -256, 2**31, -(2**31) - 1), True),
    (-(2**63), True), (2**63 - 1, True), (2.5, True), ("é", True), (None, True),
    ((), True), ((1, "a", None, 0.5), True),
    (2**63, False), (True, False), ((True, 1), False), ([1], False), (((1,), 2), False),
    ("\ud800", False), (tuple(range(256)), False), (b"x", False)])
def test_only_exact_plain_values_are_compact_and_the_rest_pickles(value, compact):
    data = values.encode_value_py(value)
    assert (data[0] == values.COMPACT_TAG) is compact
    if not compact:
        assert data == pickles.dumps(value)  # unchanged: what every value was before


@settings(max_examples=80, deadline=None)
@given(VALUES)
def test_values_stored_as_pickles_before_the_format_still_read(value):
    old = pickles.dumps(value)
    assert old[0] == 0x80  # protocol 5: never the compact tag
    assert _same(values.decode_value_py(old), value)
    if CROCKS is not None:
        assert _same(CROCKS.decode_value(pickle.loads, old), value)


@pytest.mark.parametrize("data", [
    b"\x01", b"\x01i12", b"\x01t\x02i" + bytes(8), b"\x01s\x05\x00\x00\x00ab", b"\x01n\x00",
    b"\x01s\x01\x00\x00\x00\xff", b"\x01t\x01t\x00", b"\x01x"])
def test_corrupt_compact_bytes_are_a_typed_error(data):
    with pytest.raises(StateValueFormatError):
        values.decode_value_py(data)
    if CROCKS is not None:
        with pytest.raises(StateValueFormatError):
            CROCKS.decode_value(pickle.loads, data)


@NEEDS_C
@settings(max_examples=120, deadline=None)
@given(VALUES)
def test_c_encode_and_decode_are_the_python_twins(value):
    data = CROCKS.encode_value(pickles.dumps, value)
    assert data == values.encode_value_py(value)
    assert _same(CROCKS.decode_value(pickle.loads, data), values.decode_value_py(data))


@NEEDS_C
@settings(max_examples=120, deadline=None)
@given(st.binary(max_size=24))
def test_c_decode_of_any_bytes_is_the_python_twins(tail):
    data = b"\x01" + tail
    try:
        want = values.decode_value_py(data)
    except StateValueFormatError:
        with pytest.raises(StateValueFormatError):
            CROCKS.decode_value(pickle.loads, data)
        return
    assert _same(CROCKS.decode_value(pickle.loads, data), want)


def _add_or_clear(acc, record):
    if record[1] == "clear":
        return None
    if type(record[1]) is int and type(acc[1]) is int:
        return (acc[0], acc[1] + record[1])
    return (acc[0], record[1])


@NEEDS_C
@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.one_of(st.integers(-3, 3), st.just("clear"),
                                                     st.just([1]), st.floats(allow_nan=False))),
                max_size=30),
       st.dictionaries(st.integers(0, 5), VALUES.filter(lambda v: v is not None), max_size=3))
def test_c_fold_is_the_python_twin(records, before):
    entries = [b"k%d" % key for key, _ in records]
    stored = {b"k%d" % key: None for key in range(6)}
    stored.update({b"k%d" % key: pickles.dumps((key, value)) for key, value in before.items()})
    twin = dict(stored)
    got = CROCKS.fold(entries, list(records), stored, _add_or_clear, pickles.dumps, pickle.loads)
    want = values.fold_py(entries, list(records), twin, _add_or_clear)
    assert _same(got, want)
    assert stored == twin


@NEEDS_C
def test_c_fold_rejects_bad_arguments(tmp_path):
    with pytest.raises(ValueError):
        CROCKS.fold([b"a"], [], {b"a": None}, _add_or_clear, pickles.dumps, pickle.loads)
    with pytest.raises(KeyError):
        CROCKS.fold([b"a"], [(0, 1)], {}, _add_or_clear, pickles.dumps, pickle.loads)
    with pytest.raises(TypeError):
        CROCKS.fold((b"a",), [(0, 1)], {}, _add_or_clear, pickles.dumps, pickle.loads)


def test_a_database_of_pickled_values_reads_and_continues_in_the_new_format(tmp_path):
    """A working database restored from a checkpoint taken before the format holds pickles."""
    backend = RocksDBKeyedStateBackend(KeyGroupRange(0, 127), 128, local_dir=str(tmp_path))
    try:
        state = backend.batch_value_state(ValueStateDescriptor("count", None))
        entries = backend.entry_keys(state._id, [1, 2])
        backend.db.put(entries[0], pickle.dumps((1, 40), 5), NO_WAL)
        backend.set_current_key(2)
        assert state.value() is None
        backend.set_current_key(1)
        assert state.value() == (1, 40)
        assert state.reduce_batch([1, 2, 1], [(1, 1), (2, 5), (1, 1)], _add_or_clear) == [
            (1, 41), (2, 5), (1, 42)]
        assert backend.db.get(entries[0])[0] == values.COMPACT_TAG
        backend.set_current_key(1)
        assert state.value() == (1, 42)
    finally:
        backend.dispose()


def test_the_working_database_has_bloom_filters_for_point_reads(tmp_path):
    backend = RocksDBKeyedStateBackend(KeyGroupRange(0, 127), 128, local_dir=str(tmp_path))
    try:
        written = (tmp_path / backend._directory / "db").glob("OPTIONS-*")
        options = {line.strip() for path in written for line in path.read_text().splitlines()}
    finally:
        backend.dispose()
    assert {"memtable_whole_key_filtering=true", "memtable_prefix_bloom_size_ratio=0.100000",
            "filter_policy=bloomfilter", "whole_key_filtering=true"} <= options


@NEEDS_C
@given(st.dictionaries(st.binary(max_size=4), st.one_of(st.none(), st.binary(max_size=4)),
                       max_size=8))
@settings(max_examples=60, deadline=None)
def test_c_fill_batch_is_the_python_twin(stored):
    calls: list[tuple] = []
    twin: list[tuple] = []
    CROCKS.fill_batch(stored, lambda k, v: calls.append(("put", k, v)),
                      lambda k: calls.append(("delete", k)))
    values.fill_batch_py(stored, lambda k, v: twin.append(("put", k, v)),
                         lambda k: twin.append(("delete", k)))
    assert calls == twin
    assert len(calls) == len(stored)


@NEEDS_C
@given(st.lists(st.binary(max_size=5), max_size=40))
@settings(max_examples=80, deadline=None)
def test_c_sorted_distinct_is_the_python_twin(entries):
    assert CROCKS.sorted_distinct(entries) == values.sorted_distinct_py(entries)


@NEEDS_C
def test_c_sorted_distinct_rejects_other_than_a_list_of_bytes():
    with pytest.raises(TypeError):
        CROCKS.sorted_distinct((b"a",))
    with pytest.raises(TypeError):
        CROCKS.sorted_distinct([b"a", "b"])
