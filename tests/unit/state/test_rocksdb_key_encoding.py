"""The canonical byte form of keys (``common.canonical_keys``) and the RocksDB backend on it:
equal keys are equal bytes and one entry, in every process and under every PYTHONHASHSEED; the
bytes decode; a checkpoint whose entry keys are pickles (the committed fixture, written before
issue 27) is migrated on restore."""

from __future__ import annotations

import datetime
import decimal
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flintlock.common.canonical_keys import (
    ENCODING,
    LEGACY_ENCODING,
    UndecodableKeyError,
    decode_key,
    encode_key,
)
from flintlock.common.key_encoding import UnstableKeyError, stable_hash
from flintlock.common.state import ListStateDescriptor, MapStateDescriptor, ValueStateDescriptor
from flintlock.common.time import Instant
from flintlock.common.types import Row
from flintlock.runtime.checkpoint.metadata import resolve_savepoint
from flintlock.runtime.checkpoint.storage import read_state
from flintlock.runtime.state.heap import HeapKeyedStateBackend
from flintlock.runtime.state.keygroups import KeyGroupRange
from flintlock.runtime.state.rocksdb import RocksDBKeyedStateBackend
from flintlock.runtime.state.snapshots import IncrementalKeyedStateHandle
from flintlock.runtime.state.user_keys import encode_user_key
from tests.fixtures.rocksdb_incremental import make_v2
from tests.fixtures.rocksdb_incremental.keys import Account
from tests.unit.state.key_recipes import EQUAL_PAIRS, Colour, Pair, Point, build

REPO = Path(__file__).resolve().parents[3]
FIXTURE = REPO / "tests" / "fixtures" / "rocksdb_incremental" / "v2-2026-11-28"
FIXTURE_OK = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
              HealthCheck.data_too_large]


# -- the encoding -----------------------------------------------------------------------------


@settings(max_examples=300, deadline=None, suppress_health_check=FIXTURE_OK)
@given(EQUAL_PAIRS)
def test_equal_keys_are_equal_bytes_that_decode_to_an_equal_key(pair):
    left, right = build(pair[0]), build(pair[1])
    assert left == right
    encoded = encode_key(left)
    assert encode_key(right) == encoded, pair
    decoded = decode_key(encoded)
    assert decoded == left and encode_key(decoded) == encoded
    assert stable_hash(decoded) == stable_hash(left)


@pytest.mark.parametrize("key", [
    1, True, 2**200, -(2**64), 0.5, float("inf"), -0.0, decimal.Decimal("0.1"),
    decimal.Decimal("1E+20000"), complex(1, 2), "", "ü\udcff", b"\x00", (), ("a", (1, None)),
    frozenset(), frozenset({1, "1"}), Colour.GREEN, Point("a", Point(1, 2)), Pair(1, 2),
    Row(b=1, a="x"), Row(1, 2), Instant(5, 7), datetime.date(2026, 11, 28),
    datetime.datetime(2026, 11, 28, 1, 2, 3, 4),
    datetime.datetime(2026, 11, 28, 1, 2, tzinfo=datetime.timezone(datetime.timedelta(hours=5))),
    datetime.datetime.min.replace(tzinfo=datetime.timezone(datetime.timedelta(hours=3))),
    datetime.time(1, 2, 3), datetime.time(23, 0, tzinfo=datetime.timezone(
        datetime.timedelta(hours=-3))), datetime.timedelta(days=-3, microseconds=5),
    Account("carol", "eu"),
])
def test_keys_of_every_kind_round_trip(key):
    encoded = encode_key(key)
    assert decode_key(encoded) == key
    assert encode_key(decode_key(encoded)) == encoded


def test_decoding_gives_the_canonical_value_of_a_family_of_equal_keys():
    assert type(decode_key(encode_key(True))) is int
    assert type(decode_key(encode_key(Pair(1, 2)))) is tuple
    assert type(decode_key(encode_key(Point(1, 2)))) is Point  # only equal to its own class
    assert decode_key(encode_key(Colour.RED)) is Colour.RED


