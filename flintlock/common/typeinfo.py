"""PyFlink's type information: ``Types.INT()``, ``Types.ROW([...])`` and the classes behind them.

A ``TypeInformation`` describes the values a stream carries. In PyFlink it picks the Java
serializer; in flintlock records are Python objects end to end, so a type is used for two
things:

* **validation** — ``type_info.validate(value, operator_name)`` raises
  ``RecordTypeMismatchError`` naming the operator, the declared type and the offending value
  (with the path to it inside rows, tuples, lists and maps). The runtime calls it on the
  outputs of operators whose output type was declared (``output_type=`` / ``type_info=``);
  per record it should use ``type_info.validator(operator_name)``, a closure over a
  predicate compiled once per type (a type check and a range compare for an INT, unrolled
  field checks for small rows and tuples); the detailed diagnosis runs only on failure.
* **serializer choice** — ``type_info.serializer_kind``: ``PICKLE`` when every value of the
  type is a builtin or a flintlock value type (stdlib ``pickle`` round-trips it anywhere), or
  ``CLOUDPICKLE`` for ``PICKLED_BYTE_ARRAY`` (any object, whose class may exist only in the
  user's driver program). A stream without a declared type is ``PICKLED_BYTE_ARRAY``, as in
  PyFlink.

Nullability follows Flink's serializers: ``None`` is accepted as a field of a ``Row``, an
element of a basic or object array and a map value; it is rejected as a top-level record of
a declared type, a tuple field, a list element, a map key and a primitive array element.
Numbers are range-checked (BYTE 8 bit, SHORT 16, INT 32, LONG 64); ``bool`` is not a number.

Immutable value objects; no I/O; safe to share between threads.
"""

from __future__ import annotations

import datetime
import decimal
import enum
import math
import operator
import struct
from collections.abc import Callable, Sequence
from typing import Any, cast

from flintlock.common.time import Instant
from flintlock.common.typeinfo_base import (
    RecordTypeMismatchError,
    SerializerKind,
    TypeInformation,
)
from flintlock.common.types import Row

__all__ = [
    "BasicArrayTypeInfo", "BasicType", "BasicTypeInfo", "ListTypeInfo", "MapTypeInfo",
    "ObjectArrayTypeInfo", "PickledBytesTypeInfo", "PrimitiveArrayTypeInfo",
    "RecordTypeMismatchError", "RowTypeInfo", "SerializerKind", "SqlTimeType",
    "SqlTimeTypeInfo", "TupleTypeInfo", "TypeInformation", "Types",
]


class BasicType(enum.Enum):
    STRING = "String"
    BYTE = "Byte"
    BOOLEAN = "Boolean"
    SHORT = "Short"
    INT = "Integer"
    LONG = "Long"
    FLOAT = "Float"
    DOUBLE = "Double"
    CHAR = "Char"
    BIG_INT = "BigInteger"
    BIG_DEC = "BigDecimal"
    INSTANT = "Instant"


def _int_in(bits: int) -> Callable[[Any], str | None]:
    low, high = -(1 << (bits - 1)), (1 << (bits - 1)) - 1

    def check(value: Any) -> str | None:
        if isinstance(value, bool) or not isinstance(value, int):
            return "expected an int"
        if not low <= value <= high:
            return f"{value} is out of the {bits}-bit range [{low}, {high}]"
        return None

    return check


def _instance_of(kinds: type | tuple[type, ...], what: str,
                 exclude: type | None = None) -> Callable[[Any], str | None]:
    def check(value: Any) -> str | None:
        if not isinstance(value, kinds) or (exclude is not None and isinstance(value, exclude)):
            return f"expected {what}"
        return None

    return check


def _char(value: Any) -> str | None:
    if not isinstance(value, str) or len(value) != 1:
        return "expected a str of length 1"
    return None


_BASIC_CHECKS: dict[BasicType, Callable[[Any], str | None]] = {
    BasicType.STRING: _instance_of(str, "a str"),
    BasicType.BYTE: _int_in(8),
    BasicType.BOOLEAN: _instance_of(bool, "a bool"),
    BasicType.SHORT: _int_in(16),
    BasicType.INT: _int_in(32),
    BasicType.LONG: _int_in(64),
    BasicType.FLOAT: _instance_of((int, float), "a float", exclude=bool),
    BasicType.DOUBLE: _instance_of((int, float), "a float", exclude=bool),
    BasicType.CHAR: _char,
    BasicType.BIG_INT: _instance_of(int, "an int", exclude=bool),
    BasicType.BIG_DEC: _instance_of(decimal.Decimal, "a decimal.Decimal"),
    BasicType.INSTANT: _instance_of(Instant, "a flintlock.common.time.Instant"),
}
_INT_BITS = {BasicType.BYTE: 8, BasicType.SHORT: 16, BasicType.INT: 32, BasicType.LONG: 64}


