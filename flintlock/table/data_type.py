"""The base of every table type, ``DataType``, and the atomic types: numbers, strings, binary
strings, booleans, dates, times, timestamps and intervals, with PyFlink 2.3.0's class names,
constructor signatures, attributes and ``repr`` (see ``flintlock.table.types``, which
re-exports every name here and adds the collection and row types and ``DataTypes``).

Each class knows its Flink summary spelling (``_summary``); ``sql_string`` adds ``NOT NULL``.
Constructors check their parameters (``InvalidDataTypeError``). Immutable value objects apart
from PyFlink's ``bridged_to``; no I/O.
"""

from __future__ import annotations

import calendar
import datetime
import enum
import time
from copy import copy
from typing import Any

from flintlock.table.errors import ValidationError

MAX_LENGTH = 0x7FFFFFFF
"""The length of STRING and BYTES (VARCHAR / VARBINARY of the largest length)."""


class InvalidDataTypeError(ValidationError, ValueError):
    """A type constructed with an out-of-range parameter (``DECIMAL(40, 2)``, ``TIME(10)``)."""


def _check(condition: bool, message: str) -> None:
    if not condition:
        raise InvalidDataTypeError(message)


def _flag(nullable: bool) -> str:
    return str(bool(nullable)).lower()


class DataType:
    """A logical type of the Table API; ``nullable`` says whether None is a value of it."""

    def __init__(self, nullable: bool = True) -> None:
        self._nullable = nullable
        self._conversion_cls = ""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({_flag(self._nullable)})"

    def __str__(self) -> str:
        return type(self).type_name()

    def __hash__(self) -> int:
        return hash(str(self))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, type(self)) and vars(self) == vars(other)

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def not_null(self) -> DataType:
        """A copy of this type that does not admit None."""
        duplicate = copy(self)
        duplicate._nullable = False
        return duplicate

    def nullable(self) -> DataType:
        """A copy of this type that admits None."""
        duplicate = copy(self)
        duplicate._nullable = True
        return duplicate

    @classmethod
    def type_name(cls) -> str:
        return cls.__name__[:-4].upper()

    def bridged_to(self, conversion_cls: str) -> DataType:
        """Records a conversion-class hint (kept for PyFlink compatibility; unused here)."""
        self._conversion_cls = conversion_cls
        return self

    def need_conversion(self) -> bool:
        """Whether ``to_sql_type`` / ``from_sql_type`` change a value of this type."""
        return False

    def to_sql_type(self, obj: Any) -> Any:
        return obj

    def from_sql_type(self, obj: Any) -> Any:
        return obj

    def _summary(self) -> str:
        """Flink's summary spelling without the NOT NULL suffix."""
        return type(self).type_name()


class AtomicType(DataType):
    """Every type that is not an array, a map, a multiset or a row."""


class NullType(AtomicType):
    """The type of the untyped NULL literal; its only value is None."""

    def __init__(self) -> None:
        super().__init__(True)


class NumericType(AtomicType):
    """Numbers."""


class IntegralType(NumericType):
    """Whole numbers of a fixed width."""


class FractionalType(NumericType):
    """FLOAT, DOUBLE and DECIMAL."""


class _LengthType(AtomicType):
    """A string or binary type with a length (code points or bytes)."""

    def __init__(self, length: int = 1, nullable: bool = True) -> None:
        super().__init__(nullable)
        _check(isinstance(length, int) and 0 <= length <= MAX_LENGTH,
               f"{type(self).type_name()} length must be between 0 and {MAX_LENGTH}, "
               f"got {length!r}")
        self.length = length

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.length}, {_flag(self._nullable)})"

    def _summary(self) -> str:
        return f"{type(self).type_name()}({self.length})"


class CharType(_LengthType):
    """SQL CHAR(n): a string of exactly n code points."""


class VarCharType(_LengthType):
    """SQL VARCHAR(n); VARCHAR(2147483647) is STRING."""

    def _summary(self) -> str:
        return "STRING" if self.length == MAX_LENGTH else f"VARCHAR({self.length})"


class BinaryType(_LengthType):
    """SQL BINARY(n): exactly n bytes."""


