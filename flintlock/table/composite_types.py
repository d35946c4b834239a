"""The composite table types — ``ArrayType``, ``MultisetType``, ``MapType``, ``RowField``,
``RowType``, the data views, ``RawType``, ``UserDefinedType`` — and the ``DataTypes`` factory,
with PyFlink 2.3.0's names, signatures, attributes and ``repr``; ``python_type_info``, the
DataStream ``Types`` equivalent of a table type.

``flintlock.table.types`` re-exports everything here with the atomic types (``data_type``),
the type parser and from_elements' inference; import from there. This module imports neither
of those two: a type written as text (``RowType.add('f', 'INT')``) is read by the parser the
facade installs with ``set_type_parser``, so no import circle joins them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from flintlock.common.typeinfo import TypeInformation, Types
from flintlock.common.types import Row, RowKind
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
    InvalidDataTypeError,
    LocalZonedTimestampType,
    NullType,
    Resolution,
    SmallIntType,
    TimestampType,
    TimeType,
    TinyIntType,
    VarBinaryType,
    VarCharType,
    YearMonthIntervalType,
    _flag,
    quote_identifier,
    sql_string,
)

_type_parser: Callable[[str], DataType] | None = None
"""Reads a type written as text; installed by ``flintlock.table.types`` at its import."""


def set_type_parser(parser: Callable[[str], DataType]) -> None:
    global _type_parser
    _type_parser = parser


def _parse_type(text: str) -> DataType:
    if _type_parser is None:
        import importlib

        importlib.import_module("flintlock.table.types")  # installs the parser
    assert _type_parser is not None
    return _type_parser(text)


class _CollectionType(DataType):
    """ARRAY and MULTISET: a collection of elements of one type."""

    def __init__(self, element_type: DataType, nullable: bool = True) -> None:
        if not isinstance(element_type, DataType):
            raise InvalidDataTypeError(
                f"element_type {element_type!r} should be an instance of DataType")
        super().__init__(nullable)
        self.element_type = element_type

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.element_type!r}, {_flag(self._nullable)})"

    def need_conversion(self) -> bool:
        return self.element_type.need_conversion()

    def to_sql_type(self, obj: Any) -> Any:
        if not self.need_conversion():
            return obj
        return obj and [self.element_type.to_sql_type(v) for v in obj]

    def from_sql_type(self, obj: Any) -> Any:
        if not self.need_conversion():
            return obj
        return obj and [self.element_type.from_sql_type(v) for v in obj]

    def _summary(self) -> str:
        return f"{type(self).type_name()}<{sql_string(self.element_type)}>"


class ArrayType(_CollectionType):
    """SQL ARRAY<T>; Python lists (tuples and ``array.array`` are accepted as input)."""


class MultisetType(_CollectionType):
    """SQL MULTISET<T>: a bag of elements (each value with a multiplicity)."""


class MapType(DataType):
    """SQL MAP<K, V>; Python dicts. Keys are never None."""

    def __init__(self, key_type: DataType, value_type: DataType, nullable: bool = True) -> None:
        for role, kind in (("key_type", key_type), ("value_type", value_type)):
            if not isinstance(kind, DataType):
                raise InvalidDataTypeError(f"{role} {kind!r} should be an instance of DataType")
        super().__init__(nullable)
        self.key_type = key_type
        self.value_type = value_type

    def __repr__(self) -> str:
        return f"MapType({self.key_type!r}, {self.value_type!r}, {_flag(self._nullable)})"

    def need_conversion(self) -> bool:
        return self.key_type.need_conversion() or self.value_type.need_conversion()

    def to_sql_type(self, obj: Any) -> Any:
        if not self.need_conversion():
            return obj
        return obj and {self.key_type.to_sql_type(k): self.value_type.to_sql_type(v)
                        for k, v in obj.items()}

    def from_sql_type(self, obj: Any) -> Any:
        if not self.need_conversion():
            return obj
        return obj and {self.key_type.from_sql_type(k): self.value_type.from_sql_type(v)
                        for k, v in obj.items()}

    def _summary(self) -> str:
        return f"MAP<{sql_string(self.key_type)}, {sql_string(self.value_type)}>"


class _ViewType(DataType):
    """ListView / MapView: only for an AggregateFunction's accumulator declaration."""

    def to_sql_type(self, obj: Any) -> Any:
        raise InvalidDataTypeError(f"{type(self).__name__} can only be used in accumulator "
                                   "type declaration of AggregateFunction.")

    from_sql_type = to_sql_type