def _int_predicate(bits: int) -> Callable[[Any], bool]:
    low, high = -(1 << (bits - 1)), (1 << (bits - 1)) - 1

    def check(value: Any) -> bool:
        if type(value) is int:
            return low <= value <= high
        return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high

    return check


_PRIMITIVES = frozenset({BasicType.BOOLEAN, BasicType.BYTE, BasicType.SHORT, BasicType.INT,
                         BasicType.LONG, BasicType.FLOAT, BasicType.DOUBLE, BasicType.CHAR})


class BasicTypeInfo(TypeInformation):
    """A scalar: string, integers of a width, floats, bool, char, big int/decimal, instant."""

    __slots__ = ("basic_type",)

    def __init__(self, basic_type: BasicType) -> None:
        self.basic_type = basic_type

    def _problem(self, value: Any) -> str | None:
        return _BASIC_CHECKS[self.basic_type](value)

    def _compile(self) -> Callable[[Any], bool]:
        kind = self.basic_type
        if kind is BasicType.STRING:
            return lambda value: isinstance(value, str)
        if kind is BasicType.BOOLEAN:
            return lambda value: value is True or value is False
        if kind in (BasicType.FLOAT, BasicType.DOUBLE):
            return lambda value: type(value) is float or (
                isinstance(value, (int, float)) and not isinstance(value, bool))
        if kind in _INT_BITS:
            return _int_predicate(_INT_BITS[kind])
        return super()._compile()

    def need_conversion(self) -> bool:
        return self.basic_type in (BasicType.FLOAT, BasicType.DOUBLE)

    def coerce(self, value: Any) -> Any:
        """FLOAT and DOUBLE are Java's float and double in PyFlink: an int comes back as a
        float, and a FLOAT rounded to 32 bits (``0.1`` → ``0.10000000149011612``), beyond the
        float range as ±inf (Java's cast, and what the typed codec's ``array('f')`` gives).
        An int too large for a double is left as it is (``validate`` accepts it)."""
        if type(value) is int and self.basic_type in (BasicType.FLOAT, BasicType.DOUBLE):
            try:
                value = float(value)
            except OverflowError:
                return value
        if self.basic_type is BasicType.FLOAT and type(value) is float:
            try:
                return _unpack_float32(_pack_float32(value))[0]
            except OverflowError:
                return math.copysign(math.inf, value)
        return value

    def __repr__(self) -> str:
        return f"Types.{self.basic_type.name}()"


_float32 = struct.Struct("<f")
_pack_float32, _unpack_float32 = _float32.pack, _float32.unpack


class SqlTimeType(enum.Enum):
    DATE = "Date"
    TIME = "Time"
    TIMESTAMP = "Timestamp"
    LOCAL_DATE = "LocalDate"
    LOCAL_TIME = "LocalTime"
    LOCAL_DATE_TIME = "LocalDateTime"


def _date(value: Any) -> str | None:
    if not isinstance(value, datetime.date) or isinstance(value, datetime.datetime):
        return "expected a datetime.date"
    return None


_TIME_CHECKS: dict[SqlTimeType, tuple[Callable[[Any], str | None], str]] = {
    SqlTimeType.DATE: (_date, "SQL_DATE"),
    SqlTimeType.TIME: (_instance_of(datetime.time, "a datetime.time"), "SQL_TIME"),
    SqlTimeType.TIMESTAMP: (
        _instance_of(datetime.datetime, "a datetime.datetime"), "SQL_TIMESTAMP"),
    SqlTimeType.LOCAL_DATE: (_date, "LOCAL_DATE"),
    SqlTimeType.LOCAL_TIME: (_instance_of(datetime.time, "a datetime.time"), "LOCAL_TIME"),
    SqlTimeType.LOCAL_DATE_TIME: (
        _instance_of(datetime.datetime, "a datetime.datetime"), "LOCAL_DATE_TIME"),
}


