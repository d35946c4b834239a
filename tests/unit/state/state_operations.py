"""What the keyed-snapshot tests share: a checksummed file storage, the four state kinds, a
hypothesis strategy of operations on them, a backend of either kind, and reading back
everything a backend holds."""

import hashlib

from hypothesis import strategies as st

from flintlock.common.state import (
    ListStateDescriptor,
    MapStateDescriptor,
    ReducingStateDescriptor,
    ValueStateDescriptor,
)
from flintlock.runtime.state.handles import CorruptStateError, StreamStateHandle
from flintlock.runtime.state.heap import HeapKeyedStateBackend
from flintlock.runtime.state.rocksdb import RocksDBKeyedStateBackend


class FileStorage:
    """A checkpoint directory: writes files with their SHA-256, verifies on read."""

    def __init__(self, directory):
        self.directory = directory
        self.directory.mkdir(parents=True, exist_ok=True)

    def write_state(self, name, data):
        path = self.directory / name
        path.write_bytes(data)
        return StreamStateHandle(str(path), len(data), hashlib.sha256(data).hexdigest())

    def read_state(self, handle):
        try:
            with open(handle.uri, "rb") as file:
                data = file.read()
        except FileNotFoundError as missing:
            raise CorruptStateError(handle.uri, "missing") from missing
        if len(data) != handle.size or hashlib.sha256(data).hexdigest() != handle.sha256:
            raise CorruptStateError(handle.uri, "checksum mismatch")
        return data


VALUE = ValueStateDescriptor("value")
LIST = ListStateDescriptor("list")
MAP = MapStateDescriptor("map")
SUM = ReducingStateDescriptor("sum", lambda a, b: a + b)
DESCRIPTORS = (VALUE, LIST, MAP, SUM)

keys = st.one_of(
    st.integers(-50, 50), st.text(max_size=3), st.tuples(st.integers(0, 3), st.text(max_size=2))
)
operations = st.lists(
    st.tuples(
        keys,
        st.sampled_from(["value", "list", "map", "sum", "clear_value", "remove_map"]),
        st.integers(0, 9),
    ),
    max_size=40,
)


def make_backend(kind, tmp_path, key_groups, max_parallelism, threshold=0):
    """A keyed backend of ``kind`` ("hashmap" or "rocksdb")."""
    if kind == "hashmap":
        return HeapKeyedStateBackend(key_groups, max_parallelism, inline_threshold=threshold)
    return RocksDBKeyedStateBackend(
        key_groups, max_parallelism, inline_threshold=threshold, local_dir=str(tmp_path)
    )


def apply(backend, ops):
    """Runs ``ops`` (key, operation, number) of ``operations`` on ``backend``."""
    for key, op, number in ops:
        backend.set_current_key(key)
        if op == "value":
            backend.get_partitioned_state(VALUE).update([number])
        elif op == "list":
            backend.get_partitioned_state(LIST).add(number)
        elif op == "map":
            backend.get_partitioned_state(MAP).put(number % 3, {"n": number})
        elif op == "sum":
            backend.get_partitioned_state(SUM).add(number)
        elif op == "clear_value":
            backend.get_partitioned_state(VALUE).clear()
        else:
            backend.get_partitioned_state(MAP).remove(number % 3)


def contents(backend):
    """Everything the backend holds, read through the state API."""
    result = {}
    for descriptor in DESCRIPTORS:
        if descriptor.name not in backend.state_names():
            continue
        state = backend.get_partitioned_state(descriptor)
        for key in backend.keys(descriptor.name):
            backend.set_current_key(key)
            if descriptor is VALUE:
                result[(descriptor.name, key)] = state.value()
            elif descriptor is LIST:
                result[(descriptor.name, key)] = list(state.get())
            elif descriptor is MAP:
                result[(descriptor.name, key)] = dict(state.items())
            else:
                result[(descriptor.name, key)] = state.get()
    return result
