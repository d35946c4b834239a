"""The canonical byte form of keys: equal keys give equal bytes, and the bytes decode.

The ``rocksdb`` backend compares keys as bytes: an entry's RocksDB key holds the state key
(and a map state's user key) in this form, and incremental checkpoints keep those bytes in
their SST files, which another process adopts as they are. So the law is *equal keys → equal
bytes*, in every process and under every PYTHONHASHSEED, for every key ``key_encoding``'s
``stable_hash`` accepts; pickle breaks it (it writes a repeated object once, a set in its
per-process iteration order, ``1`` and ``1.0`` differently). ``decode_key(encode_key(k)) == k``.

Design note — one encoding per equality family, as in ``key_encoding`` (whose helpers this
module shares, so that bytes and key group agree on what is equal). Each value is a tag byte
and a self-delimiting payload (``uvarint`` lengths), so parts chain and a map's user key can
follow the state key:

====  ==========================================================================================
N     None
i     an integral number (int, bool, IntEnum, integral float, Decimal or Fraction): two's
      complement, its length first
f     any other number a float holds exactly (and ±inf, NaN): 8 bytes IEEE-754 big-endian
d     another number with a finite decimal expansion: the text of its shortest ``Decimal``
q     any other rational: numerator and denominator
c     a complex number with an imaginary part: two floats
s     str and its subclasses (StrEnum): UTF-8 (surrogates pass)
b     bytes (and a read-only memoryview, equal to them)
( [   tuple (a named tuple is equal to the plain tuple) / list: count, then the parts
{     set / frozenset: count, then the parts' encodings sorted (order- and seed-independent)
m     dict: count, then key-value encodings sorted
D a   timedelta (days, seconds, µs) / date (year, month, day)
T Z   naive datetime (fields, ``fold`` ignored) / aware datetime (µs since the epoch, UTC)
h H   naive time (fields) / aware time (µs after UTC midnight, may leave the day)
U @   uuid.UUID (16 bytes) / ``Instant`` (seconds, nanos)
e     enum member (not int or str): class, then its value
o     dataclass with a generated ``__eq__``: class, then its compared fields
R     ``Row``: kind, sorted field names or None, the values in that order
P     map user keys only: a pickle (a type without a canonical form; equal only if the pickles
      are, as the backend always kept them)
====  ==========================================================================================

A class is named by module and qualified name and found again with ``job_classes.find_class``
(the job script's classes too). Decoding yields the canonical value of a family where several
types are equal: an int for ``True`` or an IntEnum, a float for ``Decimal('1.5')``, a str for a
StrEnum, a plain tuple for a named tuple, a frozenset for a set, UTC for an aware datetime.
Those are equal to what was encoded (so state is found with the original key), but not of its
type; docs/internals/state.md says where a decoded key is seen.

Pure functions; safe from any thread. Called by the ``rocksdb`` backend (``runtime/state``).
"""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import enum
import fractions
import numbers
import struct
import uuid
from collections.abc import Callable
from typing import Any

from flintlock.common.errors import FlintlockError
from flintlock.common.job_classes import find_class
from flintlock.common.key_encoding import (
    _MAX_DECIMAL_EXPONENT,
    UnstableKeyError,
    _compared_fields,
    _shortest_decimal,
    _type_name,
    _why_unstable,
)
from flintlock.common.time import Instant
from flintlock.common.types import Row, RowKind

ENCODING = "canonical-1"
"""The name checkpoint metadata records for this encoding (``rocksdb-incremental`` state)."""
LEGACY_ENCODING = "pickle"
"""The entry keys of the ``rocksdb`` backend before issue 27: ``pickle(key)``."""

_DOUBLE = struct.Struct(">d")
_UTC = datetime.UTC
_EPOCH = datetime.datetime(1970, 1, 1)
_EPOCH_UTC = _EPOCH.replace(tzinfo=_UTC)
_DAY_US = 86_400_000_000
_US = datetime.timedelta(microseconds=1)


class UndecodableKeyError(FlintlockError, ValueError):
    """Bytes that are not a canonical key (damaged state, or another encoding)."""

    def __init__(self, data: bytes, reason: str) -> None:
        super().__init__(data, reason)
        self.data = data
        self.reason = reason

    def __str__(self) -> str:
        return f"not a canonical key ({self.reason}): {self.data[:64]!r}"


# -- encoding -------------------------------------------------------------------------------


_SMALL = tuple(bytes((length,)) for length in range(0x80))
"""The one-byte uvarints, for the common short lengths."""


def uvarint(value: int) -> bytes:
    """An unsigned varint (7 bits a byte, low first)."""
    return _uvarint(value)


