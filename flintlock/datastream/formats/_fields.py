"""Field conversions shared by the row formats: a declared field type to and from the values
JSON holds (``to_json`` / ``from_json``) and to and from text (``to_text`` / ``from_text``,
CSV). Built once per schema from its ``RowTypeInfo`` (``converters``); a type a format cannot
hold is a ``TypeError`` when the schema is built, a value that does not fit its type a
``FormatParseError`` naming the field.

Representations: integers and floats as numbers; BIG_DEC as a decimal string in JSON (read back
from a number or a string, exactly, as ``decimal.Decimal``) and as text in CSV; BOOLEAN as
``true``/``false``; dates, times and timestamps in ISO 8601 (``datetime.isoformat``); ROW as a
JSON object, arrays and LIST as JSON arrays, MAP as a JSON object (keys as text). Nothing here
owns state; schemas use it from any thread.
"""

from __future__ import annotations

import datetime
import decimal
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from flintlock.common.errors import FlintlockError
from flintlock.common.typeinfo import (
    BasicType,
    BasicTypeInfo,
    MapTypeInfo,
    RowTypeInfo,
    SqlTimeType,
    SqlTimeTypeInfo,
    TypeInformation,
)
from flintlock.common.types import Row


class FormatParseError(FlintlockError, ValueError):
    """Input that does not fit the declared row type: names the field and the reason."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(field, reason)
        self.field, self.reason = field, reason

    def __str__(self) -> str:
        return f"field {self.field!r}: {self.reason}"


_INT_BITS = {BasicType.BYTE: 8, BasicType.SHORT: 16, BasicType.INT: 32, BasicType.LONG: 64}


def _checked_int(basic: BasicType) -> Callable[[Any], int]:
    bits = _INT_BITS.get(basic)

    def parse(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"expected an integer, got {value!r}")
        if bits is not None and not -(1 << (bits - 1)) <= value < (1 << (bits - 1)):
            raise ValueError(f"{value} does not fit {bits} bits")
        return value

    return parse


def _as_float(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, decimal.Decimal)):
        raise ValueError(f"expected a number, got {value!r}")
    return float(value)


def _as_decimal(value: Any) -> decimal.Decimal:
    if isinstance(value, bool) or not isinstance(value, (str, int, float, decimal.Decimal)):
        raise ValueError(f"expected a decimal number, got {value!r}")
    try:
        return decimal.Decimal(value)
    except decimal.InvalidOperation:
        raise ValueError(f"not a decimal number: {value!r}") from None


def _as_str(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"expected a string, got {value!r}")
    return value


def _as_char(value: Any) -> str:
    if not isinstance(value, str) or len(value) != 1:
        raise ValueError(f"expected one character, got {value!r}")
    return value


def _as_bool(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"expected true or false, got {value!r}")
    return value


def _bool_text(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered not in ("true", "false"):
        raise ValueError(f"expected true or false, got {text!r}")
    return lowered == "true"


_TIME_PARSERS: dict[SqlTimeType, Callable[[str], Any]] = {
    SqlTimeType.DATE: datetime.date.fromisoformat,
    SqlTimeType.LOCAL_DATE: datetime.date.fromisoformat,
    SqlTimeType.TIME: datetime.time.fromisoformat,
    SqlTimeType.LOCAL_TIME: datetime.time.fromisoformat,
    SqlTimeType.TIMESTAMP: datetime.datetime.fromisoformat,
    SqlTimeType.LOCAL_DATE_TIME: datetime.datetime.fromisoformat,
}


@dataclass(frozen=True, slots=True)
class Converter:
    """One field type's conversions (None passes through every one of them)."""

    from_json: Callable[[Any], Any]
    to_json: Callable[[Any], Any]
    from_text: Callable[[str], Any] | None  # None: the type has no CSV text form
    to_text: Callable[[Any], str] | None


def _same(value: Any) -> Any:
    return value


def _basic(basic: BasicType) -> Converter:
    if basic in _INT_BITS or basic is BasicType.BIG_INT:
        check = _checked_int(basic)
        return Converter(check, _same, lambda t: check(int(t)), str)
    if basic in (BasicType.FLOAT, BasicType.DOUBLE):
        return Converter(_as_float, _finite, lambda t: _as_float(float(t)), repr)
    if basic is BasicType.BIG_DEC:
        return Converter(_as_decimal, str, _as_decimal, str)
    if basic is BasicType.BOOLEAN:
        return Converter(_as_bool, _same, _bool_text, lambda v: "true" if v else "false")
    if basic is BasicType.STRING:
        return Converter(_as_str, _same, _same, _same)
    if basic is BasicType.CHAR:
        return Converter(_as_char, _same, _as_char, _same)
    raise TypeError(f"the row formats do not support {basic.value} fields")


def _finite(value: float) -> float:
    if math.isnan(value) or math.isinf(value):
        raise ValueError(f"JSON has no {value}")
    return value