class VarBinaryType(_LengthType):
    """SQL VARBINARY(n); VARBINARY(2147483647) is BYTES."""

    def _summary(self) -> str:
        return "BYTES" if self.length == MAX_LENGTH else f"VARBINARY({self.length})"


class BooleanType(AtomicType):
    """SQL BOOLEAN."""


class TinyIntType(IntegralType):
    """SQL TINYINT (8 bits)."""


class SmallIntType(IntegralType):
    """SQL SMALLINT (16 bits)."""


class IntType(IntegralType):
    """SQL INT (32 bits)."""


class BigIntType(IntegralType):
    """SQL BIGINT (64 bits)."""


class FloatType(FractionalType):
    """SQL FLOAT (4-byte IEEE 754)."""


class DoubleType(FractionalType):
    """SQL DOUBLE (8-byte IEEE 754)."""


class DecimalType(FractionalType):
    """SQL DECIMAL(p, s): p digits in all (1..38), s of them after the point (0..p)."""

    def __init__(self, precision: int = 10, scale: int = 0, nullable: bool = True) -> None:
        super().__init__(nullable)
        _check(isinstance(precision, int) and 1 <= precision <= 38,
               f"DECIMAL precision must be between 1 and 38, got {precision!r}")
        _check(isinstance(scale, int) and 0 <= scale <= precision,
               f"DECIMAL scale must be between 0 and the precision {precision}, got {scale!r}")
        self.precision = precision
        self.scale = scale
        self.has_precision_info = True

    def __repr__(self) -> str:
        return f"DecimalType({self.precision}, {self.scale}, {_flag(self._nullable)})"

    def _summary(self) -> str:
        return f"DECIMAL({self.precision}, {self.scale})"


_EPOCH_ORDINAL = datetime.datetime(1970, 1, 1).toordinal()
_LOCAL_EPOCH_MICROS = calendar.timegm(time.localtime(0)) * 10 ** 6
"""The local zone's offset at the epoch, which PyFlink folds into TIME and TIMESTAMP_LTZ."""


class DateType(AtomicType):
    """SQL DATE; internally the number of days since 1970-01-01."""

    EPOCH_ORDINAL = _EPOCH_ORDINAL

    def need_conversion(self) -> bool:
        return True

    def to_sql_type(self, d: Any) -> Any:
        return None if d is None else d.toordinal() - _EPOCH_ORDINAL

    def from_sql_type(self, v: Any) -> Any:
        return None if v is None else datetime.date.fromordinal(v + _EPOCH_ORDINAL)


def _check_precision(kind: str, precision: int) -> None:
    _check(isinstance(precision, int) and 0 <= precision <= 9,
           f"{kind} precision must be between 0 and 9, got {precision!r}")


class _PrecisionType(AtomicType):
    """A temporal type with a fractional-second precision (0..9)."""

    default_precision = 6

    def __init__(self, precision: int | None = None, nullable: bool = True) -> None:
        super().__init__(nullable)
        precision = self.default_precision if precision is None else precision
        _check_precision(type(self).type_name(), precision)
        self.precision = precision

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.precision}, {_flag(self._nullable)})"

    def need_conversion(self) -> bool:
        return True


class TimeType(_PrecisionType):
    """SQL TIME(p); internally microseconds of the day (PyFlink subtracts the local offset)."""

    default_precision = 0
    EPOCH_ORDINAL = _LOCAL_EPOCH_MICROS

    def __init__(self, precision: int = 0, nullable: bool = True) -> None:
        super().__init__(precision, nullable)

    def to_sql_type(self, t: Any) -> Any:
        if t is None:
            return None
        if t.tzinfo is not None:
            offset = t.utcoffset() or datetime.timedelta()
            offset_micros = (offset.days * 86400 + offset.seconds) * 10 ** 6 + offset.microseconds
        else:
            offset_micros = _LOCAL_EPOCH_MICROS
        seconds = (t.hour * 60 + t.minute) * 60 + t.second
        return seconds * 10 ** 6 + t.microsecond - offset_micros

    def from_sql_type(self, t: Any) -> Any:
        if t is None:
            return None
        seconds, micros = divmod(t + _LOCAL_EPOCH_MICROS, 10 ** 6)
        minutes, seconds = divmod(seconds, 60)
        hours, minutes = divmod(minutes, 60)
        return datetime.time(hours, minutes, seconds, micros)

    def _summary(self) -> str:
        return f"TIME({self.precision})"


