"""Text forms of SQL values as Flink's JSON and CSV formats write and read them.

Writing: timestamps in the SQL standard form ``2023-01-01 10:00:00.123`` (the fraction with
as many digits as it needs, none when it is zero) or ISO-8601 ``2023-01-01T10:00:00.123``;
TIMESTAMP_LTZ the same in UTC with a ``Z``; DATE ``2023-01-02``; TIME ``10:11:12`` (fraction as
needed); DOUBLE as Java's ``Double.toString`` (``2.25``, ``1.0E10``), FLOAT as
``Float.toString`` (``0.1`` for the float nearest 0.1); DECIMAL as Jackson writes a normalized
``BigDecimal`` (``12.3``, ``1E+2``) or, plain, with its scale (``100.00``); BYTES in base64.

TIMESTAMP_LTZ values are ``datetime``s: an aware one is converted to UTC, a naive one is taken
as UTC already (the datagen source and the JSON reader produce naive UTC values).

Reading is the inverse, lenient where Flink is (a timestamp without fraction or seconds).
Pure functions; any thread.
"""

from __future__ import annotations

import base64
import datetime
import decimal
import math
import re
import struct
from typing import Any

from flintlock.common.print_format import _java_double

_UTC = datetime.UTC


def java_double(value: float) -> str:
    return _java_double(value)


def java_float(value: float) -> str:
    """Java's ``Float.toString`` of the float nearest ``value``."""
    if math.isnan(value) or math.isinf(value):
        return _java_double(value)
    single = struct.unpack("f", struct.pack("f", value))[0]
    for digits in range(1, 10):
        text = f"{single:.{digits}g}"
        if struct.unpack("f", struct.pack("f", float(text)))[0] == single:
            return _java_double(float(text))
    return _java_double(single)


def decimal_text(value: decimal.Decimal, plain: bool) -> str:
    """Jackson's text of a DECIMAL: Java's ``toString`` of the value with its trailing zeros
    stripped (``12.3``, ``1E+2``), or plain with its scale kept (``100.00``), as PyFlink
    writes JSON with and without ``encode.decimal-as-plain-number``."""
    if plain:
        return f"{value:f}"
    normalized = value.normalize() if value else decimal.Decimal(0)
    return str(normalized)


def fraction(micros: int) -> str:
    if not micros:
        return ""
    return "." + f"{micros:06d}".rstrip("0")


def timestamp_text(value: datetime.datetime, iso: bool = False, zone: bool = False) -> str:
    if zone and value.tzinfo is not None:
        value = value.astimezone(_UTC)
    separator = "T" if iso else " "
    text = (f"{value.year:04d}-{value.month:02d}-{value.day:02d}{separator}"
            f"{value.hour:02d}:{value.minute:02d}:{value.second:02d}"
            f"{fraction(value.microsecond)}")
    return text + "Z" if zone else text


def time_text(value: datetime.time) -> str:
    return (f"{value.hour:02d}:{value.minute:02d}:{value.second:02d}"
            f"{fraction(value.microsecond)}")


def date_text(value: datetime.date) -> str:
    return f"{value.year:04d}-{value.month:02d}-{value.day:02d}"


def bytes_text(value: bytes) -> str:
    return base64.b64encode(bytes(value)).decode("ascii")


_TIMESTAMP = re.compile(
    r"^(\d{4})-(\d{1,2})-(\d{1,2})(?:[ T](\d{1,2}):(\d{1,2})(?::(\d{1,2})(?:\.(\d{1,9}))?)?)?"
    r"(Z)?$")


def parse_timestamp(text: str, iso: bool | None = None, zone: bool = False) -> datetime.datetime:
    """A timestamp in SQL or ISO form (``iso`` None: either); ``zone``: a trailing ``Z`` is
    expected (TIMESTAMP_LTZ), the result is naive UTC."""
    match = _TIMESTAMP.match(text.strip())
    if match is None or (iso is True and "T" not in text) or (iso is False and "T" in text):
        raise ValueError(f"'{text}' is not a timestamp")
    year, month, day, hour, minute, second, frac, _ = match.groups()
    micros = int((frac or "0").ljust(9, "0")[:6])
    return datetime.datetime(int(year), int(month), int(day), int(hour or 0), int(minute or 0),
                             int(second or 0), micros)


def parse_time(text: str) -> datetime.time:
    match = re.match(r"^(\d{1,2}):(\d{1,2})(?::(\d{1,2})(?:\.(\d{1,9}))?)?$", text.strip())
    if match is None:
        raise ValueError(f"'{text}' is not a time")
    hour, minute, second, frac = match.groups()
    return datetime.time(int(hour), int(minute), int(second or 0),
                         int((frac or "0").ljust(9, "0")[:6]))


def parse_date(text: str) -> datetime.date:
    return datetime.date.fromisoformat(text.strip())


def parse_boolean(text: str) -> bool:
    """Jackson's reading of a boolean column: ``true`` (any case) or anything else false."""
    return text.strip().lower() == "true"


def parse_decimal(text: Any, precision: int, scale: int) -> decimal.Decimal | None:
    """The value rounded to ``scale``; None when it does not fit ``precision`` (Flink's
    ``DecimalData.fromBigDecimal`` gives null then)."""
    value = decimal.Decimal(str(text).strip())
    if not value.is_finite():
        raise ValueError(f"'{text}' is not a decimal")
    quantized = value.quantize(decimal.Decimal(1).scaleb(-scale), rounding=decimal.ROUND_HALF_UP)
    if quantized.adjusted() >= precision - scale:
        return None
    return quantized


def parse_bytes(text: str) -> bytes:
    return base64.b64decode(text.strip(), validate=True)


__all__ = [
    "bytes_text", "date_text", "decimal_text", "java_double", "java_float", "parse_boolean",
    "parse_bytes", "parse_date", "parse_decimal", "parse_time", "parse_timestamp",
    "time_text", "timestamp_text",
]
