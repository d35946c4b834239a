"""Python implementations of the SQL built-in functions that are more than one operator.

Compiled expressions (``codegen.compiler``) call these by name; the simple ones (arithmetic,
comparison, ``UPPER``) are inlined as Python operators instead. Every function here receives
non-NULL arguments only, unless its name ends in ``_n`` (the compiler checks NULLs before the
call for the strict ones). Semantics follow Flink's runtime where a program can see them: Java's
integer division and remainder (truncating toward zero), 1-based string positions, ``LIKE``
with ``%``/``_`` and an escape character, JSON_VALUE's lax path mode returning NULL on a missing
path, ``CAST`` texts as Flink writes them.

Pure functions; imported on the TaskManagers by the compiled code, so this module imports only
the standard library and ``flintlock.common``.
"""

from __future__ import annotations

import datetime
import decimal
import functools
import hashlib
import json
import math
import re
from typing import Any

from flintlock.common.print_format import _java_double
from flintlock.common.types import RowKind

_INSERT = RowKind.INSERT


class SqlRuntimeError(ArithmeticError):
    """An error a SQL function raises at run time (Flink's runtime raises it too)."""


# -- arithmetic -------------------------------------------------------------------------------

def int_div(a: int, b: int) -> int:
    """Java's integer division: truncates toward zero; division by zero is an error."""
    if b == 0:
        raise SqlRuntimeError("/ by zero")
    quotient = abs(a) // abs(b)
    return quotient if (a >= 0) == (b >= 0) else -quotient


def int_mod(a: int, b: int) -> int:
    """Java's remainder: the sign of the dividend."""
    if b == 0:
        raise SqlRuntimeError("/ by zero")
    remainder = abs(a) % abs(b)
    return remainder if a >= 0 else -remainder


def float_div(a: float, b: float) -> float:
    if b == 0:
        if a == 0 or math.isnan(a):
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


def decimal_div(a: Any, b: Any, scale: int) -> decimal.Decimal:
    if b == 0:
        raise SqlRuntimeError("Division by zero")
    return quantize(decimal.Decimal(a) / decimal.Decimal(b), scale)


_EXPONENTS = {scale: decimal.Decimal(1).scaleb(-scale) for scale in range(39)}


def quantize(value: Any, scale: int) -> decimal.Decimal:
    """A DECIMAL value at ``scale`` digits, rounded half up as Java's BigDecimal does."""
    exponent = _EXPONENTS.get(scale)
    if exponent is None:
        exponent = decimal.Decimal(1).scaleb(-scale)
    number: decimal.Decimal = value if type(value) is decimal.Decimal else decimal.Decimal(value)
    return number.quantize(exponent, rounding=decimal.ROUND_HALF_UP)


def sql_round(value: Any, digits: int = 0) -> Any:
    """ROUND: half away from zero (Java's HALF_UP); integers stay integers."""
    if isinstance(value, int):
        if digits >= 0:
            return value
        factor = 10 ** (-digits)
        return int(decimal.Decimal(value / factor).quantize(
            decimal.Decimal(1), rounding=decimal.ROUND_HALF_UP)) * factor
    if isinstance(value, decimal.Decimal):
        return quantize(value, digits)
    if math.isnan(value) or math.isinf(value):
        return value
    return float(decimal.Decimal(repr(value)).quantize(
        decimal.Decimal(1).scaleb(-digits), rounding=decimal.ROUND_HALF_UP))


def sql_floor(value: Any) -> Any:
    return value if isinstance(value, int) else (
        value.to_integral_value(decimal.ROUND_FLOOR) if isinstance(value, decimal.Decimal)
        else float(math.floor(value)))


def sql_ceil(value: Any) -> Any:
    return value if isinstance(value, int) else (
        value.to_integral_value(decimal.ROUND_CEILING) if isinstance(value, decimal.Decimal)
        else float(math.ceil(value)))


def sql_power(a: float, b: float) -> float:
    return float(math.pow(a, b))


def sql_log(a: float, b: float | None = None) -> float:
    return math.log(b) / math.log(a) if b is not None else math.log(a)


# -- strings ----------------------------------------------------------------------------------

def substring(text: str, start: int, length: int | None = None) -> str:
    """SUBSTRING(s FROM start [FOR length]), 1-based; a start of 0 or less counts as 1 but
    shortens the length as the SQL standard says."""
    if length is not None and length < 0:
        raise SqlRuntimeError(f"negative substring length not allowed: {length}")
    begin = start - 1 if start > 0 else (len(text) + start if start < 0 else 0)
    begin = max(begin, 0)
    if length is None:
        return text[begin:]
    return text[begin:begin + length]


