"""The order in which a Java ``HashMap`` iterates its entries, for the print connector's MAP
and MULTISET values (Flink converts them to a ``HashMap`` before ``Row.toString``).

A ``HashMap`` built by inserting n entries has a table of 16 buckets, doubled while n exceeds
three quarters of it; an entry sits in bucket ``spread(hashCode) & (buckets - 1)`` with
``spread(h) = h ^ (h >>> 16)``, and iteration walks the buckets in order, each in insertion
order (a resize keeps that order). ``hashCode`` is Java's for the key's external class:
``String`` (31-polynomial over UTF-16 units), ``Integer``/``Short``/``Byte`` (the value),
``Long`` (high ^ low word), ``Boolean`` (1231 / 1237), ``Double``/``Float`` (of the IEEE bits),
``LocalDate``. Keys of other types keep insertion order (documented as a known difference in
docs/known-issues.md). Buckets that Java turns into trees (more than 8 colliding keys in a
table of 64 or more) are not modelled.

Pure functions; no state.
"""

from __future__ import annotations

import datetime
import struct
from collections.abc import Callable
from typing import Any

from flintlock.datastream.changelog.binary_rows import hash_map_capacity
from flintlock.table.types import (
    BigIntType,
    BooleanType,
    CharType,
    DataType,
    DateType,
    DoubleType,
    FloatType,
    IntType,
    SmallIntType,
    TinyIntType,
    VarCharType,
)

_MASK = 0xFFFFFFFF


def _int32(value: int) -> int:
    value &= _MASK
    return value - (1 << 32) if value >= 1 << 31 else value


def string_hash(text: str) -> int:
    """Java's ``String.hashCode`` (over UTF-16 code units)."""
    result = 0
    units = text.encode("utf-16-be")
    for index in range(0, len(units), 2):
        result = (31 * result + (units[index] << 8 | units[index + 1])) & _MASK
    return _int32(result)


def long_hash(value: int) -> int:
    bits = value & 0xFFFFFFFFFFFFFFFF
    return _int32(bits ^ (bits >> 32))


def double_hash(value: float) -> int:
    if value != value:  # Java's canonical NaN
        return long_hash(0x7FF8000000000000)
    return long_hash(struct.unpack("<q", struct.pack("<d", value))[0])


def float_hash(value: float) -> int:
    if value != value:
        return _int32(0x7FC00000)
    bits: int = struct.unpack("<i", struct.pack("<f", value))[0]
    return bits


def local_date_hash(value: datetime.date) -> int:
    year = value.year
    return _int32((year & 0xFFFFF800) ^ ((year << 11) + (value.month << 6) + value.day))


_HASHES: dict[type, Callable[[Any], int]] = {
    VarCharType: string_hash, CharType: string_hash,
    TinyIntType: _int32, SmallIntType: _int32, IntType: _int32, BigIntType: long_hash,
    BooleanType: lambda value: 1231 if value else 1237,
    DoubleType: double_hash, FloatType: float_hash, DateType: local_date_hash,
}


def java_hash_order(entries: list[tuple[Any, Any]], key_type: DataType) -> list[tuple[Any, Any]]:
    """``entries`` in the order a Java ``HashMap`` of them iterates (module docstring)."""
    hash_of = _HASHES.get(type(key_type))
    if hash_of is None or len(entries) < 2:
        return entries
    mask = hash_map_capacity(len(entries)) - 1

    def bucket(entry: tuple[Any, Any]) -> int:
        key = entry[0]
        if key is None:
            return 0
        code = hash_of(key) & _MASK
        return (code ^ (code >> 16)) & mask

    return sorted(entries, key=bucket)  # stable: insertion order within a bucket
