"""A process of the RocksDB hash-seed test: builds keys from recipes on its own (so nothing of
the parent's object sharing or set order reaches it) and writes or restores an incremental
RocksDB checkpoint.

    python -m tests.unit.state.rocksdb_seed_child write DIR < recipes.json
    python -m tests.unit.state.rocksdb_seed_child read DIR < recipes.json

``write``: value state ``v`` of key i is i, and map state ``m`` of key "map" maps key i to i;
then an incremental checkpoint into DIR (its handle pickled to DIR/handle). ``read``: restores
it into a new backend (the database adopted whole) and prints, per key, the value found and
the map entry found, as JSON.
"""

from __future__ import annotations

import json
import os
import pickle
import sys
import tempfile

from flintlock.common.ids import CheckpointId, JobId
from flintlock.common.state import MapStateDescriptor, ValueStateDescriptor
from flintlock.runtime.checkpoint.storage import CheckpointStorage, read_state
from flintlock.runtime.state.keygroups import KeyGroupRange
from flintlock.runtime.state.rocksdb import RocksDBKeyedStateBackend
from tests.unit.state.key_recipes import build

VALUE = ValueStateDescriptor("v")
MAP = MapStateDescriptor("m")


def _backend(directory: str) -> RocksDBKeyedStateBackend:
    return RocksDBKeyedStateBackend(KeyGroupRange(0, 127), 128, inline_threshold=0,
                                    local_dir=tempfile.mkdtemp(dir=directory), incremental=True)


def write(directory: str, keys: list[object]) -> None:
    backend = _backend(directory)
    value, entries = backend.get_partitioned_state(VALUE), backend.get_partitioned_state(MAP)
    for index, key in enumerate(keys):
        backend.set_current_key(key)
        value.update(index)
        backend.set_current_key("map")
        entries.put(key, index)
    storage = CheckpointStorage(os.path.join(directory, "chk"), JobId("seeds"))
    handle = backend.snapshot(1).write(storage.init_checkpoint(CheckpointId(1)), "keyed")
    backend.dispose()
    with open(os.path.join(directory, "handle"), "wb") as file:
        pickle.dump(handle, file)


def read(directory: str, keys: list[object]) -> list[list[object]]:
    with open(os.path.join(directory, "handle"), "rb") as file:
        handle = pickle.load(file)
    backend = _backend(directory)
    backend.restore([handle], read_state)
    value, entries = backend.get_partitioned_state(VALUE), backend.get_partitioned_state(MAP)
    found = []
    for key in keys:
        backend.set_current_key(key)
        stored = value.value()
        backend.set_current_key("map")
        found.append([stored, entries.get(key)])
    backend.dispose()
    return found


if __name__ == "__main__":
    mode, target = sys.argv[1], sys.argv[2]
    built = [build(recipe) for recipe in json.load(sys.stdin)]
    if mode == "write":
        write(target, built)
    else:
        print(json.dumps(read(target, built)))