class SqlTimeTypeInfo(TypeInformation):
    """Dates, times and timestamps as ``datetime`` values."""

    __slots__ = ("time_type",)

    def __init__(self, time_type: SqlTimeType) -> None:
        self.time_type = time_type

    def _problem(self, value: Any) -> str | None:
        return _TIME_CHECKS[self.time_type][0](value)

    def __repr__(self) -> str:
        return f"Types.{_TIME_CHECKS[self.time_type][1]}()"


class PickledBytesTypeInfo(TypeInformation):
    """Any picklable Python object (the default type of a stream without a declared type)."""

    __slots__ = ()

    @property
    def serializer_kind(self) -> SerializerKind:
        return SerializerKind.CLOUDPICKLE

    def _problem(self, value: Any) -> str | None:
        return None

    def _compile(self) -> Callable[[Any], bool]:
        return lambda value: value is not None

    def validate(self, value: Any, operator_name: str = "<unnamed>") -> None:
        return None

    def validator(self, operator_name: str) -> Callable[[Any], None]:
        return lambda value: None

    def __repr__(self) -> str:
        return "Types.PICKLED_BYTE_ARRAY()"


def _fields_problem(types: Sequence[TypeInformation], values: Sequence[Any], label: str,
                    names: Sequence[str] | None, nullable: bool) -> str | None:
    if len(values) != len(types):
        return f"expected {len(types)} fields, got {len(values)}"
    for index, (field_type, field) in enumerate(zip(types, values, strict=True)):
        problem = field_type._problem_or_null(field, nullable)
        if problem is not None:
            where = repr(names[index]) if names else str(index)
            return f"{label} {where}: {problem}"
    return None


class RowTypeInfo(TypeInformation):
    """A ``Row`` with the given field types (and names, default ``f0``, ``f1``, ...)."""

    __slots__ = ("_field_names", "_field_types", "_named")

    def __init__(self, field_types: Sequence[TypeInformation],
                 field_names: Sequence[str] | None = None) -> None:
        self._field_types = _types_list(field_types, "ROW")
        if field_names is None:
            field_names = [f"f{index}" for index in range(len(self._field_types))]
        if len(field_names) != len(self._field_types):
            raise ValueError(f"ROW_NAMED: {len(field_names)} names for "
                             f"{len(self._field_types)} types")
        if len(set(field_names)) != len(field_names):
            raise ValueError(f"ROW_NAMED: duplicate field names in {list(field_names)}")
        self._field_names = [str(name) for name in field_names]
        self._named = self._field_names != [f"f{i}" for i in range(len(self._field_types))]

    @property
    def serializer_kind(self) -> SerializerKind:
        return _combined_kind(self._field_types)

    def get_field_names(self) -> list[str]:
        return list(self._field_names)

    def get_field_index(self, field_name: str) -> int:
        return self._field_names.index(field_name) if field_name in self._field_names else -1

    def get_field_types(self) -> list[TypeInformation]:
        return list(self._field_types)

    def get_field_type(self, index_or_name: int | str) -> TypeInformation:
        if isinstance(index_or_name, str):
            return self._field_types[self._field_names.index(index_or_name)]
        return self._field_types[index_or_name]

    def get_arity(self) -> int:
        return len(self._field_types)

    def need_conversion(self) -> bool:
        return True

    def coerce(self, value: Any) -> Any:
        if isinstance(value, dict) and set(value) == set(self._field_names):
            value = [value[name] for name in self._field_names]
        if isinstance(value, (tuple, list)) and len(value) == len(self._field_types):
            row = Row(*_coerce_all(self._field_types, value))
            row.set_field_names(self._field_names)
            return row
        if isinstance(value, Row) and len(value) == len(self._field_types):
            if value.get_field_names() is None and self._named:  # takes ROW_NAMED's names
                row = Row(*_coerce_all(self._field_types, list(value)))
                row.set_field_names(self._field_names)
                row.set_row_kind(value.get_row_kind())
                return row
            if any(kind.need_conversion() for kind in self._field_types):
                return _coerced_row(value, _coerce_all(self._field_types, list(value)))
        return value

    def _compile(self) -> Callable[[Any], bool]:
        return _fields_predicate(Row, [kind.predicate() for kind in self._field_types], True)

    def _problem(self, value: Any) -> str | None:
        if not isinstance(value, Row):
            return "expected a Row"
        return _fields_problem(self._field_types, list(value), "field", self._field_names, True)

    def __repr__(self) -> str:
        types = ", ".join(repr(kind) for kind in self._field_types)
        if self._field_names == [f"f{index}" for index in range(len(self._field_types))]:
            return f"Types.ROW([{types}])"
        names = ", ".join(repr(name) for name in self._field_names)
        return f"Types.ROW_NAMED([{names}], [{types}])"


