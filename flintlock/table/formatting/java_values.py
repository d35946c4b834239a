"""A SQL value's text as Flink shows it, in the two places users compare by eye.

**Tableau** (``TableResult.print()``, the SQL shell) shows a value as Flink's CAST(... AS
STRING) in printing mode does (``tableau_value``):

* integers and DECIMAL in plain notation with the type's scale (``1.50``, ``0.00000010``);
* FLOAT / DOUBLE as Java's ``Float.toString`` / ``Double.toString`` (``1.5``, ``1.0E10``,
  ``1.0E-4``, ``NaN``, ``Infinity``, ``-0.0``);
* BOOLEAN as ``TRUE`` / ``FALSE``; CHAR(n) padded with spaces to n;
* BINARY / VARBINARY as ``x'0102ff'``;
* DATE ``2023-01-02``; TIME(p) ``10:00:00`` (p digits of fraction when p > 0);
  TIMESTAMP(p) ``2023-01-01 10:00:00.000`` with exactly p fraction digits (none for p = 0);
  TIMESTAMP_LTZ(p) the same in the session time zone (``table.local-time-zone``);
* ARRAY ``[1, 2]``, MAP ``{k1=1, k2=2}`` (in the map's own order), MULTISET ``{x=2, y=1}``
  (element=count), ROW ``(1, a, TRUE)``, the elements formatted by the same rules and a NULL
  element as ``NULL``;
* day-time intervals (``timedelta``) ``+1 02:03:04.500``, year-month ones (a number of
  months) ``+1-02``.

A top-level NULL is the tableau's business (``<NULL>``, see ``tableau``).

**Print connector** lines are Java's ``Row.toString`` of the external (Java) values
(``print_value``): ``true``; DECIMAL as ``BigDecimal.toString`` (``1.0E-7`` below 1e-6);
FLOAT / DOUBLE as above; BYTES as Java's ``Arrays.toString(byte[])`` (``[1, 2, -1]``, signed);
DATE / TIME / TIMESTAMP as ``LocalDate`` / ``LocalTime`` / ``LocalDateTime.toString`` (``10:00``
when the seconds are zero, ``2023-01-01T10:00``, fractions in groups of three digits);
TIMESTAMP_LTZ as ``Instant.toString`` (``2023-01-01T10:00:00.123Z``, UTC whatever the session
zone); ARRAY ``[1, null]``; MAP and MULTISET (element=count) as a Java ``HashMap`` iterates
(``java_hash_order``); ROW as a nested ``Row.toString`` (``+I[1, a]``); NULL as ``null``.
Intervals cannot be columns of a print table (Flink refuses them in DDL), so they have no
print form here.

Python values per type are the Table layer's: int, float, ``decimal.Decimal``, bool, str,
bytes, ``datetime.date`` / ``time`` / ``datetime``, list, dict, ``Row``. A TIMESTAMP_LTZ value is
an instant: an aware ``datetime``, or a naive one read as UTC.

Pure functions; no state.
"""

from __future__ import annotations

import datetime
import decimal
import math
import struct
from collections.abc import Callable
from typing import Any

from flintlock.table.formatting.java_hash import java_hash_order
from flintlock.table.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    CharType,
    DataType,
    DateType,
    DayTimeIntervalType,
    DecimalType,
    DoubleType,
    FloatType,
    LocalZonedTimestampType,
    MapType,
    MultisetType,
    RowType,
    TimestampType,
    TimeType,
    VarBinaryType,
    YearMonthIntervalType,
)

UTC = datetime.UTC
_FLOAT32 = struct.Struct("<f")


# -- Java's number formatting ------------------------------------------------------------------

def _java_scientific(digits: str, exponent: int) -> str:
    """``d.ddd`` + ``E`` + exponent from significant digits and the decimal exponent of the
    first digit (Java's computerized scientific notation, at least one fraction digit)."""
    fraction = digits[1:] or "0"
    return f"{digits[0]}.{fraction}E{exponent}"


def _shortest_digits(text: str) -> tuple[str, int]:
    """Significant digits and the exponent of the first one from a ``repr``-style number."""
    mantissa, _, exp_text = text.lower().partition("e")
    exponent = int(exp_text) if exp_text else 0
    whole, _, fraction = mantissa.partition(".")
    digits = (whole + fraction).lstrip("0")
    leading_zeros = len(whole + fraction) - len((whole + fraction).lstrip("0"))
    if not digits:
        return "0", 0
    point = len(whole) + exponent
    first = point - leading_zeros - 1
    return digits.rstrip("0") or "0", first


