"""The datagen connector's value generators, one per column, built from the column's type and
its ``fields.<name>.*`` options (Flink's ``RandomGeneratorVisitor`` / ``SequenceGeneratorVisitor``).

A **sequence** column (``kind = sequence``; numeric and character types, as in Flink) numbers
the rows: row ``k`` of a split with offset ``i`` and stride ``p`` holds ``start + i + k * p``
(Flink's ``SequenceGenerator`` deals the range ``start..end`` out to the subtasks that way), as
the column's type: ``int``, ``float``, ``Decimal`` with the column's scale, ``str``. A batch of
a sequence column is a ``range`` mapped by a C function, so no Python code runs per value.

A **random** column (the default) draws each value from the column's own ``random.Random``:
numbers uniformly in ``min..max`` (the type's range by default), strings of ``length`` hex
digits (100 by default; ``var-len`` draws the length in 1..length; CHAR(n) has n), bytes,
booleans, DATE today, TIME now, TIMESTAMP / TIMESTAMP_LTZ now minus up to ``max-past``
(milliseconds, as Flink: naive datetimes in UTC), ARRAY / MULTISET / MAP of ``length`` (3 by
default) elements generated with the same options, ROW fields with the options
``fields.<name>.<field>.*``; ``null-rate`` is the chance of a NULL per value. A column's values
depend only on its generator's state, which the source checkpoints, so a restored split goes
on with the same values it would have produced.

Pure values and functions; generators run on the source subtask's task thread.
"""

from __future__ import annotations

import datetime
import decimal
import random
from collections.abc import Callable, Iterable
from typing import Any

from flintlock.common.types import row_of
from flintlock.table import types as t
from flintlock.table.connectors._options import Options
from flintlock.table.errors import ValidationError

Draw = Callable[[random.Random], Any]

_INT_RANGES: dict[type, tuple[int, int]] = {
    t.TinyIntType: (-2 ** 7, 2 ** 7 - 1),
    t.SmallIntType: (-2 ** 15, 2 ** 15 - 1),
    t.IntType: (-2 ** 31, 2 ** 31 - 1),
    t.BigIntType: (-2 ** 63, 2 ** 63 - 1),
}
_FLOAT_RANGES: dict[type, tuple[float, float]] = {
    t.FloatType: (1.401298464324817e-45, 3.4028234663852886e38),
    t.DoubleType: (5e-324, 1.7976931348623157e308),
}
_STRING_TYPES = (t.CharType, t.VarCharType)
_BINARY_TYPES = (t.BinaryType, t.VarBinaryType)
DEFAULT_LENGTH = 100
DEFAULT_COLLECTION_LENGTH = 3
_EPOCH = datetime.datetime(1970, 1, 1)


def type_name(data_type: t.DataType) -> str:
    return t.sql_string(data_type).replace(" NOT NULL", "")


def _option(name: str, suffix: str) -> str:
    return f"fields.{name}.{suffix}"


# -- sequence ------------------------------------------------------------------------------------

def sequence_converter(name: str, data_type: t.DataType) -> Callable[[range], Iterable[Any]]:
    """How a range of sequence numbers becomes the column's values."""
    if type(data_type) in _INT_RANGES:
        return lambda numbers: numbers
    if isinstance(data_type, (t.FloatType, t.DoubleType)):
        return lambda numbers: map(float, numbers)
    if isinstance(data_type, t.DecimalType):
        quantum = decimal.Decimal(1).scaleb(-data_type.scale)
        return lambda numbers: [decimal.Decimal(n).quantize(quantum) for n in numbers]
    if isinstance(data_type, _STRING_TYPES):
        return lambda numbers: map(str, numbers)
    raise ValidationError(
        f"Unsupported type: {type_name(data_type)} for the sequence generator of field "
        f"'{name}'. The sequence generator supports TINYINT, SMALLINT, INT, BIGINT, FLOAT, "
        "DOUBLE, DECIMAL, CHAR, VARCHAR and STRING.")


def sequence_bounds(name: str, data_type: t.DataType, options: Options) -> tuple[int, int]:
    bounds = []
    for key in ("start", "end"):
        option = _option(name, key)
        if not options.has(option):
            raise ValidationError(
                f"Could not find required property '{option}' for sequence generator.")
        text = options.raw[option].strip()
        try:
            bounds.append(int(decimal.Decimal(text)))
        except decimal.InvalidOperation:
            raise ValidationError(f"Could not parse value '{text}' for key '{option}'.") from None
    start, end = bounds
    if end < start:
        raise ValidationError(
            f"The sequence generator of field '{name}' has an end ({end}) smaller than its "
            f"start ({start}).")
    return start, end


# -- random ---------------------------------------------------------------------------------------

