"""``from_elements``'s type inference, merging and value checks, as PyFlink 2.3.0 does them.

Inference (``infer_type`` / ``_infer_type``), per Python type:

* bool → BOOLEAN, int → BIGINT, float → DOUBLE, str → STRING, bytearray → BYTES,
  ``decimal.Decimal`` → DECIMAL(38, 18), ``datetime.date`` → DATE, ``datetime.time`` →
  TIME(0), ``datetime.datetime`` → TIMESTAMP_LTZ(6); None → NULL (resolved by merging).
* list → ARRAY of the type of its *first* element (PyFlink looks at ``obj[0]`` once it has
  seen a non-None element, so ``[None, 1]`` stays ARRAY<NULL> and fails later); an empty list
  or all-None list → ARRAY<NULL>; ``array.array`` → ARRAY of its typecode's type, NOT NULL
  elements.
* dict → MAP of the first pair with neither side None (key NOT NULL), else MAP<NULL, NULL>.
* ``Row`` / tuple / namedtuple / object → ROW: a named Row or namedtuple keeps its names, a
  dict is sorted by key, positional ones are ``_1``, ``_2``, ... (or the names given).
* bytes, ``datetime.timedelta`` and anything else → ``TypeError: not supported type: <class ..>``.

``infer_schema_from_data`` infers each element as a row and merges them left to right: NULL
gives way to the other side, rows merge field by field (by name; new names are appended),
different classes raise ``TypeError: field _1: Can not merge type <class 'BigIntType'> and
<class 'VarCharType'>``; a type still containing NULL at the end is ``ValueError: Some column
types cannot be determined after inferring``.

``_create_type_verifier`` checks a value against a declared type with PyFlink's rules and
messages (``TypeError`` for a wrong Python type, ``ValueError`` for a range, length or null
violation); ``_create_converter`` turns inferred elements into plain tuples.

Pure functions; no state.
"""

from __future__ import annotations

import array
import datetime
import decimal
import functools
from collections.abc import Callable, Sequence
from typing import Any

from flintlock.common.types import Row
from flintlock.table.composite_types import (
    ArrayType,
    MapType,
    MultisetType,
    RowField,
    RowType,
    UserDefinedType,
)
from flintlock.table.data_type import (
    MAX_LENGTH,
    BigIntType,
    BinaryType,
    BooleanType,
    CharType,
    DataType,
    DateType,
    DayTimeIntervalType,
    DecimalType,
    DoubleType,
    FloatType,
    IntType,
    LocalZonedTimestampType,
    NullType,
    SmallIntType,
    TimestampType,
    TimeType,
    TinyIntType,
    VarBinaryType,
    VarCharType,
    ZonedTimestampType,
)

_ATOMIC: dict[type, Callable[[], DataType]] = {
    bool: BooleanType, int: BigIntType, float: DoubleType,
    str: lambda: VarCharType(MAX_LENGTH), bytearray: lambda: VarBinaryType(MAX_LENGTH),
    decimal.Decimal: lambda: DecimalType(38, 18), datetime.date: DateType,
    datetime.datetime: LocalZonedTimestampType, datetime.time: TimeType,
}
_ARRAY_CODES: dict[str, Callable[[], DataType]] = {
    "b": TinyIntType, "h": SmallIntType, "i": IntType, "l": BigIntType, "q": BigIntType,
    "B": SmallIntType, "H": IntType, "I": BigIntType, "f": FloatType, "d": DoubleType,
    "u": lambda: CharType(4),
}
"""``array.array`` typecodes → element types (unsigned ones widened, as JVMs have no unsigned
types; sizes of this platform: C long is 64 bits, so ``'L'``/``'Q'`` do not fit)."""


