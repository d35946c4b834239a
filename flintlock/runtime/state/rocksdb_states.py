"""State objects of the RocksDB backend: each call reads or writes the current key's entries.

Every value is stored in ``values``' format: plain ints, floats, strs and flat tuples of
them compactly, anything else pickled (``pickles.dumps``: the job script's classes too); a
map state's user keys are in their canonical byte form (``user_keys.encode_user_key``);
reads return fresh objects, so (unlike the heap backend) a value the user mutates without
``update`` does not change the state. List state keeps the whole list in one entry (read,
append, write); map state keeps one entry per map key under the current key's prefix. Owned
by the task thread.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from rocksdict import WriteBatch, WriteOptions

from flintlock.common.state import AggregatingState, ListState, MapState, ReducingState, ValueState
from flintlock.runtime.state import pickles, values
from flintlock.runtime.state.crocks import load_crocks
from flintlock.runtime.state.user_keys import encode_user_key

if TYPE_CHECKING:
    from flintlock.runtime.state.rocksdb import RocksDBKeyedStateBackend


def _codec() -> tuple[Callable[[Any], bytes], Callable[[bytes], Any], Callable[..., list[Any]],
                      Callable[..., None], Callable[[list[bytes]], list[bytes]]]:
    """``values``' encode, decode, fold, fill_batch and sorted_distinct: in C where
    ``_crocks`` is built (the fallbacks bound by ``partial``: no Python frame per call), else
    the twins."""
    crocks = load_crocks()
    if crocks is None:
        return (values.encode_value_py, values.decode_value_py, values.fold_py,
                values.fill_batch_py, values.sorted_distinct_py)
    fold_c = crocks.fold

    def fold(entries: list[bytes], records: list[Any], stored: dict[bytes, bytes | None],
             reduce: Callable[[Any, Any], Any]) -> list[Any]:
        return fold_c(entries, records, stored, reduce,  # type: ignore[no-any-return]
                      pickles.dumps, pickle.loads)

    return (partial(crocks.encode_value, pickles.dumps), partial(crocks.decode_value, pickle.loads),
            fold, crocks.fill_batch, crocks.sorted_distinct)


dumps, loads, fold, fill_batch, sorted_distinct = _codec()
"""A state value's stored bytes and back (``values``: compact for plain ints, floats, strs
and flat tuples of them, plain pickle otherwise — as every value was before, and still
read), the keyed reduce's fold over a batch, and a write batch filled from a dict."""


def _no_wal() -> Any:
    # rocksdict's stubs are incomplete (``disable_wal`` is a property): keep it untyped
    options: Any = WriteOptions()
    options.disable_wal = True
    return options


NO_WAL: Any = _no_wal()
"""The working database's write options: no write-ahead log (recovery is from checkpoints)."""


def prefix_end(prefix: bytes) -> bytes:
    """The smallest key greater than every key starting with ``prefix``."""
    data = bytearray(prefix)
    while data and data[-1] == 0xFF:
        data.pop()
    if not data:
        return b"\xff" * (len(prefix) + 1)
    data[-1] += 1
    return bytes(data)


class _RocksState:
    __slots__ = ("_backend", "_db", "_id")

    def __init__(self, backend: RocksDBKeyedStateBackend, db: Any, state_id: bytes) -> None:
        self._backend = backend
        self._db = db
        self._id = state_id

    def _key(self) -> bytes:
        return self._backend.entry_key(self._id)

    def _load(self) -> Any:
        data = self._db.get(self._key())
        return None if data is None else loads(data)

    def clear(self) -> None:
        del self._db[self._key()]


class RocksValueState(_RocksState, ValueState[Any]):
    __slots__ = ()

    def value(self) -> Any:
        return self._load()

    def update(self, value: Any) -> None:
        if value is None:
            self.clear()
        else:
            self._db[self._key()] = dumps(value)

    def reduce_batch(self, keys: list[Any], records: list[Any],
                     reduce: Callable[[Any, Any], Any]) -> list[Any]:
        """A keyed reduce over a batch, record by record exactly as ``set_current_key(key)``,
        ``acc = value()``, ``acc = record if acc is None else reduce(acc, record)``,
        ``update(acc)`` would do (each read a fresh unpickled value, ``None`` clears), giving
        each record's ``acc`` — but one multi-get for the batch's distinct entries and one
        write batch for their last values, both in key order (a memtable of a million
        entries is a skiplist whose lookups and inserts are cache misses; in key order
        neighbouring ones share cache lines and the insert's search hint: ~40 % cheaper
        than in arrival order, docs/benchmarks.md). The current key is then the last
        record's."""
        backend = self._backend
        entries = backend.entry_keys(self._id, keys)
        distinct = sorted_distinct(entries)
        stored: dict[bytes, bytes | None] = dict(zip(distinct, self._db.get(distinct), strict=True))
        out = fold(entries, list(records), stored, reduce)
        batch = WriteBatch(raw_mode=True)
        fill_batch(stored, batch.put, batch.delete)
        self._db.write(batch, NO_WAL)
        if keys:
            backend.set_current_key(keys[-1])
        return out