def _time(time_type: SqlTimeType) -> Converter:
    parse = _TIME_PARSERS[time_type]

    def from_text(text: Any) -> Any:
        if not isinstance(text, str):
            raise ValueError(f"expected an ISO 8601 string, got {text!r}")
        try:
            return parse(text)
        except ValueError:
            raise ValueError(f"not an ISO 8601 {time_type.value}: {text!r}") from None

    def to_text(value: Any) -> str:
        return str(value.isoformat())

    return Converter(from_text, to_text, from_text, to_text)


def converter(type_info: TypeInformation, *, nested: bool = True) -> Converter:
    """The conversions of one field type (``nested=False``: CSV, scalars and arrays of
    scalars only)."""
    if isinstance(type_info, BasicTypeInfo):
        return _basic(type_info.basic_type)
    if isinstance(type_info, SqlTimeTypeInfo):
        return _time(type_info.time_type)
    if isinstance(type_info, RowTypeInfo) and nested:
        return _row(type_info)
    if isinstance(type_info, MapTypeInfo) and nested:
        return _map(type_info)
    element = getattr(type_info, "element_type", None)
    if element is not None:
        return _array(converter(element, nested=nested))
    raise TypeError(f"the row formats do not support {type_info!r} fields"
                    + ("" if nested else " in CSV"))


def _array(inner: Converter) -> Converter:
    def from_json(value: Any) -> list[Any]:
        if not isinstance(value, list):
            raise ValueError(f"expected an array, got {value!r}")
        return [None if v is None else inner.from_json(v) for v in value]

    def to_json(value: Any) -> list[Any]:
        return [None if v is None else inner.to_json(v) for v in value]

    return Converter(from_json, to_json, None, None)


def _map(type_info: MapTypeInfo) -> Converter:
    keys, values = converter(type_info.key_type), converter(type_info.value_type)
    if keys.from_text is None or keys.to_text is None:
        raise TypeError(f"MAP keys must be scalars in the row formats, got {type_info!r}")
    key_from, key_to = keys.from_text, keys.to_text

    def from_json(value: Any) -> dict[Any, Any]:
        if not isinstance(value, dict):
            raise ValueError(f"expected an object, got {value!r}")
        return {key_from(k): None if v is None else values.from_json(v) for k, v in value.items()}

    def to_json(value: Any) -> dict[str, Any]:
        return {key_to(k): None if v is None else values.to_json(v) for k, v in value.items()}

    return Converter(from_json, to_json, None, None)


def _row(type_info: RowTypeInfo) -> Converter:
    names = type_info.get_field_names()
    fields = [converter(t) for t in type_info.get_field_types()]

    def from_json(value: Any) -> Row:
        if not isinstance(value, dict):
            raise ValueError(f"expected an object, got {value!r}")
        return row_of(names, [None if value.get(n) is None else c.from_json(value[n])
                              for n, c in zip(names, fields, strict=True)])

    def to_json(value: Any) -> dict[str, Any]:
        return {n: None if v is None else c.to_json(v)
                for n, c, v in zip(names, fields, list(value), strict=True)}

    return Converter(from_json, to_json, None, None)


def text_form(type_info: Any, array_delimiter: str) -> Converter:
    """A CSV column's text conversions: a scalar's, or an array of scalars joined by
    ``array_delimiter`` (empty: the column holds one element)."""
    element = getattr(type_info, "element_type", None)
    field = converter(element if element is not None else type_info, nested=False)
    if field.from_text is None or field.to_text is None:
        raise TypeError(f"CSV columns are scalars or arrays of scalars, got {type_info!r}")
    if element is None:
        return field
    return _joined(field, array_delimiter)


def _joined(element: Converter, delimiter: str) -> Converter:
    parse, show = element.from_text, element.to_text
    assert parse is not None and show is not None

    def from_text(text: str) -> list[Any]:
        if not text:
            return []
        return [parse(part) for part in text.split(delimiter)] if delimiter else [parse(text)]

    def to_text(values: Any) -> str:
        texts = []
        for value in values:
            if value is None:
                raise ValueError("a CSV array cannot hold a null element")
            text = show(value)
            if delimiter and delimiter in text:
                raise ValueError(f"array element {text!r} contains the delimiter {delimiter!r}")
            texts.append(text)
        if not delimiter and len(texts) > 1:
            raise ValueError("an array column without an element separator holds one element")
        return delimiter.join(texts)

    return Converter(from_text, to_text, from_text, to_text)


def is_string_type(type_info: Any) -> bool:
    return repr(type_info) == "Types.STRING()"


def row_of(names: list[str], values: list[Any]) -> Row:
    row = Row(*values)
    row.set_field_names(names)
    return row


def row_type(type_info: Any, what: str) -> RowTypeInfo:
    if not isinstance(type_info, RowTypeInfo):
        raise TypeError(f"{what} needs a row type (Types.ROW_NAMED([...], [...])), got "
                        f"{type_info!r}")
    return type_info