def infer_type(obj: Any) -> DataType:
    """The type PyFlink infers for one Python value (module docstring)."""
    if obj is None:
        return NullType()
    udt = getattr(obj, "__UDT__", None)
    if isinstance(udt, DataType):
        return udt
    atomic = _ATOMIC.get(type(obj))
    if atomic is not None:
        return atomic()
    if isinstance(obj, dict):
        for key, value in obj.items():
            if key is not None and value is not None:
                return MapType(infer_type(key).not_null(), infer_type(value))
        return MapType(NullType(), NullType())
    if isinstance(obj, list):
        if any(value is not None for value in obj):
            return ArrayType(infer_type(obj[0]))
        return ArrayType(NullType())
    if isinstance(obj, array.array):
        element = _ARRAY_CODES.get(obj.typecode)
        if element is None:
            raise TypeError(f"not supported type: array({obj.typecode})")
        return ArrayType(element().not_null())
    try:
        return infer_schema(obj)
    except TypeError:
        raise TypeError(f"not supported type: {type(obj)}") from None


def _row_names(row: Any) -> list[str] | None:
    if isinstance(row, Row):
        return row.get_field_names()
    names = getattr(row, "_fields", None)  # a namedtuple
    return list(names) if isinstance(row, tuple) and names is not None else None


def infer_schema(row: Any, names: Sequence[str] | None = None) -> RowType:
    """The ROW type of one element: a dict, Row, tuple, list, namedtuple or plain object."""
    if isinstance(row, dict):
        items = sorted(row.items())
    elif isinstance(row, (Row, tuple, list)):
        own = _row_names(row)
        if own is not None:
            items = list(zip(own, tuple(row), strict=False))
        else:
            given = list(names) if names is not None else []
            given.extend(f"_{index}" for index in range(len(given) + 1, len(row) + 1))
            items = list(zip(given, row, strict=False))
    elif hasattr(row, "__dict__"):
        items = sorted(vars(row).items())
    else:
        raise TypeError(f"Can not infer schema for type: {type(row)}")
    return RowType([RowField(name, infer_type(value)) for name, value in items])


def _has_nulltype(data_type: DataType) -> bool:
    if isinstance(data_type, RowType):
        return any(_has_nulltype(field.data_type) for field in data_type.fields)
    if isinstance(data_type, (ArrayType, MultisetType)):
        return _has_nulltype(data_type.element_type)
    if isinstance(data_type, MapType):
        return _has_nulltype(data_type.key_type) or _has_nulltype(data_type.value_type)
    return isinstance(data_type, NullType)


def _merge_type(a: DataType, b: DataType | None, name: str | None = None) -> DataType:
    """The common type of two inferred types; ``TypeError`` if their classes differ."""
    def message(text: str) -> str:
        return text if name is None else f"{name}: {text}"

    def field_name(field: str) -> str:
        return f"field {field}" if name is None else f"field {field} in {name}"

    if isinstance(a, NullType) and b is not None:
        return b
    if isinstance(b, NullType):
        return a
    if type(a) is not type(b):
        raise TypeError(message(f"Can not merge type {_class_text(a)} and {_class_text(b)}"))
    if isinstance(a, RowType):
        assert isinstance(b, RowType)
        theirs = {field.name: field.data_type for field in b.fields}
        fields = [RowField(field.name, _merge_type(field.data_type, theirs.get(field.name),
                                                   name=field_name(field.name)))
                  for field in a.fields]
        ours = {field.name for field in fields}
        fields.extend(RowField(n, kind) for n, kind in theirs.items() if n not in ours)
        return RowType(fields)
    if isinstance(a, (ArrayType, MultisetType)):
        assert isinstance(b, (ArrayType, MultisetType))
        label = "array" if isinstance(a, ArrayType) else "multiset"
        return type(a)(_merge_type(a.element_type, b.element_type,
                                   name=f"element in {label} {name}"))
    if isinstance(a, MapType):
        assert isinstance(b, MapType)
        return MapType(_merge_type(a.key_type, b.key_type, name=f"key of map {name}"),
                       _merge_type(a.value_type, b.value_type, name=f"value of map {name}"))
    return a


def _class_text(data_type: DataType | None) -> str:
    """A type's class as a merge error names it (``<class 'flintlock.table.types.BigIntType'>``,
    PyFlink's words with flintlock's module); a field missing on one side is
    ``<class 'NoneType'>``, as in PyFlink."""
    if data_type is None:
        return str(type(None))
    return f"<class 'flintlock.table.types.{type(data_type).__name__}'>"


