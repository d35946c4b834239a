"""The order in which Flink's mini-batch operators walk their buffered keys.

Flink's mini-batch aggregation buffers a bundle in a Java ``HashMap`` keyed by the grouping
key as a ``BinaryRowData``, and at the end of the bundle emits the keys in that map's
iteration order — neither the input's order nor sorted. To print Flink's changelog, the
operators here put their keys in the same order: ``hash_map_order(keys, key_types)``.

``BinaryRowData`` (as Flink's key selector writes it, row kind INSERT): a header of 8 bytes
per 64 bits of (8 header bits + one null bit per field), then an 8-byte slot per field, then
a variable-length part of 8-byte words. A slot holds the field's value in little-endian
bytes (BOOLEAN and TINYINT 1 byte, SMALLINT 2, INT and DATE 4, BIGINT 8, FLOAT and DOUBLE
their IEEE bits, a TIMESTAMP of precision up to 3 its epoch milliseconds, a DECIMAL of
precision up to 18 its unscaled long); a string of at most 7 UTF-8 bytes sits in its slot
(the bytes, then 0x80 | length in the slot's last byte), a longer one in the variable part
(the slot holds its offset << 32 | length); a TIMESTAMP of precision above 3 puts its epoch
milliseconds in 8 bytes of the variable part (the slot: offset << 32 | nanoseconds of the
millisecond), a DECIMAL of precision above 18 its unscaled value's two's-complement bytes in
16 zeroed bytes there (the slot: offset << 32 | number of bytes). A null field sets its bit
and leaves its slot 0 — but a null wide TIMESTAMP or DECIMAL still takes its variable bytes
(zeros; the slot: offset << 32).
The row's ``hashCode`` is Murmur3 (32-bit, seed 42) over its 4-byte words, finalised with
the byte length. A ``HashMap`` of n keys has 16 buckets, doubled while n exceeds three
quarters of them; a key sits in bucket ``(h ^ (h >>> 16)) & (buckets - 1)`` and iteration
walks the buckets in order, each in insertion order (a resize keeps it).

Key types are given as tags (``key_type_tags`` in the planner): ``STRING``, ``BOOLEAN``,
``TINYINT``, ``SMALLINT``, ``INT``, ``BIGINT``, ``FLOAT``, ``DOUBLE``, ``DATE``, ``TIMESTAMP3``,
``TIMESTAMP9`` (precision above 3), ``DECIMAL:<scale>`` (precision up to 18),
``WIDEDECIMAL:<scale>``; a key with a field of another type (None) keeps insertion order
(docs/known-issues.md). Pure functions.
"""

from __future__ import annotations

import datetime
import decimal
import struct
from collections.abc import Sequence
from typing import Any

_MASK = 0xFFFFFFFF
_EPOCH = datetime.date(1970, 1, 1)
_EPOCH_TIME = datetime.datetime(1970, 1, 1)


def _rotl(value: int, bits: int) -> int:
    return ((value << bits) | (value >> (32 - bits))) & _MASK


def murmur_words(data: bytes, seed: int = 42) -> int:
    """Flink's ``MurmurHashUtil.hashBytesByWords``: Murmur3 over 4-byte little-endian words,
    as an unsigned 32-bit int."""
    h = seed
    for (word,) in struct.iter_unpack("<I", data):
        k = (word * 0xCC9E2D51) & _MASK
        k = (_rotl(k, 15) * 0x1B873593) & _MASK
        h = (_rotl(h ^ k, 13) * 5 + 0xE6546B64) & _MASK
    h ^= len(data)
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _MASK
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _MASK
    return h ^ (h >> 16)