def position(needle: str, haystack: str) -> int:
    return haystack.find(needle) + 1


def locate(needle: str, haystack: str, start: int = 1) -> int:
    return haystack.find(needle, max(start - 1, 0)) + 1


def trim(text: str, characters: str = " ", leading: bool = True, trailing: bool = True) -> str:
    if leading:
        text = text.lstrip(characters)
    if trailing:
        text = text.rstrip(characters)
    return text


def lpad(text: str, length: int, pad: str) -> str | None:
    if length < 0:
        return None
    if len(text) >= length:
        return text[:length]
    if not pad:
        return None
    fill = (pad * length)[: length - len(text)]
    return fill + text


def rpad(text: str, length: int, pad: str) -> str | None:
    if length < 0:
        return None
    if len(text) >= length:
        return text[:length]
    if not pad:
        return None
    return text + (pad * length)[: length - len(text)]


def initcap(text: str) -> str:
    return re.sub(r"[A-Za-z0-9]+", lambda m: m.group(0)[0].upper() + m.group(0)[1:].lower(),
                  text)


def concat_ws_n(separator: str | None, *parts: str | None) -> str | None:
    """CONCAT_WS skips NULL parts; a NULL separator gives NULL."""
    if separator is None:
        return None
    return separator.join(p for p in parts if p is not None)


def split_index(text: str, separator: str, index: int) -> str | None:
    if index < 0:
        return None
    parts = text.split(separator) if separator else [text]
    return parts[index] if index < len(parts) else None


def pad_char(text: str, length: int) -> str:
    """A CHAR(n) value: padded with spaces to its length."""
    return text.ljust(length) if len(text) < length else text


@functools.lru_cache(maxsize=256)
def _like_regex(pattern: str, escape: str | None) -> re.Pattern[str]:
    out = []
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if escape is not None and char == escape and index + 1 < len(pattern):
            out.append(re.escape(pattern[index + 1]))
            index += 2
            continue
        out.append(".*" if char == "%" else "." if char == "_" else re.escape(char))
        index += 1
    return re.compile("".join(out), re.DOTALL)


def like(text: str, pattern: str, escape: str | None = None) -> bool:
    return _like_regex(pattern, escape).fullmatch(text) is not None


@functools.lru_cache(maxsize=256)
def _similar_regex(pattern: str) -> re.Pattern[str]:
    translated = pattern.replace("%", ".*").replace("_", ".")
    return re.compile(translated, re.DOTALL)


def similar(text: str, pattern: str) -> bool:
    return _similar_regex(pattern).fullmatch(text) is not None


@functools.lru_cache(maxsize=256)
def _regex(pattern: str) -> re.Pattern[str]:
    return re.compile(_java_regex(pattern))


def _java_regex(pattern: str) -> str:
    return pattern.replace("\\p{Alpha}", "[A-Za-z]").replace("\\p{Digit}", "[0-9]")


def regexp(text: str, pattern: str) -> bool:
    return _regex(pattern).search(text) is not None


def regexp_replace(text: str, pattern: str, replacement: str) -> str:
    python_replacement = re.sub(r"\$(\d+)", r"\\\1", replacement)
    return _regex(pattern).sub(python_replacement, text)


def regexp_extract(text: str, pattern: str, index: int = 1) -> str | None:
    match = _regex(pattern).search(text)
    if match is None or index > (match.re.groups or 0):
        return None
    return match.group(index)