def infer_schema_from_data(elements: Sequence[Any], names: Sequence[str] | None = None
                           ) -> RowType:
    """The ROW type of ``from_elements``'s elements (module docstring)."""
    if not elements:
        raise ValueError("can not infer schema from empty data set")
    rows: list[DataType] = [infer_schema(element, names) for element in elements]
    schema = functools.reduce(lambda a, b: _merge_type(a, b), rows)
    if _has_nulltype(schema):
        raise ValueError("Some column types cannot be determined after inferring")
    assert isinstance(schema, RowType)
    return schema


def _need_converter(data_type: DataType) -> bool:
    if isinstance(data_type, (RowType, NullType)):
        return True
    if isinstance(data_type, (ArrayType, MultisetType)):
        return _need_converter(data_type.element_type)
    if isinstance(data_type, MapType):
        return _need_converter(data_type.key_type) or _need_converter(data_type.value_type)
    return False


def _create_converter(data_type: DataType) -> Callable[[Any], Any]:
    """A function turning an inferred element into plain tuples (rows) without names."""
    if not _need_converter(data_type):
        return lambda value: value
    if isinstance(data_type, (ArrayType, MultisetType)):
        element = _create_converter(data_type.element_type)
        return lambda value: [element(item) for item in value]
    if isinstance(data_type, MapType):
        key, item = _create_converter(data_type.key_type), _create_converter(data_type.value_type)
        return lambda value: {key(k): item(v) for k, v in value.items()}
    if isinstance(data_type, NullType):
        return lambda value: None
    assert isinstance(data_type, RowType)
    names = data_type.field_names()
    converters = [_create_converter(kind) for kind in data_type.field_types()]

    def convert_row(obj: Any) -> Any:
        if obj is None:
            return None
        if isinstance(obj, (tuple, list, Row)) and (
                not isinstance(obj, Row) or obj.get_field_names() is None):
            return tuple(conv(v) for v, conv in zip(obj, converters, strict=False))
        if isinstance(obj, Row):
            source: dict[str, Any] = obj.as_dict()
        elif isinstance(obj, dict):
            source = obj
        elif hasattr(obj, "__dict__"):
            source = vars(obj)
        else:
            raise TypeError(f"Unexpected obj type: {type(obj)}")
        return tuple(conv(source.get(name)) for name, conv in zip(names, converters, strict=False))

    return convert_row


_ACCEPTABLE: dict[type, tuple[type, ...]] = {
    BooleanType: (bool,), TinyIntType: (int,), SmallIntType: (int,), IntType: (int,),
    BigIntType: (int,), FloatType: (float,), DoubleType: (float,),
    DecimalType: (decimal.Decimal,), CharType: (str,), VarCharType: (str,),
    BinaryType: (bytearray, bytes), VarBinaryType: (bytearray, bytes),
    DateType: (datetime.date, datetime.datetime), TimeType: (datetime.time,),
    TimestampType: (datetime.datetime,), DayTimeIntervalType: (datetime.timedelta,),
    LocalZonedTimestampType: (datetime.datetime,), ZonedTimestampType: (datetime.datetime,),
    ArrayType: (list, tuple, array.array), MapType: (dict,), RowType: (tuple, list, dict, Row),
}
"""Python classes a declared type accepts (exact classes, as PyFlink checks; bytes is accepted
for binary types too, which PyFlink's check refuses but its serializer takes)."""
_INT_RANGES: dict[type, int] = {TinyIntType: 8, SmallIntType: 16, IntType: 32}


