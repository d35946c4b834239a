"""SQL type rules of the resolver: families of types, arithmetic results, the common type of
several branches, and which implicit casts Flink allows.

The rules follow Flink's (Calcite's) type system as far as programs can see them in printed
results and schemas:

* arithmetic on exact integers keeps the wider integer (``INT + INT`` is ``INT``, ``INT + BIGINT``
  is ``BIGINT``); ``DECIMAL`` with an integer stays ``DECIMAL``; anything with ``FLOAT`` or
  ``DOUBLE`` is approximate (``DOUBLE`` wins over ``FLOAT``);
* a result is nullable when an operand is;
* the common type of string branches is ``CHAR(n)`` when all are ``CHAR(n)`` of one length,
  else ``VARCHAR`` of the longest length (Flink's type system turns "ragged" CHAR branches of
  ``CASE WHEN .. THEN 'a' ELSE 'abc' END`` into VARCHAR(3), unpadded);
* comparisons need comparable families (numbers with numbers, strings with strings, ...).

Pure functions over ``flintlock.table.types`` DataTypes; no state.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flintlock.table import types as t
from flintlock.table.errors import ValidationError

MAX_LENGTH = 2_147_483_647

_INTEGER_RANK: dict[type, int] = {t.TinyIntType: 1, t.SmallIntType: 2, t.IntType: 3,
                                  t.BigIntType: 4}


def type_key(data_type: t.DataType) -> tuple[Any, ...]:
    """A hashable value equal types share (DataTypes compare by their fields)."""
    fields = tuple(sorted((k, type_key(v) if isinstance(v, t.DataType) else repr(v))
                          for k, v in vars(data_type).items() if k != "_conversion_cls"))
    return (type(data_type).__name__, fields)


def with_nullability(data_type: t.DataType, nullable: bool) -> t.DataType:
    return data_type.nullable() if nullable else data_type.not_null()


def is_nullable(data_type: t.DataType) -> bool:
    return bool(data_type._nullable)


def is_integral(data_type: t.DataType) -> bool:
    return type(data_type) in _INTEGER_RANK


def is_approximate(data_type: t.DataType) -> bool:
    return isinstance(data_type, (t.FloatType, t.DoubleType))


def is_numeric(data_type: t.DataType) -> bool:
    return is_integral(data_type) or is_approximate(data_type) or isinstance(
        data_type, t.DecimalType)


def is_string(data_type: t.DataType) -> bool:
    return isinstance(data_type, (t.CharType, t.VarCharType))


def is_boolean(data_type: t.DataType) -> bool:
    return isinstance(data_type, t.BooleanType)


def is_null_type(data_type: t.DataType) -> bool:
    return isinstance(data_type, t.NullType)


def is_temporal(data_type: t.DataType) -> bool:
    return isinstance(data_type, (t.DateType, t.TimeType, t.TimestampType,
                                  t.LocalZonedTimestampType))


def string_length(data_type: t.DataType) -> int:
    return int(getattr(data_type, "length", MAX_LENGTH))


def string_type(length: int = MAX_LENGTH, nullable: bool = True) -> t.DataType:
    return t.VarCharType(min(length, MAX_LENGTH), nullable)


def family(data_type: t.DataType) -> str:
    if is_numeric(data_type):
        return "NUMERIC"
    if is_string(data_type):
        return "CHARACTER"
    if isinstance(data_type, (t.BinaryType, t.VarBinaryType)):
        return "BINARY"
    if is_boolean(data_type):
        return "BOOLEAN"
    if isinstance(data_type, t.TimestampType):
        return "TIMESTAMP"
    if isinstance(data_type, t.LocalZonedTimestampType):
        return "TIMESTAMP_LTZ"
    return type(data_type).__name__


def _decimal_of_integer(data_type: t.DataType) -> tuple[int, int]:
    widths: dict[type, tuple[int, int]] = {t.TinyIntType: (3, 0), t.SmallIntType: (5, 0),
                                            t.IntType: (10, 0), t.BigIntType: (19, 0)}
    return widths[type(data_type)]


def _precision_scale(data_type: t.DataType) -> tuple[int, int]:
    if isinstance(data_type, t.DecimalType):
        return data_type.precision, data_type.scale
    return _decimal_of_integer(data_type)


def arithmetic_result(operator: str, left: t.DataType, right: t.DataType) -> t.DataType:
    """The type of ``left <operator> right`` for ``+ - * / %``; a date or time plus or minus
    a day-time interval keeps the date or time's type."""
    nullable = is_nullable(left) or is_nullable(right)
    if operator in "+-" and is_temporal(left) and isinstance(right, t.DayTimeIntervalType):
        return with_nullability(left, nullable)
    if operator == "+" and isinstance(left, t.DayTimeIntervalType) and is_temporal(right):
        return with_nullability(right, nullable)
    if is_null_type(left) or is_null_type(right):
        other = right if is_null_type(left) else left
        return with_nullability(other, True) if not is_null_type(other) else t.NullType()
    if not (is_numeric(left) and is_numeric(right)):
        raise ValidationError(
            f"Cannot apply '{operator}' to arguments of type "
            f"'<{_name(left)}> {operator} <{_name(right)}>'. Supported form(s): "
            f"'<NUMERIC> {operator} <NUMERIC>'")
    if isinstance(left, t.DoubleType) or isinstance(right, t.DoubleType):
        return t.DoubleType(nullable)
    if isinstance(left, t.FloatType) or isinstance(right, t.FloatType):
        return t.FloatType(nullable)
    if isinstance(left, t.DecimalType) or isinstance(right, t.DecimalType):
        return t.DecimalType(*_decimal_arithmetic(operator, left, right), nullable)
    if operator == "%":
        return with_nullability(right, nullable)
    wider = left if _INTEGER_RANK[type(left)] >= _INTEGER_RANK[type(right)] else right
    return with_nullability(wider, nullable)


