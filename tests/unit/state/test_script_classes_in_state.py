"""Classes of the job script (``__main__``) in keys and state, as a TaskManager has them: rebuilt
by cloudpickle from the driver's pickle, not importable under their name (issue 27).

The classes come from a script run in a subprocess (its ``__main__``), cloudpickled there and
loaded here — exactly how the job graph brings them to a TaskManager. Two runs of that script
stand for two runs of a job (another process, new cloudpickle class ids): state written with the
first run's classes is restored as instances of the second run's."""

from __future__ import annotations

import pickle
import subprocess
import sys
from pathlib import Path

import cloudpickle
import pytest

from flintlock.common.canonical_keys import decode_key, encode_key
from flintlock.common.job_classes import UnknownClassError, find_class
from flintlock.common.key_encoding import stable_hash
from flintlock.common.state import ListStateDescriptor, MapStateDescriptor, ValueStateDescriptor
from flintlock.runtime.checkpoint.storage import read_state
from flintlock.runtime.state import pickles
from flintlock.runtime.state.heap import HeapKeyedStateBackend
from flintlock.runtime.state.keygroups import KeyGroupRange
from flintlock.runtime.state.rocksdb import RocksDBKeyedStateBackend
from flintlock.runtime.state.snapshots import KeyGroupsStateHandle

SCRIPT = '''
import enum, sys
from dataclasses import dataclass
from typing import NamedTuple
import cloudpickle

@dataclass(frozen=True)
class Key:
    user: str
    region: str

@dataclass
class CountWithTimestamp:
    key: str
    count: int
    last_modified: int

class Tier(enum.Enum):
    GOLD = "gold"

class Point(NamedTuple):
    x: int
    y: int

sys.stdout.buffer.write(cloudpickle.dumps((Key, CountWithTimestamp, Tier, Point)))
'''


def _script_classes(tmp_path: Path) -> tuple[type, type, type, type]:
    """The classes of one run of the script, as a TaskManager gets them."""
    script = tmp_path / "job.py"
    script.write_text(SCRIPT)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, check=True,
                          timeout=60)
    classes = cloudpickle.loads(done.stdout)
    assert all(cls.__module__ == "__main__" for cls in classes)
    return classes


MODULE_SCRIPT = '''
import sys
import cloudpickle
import jobmod

cloudpickle.register_pickle_by_value(jobmod)  # as usercode.shipping does for job modules
sys.stdout.buffer.write(cloudpickle.dumps(jobmod.Key))
'''


def test_a_dataclass_of_a_job_module_shipped_by_value_keys_and_pickles(tmp_path):
    """The same for a module of the job that is not importable in the TaskManager."""
    (tmp_path / "jobmod.py").write_text(
        "from dataclasses import dataclass\n\n@dataclass(frozen=True)\n"
        "class Key:\n    user: str\n    region: str\n")
    script = tmp_path / "job.py"
    script.write_text(MODULE_SCRIPT)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, check=True,
                          timeout=60, cwd=tmp_path)
    key_class = cloudpickle.loads(done.stdout)
    assert key_class.__module__ == "jobmod" and "jobmod" not in sys.modules
    key = key_class("ann", "eu")
    assert stable_hash(key) == stable_hash(key_class("ann", "eu"))
    assert type(decode_key(encode_key(key))) is key_class
    copy = pickle.loads(pickles.dumps({key: [key]}))
    assert copy == {key: [key]} and type(next(iter(copy))) is key_class


@pytest.fixture
def run1(tmp_path):
    return _script_classes(tmp_path)


def test_plain_pickle_cannot_name_them_the_state_pickler_can(run1):
    key_class, count_class, tier, point = run1
    value = count_class("ann/eu", 3, 17)
    with pytest.raises((pickle.PicklingError, AttributeError)):
        pickle.dumps(value)  # what every checkpoint failed on before issue 27
    for original in (value, key_class("ann", "eu"), tier.GOLD, point(1, 2),
                     [value, {tier.GOLD: point(3, 4)}]):
        copy = pickle.loads(pickles.dumps(original))
        assert copy == original and type(copy) is type(original)
    with_function = pickle.loads(pickles.dumps([value, lambda x: x + 1]))  # by value
    assert type(with_function[0]) is count_class and with_function[1](1) == 2


def test_state_names_a_script_class_through_find_class_which_must_never_move(run1):
    """Savepoints hold this reference by module and name: moving ``find_class`` would make
    every savepoint with a value of a script class unreadable (add it to ``MOVED`` then)."""
    data = pickles.dumps(run1[1]("ann/eu", 3, 17))
    assert b"flintlock.common.job_classes" in data and b"find_class" in data
    assert b"CountWithTimestamp" in data and b"__main__" in data


def test_a_frozen_dataclass_of_the_script_is_a_stable_key(run1):
    key_class = run1[0]
    key = key_class("ann", "eu")
    assert stable_hash(key) == stable_hash(key_class("ann", "eu"))
    decoded = decode_key(encode_key(key))
    assert decoded == key and type(decoded) is key_class