def test_a_key_without_a_canonical_form_is_refused_as_stable_hash_refuses_it():
    class Own:
        def __eq__(self, other):
            return True

        __hash__ = object.__hash__

    for bad in (Own(), object()):
        with pytest.raises(UnstableKeyError):
            encode_key(bad)
        with pytest.raises(UnstableKeyError):
            stable_hash(bad)
    assert decode_key(encode_user_key(Instant(1, 2))) == Instant(1, 2)
    assert encode_user_key(object()).startswith(b"P")  # map user keys: the old pickle


def test_damaged_bytes_are_a_typed_error():
    for data in (b"", b"s\x05ab", b"?", encode_key("a") + b"x"):
        with pytest.raises(UndecodableKeyError):
            decode_key(data)


# -- the backend ------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None, suppress_health_check=FIXTURE_OK)
@given(st.lists(EQUAL_PAIRS, min_size=1, max_size=8))
def test_equal_keys_are_one_entry_in_the_rocksdb_backend(tmp_path, pairs):
    backend = RocksDBKeyedStateBackend(KeyGroupRange(0, 127), 128, local_dir=str(tmp_path))
    try:
        value = backend.get_partitioned_state(ValueStateDescriptor("v"))
        entries = backend.get_partitioned_state(MapStateDescriptor("m"))
        for index, (left, _) in enumerate(pairs):
            backend.set_current_key(build(left))
            value.update(index)
            backend.set_current_key("map")
            entries.put(build(left), index)
        expected = {}
        for index, (left, _) in enumerate(pairs):
            expected[build(left)] = index
        for _, right in pairs:
            key = build(right)
            backend.set_current_key(key)
            assert value.value() == expected[key], right
            backend.set_current_key("map")
            assert entries.get(key) == expected[key], right
        assert len(list(backend.keys("v"))) == len(expected)
        assert len(entries.keys()) == len(expected)
    finally:
        backend.dispose()