def _uvarint(value: int) -> bytes:
    if value < 0x80:
        return _SMALL[value]
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _int(value: int) -> bytes:
    data = value.to_bytes((value.bit_length() + 8) // 8, "big", signed=True)
    size = len(data)
    return (_SMALL[size] if size < 0x80 else _uvarint(size)) + data


def _text(value: str) -> bytes:
    data = value.encode("utf-8", "surrogatepass")
    size = len(data)
    return (_SMALL[size] if size < 0x80 else _uvarint(size)) + data


def _class(kind: type) -> bytes:
    return _text(kind.__module__) + _text(kind.__qualname__)


def encode_key(key: object) -> bytes:
    """The canonical bytes of ``key``; ``UnstableKeyError`` for a key without them (exactly
    the keys ``stable_hash`` refuses)."""
    kind = type(key)
    value: Any = key
    if kind is str:  # the hot cases inline (a call costs as much as the encoding)
        data: bytes = value.encode("utf-8", "surrogatepass")
        size = len(data)
        return b"s" + (_SMALL[size] if size < 0x80 else _uvarint(size)) + data
    if kind is int:
        data = value.to_bytes((value.bit_length() + 8) // 8, "big", signed=True)
        size = len(data)
        return b"i" + (_SMALL[size] if size < 0x80 else _uvarint(size)) + data
    if kind is tuple:
        return b"(" + _uvarint(len(value)) + b"".join(map(encode_key, value))
    if kind is bytes:
        return b"b" + _uvarint(len(value)) + bytes(value)
    if key is None:
        return b"N"
    return _other(key)


def _other(key: object) -> bytes:
    if isinstance(key, bool):
        return b"i" + _int(int(key))
    if isinstance(key, tuple):
        return b"(" + _uvarint(len(key)) + b"".join(map(encode_key, key))
    if isinstance(key, list):
        return b"[" + _uvarint(len(key)) + b"".join(map(encode_key, key))
    if isinstance(key, (bytes, bytearray, memoryview)):
        data = bytes(key)
        return b"b" + _uvarint(len(data)) + data
    if isinstance(key, float):
        return _float(key)
    if isinstance(key, int):  # IntEnum, IntFlag, other int subclasses: their int value
        return b"i" + _int(int(key))
    if isinstance(key, str):  # StrEnum, (str, Enum): the str value
        return b"s" + _text(str.__str__(key))
    if isinstance(key, decimal.Decimal):
        return _decimal(key)
    if isinstance(key, (datetime.date, datetime.time, datetime.timedelta)):
        return _temporal(key)
    if isinstance(key, (frozenset, set)):
        parts = sorted(map(encode_key, key))
        return b"{" + _uvarint(len(parts)) + b"".join(parts)
    return _objects(key)


def _objects(key: object) -> bytes:
    if isinstance(key, enum.Enum):
        return b"e" + _class(type(key)) + encode_key(key.value)
    if isinstance(key, Row):
        comparable = key._comparable()
        return (b"R" + _int(key.get_row_kind().value) + encode_key(comparable[0])
                + encode_key(comparable[1]))
    if isinstance(key, numbers.Number):
        return _number(key)
    if isinstance(key, uuid.UUID):
        return b"U" + key.bytes
    if isinstance(key, Instant):
        return b"@" + _int(key.seconds) + _int(key.nanos)
    if isinstance(key, dict):
        parts = sorted(encode_key(k) + encode_key(v) for k, v in key.items())
        return b"m" + _uvarint(len(parts)) + b"".join(parts)
    kind = type(key)
    fields = _compared_fields(kind)
    if fields is None:
        raise UnstableKeyError(_type_name(kind), _why_unstable(kind))
    return (b"o" + _class(kind) + _uvarint(len(fields))
            + b"".join(encode_key(getattr(key, name)) for name in fields))


def _float(value: float) -> bytes:
    if value.is_integer():
        return b"i" + _int(int(value))
    return b"f" + _DOUBLE.pack(value)


def _number(key: numbers.Number) -> bytes:
    if isinstance(key, numbers.Integral):  # numpy's integers
        return b"i" + _int(int(key))
    if isinstance(key, numbers.Rational):  # Fraction
        return _rational(int(key.numerator), int(key.denominator))
    if isinstance(key, complex):
        if key.imag == 0:
            return _float(key.real)
        return b"c" + _DOUBLE.pack(key.real) + _DOUBLE.pack(key.imag)
    if isinstance(key, numbers.Real) and float(key) == key:  # numpy's float32
        return _float(float(key))
    raise UnstableKeyError(_type_name(type(key)), "a number type without an exact float, "
                           "int or fraction value")


def _rational(numerator: int, denominator: int) -> bytes:
    if denominator == 1:
        return b"i" + _int(numerator)
    try:
        as_float = numerator / denominator
    except OverflowError:
        as_float = None
    if as_float is not None and as_float.as_integer_ratio() == (numerator, denominator):
        return b"f" + _DOUBLE.pack(as_float)
    shortest = _shortest_decimal(numerator, denominator)
    if shortest is None:
        return b"q" + _int(numerator) + _int(denominator)
    return b"d" + _text(str(shortest))


def _decimal(key: decimal.Decimal) -> bytes:
    """As ``key_encoding._decimal``: the exact rational, or beyond the exponent limit the
    shortest form's text."""
    if key.is_nan():
        return b"d" + _text("NaN")
    if key.is_infinite():
        return _float(float(key))
    if not key:
        return b"i" + _int(0)
    sign, digits, exponent = key.as_tuple()
    assert isinstance(exponent, int)  # finite
    kept = len(digits)
    while digits[kept - 1] == 0:
        kept -= 1
    exponent += len(digits) - kept
    if abs(exponent) <= _MAX_DECIMAL_EXPONENT:
        return _rational(*key.as_integer_ratio())
    return b"d" + _text(str(decimal.Decimal((sign, digits[:kept], exponent))))


def _micros(delta: datetime.timedelta) -> int:
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def _temporal(key: datetime.date | datetime.time | datetime.timedelta) -> bytes:
    if isinstance(key, datetime.timedelta):
        return b"D" + _int(key.days) + _int(key.seconds) + _int(key.microseconds)
    if isinstance(key, datetime.datetime):
        offset = key.replace(fold=0).utcoffset()
        naive = datetime.datetime(key.year, key.month, key.day, key.hour, key.minute,
                                  key.second, key.microsecond)
        if offset is None:
            return b"T" + b"".join(_int(part) for part in (
                key.year, key.month, key.day, key.hour, key.minute, key.second,
                key.microsecond))
        return b"Z" + _int(_micros(naive - _EPOCH - offset))
    if isinstance(key, datetime.date):
        return b"a" + _int(key.year) + _int(key.month) + _int(key.day)
    offset = key.replace(fold=0).utcoffset()
    since_midnight = _micros(datetime.timedelta(
        hours=key.hour, minutes=key.minute, seconds=key.second, microseconds=key.microsecond))
    if offset is None:
        return b"h" + _int(since_midnight)
    return b"H" + _int(since_midnight - _micros(offset))


# -- decoding -------------------------------------------------------------------------------


class _Reader:
    __slots__ = ("data", "position")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.position = 0

    def take(self, size: int) -> bytes:
        end = self.position + size
        if end > len(self.data):
            raise UndecodableKeyError(self.data, "it ends too early")
        chunk = self.data[self.position : end]
        self.position = end
        return chunk

    def uvarint(self) -> int:
        value, shift = 0, 0
        while True:
            byte = self.take(1)[0]
            value |= (byte & 0x7F) << shift
            if byte < 0x80:
                return value
            shift += 7

    def integer(self) -> int:
        return int.from_bytes(self.take(self.uvarint()), "big", signed=True)

    def text(self) -> str:
        return self.take(self.uvarint()).decode("utf-8", "surrogatepass")

    def double(self) -> float:
        value: float = _DOUBLE.unpack(self.take(8))[0]
        return value

    def klass(self) -> type:
        module = self.text()
        return find_class(module, self.text())

    def value(self) -> Any:
        tag = self.take(1)
        reader = _READERS.get(tag)
        if reader is None:
            raise UndecodableKeyError(self.data, f"unknown tag {tag!r}")
        return reader(self)

    def values(self) -> list[Any]:
        return [self.value() for _ in range(self.uvarint())]


def _aware(micros: int) -> datetime.datetime:
    """The instant ``micros`` after the epoch, in UTC, or within a day of datetime's limits in
    the fixed offset that keeps it representable."""
    delta = datetime.timedelta(microseconds=micros)
    try:
        return _EPOCH_UTC + delta
    except OverflowError:
        limit = datetime.timedelta(hours=23, minutes=59)
        offset = limit if micros < 0 else -limit
        return (_EPOCH + (delta + offset)).replace(tzinfo=datetime.timezone(offset))


def _aware_time(micros: int) -> datetime.time:
    """An aware time ``micros`` after UTC midnight; outside the day, in the whole-minute fixed
    offset that brings it back into the day (time compares offsets in whole minutes)."""
    minutes, rest = divmod(micros, 60_000_000)
    offset = 0 if 0 <= minutes < 1440 else (-minutes if minutes < 0 else 1439 - minutes)
    local = minutes + offset
    seconds, fraction = divmod(rest, 1_000_000)
    zone = _UTC if offset == 0 else datetime.timezone(datetime.timedelta(minutes=offset))
    return datetime.time(local // 60, local % 60, seconds, fraction, tzinfo=zone)


def _dataclass(reader: _Reader) -> Any:
    kind = reader.klass()
    values = reader.values()
    fields = _compared_fields(kind)
    if fields is None or len(fields) != len(values):
        raise UndecodableKeyError(reader.data, f"{_type_name(kind)} is no longer a dataclass "
                                  f"comparing {len(values)} fields")
    instance: Any = object.__new__(kind)
    for field in dataclasses.fields(kind):
        if field.name in fields:
            continue
        if field.default is not dataclasses.MISSING:
            object.__setattr__(instance, field.name, field.default)
        elif field.default_factory is not dataclasses.MISSING:
            object.__setattr__(instance, field.name, field.default_factory())
    for name, value in zip(fields, values, strict=True):
        object.__setattr__(instance, name, value)
    return instance


def _row(reader: _Reader) -> Row:
    kind = RowKind(reader.integer())
    names, values = reader.value(), reader.value()
    row = Row(*values)
    if names is not None:
        row.set_field_names(list(names))
    row.set_row_kind(kind)
    return row


def _pickled(reader: _Reader) -> Any:
    """A ``P`` value is a map state's pickled user key: the backend keeps the user key itself
    with the value, so such bytes are compared, never decoded here (and this module, below
    the runtime, does not unpickle state)."""
    raise UnstableKeyError("a pickled map user key (tag P)",
                           "it is compared as bytes, never decoded", "a RocksDB map state")


def _decimal_text(reader: _Reader) -> decimal.Decimal:
    return decimal.Decimal(reader.text())


_READERS: dict[bytes, Callable[[_Reader], Any]] = {
    b"N": lambda r: None,
    b"i": _Reader.integer,
    b"f": _Reader.double,
    b"d": _decimal_text,
    b"q": lambda r: fractions.Fraction(r.integer(), r.integer()),
    b"c": lambda r: complex(r.double(), r.double()),
    b"s": _Reader.text,
    b"b": lambda r: r.take(r.uvarint()),
    b"(": lambda r: tuple(r.values()),
    b"[": _Reader.values,
    b"{": lambda r: frozenset(r.values()),
    b"m": lambda r: {r.value(): r.value() for _ in range(r.uvarint())},
    b"D": lambda r: datetime.timedelta(r.integer(), r.integer(), r.integer()),
    b"a": lambda r: datetime.date(r.integer(), r.integer(), r.integer()),
    b"T": lambda r: datetime.datetime(*[r.integer() for _ in range(7)]),  # type: ignore[arg-type]
    b"Z": lambda r: _aware(r.integer()),
    b"h": lambda r: (_EPOCH + datetime.timedelta(microseconds=r.integer())).time(),
    b"H": lambda r: _aware_time(r.integer()),
    b"U": lambda r: uuid.UUID(bytes=r.take(16)),
    b"@": lambda r: Instant(r.integer(), r.integer()),
    b"e": lambda r: r.klass()(r.value()),
    b"o": _dataclass,
    b"R": _row,
    b"P": _pickled,
}


_STR_TAG, _INT_TAG, _BYTES_TAG, _TUPLE_TAG = b"s"[0], b"i"[0], b"b"[0], b"("[0]


def _at(data: bytes, position: int) -> tuple[Any, int]:
    """The value at ``position`` and where it ends: str, int, bytes and tuples with short
    lengths here (a snapshot decodes every key: this is its hot path), the rest by ``_Reader``."""
    tag = data[position]
    if tag == _STR_TAG or tag == _INT_TAG or tag == _BYTES_TAG:
        size = data[position + 1]
        start = position + 2
        end = start + size
        if size < 0x80 and end <= len(data):
            if tag == _STR_TAG:
                return data[start:end].decode("utf-8", "surrogatepass"), end
            if tag == _INT_TAG:
                return int.from_bytes(data[start:end], "big", signed=True), end
            return data[start:end], end
    elif tag == _TUPLE_TAG and data[position + 1] < 0x80:
        position += 2
        items = []
        for _ in range(data[position - 1]):
            item, position = _at(data, position)
            items.append(item)
        return tuple(items), position
    reader = _Reader(data)
    reader.position = position
    value = reader.value()
    return value, reader.position


def decode_key(data: bytes) -> Any:
    """The key ``encode_key`` (or ``encode_user_key``) encoded as ``data``."""
    if type(data) is not bytes:
        data = bytes(data)
    size = len(data)
    if 2 <= size < 0x82 and data[1] == size - 2:  # a short str or int key: inline
        tag = data[0]
        if tag == _STR_TAG:
            return data[2:].decode("utf-8", "surrogatepass")
        if tag == _INT_TAG:
            return int.from_bytes(data[2:], "big", signed=True)
    try:
        value, end = _at(data, 0)
    except IndexError as exc:
        raise UndecodableKeyError(data, "it ends too early") from exc
    if end != len(data):
        raise UndecodableKeyError(data, "bytes left after the key")
    return value