class ListViewType(_ViewType):
    def __init__(self, element_type: DataType) -> None:
        if not isinstance(element_type, DataType):
            raise InvalidDataTypeError(
                f"element_type {element_type!r} should be an instance of DataType")
        super().__init__(False)
        self._element_type = element_type

    def __repr__(self) -> str:
        return f"ListViewType({self._element_type!r})"


class MapViewType(_ViewType):
    def __init__(self, key_type: DataType, value_type: DataType) -> None:
        super().__init__(False)
        self._key_type = key_type
        self._value_type = value_type

    def __repr__(self) -> str:
        return f"MapViewType({self._key_type!r}, {self._value_type!r})"


class RowField:
    """A named, typed field of a ``RowType``; ``description`` defaults to ``'...'``."""

    def __init__(self, name: str, data_type: DataType, description: str | None = None) -> None:
        if not isinstance(data_type, DataType):
            raise InvalidDataTypeError(f"data_type {data_type!r} should be an instance of "
                                       "DataType")
        if not isinstance(name, str):
            raise InvalidDataTypeError(f"field name {name!r} should be a string")
        if description is not None and not isinstance(description, str):
            raise InvalidDataTypeError(f"description {description!r} should be a string")
        self.name = name
        self.data_type = data_type
        self.description = "..." if description is None else description

    def __repr__(self) -> str:
        return f"RowField({self.name}, {self.data_type!r}, {self.description})"

    def __str__(self) -> str:
        return f"RowField({self.name}, {self.data_type})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, type(self)) and vars(self) == vars(other)

    def __hash__(self) -> int:
        return hash((self.name, self.data_type))

    def need_conversion(self) -> bool:
        return self.data_type.need_conversion()

    def to_sql_type(self, obj: Any) -> Any:
        return self.data_type.to_sql_type(obj)

    def from_sql_type(self, obj: Any) -> Any:
        return self.data_type.from_sql_type(obj)


class RowType(DataType):
    """SQL ROW<name type, ...>; iterating yields its ``RowField``s, indexable by name or
    position. Python values are ``Row``s (tuples, lists and dicts are accepted as input)."""

    def __init__(self, fields: Sequence[RowField] | None = None, nullable: bool = True) -> None:
        super().__init__(nullable)
        self.fields: list[RowField] = list(fields) if fields else []
        for field in self.fields:
            if not isinstance(field, RowField):
                raise InvalidDataTypeError(f"fields should be a list of RowField, got {field!r}")
        self.names: list[str] = [field.name for field in self.fields]
        self._refresh()

    def _refresh(self) -> None:
        self._need_conversion = [field.need_conversion() for field in self.fields]
        self._need_serialize_any_field = any(self._need_conversion)

    def add(self, field: RowField | str, data_type: DataType | str | None = None) -> RowType:
        """Appends a field (a ``RowField``, or a name and a type) and returns this row type."""
        if isinstance(field, RowField):
            self.fields.append(field)
            self.names.append(field.name)
        else:
            if data_type is None:
                raise InvalidDataTypeError(
                    "Must specify DataType if passing name of row_field to create.")
            if isinstance(data_type, str):
                data_type = _parse_type(data_type)
            self.fields.append(RowField(field, data_type))
            self.names.append(field)
        self._refresh()
        return self

    def __iter__(self) -> Iterator[RowField]:
        return iter(self.fields)

    def __len__(self) -> int:
        return len(self.fields)

    def __getitem__(self, key: int | str | slice) -> Any:
        if isinstance(key, str):
            for field in self.fields:
                if field.name == key:
                    return field
            raise KeyError(f"No RowField named {key}")
        if isinstance(key, int):
            try:
                return self.fields[key]
            except IndexError:
                raise IndexError("RowType index out of range") from None
        if isinstance(key, slice):
            return RowType(self.fields[key])
        raise TypeError("RowType keys should be strings, integers or slices")

    def __repr__(self) -> str:
        return "RowType({})".format(",".join(repr(field) for field in self.fields))

    def field_names(self) -> list[str]:
        return list(self.names)

    def field_types(self) -> list[DataType]:
        return [field.data_type for field in self.fields]

    def need_conversion(self) -> bool:
        return True

    def to_sql_type(self, obj: Any) -> Any:
        """A tuple whose first item is the row kind's value, then the fields converted."""
        if obj is None:
            return None
        kind = obj.get_row_kind().value if isinstance(obj, Row) else RowKind.INSERT.value
        values = self._values_of(obj)
        triples = zip(self.fields, values, self._need_conversion, strict=False)
        return (kind, *(field.to_sql_type(value) if convert else value
                        for field, value, convert in triples))

    def _values_of(self, obj: Any) -> list[Any]:
        if isinstance(obj, dict):
            return [obj.get(name) for name in self.names]
        if isinstance(obj, Row):
            if obj.get_field_names() is not None:
                return [obj[name] for name in self.names]
            return list(obj)
        if isinstance(obj, (tuple, list)):
            return list(obj)
        if hasattr(obj, "__dict__"):
            return [vars(obj).get(name) for name in self.names]
        raise InvalidDataTypeError(f"Unexpected tuple {obj!r} with RowType")

    def from_sql_type(self, obj: Any) -> Any:
        if obj is None:
            return None
        if isinstance(obj, Row):
            return obj
        triples = zip(self.fields, obj, self._need_conversion, strict=False)
        values = [field.from_sql_type(value) if convert else value
                  for field, value, convert in triples]
        row = Row(*values)
        row.set_field_names(self.names)
        return row

    def _summary(self) -> str:
        inner = ", ".join(f"{quote_identifier(field.name)} {sql_string(field.data_type)}"
                          for field in self.fields)
        return f"ROW<{inner}>"


