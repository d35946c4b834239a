"""How ``DataStream.print()`` shows a record of a *declared* type: as PyFlink does, with the
Java value's ``toString`` — PyFlink hands declared types to Java before printing.

``(k1,1)`` for a TUPLE, ``{k1=1}`` for a MAP, ``[1, 2]`` for a LIST, ``true``/``false`` for a
BOOLEAN, ``null`` for None, floats as Java's ``Double.toString``, an INSTANT in ISO-8601
(``2023-11-14T22:13:20.123Z``), a ROW as Java's ``Row.toString`` (``+I[a, 1]``). A ROW that is
the record itself prints as PyFlink 2.3.0 prints it (``print_string``): its fields with Python's
``str``, joined by ``,`` (``+I[n1,2]``, ``+I[Row(a='q', b=2.5),False]``), while rows nested in
a list keep Java's form. Records of no declared type (pickled objects) print with Python's
``str``, as in PyFlink.

Pure functions over values and ``TypeInformation``; no state.
"""

from __future__ import annotations

import decimal
import math
from typing import Any

from flintlock.common.time import Instant
from flintlock.common.typeinfo import (
    BasicTypeInfo,
    MapTypeInfo,
    RowTypeInfo,
    TupleTypeInfo,
    TypeInformation,
    _SequenceTypeInfo,
)
from flintlock.common.types import Row


def java_string(value: Any, type_info: TypeInformation | None, nested: bool = False) -> str:
    """``value`` as Java would print it for ``type_info`` (``str`` when not declared); a row
    ``nested`` in a list, tuple, map or row prints as Java's ``Row.toString`` (``+I[a, 1]``),
    a top-level one as PyFlink writes it (``+I[a,1]``)."""
    if value is None:
        return "null"
    if type_info is None:
        return str(value)
    if isinstance(type_info, RowTypeInfo):
        return _row(value, type_info, ", " if nested else ",")
    if isinstance(type_info, TupleTypeInfo):
        types = type_info.get_field_types()
        return "(" + ",".join(java_string(v, t, True)
                              for v, t in zip(value, types, strict=False)) + ")"
    if isinstance(type_info, MapTypeInfo):
        return "{" + ", ".join(
            f"{java_string(k, type_info.key_type, True)}="
            f"{java_string(v, type_info.value_type, True)}"
            for k, v in value.items()) + "}"
    if isinstance(type_info, _SequenceTypeInfo):
        return "[" + ", ".join(java_string(v, type_info.element_type, True)
                               for v in value) + "]"
    if isinstance(type_info, BasicTypeInfo):
        return _scalar(value)
    return str(value)


def print_string(value: Any, type_info: TypeInformation | None) -> str:
    """What PyFlink's print sink shows for a record of ``type_info`` (module docstring)."""
    if isinstance(type_info, RowTypeInfo) and value is not None:
        kind, fields = _kind_and_fields(value)
        return f"{kind}[" + ",".join("null" if v is None else str(v) for v in fields) + "]"
    return java_string(value, type_info)


def _kind_and_fields(value: Any) -> tuple[str, list[Any]]:
    kind = value.get_row_kind().short_string() if isinstance(value, Row) else "+I"
    fields = list(value) if not isinstance(value, dict) else list(value.values())
    return kind, fields


def _row(value: Any, type_info: RowTypeInfo, separator: str) -> str:
    kind, fields = _kind_and_fields(value)
    types = type_info.get_field_types()
    return f"{kind}[" + separator.join(
        java_string(v, t, True) for v, t in zip(fields, types, strict=False)) + "]"


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return _java_double(value)
    if isinstance(value, Instant):
        return _java_instant(value)
    return str(value)


def _java_instant(value: Instant) -> str:
    """Java's Instant.toString (ISO-8601 in UTC): ``2023-11-14T22:13:20.123Z``; the fraction
    in groups of three digits, as many as needed; years past 9999 with a ``+``."""
    days, second_of_day = divmod(value.seconds, 86_400)
    year, month, day = _civil_from_days(days)
    hour, rest = divmod(second_of_day, 3600)
    minute, second = divmod(rest, 60)
    if year > 9999:
        year_text = f"+{year}"
    elif year < 0:
        year_text = f"-{-year:04d}"
    else:
        year_text = f"{year:04d}"
    text = f"{year_text}-{month:02d}-{day:02d}T{hour:02d}:{minute:02d}:{second:02d}"
    nanos = value.nanos
    if nanos:
        digits = f"{nanos:09d}"
        while digits.endswith("000"):
            digits = digits[:-3]
        text += "." + digits
    return text + "Z"


def _civil_from_days(days: int) -> tuple[int, int, int]:
    """(year, month, day) of the proleptic Gregorian calendar, ``days`` after 1970-01-01
    (counting in 400-year eras of 146,097 days, years starting on March 1st)."""
    shifted = days + 719_468  # days since 0000-03-01
    era = shifted // 146_097
    day_of_era = shifted - era * 146_097
    year_of_era = (day_of_era - day_of_era // 1460 + day_of_era // 36_524
                   - day_of_era // 146_096) // 365
    day_of_year = day_of_era - (365 * year_of_era + year_of_era // 4 - year_of_era // 100)
    month_index = (5 * day_of_year + 2) // 153  # 0 = March
    day = day_of_year - (153 * month_index + 2) // 5 + 1
    month = month_index + 3 if month_index < 10 else month_index - 9
    year = year_of_era + era * 400 + (1 if month <= 2 else 0)
    return year, month, day


def _java_double(value: float) -> str:
    """Java's Double.toString: the shortest digits, in plain notation for magnitudes in
    [1e-3, 1e7) (``1.0``, ``1.5``) and in computerized scientific notation otherwise
    (``1.0E20``, ``1.2345678E7``, ``1.0E-5``), ``NaN``, ``Infinity``."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    magnitude = abs(value)
    if magnitude == 0 or 1e-3 <= magnitude < 1e7:
        text = repr(value)
        return text if "." in text else text + ".0"
    shortest = decimal.Decimal(repr(value)).normalize()
    sign, digits, _ = shortest.as_tuple()
    text = "".join(map(str, digits))
    mantissa = text[0] + "." + (text[1:] or "0")
    return f"{'-' if sign else ''}{mantissa}E{shortest.adjusted()}"
