"""Durations and memory sizes written as Flink writes them in a configuration.

Flink parses a duration with ``TimeUtils.parseDuration`` and a memory size with
``MemorySize.parse``: a whole number, then an optional unit label, spaces allowed between them.
flintlock reads the same text the same way:

- A duration's bare number is in the option's own unit: milliseconds for Flink's Duration
  options (and for its ``Long``/``Integer`` millisecond options such as ``heartbeat.timeout``),
  seconds for an option Flink declares as an ``Integer`` of seconds
  (``taskmanager.network.netty.client.connectTimeoutSec``). A value with a unit label is
  converted to the option's unit and must come out whole: ``1500 ms`` is not a number of
  seconds. Labels: ``d``, ``h``, ``min`` (also ``m``), ``s``, ``ms``, ``us``/``µs``, ``ns``, with
  their long forms (``day``, ``hours``, ``minute``, ``secs``, ``millis``, ``microseconds``, ...).
- A memory size's bare number is bytes; ``k``/``kb``, ``m``/``mb``, ``g``/``gb``, ``t``/``tb``
  (and ``kibibytes`` ...) are powers of 1024, as in Flink.

Invariants: a fraction (``0.4``, ``1.5 s``) is refused, never truncated or rounded, as Flink
refuses it; the error proposes the same amount in a smaller unit when there is one
(``1.5 s`` -> ``1500 ms``). A number past Flink's 64-bit range is refused. A duration longer
than 2^63 ns (about 292 years, the longest timeout a Python thread can wait on Linux) is
refused, so no configured timeout can make ``Event.wait`` raise ``OverflowError`` later. Signs:
Flink's parser has none; flintlock accepts a leading ``-`` so that options whose documented
sentinel is ``-1`` keep it, and each option's minimum refuses negatives elsewhere.

Pure functions, no state; called by ``ConfigOption.parse`` on whatever thread reads a
configuration. Errors are ``ValueError`` with the reason; the option turns them into an
``InvalidConfigValueError`` naming the key and the accepted forms.
"""

from __future__ import annotations

import re
from decimal import Decimal

NANOS_PER_UNIT: dict[str, int] = {
    "ns": 1,
    "us": 1_000,
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "min": 60_000_000_000,
    "h": 3_600_000_000_000,
    "d": 86_400_000_000_000,
}
"""The canonical time units, smallest first; an option's ``time_unit`` is one of these."""

_TIME_LABELS: dict[str, str] = {
    label: unit
    for unit, labels in {
        "ns": ("ns", "nano", "nanos", "nanosecond", "nanoseconds"),
        "us": ("us", "µs", "micro", "micros", "microsecond", "microseconds"),
        "ms": ("ms", "milli", "millis", "millisecond", "milliseconds"),
        "s": ("s", "sec", "secs", "second", "seconds"),
        "min": ("min", "mins", "minute", "minutes", "m"),
        "h": ("h", "hour", "hours"),
        "d": ("d", "day", "days"),
    }.items()
    for label in labels
}

BYTES_PER_UNIT: dict[str, int] = {"b": 1, "kb": 1 << 10, "mb": 1 << 20, "gb": 1 << 30,
                                  "tb": 1 << 40}
"""The canonical memory units, smallest first, as Flink prints them (``32 kb``)."""

_MEMORY_LABELS: dict[str, str] = {
    label: unit
    for unit, labels in {
        "b": ("b", "bytes"),
        "kb": ("k", "kb", "kibibytes"),
        "mb": ("m", "mb", "mebibytes"),
        "gb": ("g", "gb", "gibibytes"),
        "tb": ("t", "tb", "tebibytes"),
    }.items()
    for label in labels
}

LONG_MAX = 2**63 - 1
"""Flink reads both quantities into a Java ``long``."""

MAX_DURATION_NS = LONG_MAX
"""About 292 years; ``threading.TIMEOUT_MAX`` on Linux is the same 2^63 ns."""