class RawType(DataType):
    """A value Flink's type system does not know: a pickled Python object."""

    def from_sql_type(self, obj: Any) -> Any:
        import pickle
        return pickle.loads(obj)

    def _summary(self) -> str:
        return "RAW('[B', ?)"


class UserDefinedType(DataType):
    """A user-defined type over an underlying SQL type (PyFlink: Flink internal use only)."""

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other)

    def __hash__(self) -> int:
        return hash(type(self))

    @classmethod
    def type_name(cls) -> str:
        return cls.__name__.lower()

    @classmethod
    def sql_type(cls) -> DataType:
        raise NotImplementedError("UDT must implement sql_type().")

    @classmethod
    def module(cls) -> str:
        raise NotImplementedError("UDT must implement module().")

    @classmethod
    def java_udt(cls) -> str:
        return ""

    def need_conversion(self) -> bool:
        return True

    def to_sql_type(self, obj: Any) -> Any:
        return None if obj is None else self.sql_type().to_sql_type(self.serialize(obj))

    def from_sql_type(self, obj: Any) -> Any:
        value = self.sql_type().from_sql_type(obj)
        return None if value is None else self.deserialize(value)

    def serialize(self, obj: Any) -> Any:
        raise NotImplementedError("UDT must implement serialize().")

    def deserialize(self, datum: Any) -> Any:
        raise NotImplementedError("UDT must implement deserialize().")

    def _summary(self) -> str:
        return sql_string(self.sql_type())