def random_draw(name: str, data_type: t.DataType, options: Options) -> Draw:
    """A function drawing one value of ``data_type`` (never NULL) from a ``Random``."""
    kind = type(data_type)
    if kind is t.BooleanType:
        return lambda rng: rng.random() < 0.5
    if kind in _INT_RANGES:
        low, high = _bounds(name, options, *_INT_RANGES[kind], parse=int)
        return lambda rng: rng.randint(low, high)
    if kind in _FLOAT_RANGES:
        flow, fhigh = _bounds(name, options, *_FLOAT_RANGES[kind], parse=float)
        return lambda rng: rng.uniform(flow, fhigh)
    if isinstance(data_type, t.DecimalType):
        return _decimal_draw(name, data_type, options)
    if isinstance(data_type, _STRING_TYPES):
        return _text_draw(name, data_type, options, lambda rng, n: rng.randbytes(
            (n + 1) // 2).hex()[:n])
    if isinstance(data_type, _BINARY_TYPES):
        return _text_draw(name, data_type, options, lambda rng, n: rng.randbytes(n))
    return _temporal_or_nested_draw(name, data_type, options)


def _bounds(name: str, options: Options, low: Any, high: Any, parse: Callable[[str], Any]
            ) -> tuple[Any, Any]:
    found = []
    for key, default in (("min", low), ("max", high)):
        option = _option(name, key)
        text = options.raw.get(option)
        if text is None:
            found.append(default)
            continue
        try:
            found.append(parse(text.strip()))
        except (ValueError, decimal.InvalidOperation):
            raise ValidationError(f"Could not parse value '{text}' for key '{option}'.") from None
    if found[1] < found[0]:
        raise ValidationError(
            f"The random generator of field '{name}' has a max ({found[1]}) smaller than its "
            f"min ({found[0]}).")
    return found[0], found[1]


def _decimal_draw(name: str, data_type: t.DecimalType, options: Options) -> Draw:
    largest = decimal.Decimal(10) ** (data_type.precision - data_type.scale) - (
        decimal.Decimal(1).scaleb(-data_type.scale))
    low, high = _bounds(name, options, -largest, largest, parse=decimal.Decimal)
    quantum = decimal.Decimal(1).scaleb(-data_type.scale)
    flow, span = float(low), float(high - low)

    def draw(rng: random.Random) -> decimal.Decimal:
        value = decimal.Decimal(flow + span * rng.random()).quantize(
            quantum, rounding=decimal.ROUND_HALF_UP)
        bounded: decimal.Decimal = min(max(value, low), high)
        return bounded
    return draw


def _text_draw(name: str, data_type: Any, options: Options,
               make: Callable[[random.Random, int], Any]) -> Draw:
    fixed = isinstance(data_type, (t.CharType, t.BinaryType))
    declared = data_type.length
    option = _option(name, "length")
    if fixed:
        if options.has(option):
            raise ValidationError(
                f"Custom length for fixed-length type (CHAR/BINARY) field '{name}' is not "
                "supported.")
        length = declared
    else:
        length = options.get_int(option, min(DEFAULT_LENGTH, declared))
        assert length is not None
        if length > declared:
            raise ValidationError(
                f"Custom length '{length}' for variable-length type (VARCHAR/STRING/VARBINARY/"
                f"BYTES) field '{name}' should be shorter than '{declared}' defined in the "
                "schema.")
    if options.get_bool(_option(name, "var-len"), False):
        if fixed:
            raise ValidationError(
                f"Only supports specifying variable-length for variable types (VARCHAR/STRING/"
                f"VARBINARY/BYTES), field '{name}' is {type_name(data_type)}.")
        return lambda rng: make(rng, rng.randint(1, length)) if length > 0 else make(rng, 0)
    return lambda rng: make(rng, length)


def _temporal_or_nested_draw(name: str, data_type: t.DataType, options: Options) -> Draw:
    if isinstance(data_type, t.DateType):
        return lambda rng: datetime.date.today()
    if isinstance(data_type, t.TimeType):
        return lambda rng: _now_time()
    if isinstance(data_type, (t.TimestampType, t.LocalZonedTimestampType)):
        past = options.get_duration_ms(_option(name, "max-past"), 0) or 0
        return lambda rng: _timestamp(rng, past)
    length = options.get_int(_option(name, "length"), DEFAULT_COLLECTION_LENGTH) or 0
    if isinstance(data_type, t.ArrayType):
        element = nullable_draw(name, data_type.element_type, options)
        return lambda rng: [element(rng) for _ in range(length)]
    if isinstance(data_type, t.MultisetType):
        member = nullable_draw(name, data_type.element_type, options)
        return lambda rng: _multiset([member(rng) for _ in range(length)])
    if isinstance(data_type, t.MapType):
        key = random_draw(name, data_type.key_type, options)
        value = nullable_draw(name, data_type.value_type, options)
        return lambda rng: {key(rng): value(rng) for _ in range(length)}
    if isinstance(data_type, t.RowType):
        names = list(data_type.names)
        draws = [nullable_draw(f"{name}.{f.name}", f.data_type, options)
                 for f in data_type.fields]
        return lambda rng: row_of([draw(rng) for draw in draws], fields=names)
    raise ValidationError(
        f"Unsupported type: {type_name(data_type)} for the random generator of field "
        f"'{name}'.")


def _now_time() -> datetime.time:
    now = datetime.datetime.now().time()
    return now.replace(microsecond=now.microsecond // 1000 * 1000)  # milliseconds, as Flink


def _timestamp(rng: random.Random, past_ms: int) -> datetime.datetime:
    now_ms = int(datetime.datetime.now(datetime.UTC).timestamp() * 1000)
    millis = now_ms - (rng.randint(0, past_ms) if past_ms > 0 else 0)
    return _EPOCH + datetime.timedelta(milliseconds=millis)


def _multiset(members: list[Any]) -> dict[Any, int]:
    counts: dict[Any, int] = {}
    for member in members:
        counts[member] = counts.get(member, 0) + 1
    return counts


def nullable_draw(name: str, data_type: t.DataType, options: Options) -> Draw:
    """``random_draw`` with the field's ``null-rate`` (Flink's default 0: never NULL)."""
    draw = random_draw(name, data_type, options)
    rate = options.get_float(_option(name, "null-rate"), 0.0) or 0.0
    if not 0.0 <= rate <= 1.0:
        raise ValidationError(
            f"The null-rate of field '{name}' must be between 0 and 1, got {rate}.")
    if rate == 0.0:
        return draw
    return lambda rng: None if rng.random() < rate else draw(rng)


def random_column(draw: Draw, rng: random.Random, count: int) -> list[Any]:
    return [draw(rng) for _ in range(count)]


__all__ = ["nullable_draw", "random_column", "sequence_bounds", "sequence_converter"]
