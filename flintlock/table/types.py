"""PyFlink's ``pyflink.table.types``: ``DataTypes``, every ``DataType`` class, ``RowField``.

A ``DataType`` is a logical SQL type with a nullability flag. Class names, constructor
signatures, attributes (``_nullable``, ``length``, ``precision``, ``scale``, ``element_type``,
``key_type``, ``value_type``, ``fields``, ``names``), ``repr`` and ``str`` are PyFlink 2.3.0's:
``repr(DataTypes.STRING())`` is ``VarCharType(2147483647, true)``, ``str`` is the class's type
name (``VARCHAR``), equality compares the attributes. ``not_null()`` / ``nullable()`` return
copies; the only mutators are PyFlink's own (``RowType.add``, ``bridged_to``).

Python values per type, as PyFlink hands them to user code: int (TINYINT..BIGINT), float
(FLOAT, DOUBLE), ``decimal.Decimal``, bool, str (CHAR, VARCHAR), bytes/bytearray (BINARY,
VARBINARY), ``datetime.date`` / ``time`` / ``datetime`` (DATE, TIME, TIMESTAMP,
TIMESTAMP_LTZ), ``datetime.timedelta`` (day-time intervals), list (ARRAY, MULTISET as a list),
dict (MAP), ``Row`` (ROW). ``to_sql_type`` / ``from_sql_type`` convert to and from the
internal forms PyFlink's serializers use (days since the epoch for DATE, microseconds for TIME
and TIMESTAMP, a row-kind-prefixed tuple for ROW); flintlock keeps Python objects end to end,
so they matter only to code that ports PyFlink's conversions.

flintlock's additions, used by the binder, planner and output formats:

* ``sql_string(data_type)`` — Flink's summary spelling, as ``print_schema`` shows it:
  ``BIGINT NOT NULL``, ``STRING``, ``VARCHAR(10)``, ``DECIMAL(10, 2)``, ``TIMESTAMP_LTZ(3)``,
  ``ROW<`a` INT, `b` STRING>``, ``INTERVAL DAY(2) TO SECOND(3)``.
* ``from_sql_string(text)`` — a type as written in DDL or CAST (``flintlock.table.type_parser``).
* ``python_type_info(data_type)`` — the DataStream ``Types`` equivalent.
* ``infer_type(value)`` / ``infer_schema_from_data(elements, names)`` — ``from_elements``'s
  inference (``flintlock.table.type_inference``; PyFlink's private names are kept as aliases).

Immutable value objects apart from PyFlink's mutators; no I/O; no shared state.
"""

from __future__ import annotations

from flintlock.common.types import Row, RowKind
from flintlock.table.composite_types import (
    ArrayType,
    DataTypes,
    ListViewType,
    MapType,
    MapViewType,
    MultisetType,
    RawType,
    RowField,
    RowType,
    UserDefinedType,
    python_type_info,
    set_type_parser,
)
from flintlock.table.data_type import (
    MAX_LENGTH,
    AtomicType,
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
    FractionalType,
    IntegralType,
    IntType,
    InvalidDataTypeError,
    LocalZonedTimestampType,
    NullType,
    NumericType,
    Resolution,
    SmallIntType,
    TimestampType,
    TimeType,
    TinyIntType,
    VarBinaryType,
    VarCharType,
    YearMonthIntervalType,
    ZonedTimestampType,
    quote_identifier,
    sql_string,
)
from flintlock.table.type_inference import (
    _create_converter,
    _create_type_verifier,
    _has_nulltype,
    _infer_schema,
    _infer_schema_from_data,
    _infer_type,
    _merge_type,
    infer_schema_from_data,
    infer_type,
)
from flintlock.table.type_parser import parse_data_type

__all__ = [
    "MAX_LENGTH",
    "ArrayType",
    "AtomicType",
    "BigIntType",
    "BinaryType",
    "BooleanType",
    "CharType",
    "DataType",
    "DataTypes",
    "DateType",
    "DayTimeIntervalType",
    "DecimalType",
    "DoubleType",
    "FloatType",
    "FractionalType",
    "IntType",
    "IntegralType",
    "InvalidDataTypeError",
    "ListViewType",
    "LocalZonedTimestampType",
    "MapType",
    "MapViewType",
    "MultisetType",
    "NullType",
    "NumericType",
    "RawType",
    "Resolution",
    "Row",
    "RowField",
    "RowKind",
    "RowType",
    "SmallIntType",
    "TimeType",
    "TimestampType",
    "TinyIntType",
    "UserDefinedType",
    "VarBinaryType",
    "VarCharType",
    "YearMonthIntervalType",
    "ZonedTimestampType",
    "from_sql_string",
    "infer_schema_from_data",
    "infer_type",
    "python_type_info",
    "quote_identifier",
    "sql_string",
]


def from_sql_string(text: str) -> DataType:
    """A type as written in DDL or CAST (``INTEGER``, ``VARCHAR(10)``, ``ROW<a INT>``, ...)."""
    return parse_data_type(text)


set_type_parser(from_sql_string)



__all__ += ["_create_converter", "_create_type_verifier", "_has_nulltype", "_infer_schema",
            "_infer_schema_from_data", "_infer_type", "_merge_type"]