def python_type_info(data_type: DataType) -> TypeInformation:
    """The DataStream ``Types`` equivalent of a table type (values unchanged, see below).

    DATE / TIME / TIMESTAMP / TIMESTAMP_LTZ map to ``SQL_DATE`` / ``SQL_TIME`` /
    ``SQL_TIMESTAMP`` (the Table layer's values are ``datetime`` objects), BINARY / VARBINARY
    to ``PRIMITIVE_ARRAY(BYTE)`` (bytes), DECIMAL to ``BIG_DEC``, ARRAY to ``BASIC_ARRAY`` of a
    basic element type else ``OBJECT_ARRAY``, MULTISET to ``MAP(element, INT)`` (Flink's
    multiset is a map to multiplicities), ROW to ``ROW_NAMED``; intervals, NULL and RAW values
    are plain Python objects (``PICKLED_BYTE_ARRAY``).
    """
    simple = _SIMPLE_TYPE_INFO.get(type(data_type))
    if simple is not None:
        info: TypeInformation = simple()
        return info
    if isinstance(data_type, ArrayType):
        element = python_type_info(data_type.element_type)
        if type(element).__name__ == "BasicTypeInfo":
            return Types.BASIC_ARRAY(element)
        return Types.OBJECT_ARRAY(element)
    if isinstance(data_type, MultisetType):
        return Types.MAP(python_type_info(data_type.element_type), Types.INT())
    if isinstance(data_type, MapType):
        return Types.MAP(python_type_info(data_type.key_type),
                         python_type_info(data_type.value_type))
    if isinstance(data_type, RowType):
        return Types.ROW_NAMED(data_type.field_names(),
                               [python_type_info(kind) for kind in data_type.field_types()])
    if isinstance(data_type, UserDefinedType):
        return python_type_info(data_type.sql_type())
    return Types.PICKLED_BYTE_ARRAY()


_SIMPLE_TYPE_INFO: dict[type, Any] = {
    BooleanType: Types.BOOLEAN, TinyIntType: Types.BYTE, SmallIntType: Types.SHORT,
    IntType: Types.INT, BigIntType: Types.LONG, FloatType: Types.FLOAT,
    DoubleType: Types.DOUBLE, DecimalType: Types.BIG_DEC, CharType: Types.STRING,
    VarCharType: Types.STRING, DateType: Types.SQL_DATE, TimeType: Types.SQL_TIME,
    TimestampType: Types.SQL_TIMESTAMP, LocalZonedTimestampType: Types.SQL_TIMESTAMP,
    BinaryType: lambda: Types.PRIMITIVE_ARRAY(Types.BYTE()),
    VarBinaryType: lambda: Types.PRIMITIVE_ARRAY(Types.BYTE()),
}


def _interval(upper: Resolution, lower: Resolution | None = None) -> DataType:
    unit = Resolution.IntervalUnit
    lower_unit = None if lower is None else lower.unit
    lower_precision = -1 if lower is None else lower.precision
    year_month = YearMonthIntervalType.YearMonthResolution
    day_time = DayTimeIntervalType.DayTimeResolution
    if upper.unit is unit.YEAR and lower_unit is None:
        return YearMonthIntervalType(year_month.YEAR, upper.precision)
    if upper.unit is unit.MONTH and lower_unit is None:
        return YearMonthIntervalType(year_month.MONTH)
    if upper.unit is unit.YEAR and lower_unit is unit.MONTH:
        return YearMonthIntervalType(year_month.YEAR_TO_MONTH, upper.precision)
    name = upper.unit.name + ("" if lower_unit is None else "_TO_" + lower_unit.name)
    if name not in day_time.__members__:
        raise InvalidDataTypeError(
            f"Unsupported interval definition '{upper} TO {lower}'. Please check the "
            "documentation for supported combinations for year-month and day-time intervals.")
    resolution = day_time[name]
    day = upper.precision if upper.unit is unit.DAY else DayTimeIntervalType.DEFAULT_DAY_PRECISION
    if name.endswith("SECOND"):
        fraction = upper.precision if lower_unit is None else lower_precision
    else:
        fraction = DayTimeIntervalType.DEFAULT_FRACTIONAL_PRECISION
    return DayTimeIntervalType(resolution, day, fraction)