def _jdk_integer_digits(value: float, significant_bits: int) -> tuple[str, int] | None:
    """The digits JDK 17's ``FloatingDecimal`` prints for an integral value below 2^63: the
    exact integer, less the low digits a value of ``significant_bits`` bits cannot hold
    (rounded half up) — not the shortest digits (``123456792f`` prints ``1.23456792E8``).
    None when the value takes the general (shortest-digits) path."""
    magnitude = abs(value)
    if magnitude != math.floor(magnitude) or magnitude >= 2.0 ** 63 or magnitude < 1:
        return None
    number = int(magnitude)
    binary_exponent = number.bit_length() - 1
    dropped = 0
    if binary_exponent > significant_bits:
        power = binary_exponent - significant_bits - 1
        dropped = math.floor(power * math.log10(2)) if power > 1 else 0
    if dropped:
        scale = 10 ** dropped
        number, residue = divmod(number, scale)
        if residue >= scale // 2:
            number += 1
    text = str(number)
    return text.rstrip("0") or "0", len(text) - 1 + dropped


def _java_floating(value: float, text: str, significant_bits: int = 53) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    sign = "-" if value < 0 else ""
    exact = _jdk_integer_digits(value, significant_bits)
    digits, exponent = exact if exact is not None else _shortest_digits(text.lstrip("-"))
    if 1e-3 <= abs(value) < 1e7:
        if exponent >= 0:
            whole = digits[:exponent + 1].ljust(exponent + 1, "0")
            fraction = digits[exponent + 1:] or "0"
        else:
            whole, fraction = "0", "0" * (-exponent - 1) + digits
        return f"{sign}{whole}.{fraction}"
    return sign + _java_scientific(digits, exponent)


def java_double(value: float) -> str:
    """Java's ``Double.toString`` as the JDK 17 Flink runs on prints it: the shortest digits
    that read back as the same double, except for integral values (``_jdk_integer_digits``)."""
    return _java_floating(value, repr(float(value)))


def _float32(value: float) -> float:
    try:
        result: float = _FLOAT32.unpack(_FLOAT32.pack(value))[0]
    except OverflowError:
        return math.copysign(math.inf, value)
    return result


def java_float(value: float) -> str:
    """Java's ``Float.toString``: the value rounded to 32 bits, shortest digits for a float."""
    single = _float32(float(value))
    if math.isnan(single) or math.isinf(single) or single == 0:
        return _java_floating(single, repr(single), 24)
    for precision in range(1, 10):
        text = f"{single:.{precision}g}"
        if _float32(float(text)) == single:
            return _java_floating(single, text, 24)
    return _java_floating(single, repr(single), 24)


def java_big_decimal(value: decimal.Decimal, scale: int | None = None) -> str:
    """Java's ``BigDecimal.toString`` of ``value`` at ``scale`` (scientific below 1e-6)."""
    if scale is not None:
        value = value.quantize(decimal.Decimal(1).scaleb(-scale), rounding=decimal.ROUND_HALF_UP)
    sign, digit_tuple, exponent = value.as_tuple()
    assert isinstance(exponent, int)
    digits = "".join(map(str, digit_tuple)).lstrip("0") or "0"
    adjusted = exponent + len(digits) - 1
    if exponent <= 0 and adjusted >= -6:
        return format(value, "f")
    text = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    return ("-" if sign else "") + f"{text}E{'+' if adjusted > 0 else ''}{adjusted}"


def plain_decimal(value: decimal.Decimal, scale: int) -> str:
    """A DECIMAL in plain notation with exactly ``scale`` fraction digits."""
    quantum = decimal.Decimal(1).scaleb(-scale)
    return format(value.quantize(quantum, rounding=decimal.ROUND_HALF_UP), "f")


# -- dates and times ---------------------------------------------------------------------------

def _fraction(microseconds: int, precision: int) -> str:
    """``precision`` fraction digits of a time with microsecond resolution (nanos are 0)."""
    nanos = f"{microseconds:06d}000"
    return nanos[:precision]