DURATION_FORMS = "a whole number with an optional unit (d, h, min, s, ms, us, ns), e.g. '10 s'"
MEMORY_FORMS = "a whole number with an optional unit (b, kb, mb, gb, tb), e.g. '32 kb'"

_QUANTITY = re.compile(r"^\s*(-?)(\d+)(?:\.(\d+))?\s*([^\d\s.]*)\s*$")


def parse_duration(raw: object, unit: str = "ms") -> int:
    """``raw`` as a whole number of ``unit``; a bare number is already in ``unit``."""
    unit_ns = NANOS_PER_UNIT[unit]
    sign, number, label = _split(raw, "duration")
    if label and label.lower() not in _TIME_LABELS:
        raise ValueError(f"unknown time unit {label!r}")
    factor = NANOS_PER_UNIT[_TIME_LABELS[label.lower()]] if label else unit_ns
    _refuse_fraction(number, factor, unit_ns, NANOS_PER_UNIT)
    total_ns = int(number) * factor
    if total_ns > MAX_DURATION_NS:
        raise ValueError("longer than 2^63 ns (about 292 years)")
    if total_ns % unit_ns:
        raise ValueError(f"not a whole number of {unit}")
    return sign * (total_ns // unit_ns)


def parse_memory_bytes(raw: object) -> int:
    """``raw`` as a number of bytes; a bare number is bytes."""
    sign, number, label = _split(raw, "memory size")
    if sign < 0:
        raise ValueError("a memory size cannot be negative")
    if label and label.lower() not in _MEMORY_LABELS:
        raise ValueError(f"unknown memory unit {label!r}")
    factor = BYTES_PER_UNIT[_MEMORY_LABELS[label.lower()]] if label else 1
    _refuse_fraction(number, factor, 1, BYTES_PER_UNIT)
    total = int(number) * factor
    if total > LONG_MAX:
        raise ValueError("more than 2^63 - 1 bytes")
    return total


def format_duration(value: int, unit: str = "ms") -> str:
    """``value`` ``unit``s in the largest unit that keeps it whole: ``600000`` -> ``10 min``."""
    return _format(value * NANOS_PER_UNIT[unit], NANOS_PER_UNIT, NANOS_PER_UNIT[unit])


def format_memory(num_bytes: int) -> str:
    """Bytes in the largest unit that keeps them whole: ``32768`` -> ``32 kb``."""
    return _format(num_bytes, BYTES_PER_UNIT, 1)


def _split(raw: object, what: str) -> tuple[int, str, str]:
    """(sign, digits with any fraction, unit label) of ``raw``."""
    if isinstance(raw, bool):
        raise ValueError(f"a boolean is not a {what}")
    if isinstance(raw, int):
        return (-1 if raw < 0 else 1), str(abs(raw)), ""
    if isinstance(raw, float):
        if not raw.is_integer():
            raise ValueError(f"{raw!r} is a fraction, which Flink does not accept either")
        return (-1 if raw < 0 else 1), str(abs(int(raw))), ""
    match = _QUANTITY.match(str(raw))
    if match is None:
        raise ValueError(f"not a {what}")
    sign, whole, fraction, label = match.groups()
    number = f"{whole}.{fraction}" if fraction is not None else whole
    return (-1 if sign else 1), number, label


def _refuse_fraction(number: str, factor: int, floor: int, units: dict[str, int]) -> None:
    """Raise if ``number`` has a fraction, naming the same amount in a smaller whole unit."""
    if "." not in number:
        return
    amount = Decimal(number) * factor
    hint = ""
    if amount == amount.to_integral_value() and int(amount) % floor == 0:
        hint = f"; write '{_format(int(amount), units, floor)}'"
    raise ValueError(f"{number!r} is a fraction, which Flink does not accept either{hint}")


def _format(amount: int, units: dict[str, int], floor: int) -> str:
    best = next(name for name, size in units.items() if size == floor)
    for name, size in units.items():
        if amount and size >= floor and amount % size == 0:
            best = name
    return f"{amount // units[best]} {best}"