class TupleTypeInfo(TypeInformation):
    """A Python ``tuple`` with the given field types."""

    __slots__ = ("_field_types",)

    def __init__(self, field_types: Sequence[TypeInformation]) -> None:
        self._field_types = _types_list(field_types, "TUPLE")

    @property
    def serializer_kind(self) -> SerializerKind:
        return _combined_kind(self._field_types)

    def get_field_types(self) -> list[TypeInformation]:
        return list(self._field_types)

    def get_arity(self) -> int:
        return len(self._field_types)

    def need_conversion(self) -> bool:
        return True

    def coerce(self, value: Any) -> Any:
        if isinstance(value, (tuple, list)) and len(value) == len(self._field_types) and (
                isinstance(value, list) or any(
                    kind.need_conversion() for kind in self._field_types)):
            return tuple(_coerce_all(self._field_types, value))
        return value

    def _compile(self) -> Callable[[Any], bool]:
        return _fields_predicate(tuple, [kind.predicate() for kind in self._field_types], False)

    def _problem(self, value: Any) -> str | None:
        if not isinstance(value, tuple):
            return "expected a tuple"
        return _fields_problem(self._field_types, value, "field", None, False)

    def __repr__(self) -> str:
        return "Types.TUPLE([{}])".format(", ".join(repr(kind) for kind in self._field_types))


class _SequenceTypeInfo(TypeInformation):
    """Shared by lists and arrays: a sequence whose elements are all of one type."""

    __slots__ = ("element_type",)

    label = "LIST"
    accepted: tuple[type, ...] = (list,)
    nullable_elements = False

    def __init__(self, element_type: TypeInformation) -> None:
        if not isinstance(element_type, TypeInformation):
            raise TypeError(f"{self.label} needs a TypeInformation, got {element_type!r}")
        self.element_type = element_type

    @property
    def serializer_kind(self) -> SerializerKind:
        return self.element_type.serializer_kind

    def get_element_type(self) -> TypeInformation:
        return self.element_type

    def need_conversion(self) -> bool:
        return self.element_type.need_conversion()

    def coerce(self, value: Any) -> Any:
        if isinstance(value, self.accepted) and self.element_type.need_conversion():
            kind: Any = type(value)
            elements = cast(Sequence[Any], value)
            return kind(self.element_type.coerce(element) for element in elements)
        return value

    def _compile(self) -> Callable[[Any], bool]:
        accepted, element = self.accepted, self.element_type.predicate()
        if self.nullable_elements:
            element = _nullable(element)
        return lambda value: isinstance(value, accepted) and all(
            map(element, cast(Sequence[Any], value)))

    def _problem(self, value: Any) -> str | None:
        if not isinstance(value, self.accepted):
            return "expected a " + " or ".join(kind.__name__ for kind in self.accepted)
        elements = cast(Sequence[Any], value)
        for index, element in enumerate(elements):
            problem = self.element_type._problem_or_null(element, self.nullable_elements)
            if problem is not None:
                return f"element {index}: {problem}"
        return None

    def __repr__(self) -> str:
        return f"Types.{self.label}({self.element_type!r})"


class ListTypeInfo(_SequenceTypeInfo):
    __slots__ = ()


class BasicArrayTypeInfo(_SequenceTypeInfo):
    __slots__ = ()
    label = "BASIC_ARRAY"
    accepted = (list, tuple)
    nullable_elements = True

    def __init__(self, element_type: TypeInformation) -> None:
        if not isinstance(element_type, BasicTypeInfo):
            raise TypeError(f"BASIC_ARRAY needs a basic element type, got {element_type!r}")
        super().__init__(element_type)


class PrimitiveArrayTypeInfo(_SequenceTypeInfo):
    __slots__ = ()
    label = "PRIMITIVE_ARRAY"
    accepted = (list, tuple)

    def __init__(self, element_type: TypeInformation) -> None:
        if not isinstance(element_type, BasicTypeInfo) or (
                element_type.basic_type not in _PRIMITIVES):
            raise TypeError(f"PRIMITIVE_ARRAY needs a primitive element type (BOOLEAN, BYTE, "
                            f"SHORT, INT, LONG, FLOAT, DOUBLE, CHAR), got {element_type!r}")
        super().__init__(element_type)

    def _compile(self) -> Callable[[Any], bool]:
        general = super()._compile()
        assert isinstance(self.element_type, BasicTypeInfo)
        if self.element_type.basic_type is not BasicType.BYTE:
            return general
        return lambda value: isinstance(value, (bytes, bytearray)) or general(value)

    def _problem(self, value: Any) -> str | None:
        assert isinstance(self.element_type, BasicTypeInfo)
        if self.element_type.basic_type is BasicType.BYTE and isinstance(
                value, (bytes, bytearray)):
            return None
        return super()._problem(value)