def _slot(value: Any, tag: str) -> bytes | None:
    """The 8-byte slot of a fixed-length value (None: a string that does not fit)."""
    if tag == "STRING":
        data = str(value).encode("utf-8")
        if len(data) > 7:
            return None
        return data + bytes(7 - len(data)) + bytes([0x80 | len(data)])
    if tag == "BOOLEAN":
        return bytes([1 if value else 0]) + bytes(7)
    if tag == "TINYINT":
        return struct.pack("<b", value) + bytes(7)
    if tag == "SMALLINT":
        return struct.pack("<h", value) + bytes(6)
    if tag == "INT":
        return struct.pack("<i", value) + bytes(4)
    if tag == "DATE":
        return struct.pack("<i", (value - _EPOCH).days) + bytes(4)
    if tag == "BIGINT":
        return struct.pack("<q", value)
    if tag == "FLOAT":
        return struct.pack("<f", value) + bytes(4)
    if tag == "DOUBLE":
        return struct.pack("<d", value)
    if tag == "TIMESTAMP3":
        return struct.pack("<q", _epoch_micros(value) // 1000)
    if tag.startswith("DECIMAL:"):
        return struct.pack("<q", _unscaled(value, tag))
    if tag == "TIMESTAMP9" or tag.startswith("WIDEDECIMAL:"):
        return None
    raise ValueError(f"no binary form for the key type {tag!r}")


def _epoch_micros(value: datetime.datetime) -> int:
    if value.tzinfo is not None:  # an instant (TIMESTAMP_LTZ): its UTC wall time
        value = value.astimezone(datetime.UTC).replace(tzinfo=None)
    delta = value - _EPOCH_TIME
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def _unscaled(value: Any, tag: str) -> int:
    scale = int(tag.split(":", 1)[1])
    return int(decimal.Decimal(value).scaleb(scale).to_integral_value(decimal.ROUND_HALF_UP))


def _variable(value: Any, tag: str) -> tuple[bytes, int]:
    """A value kept in the variable part: its bytes there (word-aligned) and the slot's low
    32 bits."""
    if tag == "TIMESTAMP9":
        if value is None:
            return bytes(8), 0
        micros = _epoch_micros(value)
        return struct.pack("<q", micros // 1000), (micros % 1000) * 1000
    if tag.startswith("WIDEDECIMAL:"):
        if value is None:
            return bytes(16), 0
        unscaled = _unscaled(value, tag)
        size = (unscaled if unscaled >= 0 else ~unscaled).bit_length() // 8 + 1
        data = unscaled.to_bytes(size, "big", signed=True)
        return data + bytes(16 - size), size
    data = str(value).encode("utf-8")
    return data + bytes(-len(data) % 8), len(data)


def binary_row(values: Sequence[Any], tags: Sequence[str]) -> bytes:
    """The bytes of ``values`` as Flink's ``BinaryRowData`` (module docstring)."""
    arity = len(values)
    header_size = ((arity + 63 + 8) // 64) * 8
    header = bytearray(header_size)
    fixed = bytearray()
    variable = bytearray()
    fixed_end = header_size + 8 * arity
    for index, (value, tag) in enumerate(zip(values, tags, strict=True)):
        wide = tag == "TIMESTAMP9" or tag.startswith("WIDEDECIMAL:")
        if value is None:
            bit = index + 8
            header[bit // 8] |= 1 << (bit % 8)
            if not wide:
                fixed += bytes(8)
                continue
        slot = None if value is None else _slot(value, tag)
        if slot is None:
            data, low = _variable(value, tag)
            slot = struct.pack("<q", ((fixed_end + len(variable)) << 32) | low)
            variable += data
        fixed += slot
    return bytes(header + fixed + variable)


def binary_row_hash(values: Sequence[Any], tags: Sequence[str]) -> int:
    """``BinaryRowData.hashCode()`` of ``values``, unsigned."""
    return murmur_words(binary_row(values, tags))


def hash_map_capacity(size: int) -> int:
    """The number of buckets of a Java ``HashMap`` after ``size`` insertions."""
    capacity = 16
    while size > capacity * 3 // 4:
        capacity *= 2
    return capacity


def hash_map_order(keys: list[Any], tags: Sequence[str | None] | None,
                   key_values: Any = None) -> list[Any]:
    """``keys`` (in insertion order) in a Java ``HashMap``'s iteration order of their
    ``BinaryRowData`` forms. ``key_values(key)`` gives a key's field values (default: the
    key itself, one field); ``tags`` None or holding None keeps insertion order."""
    if tags is None or None in tags or len(keys) < 2:
        return keys
    mask = hash_map_capacity(len(keys)) - 1
    fields = key_values or (lambda key: (key,))
    concrete: Sequence[str] = tags  # type: ignore[assignment]

    def bucket(key: Any) -> int:
        code = binary_row_hash(fields(key), concrete)
        return (code ^ (code >> 16)) & mask

    return sorted(keys, key=bucket)  # stable: insertion order within a bucket