class RocksListState(_RocksState, ListState[Any]):
    __slots__ = ()

    def get(self) -> list[Any]:
        return self._load() or []

    def add(self, value: Any) -> None:
        if value is None:
            raise ValueError("cannot add None to a list state")
        self.add_all([value])

    def add_all(self, values: list[Any]) -> None:
        values = list(values or ())
        if any(value is None for value in values):
            raise ValueError("cannot add None to a list state")
        if values:
            key = self._key()
            data = self._db.get(key)
            self._db[key] = dumps(values if data is None else loads(data) + values)

    def update(self, values: list[Any]) -> None:
        values = list(values or ())
        if any(value is None for value in values):
            raise ValueError("cannot add None to a list state")
        if values:
            self._db[self._key()] = dumps(values)
        else:
            self.clear()


class RocksReducingState(_RocksState, ReducingState[Any]):
    __slots__ = ("_reduce",)

    def __init__(
        self, backend: RocksDBKeyedStateBackend, db: Any, state_id: bytes,
        reduce: Callable[[Any, Any], Any],
    ) -> None:
        super().__init__(backend, db, state_id)
        self._reduce = reduce

    def get(self) -> Any:
        return self._load()

    def add(self, value: Any) -> None:
        key = self._key()
        data = self._db.get(key)
        self._db[key] = dumps(value if data is None else self._reduce(loads(data), value))


class RocksAggregatingState(_RocksState, AggregatingState[Any, Any]):
    __slots__ = ("_function",)

    def __init__(
        self, backend: RocksDBKeyedStateBackend, db: Any, state_id: bytes, function: Any
    ) -> None:
        super().__init__(backend, db, state_id)
        self._function = function

    def get(self) -> Any:
        data = self._db.get(self._key())
        return None if data is None else self._function.get_result(loads(data))

    def add(self, value: Any) -> None:
        key = self._key()
        data = self._db.get(key)
        accumulator = self._function.create_accumulator() if data is None else loads(data)
        self._db[key] = dumps(self._function.add(value, accumulator))


class RocksMapState(_RocksState, MapState[Any, Any]):
    """One entry per map entry: the RocksDB key ends with the user key's canonical bytes (so
    equal user keys are one entry), the value is the pickle of ``(user key, value)`` (so the
    user key comes back as it was put, not as its canonical decoding)."""

    __slots__ = ()

    def get(self, key: Any) -> Any:
        data = self._db.get(self._key() + encode_user_key(key))
        return None if data is None else loads(data)[1]

    def put(self, key: Any, value: Any) -> None:
        self._db[self._key() + encode_user_key(key)] = dumps((key, value))

    def put_all(self, dict_value: dict[Any, Any]) -> None:
        prefix = self._key()
        for key, value in dict_value.items():
            self._db[prefix + encode_user_key(key)] = dumps((key, value))

    def remove(self, key: Any) -> None:
        del self._db[self._key() + encode_user_key(key)]

    def contains(self, key: Any) -> bool:
        return self._db.get(self._key() + encode_user_key(key)) is not None

    def _entries(self) -> list[tuple[Any, Any]]:
        prefix = self._key()
        entries = []
        for key, value in self._db.items(from_key=prefix):
            if not key.startswith(prefix):
                break
            entries.append(loads(value))
        return entries

    def items(self) -> list[tuple[Any, Any]]:
        return [(k, v) for k, v in self._entries()]

    def keys(self) -> list[Any]:
        return [k for k, _ in self._entries()]

    def values(self) -> list[Any]:
        return [v for _, v in self._entries()]

    def is_empty(self) -> bool:
        prefix = self._key()
        for key, _ in self._db.items(from_key=prefix):
            return not key.startswith(prefix)
        return True

    def clear(self) -> None:
        prefix = self._key()
        self._db.delete_range(prefix, prefix_end(prefix))