def _child(mode, directory, recipes, seed):
    done = subprocess.run(
        [sys.executable, "-m", "tests.unit.state.rocksdb_seed_child", mode, str(directory)],
        input=json.dumps(recipes), cwd=REPO, capture_output=True, text=True, timeout=120,
        env=dict(os.environ, PYTHONHASHSEED=seed), check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


@settings(max_examples=3, deadline=None, suppress_health_check=FIXTURE_OK)
@given(st.lists(EQUAL_PAIRS, min_size=15, max_size=30))
def test_a_restore_in_another_process_with_another_hash_seed_finds_equal_keys(tmp_path, pairs):
    """Process one writes with the left keys under PYTHONHASHSEED=1, process two adopts the
    database under PYTHONHASHSEED=2 and looks up the right keys, built its own way."""
    directory = tmp_path / f"run-{len(list(tmp_path.iterdir()))}"
    directory.mkdir()
    lefts, rights = [p[0] for p in pairs], [p[1] for p in pairs]
    _child("write", directory, lefts, "1")
    found = json.loads(_child("read", directory, rights, "2"))
    expected = {}
    for index, left in enumerate(lefts):
        expected[build(left)] = index
    for right, (value, entry) in zip(rights, found, strict=True):
        assert value == entry == expected[build(right)], right


# -- the old format ---------------------------------------------------------------------------


def _fixture_handle() -> IncrementalKeyedStateHandle:
    checkpoint = resolve_savepoint(str(FIXTURE))
    (state,) = checkpoint.task_states.values()
    handle = state.subtask_states[make_v2.OPERATOR].managed_keyed_state[0]
    assert isinstance(handle, IncrementalKeyedStateHandle)
    return handle


def _equal_but_built_otherwise(key):
    """An equal key that pickles differently: new string objects, a set filled backwards."""
    if isinstance(key, str):
        return "".join(list(key))
    if isinstance(key, tuple) and not hasattr(key, "_fields"):
        return tuple(_equal_but_built_otherwise(part) for part in key)
    if isinstance(key, frozenset):
        return frozenset(sorted(key, key=repr, reverse=True))
    return key


def _check_fixture_contents(backend, keys=None):
    table = make_v2.entries()
    count = backend.get_partitioned_state(make_v2.COUNT)
    events = backend.get_partitioned_state(make_v2.EVENTS)
    seen = backend.get_partitioned_state(make_v2.SEEN)
    checked = 0
    for name, read in (("count", count.value), ("events", events.get),
                       ("seen", lambda: dict(seen.items()))):
        for key, stored in table[name]:
            other = _equal_but_built_otherwise(key)
            if keys is not None and other not in keys:
                continue
            backend.set_current_key(other)
            assert read() == stored, (name, key)
            checked += 1
    if keys is None or "late" in keys:
        backend.set_current_key("late")
        assert count.value() == 99
    return checked


def test_the_fixture_is_in_the_old_format():
    handle = _fixture_handle()
    assert handle.key_encoding == LEGACY_ENCODING
    assert handle.key_group_range == KeyGroupRange(0, 127)


def test_an_old_format_incremental_checkpoint_is_migrated_into_a_rocksdb_backend(tmp_path):
    """Same key groups: the database would have been adopted as it is, with pickled keys in
    it; it is read and written again in canonical form instead."""
    backend = RocksDBKeyedStateBackend(KeyGroupRange(0, 127), 128, inline_threshold=0,
                                       local_dir=str(tmp_path), incremental=True)
    try:
        backend.restore([_fixture_handle()], read_state)
        assert _check_fixture_contents(backend) == 20
        keys = list(backend.keys("count"))
        assert len(keys) == 16 and Account("carol", "eu") in keys and "late" in keys
    finally:
        backend.dispose()


def test_an_old_format_checkpoint_restores_rescaled_and_into_the_heap_backend(tmp_path):
    handle = _fixture_handle()
    checked = 0
    for key_groups in (KeyGroupRange(0, 63), KeyGroupRange(64, 127)):
        backend = RocksDBKeyedStateBackend(key_groups, 128, local_dir=str(tmp_path))
        try:
            backend.restore([handle], read_state)
            owned = {key for key in backend.keys("count")} | {
                key for key in backend.keys("events")} | {key for key in backend.keys("seen")}
            checked += _check_fixture_contents(backend, owned)
        finally:
            backend.dispose()
    assert checked == 20
    heap = HeapKeyedStateBackend(KeyGroupRange(0, 127), 128)
    heap.restore([handle], read_state)
    assert _check_fixture_contents(heap) == 20


def test_a_migrated_backend_checkpoints_in_the_new_encoding_and_is_adopted(tmp_path):
    from flintlock.common.ids import CheckpointId, JobId
    from flintlock.runtime.checkpoint.storage import CheckpointStorage

    storage = CheckpointStorage(str(tmp_path / "chk"), JobId("migrated"))
    first = RocksDBKeyedStateBackend(KeyGroupRange(0, 127), 128, inline_threshold=0,
                                     local_dir=str(tmp_path), incremental=True)
    try:
        first.restore([_fixture_handle()], read_state)
        handle = first.snapshot(3).write(storage.init_checkpoint(CheckpointId(3)), "keyed")
    finally:
        first.dispose()
    assert isinstance(handle, IncrementalKeyedStateHandle) and handle.key_encoding == ENCODING
    second = RocksDBKeyedStateBackend(KeyGroupRange(0, 127), 128, inline_threshold=0,
                                      local_dir=str(tmp_path), incremental=True)
    try:
        assert second._adopt([handle], read_state)
        assert _check_fixture_contents(second) == 20
    finally:
        second.dispose()


def test_list_state_of_the_fixture_keeps_its_order(tmp_path):
    backend = RocksDBKeyedStateBackend(KeyGroupRange(0, 127), 128, local_dir=str(tmp_path))
    try:
        backend.restore([_fixture_handle()], read_state)
        backend.set_current_key("alice")
        assert backend.get_partitioned_state(ListStateDescriptor("events")).get() == [1, 2, 3]
    finally:
        backend.dispose()


def test_a_database_in_an_unknown_key_encoding_is_refused_by_name(tmp_path):
    from dataclasses import replace

    from flintlock.runtime.state.rocksdb_incremental import UnknownKeyEncodingError

    newer = replace(_fixture_handle(), key_encoding="canonical-9")
    for backend in (RocksDBKeyedStateBackend(KeyGroupRange(0, 127), 128,
                                             local_dir=str(tmp_path), incremental=True),
                    HeapKeyedStateBackend(KeyGroupRange(0, 127), 128)):
        try:
            with pytest.raises(UnknownKeyEncodingError, match="'canonical-9'"):
                backend.restore([newer], read_state)
        finally:
            backend.dispose()