def _create_type_verifier(data_type: DataType, name: str | None = None
                          ) -> Callable[[Any], None]:
    """A check of a value against ``data_type`` with PyFlink's errors (module docstring)."""
    def message(text: str) -> str:
        return text if name is None else f"{name}: {text}"

    def field_name(field: str) -> str:
        return f"field {field}" if name is None else f"field {field} in {name}"

    kind = type(data_type)
    if kind not in _ACCEPTABLE and not isinstance(data_type, UserDefinedType):
        raise TypeError(message(f"unknown datatype: {data_type}"))
    accepted = _ACCEPTABLE.get(kind, ())

    def check_class(obj: Any) -> None:
        if type(obj) not in accepted:
            raise TypeError(message(f"{data_type} can not accept object {obj!r} in type "
                                    f"{type(obj)}"))

    check_value = _value_verifier(data_type, name, message, field_name, check_class)

    def verify(obj: Any) -> None:
        if obj is None:
            if not data_type._nullable:
                raise ValueError(message("This field is not nullable, but got None"))
            return
        check_value(obj)

    return verify


def _value_verifier(data_type: DataType, name: str | None, message: Callable[[str], str],
                    field_name: Callable[[str], str], check_class: Callable[[Any], None]
                    ) -> Callable[[Any], None]:
    if isinstance(data_type, (CharType, VarCharType, BinaryType, VarBinaryType)):
        exact = isinstance(data_type, (CharType, BinaryType))
        label, length = type(data_type).__name__, data_type.length

        def check_length(obj: Any) -> None:
            check_class(obj)
            if (len(obj) != length) if exact else (len(obj) > length):
                relation = "is not" if exact else "exceeds"
                raise ValueError(message(f"length of object ({obj}) of {label} {relation}: "
                                         f"{length}"))

        return check_length
    bits = _INT_RANGES.get(type(data_type))
    if bits is not None:
        low, high, label = -(1 << (bits - 1)), (1 << (bits - 1)) - 1, type(data_type).__name__

        def check_range(obj: Any) -> None:
            check_class(obj)
            if obj < low or obj > high:
                raise ValueError(message(f"object of {label} out of range, got: {obj}"))

        return check_range
    if isinstance(data_type, ArrayType):
        element = _create_type_verifier(data_type.element_type, f"element in array {name}")

        def check_array(obj: Any) -> None:
            check_class(obj)
            for item in obj:
                element(item)

        return check_array
    if isinstance(data_type, MapType):
        key = _create_type_verifier(data_type.key_type, f"key of map {name}")
        item = _create_type_verifier(data_type.value_type, f"value of map {name}")

        def check_map(obj: Any) -> None:
            check_class(obj)
            for k, v in obj.items():
                key(k)
                item(v)

        return check_map
    if isinstance(data_type, RowType):
        return _row_verifier(data_type, message, field_name)
    if isinstance(data_type, UserDefinedType):
        inner = _create_type_verifier(data_type.sql_type(), name)

        def check_udt(obj: Any) -> None:
            if getattr(obj, "__UDT__", None) != data_type:
                raise ValueError(message(f"{obj!r} is not an instance of type {data_type!r}"))
            inner(obj)

        return check_udt
    return check_class


def _row_verifier(data_type: RowType, message: Callable[[str], str],
                  field_name: Callable[[str], str]) -> Callable[[Any], None]:
    verifiers = [(field.name, _create_type_verifier(field.data_type, field_name(field.name)))
                 for field in data_type.fields]

    def check_row(obj: Any) -> None:
        if isinstance(obj, dict):
            for field, verifier in verifiers:
                verifier(obj.get(field))
        elif isinstance(obj, Row) and obj.get_field_names() is not None:
            for field, verifier in verifiers:
                verifier(obj[field])
        elif isinstance(obj, (tuple, list, Row)):
            if not isinstance(obj, Row) and len(obj) != len(verifiers):
                raise ValueError(message(f"Length of object ({len(obj)}) does not match with "
                                         f"length of fields ({len(verifiers)})"))
            for value, (_, verifier) in zip(obj, verifiers, strict=False):
                verifier(value)
        elif hasattr(obj, "__dict__"):
            for field, verifier in verifiers:
                verifier(vars(obj).get(field))
        else:
            raise TypeError(message(f"RowType can not accept object {obj!r} in type {type(obj)}"))

    return check_row


_infer_type = infer_type
_infer_schema = infer_schema
_infer_schema_from_data = infer_schema_from_data
