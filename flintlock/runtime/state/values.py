"""How the RocksDB backend stores a state value: a compact form for plain values, else pickle.

Issue 31: pickling and unpickling a small tuple of ints was a third of the RocksDB keyed
reduce's Python time. The working database's value bytes are now one of::

    value   := pickle                      (pickles.dumps, protocol 5: first byte 0x80)
             | 0x01 item                   (compact, format 1)
    item    := 'i' u8 n, n bytes           (an exact int in [-2**63, 2**63): its minimal
                                            two's complement, little endian, n = 1..8)
             | 'd' float64 little endian   (an exact float; NaN and -0.0 bit for bit)
             | 's' u32 little endian n, n bytes of UTF-8   (an exact str that encodes)
             | 'n'                         (None)
             | 't' u8 n, n fields          (an exact tuple of at most 255 fields)
    field   := 'i' ... | 'd' ... | 's' ... | 'n'         (no nested tuple)

The tag byte tells the two apart: a pickle of protocol 2 or later always starts with 0x80 and
``pickles.dumps`` writes protocol 5, so every value written before this format (working
databases restored from incremental checkpoints, whose SST files hold these bytes) still
reads as before, with no migration. Anything else — a bool (exact types only: ``True`` stays
a bool), a subclass (a named tuple), a big int, a list, a nested tuple, a str with a lone
surrogate — is pickled. Decoding gives values equal to the encoded ones and of the same
types. Savepoints and full snapshots are not affected: they hold the decoded values
(``format``).

``encode_value`` / ``decode_value`` / ``fold`` / ``fill_batch`` / ``sorted_distinct`` run in
C where ``_crocks`` is built (``_crocks.encode_value`` etc.); the functions below are their
Python twins, held equal by ``tests/unit/state/test_rocksdb_values.py``. Pure functions; safe
from any thread.
"""

from __future__ import annotations

import pickle
import struct
from collections.abc import Callable
from typing import Any

from flintlock.runtime.state import pickles
from flintlock.runtime.state.errors import StateValueFormatError

COMPACT_TAG = 0x01
_INT_MIN, _INT_END = -(2**63), 2**63
_DOUBLE = struct.Struct("<d")
_U32 = struct.Struct("<I")


def _field(value: Any) -> bytes | None:
    """The compact form of one scalar, or None if it has none."""
    kind = type(value)
    if kind is int:
        if _INT_MIN <= value < _INT_END:
            size = (value.bit_length() + 8) // 8
            packed: bytes = value.to_bytes(size, "little", signed=True)
            return b"i" + bytes((size,)) + packed
        return None
    if kind is float:
        return b"d" + _DOUBLE.pack(value)
    if kind is str:
        try:
            data: bytes = value.encode("utf-8")
        except UnicodeEncodeError:
            return None
        return b"s" + _U32.pack(len(data)) + data
    if value is None:
        return b"n"
    return None


def compact(value: Any) -> bytes | None:
    """The compact form of ``value`` (tag included), or None if it has none."""
    if type(value) is tuple:
        if len(value) > 255:
            return None
        parts = [b"\x01t", bytes((len(value),))]
        for item in value:
            field = _field(item)
            if field is None:
                return None
            parts.append(field)
        return b"".join(parts)
    field = _field(value)
    return None if field is None else b"\x01" + field


def encode_value_py(value: Any, fallback: Callable[[Any], bytes] = pickles.dumps) -> bytes:
    """The stored bytes of ``value``: compact if it has a compact form, else ``fallback``."""
    data = compact(value)
    return fallback(value) if data is None else data


def _scalar(data: bytes, at: int) -> tuple[Any, int]:
    kind = data[at:at + 1]
    if kind == b"i" and at + 2 <= len(data) and 1 <= data[at + 1] <= 8:
        end = at + 2 + data[at + 1]
        if end <= len(data):
            return int.from_bytes(data[at + 2:end], "little", signed=True), end
    if kind == b"d" and at + 9 <= len(data):
        return _DOUBLE.unpack_from(data, at + 1)[0], at + 9
    if kind == b"s" and at + 5 <= len(data):
        size = _U32.unpack_from(data, at + 1)[0]
        if at + 5 + size <= len(data):
            try:
                return data[at + 5:at + 5 + size].decode("utf-8"), at + 5 + size
            except UnicodeDecodeError:
                raise StateValueFormatError("a string field is not UTF-8") from None
    if kind == b"n":
        return None, at + 1
    raise StateValueFormatError(f"bad or truncated field at byte {at}")


def decode_value_py(data: bytes | memoryview, fallback: Callable[[Any], Any] = pickle.loads) -> Any:
    """The value stored as ``data``: compact decoded here, anything else by ``fallback``."""
    if not data or data[0] != COMPACT_TAG:
        return fallback(data)
    data = bytes(data)  # a memoryview or bytearray: the slices below must be bytes
    if data[1:2] == b"t" and len(data) >= 3:
        count, at, items = data[2], 3, []
        for _ in range(count):
            item, at = _scalar(data, at)
            items.append(item)
        value: Any = tuple(items)
    else:
        value, at = _scalar(data, 1)
    if at != len(data):
        raise StateValueFormatError(f"{len(data) - at} bytes after the value")
    return value


def fold_py(entries: list[bytes], records: list[Any], stored: dict[bytes, bytes | None],
            reduce: Callable[[Any, Any], Any],
            dumps: Callable[[Any], bytes] = pickles.dumps,
            loads: Callable[[bytes], Any] = pickle.loads) -> list[Any]:
    """A keyed reduce over a batch against ``stored`` (entry key → stored bytes or None),
    record by record: ``acc = record`` where nothing is stored, else
    ``reduce(decode(stored), record)``; ``stored[entry]`` becomes ``encode(acc)`` (None where
    ``acc`` is None). Returns each record's ``acc``. The twin of ``_crocks.fold``."""
    if len(entries) != len(records):
        raise ValueError("entries and records differ in length")
    out: list[Any] = []
    append = out.append
    for entry, record in zip(entries, records, strict=True):
        data = stored[entry]
        acc = record if data is None else reduce(decode_value_py(data, loads), record)
        stored[entry] = None if acc is None else encode_value_py(acc, dumps)
        append(acc)
    return out


def fill_batch_py(stored: dict[bytes, bytes | None], put: Callable[[bytes, bytes], Any],
                  delete: Callable[[bytes], Any]) -> None:
    """``put(key, data)`` for each entry of ``stored``, ``delete(key)`` where data is None,
    in the dict's order (a write batch's contents). The twin of ``_crocks.fill_batch``."""
    for key, data in stored.items():
        if data is None:
            delete(key)
        else:
            put(key, data)


def sorted_distinct_py(entries: list[bytes]) -> list[bytes]:
    """The distinct entry keys in key order. The twin of ``_crocks.sorted_distinct``."""
    return sorted(set(entries))
