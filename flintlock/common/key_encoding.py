"""The canonical encoding of keys: a hash that equal keys share in every process.

A key's key group decides which subtask owns its state and where a savepoint keeps it, so the
driver, every TaskManager and every later restore must compute the same group for keys that
compare equal. Python's ``hash()`` cannot do that (it is salted per process for ``str`` and
``bytes``) and neither can pickle bytes (pickle shares a repeated object once, so two equal
values pickle differently, and a frozenset pickles in its per-process iteration order).
``stable_hash`` is CRC-32 (in C) over a canonical byte form of the value instead.

Design note — the law and how each type keeps it. *Keys that compare equal hash alike*, so every
family of types that can compare equal across types shares one encoding:

* numbers — ``True == 1 == 1.0 == Decimal('1') == Fraction(1)``: an integral value is its two's
  complement (8 bytes for 64-bit ints); any other value that a float holds exactly is the
  float's ``repr``; another value with a finite decimal expansion is the ``repr`` of its
  shortest ``Decimal``, and any other rational is ``Fraction(n, d)``. ``complex`` with a zero
  imaginary part is its real part. numpy's scalars go by their Python value.
* text and bytes — ``str`` (and subclasses: ``StrEnum``) by its UTF-8 value; ``bytes``,
  ``bytearray`` and ``memoryview`` by their bytes.
* sequences — a tuple (so a named tuple, equal to the plain tuple) or list chains its parts.
* sets — ``set`` and ``frozenset`` (equal with the same elements) by the sorted hashes of their
  elements: independent of insertion order and of PYTHONHASHSEED. ``dict`` likewise by items.
* dates and times by the ``repr`` of the value Python's own ``__hash__`` hashes: ``fold``
  ignored, an aware value as the UTC instant (equal instants in different zones are equal).
* values equal only to their own class: an enum member (class and value), a dataclass whose
  generated ``__eq__`` compares fields (class and compared fields; a class shipped by value,
  the job script's, is recognised by the generated code: cloudpickle renames its file),
  ``Row`` (kind and fields), ``Instant``, ``uuid.UUID``. A class is named by module and
  qualified name.

Anything else raises ``UnstableKeyError``, never a silent fallback: an object of a class with
its own ``__eq__`` says nothing we could encode, and one compared by identity is equal to no
copy of itself in another process. The encodings of ``str``, ``int``, ``bool``, ``bytes``,
``None``, floats, tuples and lists of them are those of the first release, and a ``Decimal``,
date or time in canonical form keeps its old encoding too: savepoints depend on them.

Pure functions, safe from any thread. Called by ``runtime/state/keygroups.py`` (key groups),
``operator_spec.check_key`` (first key of a keyed operator) and ``DataStream.key_by``
(``check_key_type``).
"""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import enum
import functools
import numbers
import struct
import types
import uuid
import weakref
import zlib
from collections.abc import Iterable
from typing import Any

from flintlock.common.errors import FlintlockError
from flintlock.common.time import Instant
from flintlock.common.typeinfo import (
    BasicArrayTypeInfo,
    ListTypeInfo,
    MapTypeInfo,
    ObjectArrayTypeInfo,
    PrimitiveArrayTypeInfo,
    RowTypeInfo,
    TupleTypeInfo,
    TypeInformation,
)
from flintlock.common.types import Row

_crc32 = zlib.crc32
pack_int64 = struct.Struct("<q").pack
INT64 = range(-(2**63), 2**63)
_UTC = datetime.UTC
_EPOCH = datetime.datetime(1970, 1, 1)
_MAX_DECIMAL_EXPONENT = 10_000  # beyond, a Decimal is encoded by its digits (see _decimal)


class UnstableKeyError(FlintlockError, TypeError):
    """A key, or the key type declared at ``key_by``, has no hash that equal keys share in
    every process: its keyed state could be routed to a subtask that does not hold it."""

    def __init__(self, key_type: str, reason: str, where: str = "a key selector") -> None:
        super().__init__(key_type, reason, where)
        self.key_type = key_type
        self.reason = reason
        self.where = where

    def at(self, where: str) -> UnstableKeyError:
        """The same error, said of ``where`` (e.g. "the key selector of operator 'x'")."""
        return UnstableKeyError(self.key_type, self.reason, where)

    def __str__(self) -> str:
        return (f"{self.where} gave a key of type {self.key_type}, which cannot be hashed the "
                f"same way in every process ({self.reason}), so equal keys could land in "
                "different key groups and keyed state could be lost; key by a str, int, "
                "bytes, tuple, named tuple, frozenset, enum or dataclass (eq=True) of such "
                "values instead, e.g. key_by(lambda r: (r.user_id, r.region))")