def test_a_later_run_of_the_script_gets_instances_of_its_own_classes(run1, tmp_path):
    value = pickles.dumps(run1[1]("ann/eu", 3, 17))
    later = tmp_path / "later"
    later.mkdir()
    run2 = _script_classes(later)
    assert run2[1] is not run1[1]
    restored = pickle.loads(value)
    assert type(restored) is run2[1]
    assert find_class("__main__", "Key") is run2[0]
    with pytest.raises(UnknownClassError, match=r"__main__\.Missing"):
        find_class("__main__", "Missing")


@pytest.mark.parametrize("backend_kind", ["hashmap", "rocksdb", "rocksdb-incremental",
                                          "rocksdb-incremental-savepoint"])
def test_keys_and_values_of_the_script_survive_a_snapshot_and_a_later_run(
        run1, tmp_path, backend_kind):
    def make(directory):
        if backend_kind == "hashmap":
            return HeapKeyedStateBackend(KeyGroupRange(0, 127), 128, inline_threshold=0)
        return RocksDBKeyedStateBackend(KeyGroupRange(0, 127), 128, inline_threshold=0,
                                        local_dir=str(directory),
                                        incremental=backend_kind.startswith(
                                            "rocksdb-incremental"))

    from flintlock.common.ids import CheckpointId, JobId
    from flintlock.runtime.checkpoint.storage import CheckpointStorage

    key_class, count_class, tier, point = run1
    storage = CheckpointStorage(str(tmp_path / "chk"), JobId("script"))
    first = make(tmp_path / "one")
    try:
        value = first.get_partitioned_state(ValueStateDescriptor("my_state"))
        visits = first.get_partitioned_state(MapStateDescriptor("visits"))
        events = first.get_partitioned_state(ListStateDescriptor("events"))
        for user in ("ann", "bob"):
            first.set_current_key(key_class(user, "eu"))
            value.update(count_class(f"{user}/eu", 2, 5))
            visits.put(tier.GOLD, point(1, 2))
            events.add(count_class(user, 1, 1))
        location = (storage.init_savepoint(CheckpointId(1), str(tmp_path / "sp"))
                    if backend_kind.endswith("savepoint")
                    else storage.init_checkpoint(CheckpointId(1)))
        handle = first.snapshot(1).write(location, "keyed")
    finally:
        first.dispose()
    savepoint = backend_kind.endswith("savepoint")
    assert isinstance(handle, KeyGroupsStateHandle) == (savepoint or backend_kind == "hashmap"
                                                        or backend_kind == "rocksdb")
    later = tmp_path / "later"
    later.mkdir()
    key2, count2, tier2, point2 = _script_classes(later)
    second = make(tmp_path / "two")
    try:
        second.restore([handle], read_state)
        value = second.get_partitioned_state(ValueStateDescriptor("my_state"))
        visits = second.get_partitioned_state(MapStateDescriptor("visits"))
        events = second.get_partitioned_state(ListStateDescriptor("events"))
        for user in ("ann", "bob"):
            second.set_current_key(key2(user, "eu"))  # the later run's key class
            restored = value.value()
            assert type(restored) is count2 and restored == count2(f"{user}/eu", 2, 5)
            assert visits.get(tier2.GOLD) == point2(1, 2)
            assert type(next(iter(visits.keys()))) is tier2
            assert events.get() == [count2(user, 1, 1)]
        assert {type(k) for k in second.keys("my_state")} == {key2}
    finally:
        second.dispose()


def test_operator_state_holds_values_of_the_script(run1, tmp_path):
    from flintlock.runtime.state.operator import OperatorStateBackend

    count_class = run1[1]
    backend = OperatorStateBackend()
    backend.get_list_state(ListStateDescriptor("positions")).add(count_class("ann", 1, 2))
    handle = backend.snapshot().write(writer=None, name="op")
    later = tmp_path / "later"
    later.mkdir()
    count2 = _script_classes(later)[1]
    restored = OperatorStateBackend()
    restored.restore((handle,), read_state=None)
    (element,) = restored.get_list_state(ListStateDescriptor("positions")).get()
    assert type(element) is count2 and element == count2("ann", 1, 2)


def _dynamic_class(qualname: str) -> type:
    """A class cloudpickle tracks by value in this process, as the job script's classes are."""
    cls = type(qualname, (), {"__module__": "__main__", "__qualname__": qualname})
    cloudpickle.dumps(cls)  # enters it in cloudpickle's registry of dynamic classes
    return cls


def test_a_class_added_while_another_died_is_found_though_the_registry_kept_its_size():
    """The registry is weak: when one class dies as another arrives its size stays the same,
    and the newer class of the same name must still win over the one found before (the CI
    failure of 2026-11-29: a restore got the first run's class)."""
    import gc

    first = _dynamic_class("RegistryProbe")
    passing = _dynamic_class("SomethingElse")
    assert find_class("__main__", "RegistryProbe") is first
    del passing
    gc.collect()
    second = _dynamic_class("RegistryProbe")
    assert find_class("__main__", "RegistryProbe") is second