class ObjectArrayTypeInfo(_SequenceTypeInfo):
    __slots__ = ()
    label = "OBJECT_ARRAY"
    accepted = (list, tuple)
    nullable_elements = True


class MapTypeInfo(TypeInformation):
    """A ``dict`` with keys of one type and values of another."""

    __slots__ = ("key_type", "value_type")

    def __init__(self, key_type: TypeInformation, value_type: TypeInformation) -> None:
        _types_list([key_type, value_type], "MAP")
        self.key_type = key_type
        self.value_type = value_type

    @property
    def serializer_kind(self) -> SerializerKind:
        return _combined_kind([self.key_type, self.value_type])

    def get_key_type(self) -> TypeInformation:
        return self.key_type

    def get_value_type(self) -> TypeInformation:
        return self.value_type

    def need_conversion(self) -> bool:
        return self.key_type.need_conversion() or self.value_type.need_conversion()

    def coerce(self, value: Any) -> Any:
        if isinstance(value, dict) and self.need_conversion():
            return {self.key_type.coerce(key): self.value_type.coerce(item)
                    for key, item in value.items()}
        return value

    def _compile(self) -> Callable[[Any], bool]:
        key, item = self.key_type.predicate(), _nullable(self.value_type.predicate())
        return lambda value: isinstance(value, dict) and all(
            key(k) and item(v) for k, v in value.items())

    def _problem(self, value: Any) -> str | None:
        if not isinstance(value, dict):
            return "expected a dict"
        for key, item in value.items():
            problem = self.key_type._problem_or_null(key, False)
            if problem is not None:
                return f"key {key!r}: {problem}"
            problem = self.value_type._problem_or_null(item, True)
            if problem is not None:
                return f"value of key {key!r}: {problem}"
        return None

    def __repr__(self) -> str:
        return f"Types.MAP({self.key_type!r}, {self.value_type!r})"


def _types_list(types: Sequence[TypeInformation], label: str) -> list[TypeInformation]:
    result = list(types)
    for index, kind in enumerate(result):
        if not isinstance(kind, TypeInformation):
            raise TypeError(f"{label}: field {index} is not a TypeInformation: {kind!r} "
                            "(write Types.INT(), not Types.INT)")
    return result