class DataTypes:
    """Factories for every type, with PyFlink's names and signatures."""

    @staticmethod
    def NULL() -> NullType:
        return NullType()

    @staticmethod
    def CHAR(length: int, nullable: bool = True) -> CharType:
        return CharType(length, nullable)

    @staticmethod
    def VARCHAR(length: int, nullable: bool = True) -> VarCharType:
        return VarCharType(length, nullable)

    @staticmethod
    def STRING(nullable: bool = True) -> VarCharType:
        return VarCharType(MAX_LENGTH, nullable)

    @staticmethod
    def BOOLEAN(nullable: bool = True) -> BooleanType:
        return BooleanType(nullable)

    @staticmethod
    def BINARY(length: int, nullable: bool = True) -> BinaryType:
        return BinaryType(length, nullable)

    @staticmethod
    def VARBINARY(length: int, nullable: bool = True) -> VarBinaryType:
        return VarBinaryType(length, nullable)

    @staticmethod
    def BYTES(nullable: bool = True) -> VarBinaryType:
        return VarBinaryType(MAX_LENGTH, nullable)

    @staticmethod
    def DECIMAL(precision: int, scale: int, nullable: bool = True) -> DecimalType:
        return DecimalType(precision, scale, nullable)

    @staticmethod
    def TINYINT(nullable: bool = True) -> TinyIntType:
        return TinyIntType(nullable)

    @staticmethod
    def SMALLINT(nullable: bool = True) -> SmallIntType:
        return SmallIntType(nullable)

    @staticmethod
    def INT(nullable: bool = True) -> IntType:
        return IntType(nullable)

    @staticmethod
    def BIGINT(nullable: bool = True) -> BigIntType:
        return BigIntType(nullable)

    @staticmethod
    def FLOAT(nullable: bool = True) -> FloatType:
        return FloatType(nullable)

    @staticmethod
    def DOUBLE(nullable: bool = True) -> DoubleType:
        return DoubleType(nullable)

    @staticmethod
    def DATE(nullable: bool = True) -> DateType:
        return DateType(nullable)

    @staticmethod
    def TIME(precision: int = 0, nullable: bool = True) -> TimeType:
        return TimeType(precision, nullable)

    @staticmethod
    def TIMESTAMP(precision: int = 6, nullable: bool = True) -> TimestampType:
        return TimestampType(precision, nullable)

    @staticmethod
    def TIMESTAMP_WITH_LOCAL_TIME_ZONE(precision: int = 6, nullable: bool = True
                                       ) -> LocalZonedTimestampType:
        return LocalZonedTimestampType(precision, nullable)

    @staticmethod
    def TIMESTAMP_LTZ(precision: int = 6, nullable: bool = True) -> LocalZonedTimestampType:
        return LocalZonedTimestampType(precision, nullable)

    @staticmethod
    def ARRAY(element_type: DataType, nullable: bool = True) -> ArrayType:
        return ArrayType(element_type, nullable)

    @staticmethod
    def LIST_VIEW(element_type: DataType) -> ListViewType:
        return ListViewType(element_type)

    @staticmethod
    def MAP(key_type: DataType, value_type: DataType, nullable: bool = True) -> MapType:
        return MapType(key_type, value_type, nullable)

    @staticmethod
    def MAP_VIEW(key_type: DataType, value_type: DataType) -> MapViewType:
        return MapViewType(key_type, value_type)

    @staticmethod
    def MULTISET(element_type: DataType, nullable: bool = True) -> MultisetType:
        return MultisetType(element_type, nullable)

    @staticmethod
    def ROW(row_fields: Sequence[RowField] = (), nullable: bool = True) -> RowType:
        return RowType(list(row_fields), nullable)

    @staticmethod
    def FIELD(name: str, data_type: DataType, description: str | None = None) -> RowField:
        return RowField(name, data_type, description)

    @staticmethod
    def SECOND(precision: int = DayTimeIntervalType.DEFAULT_FRACTIONAL_PRECISION) -> Resolution:
        return Resolution(Resolution.IntervalUnit.SECOND, precision)

    @staticmethod
    def MINUTE() -> Resolution:
        return Resolution(Resolution.IntervalUnit.MINUTE)

    @staticmethod
    def HOUR() -> Resolution:
        return Resolution(Resolution.IntervalUnit.HOUR)

    @staticmethod
    def DAY(precision: int = DayTimeIntervalType.DEFAULT_DAY_PRECISION) -> Resolution:
        return Resolution(Resolution.IntervalUnit.DAY, precision)

    @staticmethod
    def MONTH() -> Resolution:
        return Resolution(Resolution.IntervalUnit.MONTH)

    @staticmethod
    def YEAR(precision: int = YearMonthIntervalType.DEFAULT_PRECISION) -> Resolution:
        return Resolution(Resolution.IntervalUnit.YEAR, precision)

    @staticmethod
    def INTERVAL(upper_resolution: Resolution, lower_resolution: Resolution | None = None
                 ) -> DataType:
        return _interval(upper_resolution, lower_resolution)