def _decimal_arithmetic(operator: str, left: t.DataType, right: t.DataType) -> tuple[int, int]:
    p1, s1 = _precision_scale(left)
    p2, s2 = _precision_scale(right)
    if operator in "+-":
        scale = max(s1, s2)
        precision = max(p1 - s1, p2 - s2) + scale + 1
    elif operator == "*":
        scale, precision = s1 + s2, p1 + p2
    elif operator == "/":
        scale = max(6, s1 + p2 + 1)
        precision = p1 - s1 + s2 + scale
    else:
        scale = max(s1, s2)
        precision = min(p1 - s1, p2 - s2) + scale
    if precision > 38:
        scale = max(scale - (precision - 38), min(scale, 6))
        precision = 38
    return precision, scale


def common_type(types: Sequence[t.DataType], context: str) -> t.DataType:
    """The type several values share (CASE branches, COALESCE, UNION, IN lists)."""
    known = [dt for dt in types if not is_null_type(dt)]
    nullable = any(is_nullable(dt) for dt in types)
    if not known:
        return t.NullType()
    first = known[0]
    if all(type_key(with_nullability(dt, True)) == type_key(with_nullability(first, True))
           for dt in known):
        return with_nullability(first, nullable)
    if all(is_string(dt) for dt in known):
        length = max(string_length(dt) for dt in known)
        if all(isinstance(dt, t.CharType) and dt.length == length for dt in known):
            return t.CharType(length, nullable)
        return string_type(length, nullable)  # ragged CHARs become VARCHAR, as in Flink
    if all(is_numeric(dt) for dt in known):
        result = known[0]
        for other in known[1:]:
            result = _wider_number(result, other)
        return with_nullability(result, nullable)
    if all(family(dt) == family(first) for dt in known):
        return with_nullability(first, nullable)
    raise ValidationError(
        f"{context}: no common type for " + ", ".join(_name(dt) for dt in known))


def _wider_number(left: t.DataType, right: t.DataType) -> t.DataType:
    if is_approximate(left) or is_approximate(right):
        return t.DoubleType() if isinstance(left, t.DoubleType) or isinstance(
            right, t.DoubleType) or is_integral(left) or is_integral(right) else t.FloatType()
    if isinstance(left, t.DecimalType) or isinstance(right, t.DecimalType):
        p1, s1 = _precision_scale(left)
        p2, s2 = _precision_scale(right)
        scale = max(s1, s2)
        return t.DecimalType(min(38, max(p1 - s1, p2 - s2) + scale), scale)
    return left if _INTEGER_RANK[type(left)] >= _INTEGER_RANK[type(right)] else right


def comparable(left: t.DataType, right: t.DataType) -> bool:
    if is_null_type(left) or is_null_type(right):
        return True
    return family(left) == family(right)


def _name(data_type: t.DataType) -> str:
    return sql_name(data_type)


def sql_name(data_type: t.DataType) -> str:
    """Flink's spelling of a type (delegates to ``types.sql_string``)."""
    return t.sql_string(data_type)