def _nullable(check: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda value: value is None or check(value)


def _fields_predicate(kind: type, checks: Sequence[Callable[[Any], bool]], nullable: bool
                      ) -> Callable[[Any], bool]:
    """Membership in ``kind`` (tuple, or Row with nullable fields) with one check per field.
    Arities 1 and 2 are unrolled, larger ones loop in C (``map``): this runs per record."""
    arity = len(checks)
    fields: Callable[[Any], Any] = _row_fields if kind is Row else _same
    if arity == 2:
        first, second = checks

        def check_two(value: Any) -> bool:
            if not isinstance(value, kind):
                return False
            items = fields(value)
            if len(items) != 2:
                return False
            one, two = items
            if nullable:
                return (one is None or first(one)) and (two is None or second(two))
            return first(one) and second(two)

        return check_two
    wrapped = [_nullable(check) for check in checks] if nullable else list(checks)

    def check(value: Any) -> bool:
        if not isinstance(value, kind):
            return False
        items = fields(value)
        return len(items) == arity and all(map(operator.call, wrapped, items))

    return check


def _row_fields(row: Any) -> list[Any]:
    return cast(Row, row)._values


def _same(value: Any) -> Any:
    return value


def _coerce_all(types: Sequence[TypeInformation], values: Sequence[Any]) -> list[Any]:
    return [kind.coerce(value) for kind, value in zip(types, values, strict=True)]


def _coerced_row(row: Row, fields: list[Any]) -> Row:
    """``row`` itself if no field changed, else a copy (names and kind kept) with ``fields``."""
    if all(new is old for new, old in zip(fields, row, strict=True)):
        return row
    copy = Row(*fields)
    names = row.get_field_names()
    if names is not None:
        copy.set_field_names(names)
    copy.set_row_kind(row.get_row_kind())
    return copy


def _combined_kind(types: Sequence[TypeInformation]) -> SerializerKind:
    if any(kind.serializer_kind is SerializerKind.CLOUDPICKLE for kind in types):
        return SerializerKind.CLOUDPICKLE
    return SerializerKind.PICKLE


class Types:
    """Factories for every type, with PyFlink's names."""

    @staticmethod
    def STRING() -> TypeInformation:
        return BasicTypeInfo(BasicType.STRING)

    @staticmethod
    def BYTE() -> TypeInformation:
        return BasicTypeInfo(BasicType.BYTE)

    @staticmethod
    def BOOLEAN() -> TypeInformation:
        return BasicTypeInfo(BasicType.BOOLEAN)

    @staticmethod
    def SHORT() -> TypeInformation:
        return BasicTypeInfo(BasicType.SHORT)

    @staticmethod
    def INT() -> TypeInformation:
        return BasicTypeInfo(BasicType.INT)

    @staticmethod
    def LONG() -> TypeInformation:
        return BasicTypeInfo(BasicType.LONG)

    @staticmethod
    def FLOAT() -> TypeInformation:
        return BasicTypeInfo(BasicType.FLOAT)

    @staticmethod
    def DOUBLE() -> TypeInformation:
        return BasicTypeInfo(BasicType.DOUBLE)

    @staticmethod
    def CHAR() -> TypeInformation:
        return BasicTypeInfo(BasicType.CHAR)

    @staticmethod
    def BIG_INT() -> TypeInformation:
        return BasicTypeInfo(BasicType.BIG_INT)

    @staticmethod
    def BIG_DEC() -> TypeInformation:
        return BasicTypeInfo(BasicType.BIG_DEC)

    @staticmethod
    def INSTANT() -> TypeInformation:
        return BasicTypeInfo(BasicType.INSTANT)

    @staticmethod
    def SQL_DATE() -> TypeInformation:
        return SqlTimeTypeInfo(SqlTimeType.DATE)

    @staticmethod
    def SQL_TIME() -> TypeInformation:
        return SqlTimeTypeInfo(SqlTimeType.TIME)

    @staticmethod
    def SQL_TIMESTAMP() -> TypeInformation:
        return SqlTimeTypeInfo(SqlTimeType.TIMESTAMP)

    @staticmethod
    def LOCAL_DATE() -> TypeInformation:
        return SqlTimeTypeInfo(SqlTimeType.LOCAL_DATE)

    @staticmethod
    def LOCAL_TIME() -> TypeInformation:
        return SqlTimeTypeInfo(SqlTimeType.LOCAL_TIME)

    @staticmethod
    def LOCAL_DATE_TIME() -> TypeInformation:
        return SqlTimeTypeInfo(SqlTimeType.LOCAL_DATE_TIME)

    @staticmethod
    def PICKLED_BYTE_ARRAY() -> TypeInformation:
        return PickledBytesTypeInfo()

    @staticmethod
    def ROW(field_types: Sequence[TypeInformation]) -> RowTypeInfo:
        return RowTypeInfo(field_types)

    @staticmethod
    def ROW_NAMED(field_names: Sequence[str],
                  field_types: Sequence[TypeInformation]) -> RowTypeInfo:
        return RowTypeInfo(field_types, field_names)

    @staticmethod
    def TUPLE(field_types: Sequence[TypeInformation]) -> TupleTypeInfo:
        return TupleTypeInfo(field_types)

    @staticmethod
    def PRIMITIVE_ARRAY(element_type: TypeInformation) -> PrimitiveArrayTypeInfo:
        return PrimitiveArrayTypeInfo(element_type)

    @staticmethod
    def BASIC_ARRAY(element_type: TypeInformation) -> BasicArrayTypeInfo:
        return BasicArrayTypeInfo(element_type)

    @staticmethod
    def OBJECT_ARRAY(element_type: TypeInformation) -> ObjectArrayTypeInfo:
        return ObjectArrayTypeInfo(element_type)

    @staticmethod
    def MAP(key_type_info: TypeInformation, value_type_info: TypeInformation) -> MapTypeInfo:
        return MapTypeInfo(key_type_info, value_type_info)

    @staticmethod
    def LIST(element_type_info: TypeInformation) -> ListTypeInfo:
        return ListTypeInfo(element_type_info)