def _int_bytes(value: int) -> bytes:
    """Eight little-endian bytes for 64-bit integers, the minimal two's complement beyond."""
    if value in INT64:
        return pack_int64(value)
    return value.to_bytes((value.bit_length() + 8) // 8, "little", signed=True)


def stable_hash(key: object, seed: int = 0) -> int:
    """A 32-bit hash of ``key``, equal for equal keys in every process and under every
    PYTHONHASHSEED (the module docstring lists the encodings); ``seed`` chains a part into
    the hash of its container. Raises ``UnstableKeyError`` for a value without one."""
    kind = type(key)
    if kind is str:
        return _crc32(key.encode("utf-8", "surrogatepass"), seed)  # type: ignore[attr-defined]
    if kind is int or kind is bool:
        return _crc32(_int_bytes(int(key)), seed)  # type: ignore[call-overload]
    if kind is tuple or kind is list or isinstance(key, (tuple, list)):
        crc = _crc32(b"(", seed)
        for part in key:  # type: ignore[attr-defined]
            crc = stable_hash(part, crc)
        return crc
    if isinstance(key, (bytes, bytearray, memoryview)):
        return _crc32(key, seed)
    if key is None:
        return _crc32(b"\x00", seed)
    if isinstance(key, float):
        return _float(key, seed)
    if isinstance(key, int):  # IntEnum, IntFlag, other int subclasses: their int value
        return _crc32(_int_bytes(int(key)), seed)
    if isinstance(key, str):  # StrEnum, (str, Enum): the str value, whatever __str__ says
        return _crc32(str.__str__(key).encode("utf-8", "surrogatepass"), seed)
    return _other(key, seed)


def _float(value: float, seed: int) -> int:
    if value.is_integer():
        return _crc32(_int_bytes(int(value)), seed)
    return _crc32(float.__repr__(value).encode(), seed)


def _other(key: object, seed: int) -> int:
    """The types after the hot ones, most common first."""
    if isinstance(key, decimal.Decimal):
        return _decimal(key, seed)
    if isinstance(key, (datetime.date, datetime.time, datetime.timedelta)):
        return _crc32(_temporal_text(key).encode(), seed)
    if isinstance(key, (frozenset, set)):
        return _unordered(b"{", key, seed)
    if isinstance(key, enum.Enum):
        return stable_hash(key.value, _crc32(b"enum " + _class_name(type(key)), seed))
    if isinstance(key, Row):
        crc = _crc32(b"Row", seed)
        return stable_hash(key._comparable(), stable_hash(key.get_row_kind().value, crc))
    if isinstance(key, numbers.Number):
        return _number(key, seed)
    if isinstance(key, uuid.UUID):
        return _crc32(key.bytes, _crc32(b"UUID", seed))
    if isinstance(key, Instant):
        return _crc32(_int_bytes(key.nanos), _crc32(_int_bytes(key.seconds), seed))
    if isinstance(key, dict):
        return _unordered(b"{:", key.items(), seed)
    return _dataclass(key, seed)


def _number(key: numbers.Number, seed: int) -> int:
    if isinstance(key, numbers.Integral):  # numpy's integers
        return _crc32(_int_bytes(int(key)), seed)
    if isinstance(key, numbers.Rational):  # Fraction
        return _rational(int(key.numerator), int(key.denominator), seed)
    if isinstance(key, complex):
        if key.imag == 0:
            return _float(key.real, seed)
        return _float(key.imag, _float(key.real, _crc32(b"complex", seed)))
    if isinstance(key, numbers.Real) and float(key) == key:  # numpy's float32
        return _float(float(key), seed)
    raise UnstableKeyError(_type_name(type(key)), "a number type without an exact float, "
                           "int or fraction value")


def _rational(numerator: int, denominator: int, seed: int) -> int:
    """The encoding every number type uses for ``numerator / denominator`` (in lowest terms)."""
    if denominator == 1:
        return _crc32(_int_bytes(numerator), seed)
    try:
        as_float = numerator / denominator  # correctly rounded
    except OverflowError:
        as_float = None
    if as_float is not None and as_float.as_integer_ratio() == (numerator, denominator):
        return _crc32(float.__repr__(as_float).encode(), seed)
    shortest = _shortest_decimal(numerator, denominator)
    if shortest is None:
        return _crc32(f"Fraction({numerator}, {denominator})".encode(), seed)
    return _crc32(repr(shortest).encode(), seed)


def _shortest_decimal(numerator: int, denominator: int) -> decimal.Decimal | None:
    """``numerator / denominator`` as the Decimal with the fewest digits (its last digit is not
    0), or None if its decimal expansion does not end (the denominator has a prime factor
    other than 2 and 5)."""
    twos = (denominator & -denominator).bit_length() - 1
    rest, fives = denominator >> twos, 0
    while rest % 5 == 0:
        rest, fives = rest // 5, fives + 1
    if rest != 1:
        return None
    places = max(twos, fives)
    digits = abs(numerator) * 10**places // denominator
    return decimal.Decimal((int(numerator < 0), tuple(map(int, str(digits))), -places))


def _decimal(key: decimal.Decimal, seed: int) -> int:
    """A finite Decimal as the exact rational it is; if the exponent of its shortest form is
    beyond ``_MAX_DECIMAL_EXPONENT`` (that rational would take megabytes) by the shortest
    form: equal Decimals still agree, an equal int or Fraction of over 30,000 bits would not."""
    if key.is_nan():
        return _crc32(b"Decimal('NaN')", seed)  # equal to nothing, not even itself
    if key.is_infinite():
        return _float(float(key), seed)
    if not key:
        return _crc32(_int_bytes(0), seed)
    sign, digits, exponent = key.as_tuple()
    assert isinstance(exponent, int)  # finite
    kept = len(digits)
    while digits[kept - 1] == 0:
        kept -= 1
    exponent += len(digits) - kept  # of the shortest form, which only the value decides
    if abs(exponent) <= _MAX_DECIMAL_EXPONENT:
        return _rational(*key.as_integer_ratio(), seed)
    return _crc32(repr(decimal.Decimal((sign, digits[:kept], exponent))).encode(), seed)


def _temporal_text(key: datetime.date | datetime.time | datetime.timedelta) -> str:
    """The ``repr`` of the plain value Python's ``__hash__`` hashes: ``fold`` ignored, an aware
    value as its UTC time, a subclass (pandas' Timestamp) as the plain type."""
    if isinstance(key, datetime.timedelta):
        return repr(datetime.timedelta(key.days, key.seconds, key.microseconds))
    if isinstance(key, datetime.datetime):
        return _datetime_text(key)
    if isinstance(key, datetime.date):
        return repr(datetime.date(key.year, key.month, key.day))
    return _time_text(key)


def _datetime_text(key: datetime.datetime) -> str:
    naive = datetime.datetime(key.year, key.month, key.day, key.hour, key.minute, key.second,
                              key.microsecond)
    offset = key.replace(fold=0).utcoffset()
    if offset is None:
        return repr(naive)
    try:
        return repr((naive - offset).replace(tzinfo=_UTC))
    except OverflowError:  # within a day of datetime.min or max
        return f"UTC {naive - _EPOCH - offset!r}"


def _time_text(key: datetime.time) -> str:
    offset = key.replace(fold=0).utcoffset()
    if offset is None:
        return repr(datetime.time(key.hour, key.minute, key.second, key.microsecond))
    since_midnight = datetime.timedelta(hours=key.hour, minutes=key.minute, seconds=key.second,
                                        microseconds=key.microsecond) - offset
    if datetime.timedelta(0) <= since_midnight < datetime.timedelta(days=1):
        return repr((_EPOCH + since_midnight).time().replace(tzinfo=_UTC))
    return f"UTC time {since_midnight!r}"  # the day before or after: equal to no UTC time


def _unordered(tag: bytes, items: Iterable[Any], seed: int) -> int:
    """Order-independent: the sorted hashes of the items, so neither insertion order nor the
    process's hash seed (which decides a set's iteration order) matters."""
    hashes = sorted(stable_hash(item) for item in items)
    return _crc32(struct.pack(f"<{len(hashes)}I", *hashes), _crc32(tag, seed))


def _dataclass(key: object, seed: int) -> int:
    kind = type(key)
    fields = _compared_fields(kind)
    if fields is None:
        raise UnstableKeyError(_type_name(kind), _why_unstable(kind))
    crc = _crc32(b"dataclass " + _class_name(kind), seed)
    for name in fields:
        crc = stable_hash(getattr(key, name), crc)
    return crc


def _eq_owner(kind: type) -> type:
    """The class in ``kind``'s MRO whose ``__eq__`` instances use."""
    return next(klass for klass in kind.__mro__ if "__eq__" in vars(klass))


_FIELDS: weakref.WeakKeyDictionary[type, tuple[str, ...] | None] = weakref.WeakKeyDictionary()
"""Memo of ``_compared_fields`` (saves ~1.7 µs per key); weak, so that a job's classes can go
when the job ends (Spark reuses Python workers)."""


def _compared_fields(kind: type) -> tuple[str, ...] | None:
    """The fields ``==`` compares if ``kind``'s ``__eq__`` is one ``@dataclass`` generated (it
    compares the class, then these fields in order); None otherwise."""
    try:
        return _FIELDS[kind]
    except KeyError:
        fields = _FIELDS[kind] = _find_compared_fields(kind)
        return fields


def _find_compared_fields(kind: type) -> tuple[str, ...] | None:
    owner = _eq_owner(kind)
    params = vars(owner).get("__dataclass_params__")
    eq = vars(owner)["__eq__"]
    code = getattr(eq, "__code__", None)
    if params is None or not params.eq or code is None:
        return None
    fields = tuple(field.name for field in dataclasses.fields(owner) if field.compare)
    if code.co_filename != "<string>" and not _same_code(code, _generated_eq(fields)):
        return None  # an __eq__ of the class's own
    return fields


def _same_code(code: types.CodeType, reference: types.CodeType) -> bool:
    return (code.co_code == reference.co_code and code.co_names == reference.co_names
            and code.co_consts == reference.co_consts
            and code.co_varnames == reference.co_varnames)


@functools.lru_cache(maxsize=256)
def _generated_eq(fields: tuple[str, ...]) -> types.CodeType:
    """The code of the ``__eq__`` that ``@dataclass`` generates for ``fields``: a class shipped
    by value (the job script's, rebuilt by cloudpickle) has that code under another file name
    (cloudpickle's ``<dynamic-code>``), so the code itself is compared."""
    reference = dataclasses.make_dataclass("Reference", [(name, object) for name in fields])
    code: types.CodeType = reference.__eq__.__code__
    return code


def _why_unstable(kind: type) -> str:
    if getattr(kind, "__hash__", None) is None:
        return "it is not hashable"
    owner = _eq_owner(kind)
    if owner is object:
        return "it compares by identity, and no copy of it in another process is equal to it"
    return (f"{_type_name(owner)} defines its own __eq__, which says nothing about how to "
            "encode it")


def _class_name(kind: type) -> bytes:
    return f"{kind.__module__}.{kind.__qualname__}".encode("utf-8", "surrogatepass")


def _type_name(kind: type) -> str:
    module = kind.__module__
    return kind.__qualname__ if module == "builtins" else f"{module}.{kind.__qualname__}"


def check_key_type(key_type: TypeInformation | None, where: str = "key_by()") -> None:
    """Raise ``UnstableKeyError`` if values of the declared ``key_type`` can never be keys (a
    map, list or array: not hashable; Flink refuses them at ``keyBy`` too). A type that says
    nothing about its values (``PICKLED_BYTE_ARRAY``, or none declared) is checked on the
    keys themselves at run time."""
    if isinstance(key_type, (RowTypeInfo, TupleTypeInfo)):
        for field_type in key_type.get_field_types():
            check_key_type(field_type, where)
    elif isinstance(key_type, MapTypeInfo):
        raise UnstableKeyError(repr(key_type), "a dict is not hashable", where)
    elif isinstance(key_type, (ListTypeInfo, BasicArrayTypeInfo, PrimitiveArrayTypeInfo,
                               ObjectArrayTypeInfo)):
        raise UnstableKeyError(repr(key_type), "a list is not hashable; use Types.TUPLE",
                               where)