def _epoch_micros(dt: datetime.datetime) -> int:
    seconds = calendar.timegm(dt.utctimetuple()) if dt.tzinfo else time.mktime(dt.timetuple())
    return int(seconds) * 10 ** 6 + dt.microsecond


def _from_epoch_micros(micros: int) -> datetime.datetime:
    return datetime.datetime.fromtimestamp(micros // 10 ** 6).replace(microsecond=micros % 10 ** 6)


class TimestampType(_PrecisionType):
    """SQL TIMESTAMP(p) WITHOUT TIME ZONE: a wall-clock date and time."""

    def __init__(self, precision: int = 6, nullable: bool = True) -> None:
        super().__init__(precision, nullable)

    def to_sql_type(self, dt: Any) -> Any:
        return None if dt is None else _epoch_micros(dt)

    def from_sql_type(self, ts: Any) -> Any:
        return None if ts is None else _from_epoch_micros(ts)

    def _summary(self) -> str:
        return f"TIMESTAMP({self.precision})"


class LocalZonedTimestampType(_PrecisionType):
    """SQL TIMESTAMP(p) WITH LOCAL TIME ZONE (TIMESTAMP_LTZ): an instant on the time-line."""

    EPOCH_ORDINAL = _LOCAL_EPOCH_MICROS

    def __init__(self, precision: int = 6, nullable: bool = True) -> None:
        super().__init__(precision, nullable)

    def to_sql_type(self, dt: Any) -> Any:
        return None if dt is None else _epoch_micros(dt) + _LOCAL_EPOCH_MICROS

    def from_sql_type(self, ts: Any) -> Any:
        return None if ts is None else _from_epoch_micros(ts - _LOCAL_EPOCH_MICROS)

    @classmethod
    def type_name(cls) -> str:
        return "LOCALZONEDTIMESTAMP"

    def _summary(self) -> str:
        return f"TIMESTAMP_LTZ({self.precision})"


class ZonedTimestampType(_PrecisionType):
    """SQL TIMESTAMP(p) WITH TIME ZONE (declared only; Flink's runtime does not support it)."""

    def __init__(self, precision: int = 6, nullable: bool = True) -> None:
        super().__init__(precision, nullable)

    def to_sql_type(self, dt: Any) -> Any:
        if dt is None:
            return None
        aware = dt if dt.tzinfo is not None else dt.astimezone()
        offset = int(aware.utcoffset().total_seconds())
        return _epoch_micros(dt) + offset * 10 ** 6, offset

    def from_sql_type(self, zoned_ts: Any) -> Any:
        if zoned_ts is None:
            return None
        micros = zoned_ts[0] - zoned_ts[1] * 10 ** 6
        zone = datetime.timezone(datetime.timedelta(seconds=zoned_ts[1]))
        return datetime.datetime.fromtimestamp(micros // 10 ** 6, tz=zone).replace(
            microsecond=micros % 10 ** 6)

    @classmethod
    def type_name(cls) -> str:
        return "ZONEDTIMESTAMP"

    def _summary(self) -> str:
        return f"TIMESTAMP({self.precision}) WITH TIME ZONE"


class Resolution:
    """One end of an interval type: a unit and its precision (-1 for none)."""

    class IntervalUnit(enum.Enum):
        SECOND = 0
        MINUTE = 1
        HOUR = 2
        DAY = 3
        MONTH = 4
        YEAR = 5

    def __init__(self, unit: Resolution.IntervalUnit, precision: int = -1) -> None:
        self._unit = unit
        self._precision = precision

    @property
    def unit(self) -> Resolution.IntervalUnit:
        return self._unit

    @property
    def precision(self) -> int:
        return self._precision

    def __str__(self) -> str:
        return f"{self._unit}({self._precision})"


class YearMonthIntervalType(AtomicType):
    """INTERVAL YEAR(p) / YEAR(p) TO MONTH / MONTH."""

    class YearMonthResolution:
        YEAR = 1
        MONTH = 2
        YEAR_TO_MONTH = 3

    DEFAULT_PRECISION = 2

    def __init__(self, resolution: int, precision: int = DEFAULT_PRECISION,
                 nullable: bool = True) -> None:
        _check(resolution in (1, 2, 3), f"unknown year-month resolution {resolution!r}")
        _check(resolution != 2 or precision == self.DEFAULT_PRECISION,
               "INTERVAL MONTH takes no year precision")
        _check(isinstance(precision, int) and 1 <= precision <= 4,
               f"year precision must be between 1 and 4, got {precision!r}")
        self._resolution = resolution
        self._precision = precision
        super().__init__(nullable)

    @property
    def resolution(self) -> int:
        return self._resolution

    @property
    def precision(self) -> int:
        return self._precision

    def _summary(self) -> str:
        if self._resolution == self.YearMonthResolution.MONTH:
            return "INTERVAL MONTH"
        suffix = " TO MONTH" if self._resolution == self.YearMonthResolution.YEAR_TO_MONTH else ""
        return f"INTERVAL YEAR({self._precision}){suffix}"


class DayTimeIntervalType(AtomicType):
    """INTERVAL DAY(p) [TO HOUR | MINUTE | SECOND(f)], HOUR .., MINUTE .., SECOND(f)."""

    class DayTimeResolution(enum.Enum):
        DAY = 1
        DAY_TO_HOUR = 2
        DAY_TO_MINUTE = 3
        DAY_TO_SECOND = 4
        HOUR = 5
        HOUR_TO_MINUTE = 6
        HOUR_TO_SECOND = 7
        MINUTE = 8
        MINUTE_TO_SECOND = 9
        SECOND = 10

    DEFAULT_DAY_PRECISION = 2
    DEFAULT_FRACTIONAL_PRECISION = 6

    def __init__(self, resolution: DayTimeIntervalType.DayTimeResolution,
                 day_precision: int = DEFAULT_DAY_PRECISION,
                 fractional_precision: int = DEFAULT_FRACTIONAL_PRECISION,
                 nullable: bool = True) -> None:
        _check(isinstance(resolution, DayTimeIntervalType.DayTimeResolution),
               f"unknown day-time resolution {resolution!r}")
        name = resolution.name
        _check(name.startswith("DAY") or day_precision == self.DEFAULT_DAY_PRECISION,
               f"INTERVAL {name} takes no day precision")
        _check(name.endswith("SECOND") or fractional_precision ==
               self.DEFAULT_FRACTIONAL_PRECISION, f"INTERVAL {name} takes no second precision")
        _check(1 <= day_precision <= 6, f"day precision must be between 1 and 6, got "
                                        f"{day_precision!r}")
        _check(0 <= fractional_precision <= 9, "fractional precision must be between 0 and 9, "
                                               f"got {fractional_precision!r}")
        self._resolution = resolution
        self._day_precision = day_precision
        self._fractional_precision = fractional_precision
        super().__init__(nullable)

    @property
    def resolution(self) -> DayTimeIntervalType.DayTimeResolution:
        return self._resolution

    @property
    def day_precision(self) -> int:
        return self._day_precision

    @property
    def fractional_precision(self) -> int:
        return self._fractional_precision

    def need_conversion(self) -> bool:
        return True

    def to_sql_type(self, timedelta: Any) -> Any:
        if timedelta is None:
            return None
        return (timedelta.days * 86400 + timedelta.seconds) * 10 ** 6 + timedelta.microseconds

    def from_sql_type(self, ts: Any) -> Any:
        return None if ts is None else datetime.timedelta(microseconds=ts)

    def _summary(self) -> str:
        upper, _, lower = self._resolution.name.partition("_TO_")
        parts = []
        for unit in (upper, lower):
            if unit == "DAY":
                parts.append(f"DAY({self._day_precision})")
            elif unit == "SECOND":
                parts.append(f"SECOND({self._fractional_precision})")
            elif unit:
                parts.append(unit)
        return "INTERVAL " + " TO ".join(parts)


def quote_identifier(name: str) -> str:
    """A name as Flink prints it in a type or schema: in backticks, backticks doubled."""
    return "`" + name.replace("`", "``") + "`"


def sql_string(data_type: DataType) -> str:
    """Flink's summary spelling of a type, as ``print_schema`` shows it (module docstring)."""
    text = data_type._summary()
    return text if data_type._nullable else text + " NOT NULL"