def md5(text: str) -> str:
    return hashlib.md5(text.encode("utf-8")).hexdigest()


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def sha1(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def java_hash_code(value: Any) -> int:
    """Java's String.hashCode (HASH_CODE of a string)."""
    if isinstance(value, str):
        h = 0
        for char in value.encode("utf-16-be").decode("utf-16-be"):
            h = (31 * h + ord(char)) & 0xFFFFFFFF
        return h - (1 << 32) if h >= (1 << 31) else h
    if isinstance(value, bool):
        return 1231 if value else 1237
    if isinstance(value, int):
        value &= 0xFFFFFFFFFFFFFFFF
        folded = (value ^ (value >> 32)) & 0xFFFFFFFF
        return int(folded - (1 << 32) if folded >= (1 << 31) else folded)
    return hash(value) & 0x7FFFFFFF


# -- JSON -------------------------------------------------------------------------------------

_PATH_PART = re.compile(r"\.(\w+)|\['([^']*)'\]|\[(\d+)\]|\.\"([^\"]*)\"")


@functools.lru_cache(maxsize=256)
def _json_path(path: str) -> tuple[Any, ...] | None:
    text = path.strip()
    for prefix in ("lax ", "strict "):
        if text.startswith(prefix):
            text = text[len(prefix):].strip()
    if not text.startswith("$"):
        return None
    steps: list[Any] = []
    rest = text[1:]
    while rest:
        match = _PATH_PART.match(rest)
        if match is None:
            return None
        name, quoted, index, dquoted = match.groups()
        steps.append(int(index) if index is not None else (name or quoted or dquoted))
        rest = rest[match.end():]
    return tuple(steps)


def _json_lookup(text: str, path: str) -> tuple[bool, Any]:
    steps = _json_path(path)
    if steps is None:
        return False, None
    try:
        value = json.loads(text)
    except ValueError:
        return False, None
    for step in steps:
        if isinstance(step, int) and isinstance(value, list) and step < len(value):
            value = value[step]
        elif isinstance(step, str) and isinstance(value, dict) and step in value:
            value = value[step]
        else:
            return False, None
    return True, value


def json_value(text: str, path: str, returning: str = "STRING") -> Any:
    """JSON_VALUE: the scalar at ``path``, converted to ``returning``; NULL when the path is
    missing, the value is not a scalar or the text is not JSON (Flink's NULL ON EMPTY / NULL ON
    ERROR defaults)."""
    found, value = _json_lookup(text, path)
    if not found or value is None or isinstance(value, (dict, list)):
        return None
    try:
        if returning == "STRING":
            if isinstance(value, bool):
                return "true" if value else "false"
            if isinstance(value, float):
                return repr(value)
            return str(value)
        if returning in ("INT", "BIGINT", "SMALLINT", "TINYINT"):
            return int(value)
        if returning in ("DOUBLE", "FLOAT"):
            return float(value)
        if returning == "BOOLEAN":
            return value if isinstance(value, bool) else str(value).lower() == "true"
        if returning == "DECIMAL":
            return decimal.Decimal(str(value))
    except (TypeError, ValueError):
        return None
    return value


def json_exists(text: str, path: str) -> bool:
    return _json_lookup(text, path)[0]


def json_quote(text: str) -> str:
    return json.dumps(text)


def json_string(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


# -- casts ------------------------------------------------------------------------------------

def cast_to_string(value: Any, kind: str) -> str:
    """CAST(value AS STRING) as Flink writes a value of the family ``kind``."""
    if kind == "BOOLEAN":
        return "TRUE" if value else "FALSE"
    if kind in ("DOUBLE", "FLOAT"):
        return _java_double(float(value))
    if kind == "TIMESTAMP":
        return timestamp_string(value)
    if kind == "DATE":
        return str(value.isoformat())
    if kind == "TIME":
        return str(value.strftime("%H:%M:%S"))
    if kind == "BINARY":
        return bytes(value).decode("utf-8", errors="replace")
    return str(value)


def timestamp_string(value: datetime.datetime, precision: int | None = None) -> str:
    text = value.strftime("%Y-%m-%d %H:%M:%S")
    if precision is None:
        if value.microsecond:
            text += "." + f"{value.microsecond:06d}".rstrip("0")
    elif precision > 0:
        text += "." + f"{value.microsecond:06d}"[:precision].ljust(precision, "0")
    return text


_TRUE = frozenset({"true", "t", "yes", "y", "1"})
_FALSE = frozenset({"false", "f", "no", "n", "0"})


def cast_string_to_boolean(text: str) -> bool | None:
    lowered = text.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise SqlRuntimeError(f"Cannot cast '{text}' to BOOLEAN")


def cast_to_integer(value: Any, bits: int) -> int:
    if isinstance(value, str):
        try:
            number = int(value.strip())
        except ValueError:
            raise SqlRuntimeError(f"Cannot cast '{value}' to an integer") from None
    elif isinstance(value, bool):
        number = int(value)
    else:
        number = int(value)  # truncates toward zero, as Java's narrowing does
    limit = 1 << (bits - 1)
    return ((number + limit) % (1 << bits)) - limit


def cast_to_float(value: Any) -> float:
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            raise SqlRuntimeError(f"Cannot cast '{value}' to DOUBLE") from None
    return float(value)


def cast_to_decimal(value: Any, precision: int, scale: int) -> decimal.Decimal | None:
    if type(value) is decimal.Decimal:  # the common case: the result of DECIMAL arithmetic
        number = value
    else:
        try:
            number = decimal.Decimal(value.strip() if isinstance(value, str) else
                                     repr(value) if isinstance(value, float) else value)
        except decimal.InvalidOperation:
            raise SqlRuntimeError(f"Cannot cast '{value}' to DECIMAL") from None
    result = quantize(number, scale)
    if result.adjusted() >= precision - scale:  # integer digits: adjusted() + 1 (scale >= 0)
        return None  # Flink gives NULL for a value that does not fit
    return result


def try_call(function: Any, *args: Any) -> Any:
    """TRY_CAST: the cast, or NULL where it fails."""
    try:
        return function(*args)
    except (SqlRuntimeError, ValueError, TypeError, ArithmeticError):
        return None


def parse_timestamp(text: str, pattern: str | None = None) -> datetime.datetime | None:
    """TO_TIMESTAMP / CAST(string AS TIMESTAMP): ``yyyy-MM-dd HH:mm:ss[.fff]`` by default."""
    try:
        if pattern is None:
            return datetime.datetime.fromisoformat(text.strip().replace("T", " "))
        return datetime.datetime.strptime(text, java_pattern(pattern))
    except ValueError:
        return None


def parse_date(text: str) -> datetime.date:
    try:
        return datetime.date.fromisoformat(text.strip())
    except ValueError:
        raise SqlRuntimeError(f"Cannot cast '{text}' to DATE") from None


_JAVA_PATTERN = [("yyyy", "%Y"), ("yy", "%y"), ("MM", "%m"), ("dd", "%d"), ("HH", "%H"),
                 ("hh", "%I"), ("mm", "%M"), ("ss", "%S"), ("SSS", "%f"), ("a", "%p"),
                 ("EEE", "%a"), ("MMM", "%b")]


@functools.lru_cache(maxsize=64)
def java_pattern(pattern: str) -> str:
    """A Java SimpleDateFormat pattern as a strftime/strptime pattern."""
    out = []
    index = 0
    while index < len(pattern):
        for java, python in _JAVA_PATTERN:
            if pattern.startswith(java, index):
                out.append(python)
                index += len(java)
                break
        else:
            char = pattern[index]
            if char == "'":
                end = pattern.find("'", index + 1)
                end = len(pattern) if end < 0 else end
                out.append(pattern[index + 1:end].replace("%", "%%"))
                index = end + 1
                continue
            out.append("%%" if char == "%" else char)
            index += 1
    return "".join(out)


def date_format(value: Any, pattern: str) -> str:
    if isinstance(value, str):
        parsed = parse_timestamp(value)
        if parsed is None:
            raise SqlRuntimeError(f"Cannot parse '{value}' as a timestamp")
        value = parsed
    text = value.strftime(java_pattern(pattern))
    if "%f" in java_pattern(pattern):
        text = text.replace(f"{value.microsecond:06d}", f"{value.microsecond // 1000:03d}")
    return str(text)


def unix_timestamp(text: str | None = None, pattern: str | None = None) -> int:
    if text is None:
        return int(datetime.datetime.now().timestamp())
    parsed = parse_timestamp(text, pattern or "yyyy-MM-dd HH:mm:ss")
    if parsed is None:
        return -(1 << 63)
    return int(parsed.timestamp())


def from_unixtime(seconds: int, pattern: str = "yyyy-MM-dd HH:mm:ss") -> str:
    return datetime.datetime.fromtimestamp(seconds).strftime(java_pattern(pattern))


def extract(unit: str, value: Any) -> int:
    if unit == "EPOCH":
        return int(value.timestamp())
    if unit == "DOW":
        return int(value.isoweekday() % 7 + 1)
    if unit == "DOY":
        return int(value.timetuple().tm_yday)
    if unit == "WEEK":
        return int(value.isocalendar()[1])
    if unit == "QUARTER":
        return int((value.month - 1) // 3 + 1)
    if unit == "MILLISECOND":
        return int(value.second * 1000 + value.microsecond // 1000)
    return int(getattr(value, unit.lower()))


_UNIT_SECONDS = {"WEEK": 604800, "DAY": 86400, "HOUR": 3600, "MINUTE": 60, "SECOND": 1}


def timestamp_add(unit: str, amount: int, value: Any) -> Any:
    seconds = _UNIT_SECONDS.get(unit)
    if seconds is not None:  # the common case first: one timedelta (days 0, seconds)
        return value + datetime.timedelta(0, amount * seconds)
    if unit in ("YEAR", "MONTH", "QUARTER"):
        months = amount * {"YEAR": 12, "QUARTER": 3, "MONTH": 1}[unit]
        total = value.year * 12 + value.month - 1 + months
        year, month = divmod(total, 12)
        day = min(value.day, _days_in_month(year, month + 1))
        return value.replace(year=year, month=month + 1, day=day)
    if unit == "MILLISECOND":
        return value + datetime.timedelta(milliseconds=amount)
    raise SqlRuntimeError(f"unknown time unit {unit}")


def timestamp_diff(unit: str, start: Any, end: Any) -> int:
    """TIMESTAMPDIFF(unit, start, end): whole units from ``start`` to ``end`` (truncated toward
    zero; months and years by calendar, as Flink counts them)."""
    if unit in ("YEAR", "MONTH", "QUARTER"):
        months = (end.year - start.year) * 12 + end.month - start.month
        if months > 0 and (end.day, end.time() if hasattr(end, "time") else 0) < (
                start.day, start.time() if hasattr(start, "time") else 0):
            months -= 1
        elif months < 0 and (end.day, end.time() if hasattr(end, "time") else 0) > (
                start.day, start.time() if hasattr(start, "time") else 0):
            months += 1
        return int(months / {"YEAR": 12, "QUARTER": 3, "MONTH": 1}[unit])
    seconds = {"WEEK": 604800, "DAY": 86400, "HOUR": 3600, "MINUTE": 60, "SECOND": 1}
    delta = end - start
    if unit in seconds:
        return int(delta.total_seconds() / seconds[unit])
    if unit == "MILLISECOND":
        return int(delta.total_seconds() * 1000)
    raise SqlRuntimeError(f"unknown time unit {unit}")


def _days_in_month(year: int, month: int) -> int:
    if month == 12:
        return 31
    return (datetime.date(year, month + 1, 1) - datetime.date(year, month, 1)).days


def floor_time(value: Any, unit: str) -> Any:
    if unit == "DAY":
        return value.replace(hour=0, minute=0, second=0, microsecond=0)
    if unit == "HOUR":
        return value.replace(minute=0, second=0, microsecond=0)
    if unit == "MINUTE":
        return value.replace(second=0, microsecond=0)
    if unit == "SECOND":
        return value.replace(microsecond=0)
    if unit == "MONTH":
        return value.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    if unit == "YEAR":
        return value.replace(month=1, day=1, hour=0, minute=0, second=0, microsecond=0)
    raise SqlRuntimeError(f"unknown time unit {unit}")


def ceil_time(value: Any, unit: str) -> Any:
    """CEIL(ts TO unit): ``value`` when it is on a unit boundary, else the next boundary."""
    floored = floor_time(value, unit)
    return value if floored == value else timestamp_add(unit, 1, floored)


def rename_row(value: Any, names: list[str]) -> Any:
    """A ROW value under other field names (a cast between ROW types of the same fields)."""
    from flintlock.common.types import row_of

    return row_of(list(value), value.get_row_kind() if hasattr(value, "get_row_kind") else
                  _INSERT, list(names))


# -- conditional ------------------------------------------------------------------------------

def sql_and(*values: bool | None) -> bool | None:
    if any(v is False for v in values):
        return False
    if any(v is None for v in values):
        return None
    return True


def sql_or(*values: bool | None) -> bool | None:
    if any(v is True for v in values):
        return True
    if any(v is None for v in values):
        return None
    return False


def coalesce(*values: Any) -> Any:
    for value in values:
        if value is not None:
            return value
    return None


def greatest(*values: Any) -> Any:
    return None if any(v is None for v in values) else max(values)


def least(*values: Any) -> Any:
    return None if any(v is None for v in values) else min(values)


def element(values: list[Any]) -> Any:
    """ELEMENT: the only element of an array, NULL when empty, an error for more."""
    if not values:
        return None
    if len(values) > 1:
        raise SqlRuntimeError("Array has more than one element.")
    return values[0]


class JavaRandom:
    """``java.util.Random``: the same sequence for the same seed as Flink's ``RAND(seed)`` and
    ``RAND_INTEGER(seed, bound)`` (a linear congruential generator over 48 bits)."""

    _MULTIPLIER = 0x5DEECE66D
    _MASK = (1 << 48) - 1

    def __init__(self, seed: int) -> None:
        self.seed = (seed ^ self._MULTIPLIER) & self._MASK

    def _next(self, bits: int) -> int:
        self.seed = (self.seed * self._MULTIPLIER + 0xB) & self._MASK
        return self.seed >> (48 - bits)

    def next_double(self) -> float:
        return ((self._next(26) << 27) + self._next(27)) * (1.0 / (1 << 53))

    def next_int(self, bound: int) -> int:
        if bound <= 0:
            raise SqlRuntimeError("bound must be positive")
        r = self._next(31)
        m = bound - 1
        if bound & m == 0:
            return (bound * r) >> 31
        u = r
        while True:
            r = u % bound
            if _int32(u - r + m) >= 0:
                return r
            u = self._next(31)


def _int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= (1 << 31) else value