def sql_time(value: datetime.time, precision: int) -> str:
    """Flink's TIME to string: milliseconds only, digits until the rest is zero (at least
    one), at most ``precision`` (``10:00:01.0``, ``10:00:01.5``, ``10:00:01.123``)."""
    text = value.strftime("%H:%M:%S")
    if precision <= 0:
        return text
    millis = value.microsecond // 1000
    digits = []
    for _ in range(precision):
        digits.append(str(millis // 100))
        millis = millis % 100 * 10
        if millis == 0:
            break
    return text + "." + "".join(digits)


def sql_timestamp(value: datetime.datetime, precision: int) -> str:
    text = f"{value.year:04d}-{value.month:02d}-{value.day:02d} {value:%H:%M:%S}"
    return text + ("." + _fraction(value.microsecond, precision) if precision > 0 else "")


def instant_in_zone(value: datetime.datetime, zone: datetime.tzinfo) -> datetime.datetime:
    """The wall-clock time of an instant in ``zone`` (naive values are UTC instants)."""
    aware = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
    return aware.astimezone(zone).replace(tzinfo=None)


def _java_nano_fraction(microseconds: int) -> str:
    """java.time's fraction: none when zero, else 3, 6 or 9 digits as few as needed."""
    if microseconds == 0:
        return ""
    if microseconds % 1000 == 0:
        return f".{microseconds // 1000:03d}"
    return f".{microseconds:06d}"


def java_local_time(value: datetime.time) -> str:
    """``LocalTime.toString``: ``HH:mm``, then ``:ss`` unless seconds and fraction are 0."""
    text = f"{value.hour:02d}:{value.minute:02d}"
    if value.second or value.microsecond:
        text += f":{value.second:02d}" + _java_nano_fraction(value.microsecond)
    return text


def java_local_date(value: datetime.date) -> str:
    return f"{value.year:04d}-{value.month:02d}-{value.day:02d}"


def java_local_date_time(value: datetime.datetime) -> str:
    return f"{java_local_date(value)}T{java_local_time(value.time())}"


def java_instant(value: datetime.datetime) -> str:
    """``Instant.toString``: UTC, seconds always shown, ``Z``."""
    utc = instant_in_zone(value, UTC)
    seconds = f"{utc.hour:02d}:{utc.minute:02d}:{utc.second:02d}"
    return f"{java_local_date(utc)}T{seconds}{_java_nano_fraction(utc.microsecond)}Z"


# -- tableau (CAST ... AS STRING, printing) ----------------------------------------------------

def tableau_value(value: Any, data_type: DataType,
                  zone: datetime.tzinfo = UTC, nested: bool = False) -> str:
    """``value`` of ``data_type`` as the tableau shows it (module docstring); a None inside a
    collection or row is ``NULL``, a top-level None ``<NULL>``."""
    if value is None:
        return "NULL" if nested else "<NULL>"
    formatter = _TABLEAU.get(type(data_type))
    if formatter is not None:
        return formatter(value, data_type, zone)
    if isinstance(data_type, ArrayType):
        return "[" + ", ".join(tableau_value(item, data_type.element_type, zone, True)
                               for item in value) + "]"
    if isinstance(data_type, MultisetType):
        counts = value if isinstance(value, dict) else _count(value)
        return "{" + ", ".join(f"{tableau_value(item, data_type.element_type, zone, True)}="
                               f"{count}" for item, count in counts.items()) + "}"
    if isinstance(data_type, MapType):
        return "{" + ", ".join(
            f"{tableau_value(k, data_type.key_type, zone, True)}="
            f"{tableau_value(v, data_type.value_type, zone, True)}"
            for k, v in value.items()) + "}"
    if isinstance(data_type, RowType):
        fields = _row_values(value, data_type)
        return "(" + ", ".join(tableau_value(item, kind, zone, True) for item, kind in zip(
            fields, data_type.field_types(), strict=False)) + ")"
    return str(value)


def interval_day_time(value: datetime.timedelta) -> str:
    """A day-time interval as Flink prints it: ``+1 02:03:04.500`` (sign, days, milliseconds)."""
    millis = value // datetime.timedelta(milliseconds=1)
    sign = "-" if millis < 0 else "+"
    millis = abs(millis)
    days, millis = divmod(millis, 86_400_000)
    hours, millis = divmod(millis, 3_600_000)
    minutes, millis = divmod(millis, 60_000)
    seconds, millis = divmod(millis, 1000)
    return f"{sign}{days} {hours:02d}:{minutes:02d}:{seconds:02d}.{millis:03d}"


def interval_year_month(months: int) -> str:
    """A year-month interval (a number of months) as Flink prints it: ``+1-02``, ``-3-00``."""
    sign = "-" if months < 0 else "+"
    years, rest = divmod(abs(months), 12)
    return f"{sign}{years}-{rest:02d}"


def _row_values(value: Any, row_type: RowType) -> list[Any]:
    if isinstance(value, dict):
        return [value.get(name) for name in row_type.names]
    return list(value)


def _char(value: Any, data_type: DataType, zone: datetime.tzinfo) -> str:
    assert isinstance(data_type, CharType)
    return str(value).ljust(data_type.length)


def _hex(value: Any, data_type: DataType, zone: datetime.tzinfo) -> str:
    return "x'" + bytes(value).hex() + "'"


Formatter = Callable[[Any, DataType, datetime.tzinfo], str]
_TABLEAU: dict[type, Formatter] = {
    BooleanType: lambda v, t, z: "TRUE" if v else "FALSE",
    FloatType: lambda v, t, z: java_float(v),
    DoubleType: lambda v, t, z: java_double(v),
    DecimalType: lambda v, t, z: plain_decimal(decimal.Decimal(v), t.scale),  # type: ignore[attr-defined]
    CharType: _char,
    BinaryType: _hex,
    VarBinaryType: _hex,
    DateType: lambda v, t, z: java_local_date(v),
    TimeType: lambda v, t, z: sql_time(v, t.precision),  # type: ignore[attr-defined]
    TimestampType: lambda v, t, z: sql_timestamp(v, t.precision),  # type: ignore[attr-defined]
    LocalZonedTimestampType: lambda v, t, z: sql_timestamp(
        instant_in_zone(v, z), t.precision),  # type: ignore[attr-defined]
    DayTimeIntervalType: lambda v, t, z: interval_day_time(v),
    YearMonthIntervalType: lambda v, t, z: interval_year_month(int(v)),
}


# -- print connector (Row.toString of Java values) ---------------------------------------------

def print_value(value: Any, data_type: DataType) -> str:
    """``value`` of ``data_type`` as the print connector shows it (module docstring)."""
    if value is None:
        return "null"
    formatter = _PRINT.get(type(data_type))
    if formatter is not None:
        return formatter(value, data_type)
    if isinstance(data_type, ArrayType):
        return "[" + ", ".join(print_value(item, data_type.element_type) for item in value) + "]"
    if isinstance(data_type, MultisetType):
        counts = value if isinstance(value, dict) else _count(value)
        return _java_map(counts, data_type.element_type, None)
    if isinstance(data_type, MapType):
        return _java_map(value, data_type.key_type, data_type.value_type)
    if isinstance(data_type, RowType):
        return print_row(value, data_type)
    return str(value)


def _count(items: list[Any]) -> dict[Any, int]:
    counts: dict[Any, int] = {}
    for item in items:
        counts[item] = counts.get(item, 0) + 1
    return counts


def _java_map(value: dict[Any, Any], key_type: DataType, value_type: DataType | None) -> str:
    entries = java_hash_order(list(value.items()), key_type)
    return "{" + ", ".join(
        f"{print_value(k, key_type)}={print_value(v, value_type) if value_type else v}"
        for k, v in entries) + "}"


def print_row(row: Any, row_type: RowType) -> str:
    """Java's ``Row.toString``: the kind's short string, then the fields in brackets."""
    kind = row.get_row_kind().short_string() if hasattr(row, "get_row_kind") else "+I"
    fields = _row_values(row, row_type)
    return f"{kind}[" + ", ".join(print_value(item, field_type) for item, field_type in zip(
        fields, row_type.field_types(), strict=False)) + "]"


def _signed_bytes(value: Any, data_type: DataType) -> str:
    return "[" + ", ".join(str(b - 256 if b > 127 else b) for b in bytes(value)) + "]"


_PRINT: dict[type, Callable[[Any, DataType], str]] = {
    BooleanType: lambda v, t: "true" if v else "false",
    FloatType: lambda v, t: java_float(v),
    DoubleType: lambda v, t: java_double(v),
    DecimalType: lambda v, t: java_big_decimal(decimal.Decimal(v), t.scale),  # type: ignore[attr-defined]
    CharType: lambda v, t: str(v).ljust(t.length),  # type: ignore[attr-defined]
    BinaryType: _signed_bytes,
    VarBinaryType: _signed_bytes,
    DateType: lambda v, t: java_local_date(v),
    TimeType: lambda v, t: java_local_time(v),
    TimestampType: lambda v, t: java_local_date_time(v),
    LocalZonedTimestampType: lambda v, t: java_instant(v),
}
