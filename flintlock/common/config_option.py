"""A typed configuration option (``ConfigOption``), how its values parse, and the registry.

A ``ConfigOption`` is a key with a value type (``OptionType``), a default and a description.
Options register themselves here when they are defined (``__post_init__``); every option
module lives in ``flintlock.common.options``, and ``option_lookup`` imports them all before it
answers for a key, so the registry is complete before any key is validated. Keys are Flink's
names wherever Flink has the setting.

``parse`` turns a raw value (a string from YAML or the CLI, a native value from code) into the
option's type, or fails with an error naming the key and the expected type or allowed values.
Durations and memory sizes are read in the units Flink defines for the key (``config_units``:
a bare duration is milliseconds, or seconds for Flink's ``*Sec`` options; fractions are
refused), and an option may set a ``maximum`` where a larger value could exhaust memory
(``ConfigValueOutOfRangeError``).

Options are immutable and defined at import time; the registry is written only then (module
imports are serialised by the import lock) and read afterwards.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar, cast

from flintlock.common.config_units import (
    DURATION_FORMS,
    MEMORY_FORMS,
    NANOS_PER_UNIT,
    format_duration,
    format_memory,
    parse_duration,
    parse_memory_bytes,
)
from flintlock.common.errors import (
    ConfigurationError,
    ConfigValueOutOfRangeError,
    InvalidConfigValueError,
)

T = TypeVar("T")

INT_MAX = 2**31 - 1
"""Flink's Integer options are Java ints; an INT option without its own maximum stops here."""


class OptionType(enum.Enum):
    """How an option's raw value is parsed. DURATION values are whole numbers of the option's
    ``time_unit`` (milliseconds unless it says otherwise), MEMORY values bytes (int), ENUM
    values one of the option's allowed strings (lower-cased). See ``config_units``."""

    STRING = "string"
    INT = "int"
    FLOAT = "float"
    BOOLEAN = "boolean"
    DURATION = "duration"
    MEMORY = "memory size"
    ENUM = "enum"
    LIST = "list"
    MAP = "map"


def parse_duration_ms(raw: object) -> int:
    """``100`` / ``"100"`` (ms), ``"100 ms"``, ``"10 s"``, ``"1 min"`` -> milliseconds."""
    return parse_duration(raw, "ms")


def parse_bool(raw: object) -> bool:
    if isinstance(raw, bool):
        return raw
    text = str(raw).strip().lower()
    if text in ("true", "yes", "on", "1"):
        return True
    if text in ("false", "no", "off", "0"):
        return False
    raise ValueError(f"not a boolean: {raw!r}")


def parse_int(raw: object) -> int:
    if isinstance(raw, bool):
        raise ValueError("a boolean is not an integer")
    if isinstance(raw, float):
        if not raw.is_integer():
            raise ValueError(f"not an integer: {raw!r}")
        return int(raw)
    return int(str(raw).strip()) if not isinstance(raw, int) else raw


def _parse_list(raw: object) -> list[str]:
    if isinstance(raw, (list, tuple)):
        return [str(item) for item in raw]
    return [part.strip() for part in str(raw).split(";") if part.strip()]


def _parse_map(raw: object) -> dict[str, str]:
    """A dict, or Flink's text form ``key1:value1,key2:value2``."""
    if isinstance(raw, Mapping):
        return {str(key): str(value) for key, value in raw.items()}
    entries: dict[str, str] = {}
    for part in str(raw).split(","):
        if not part.strip():
            continue
        key, sep, value = part.partition(":")
        if not sep:
            raise ValueError(f"not a key:value pair: {part!r}")
        entries[key.strip()] = value.strip()
    return entries


_PARSERS: dict[OptionType, Callable[[object], Any]] = {
    OptionType.STRING: str,
    OptionType.INT: parse_int,
    OptionType.FLOAT: lambda raw: float(cast(Any, raw)),
    OptionType.BOOLEAN: parse_bool,
    OptionType.MEMORY: parse_memory_bytes,
    OptionType.LIST: _parse_list,
    OptionType.MAP: _parse_map,
}


@dataclass(frozen=True, slots=True)
class ConfigOption(Generic[T]):
    """One setting: its key, value type, default and description.

    ``allowed`` lists the valid values of an ENUM option; ``minimum`` and ``maximum`` bound
    numeric options (in the option's own unit: bytes, or ``time_unit``); a maximum is set
    where a larger value could exhaust memory. ``time_unit`` is the unit of a DURATION
    option's bare numbers, default and parsed values (``"s"`` for Flink's ``*Sec`` options).
    ``deprecated_keys`` are older names still accepted when reading a configuration.
    """

    key: str
    type: OptionType
    default: T
    description: str
    allowed: tuple[str, ...] = ()
    minimum: float | None = None
    deprecated_keys: tuple[str, ...] = field(default=())
    maximum: float | None = None
    time_unit: str = "ms"

    def __post_init__(self) -> None:
        if self.time_unit not in NANOS_PER_UNIT:
            raise ConfigurationError(f"{self.key}: unknown time unit {self.time_unit!r}")
        _register(self)

    def parse(self, raw: object) -> T:
        """Parse ``raw`` as this option's type, or raise ``InvalidConfigValueError`` (its
        ``ConfigValueOutOfRangeError`` subclass for a value outside the bounds)."""
        if raw is None:
            return self.default
        if self.type is OptionType.ENUM:
            text = (raw.value if isinstance(raw, enum.Enum) else str(raw)).strip().lower()
            text = text.replace("_", "-") if text.replace("_", "-") in self.allowed else text
            if text not in self.allowed:
                raise InvalidConfigValueError(self.key, raw, f"one of {', '.join(self.allowed)}")
            return cast(T, text)
        try:
            value = self._parse_value(raw)
        except (TypeError, ValueError) as exc:
            raise InvalidConfigValueError(self.key, raw, f"{self.forms()} ({exc})") from exc
        self._check_bounds(raw, value)
        return cast(T, value)

    def forms(self) -> str:
        """What a value of this option looks like, for errors and the reference."""
        if self.type is OptionType.DURATION:
            return f"a duration, {DURATION_FORMS}; a bare number is {self.time_unit}"
        if self.type is OptionType.MEMORY:
            return f"a memory size, {MEMORY_FORMS}; a bare number is bytes"
        return f"{self._article()} {self.type.value}"

    def bound_text(self, value: float) -> str:
        """A bound or default of this option as written in the reference (``64 mb``)."""
        if self.type is OptionType.MEMORY:
            return format_memory(int(value))
        if self.type is OptionType.DURATION:
            return format_duration(int(value), self.time_unit)
        return str(int(value)) if float(value).is_integer() else f"{value:g}"

    def upper_bound(self) -> float | None:
        """``maximum``, or Java's int range for an INT option that sets none."""
        if self.maximum is None and self.type is OptionType.INT:
            return INT_MAX
        return self.maximum

    def _parse_value(self, raw: object) -> Any:
        if self.type is OptionType.DURATION:
            return parse_duration(raw, self.time_unit)
        return _PARSERS[self.type](raw)

    def _check_bounds(self, raw: object, value: Any) -> None:
        low, high = self.minimum, self.upper_bound()
        if (low is None or value >= low) and (high is None or value <= high):
            return
        if low is not None and high is not None:
            expected = f"between {self.bound_text(low)} and {self.bound_text(high)}"
        elif low is not None:
            expected = f"at least {self.bound_text(low)}"
        else:
            expected = f"at most {self.bound_text(cast(float, high))}"
        raise ConfigValueOutOfRangeError(
            self.key, raw, f"{self._article()} {self.type.value} {expected}")

    def _article(self) -> str:
        return "an" if self.type is OptionType.INT else "a"


_REGISTRY: dict[str, ConfigOption[Any]] = {}
_ALIASES: dict[str, str] = {}


def _register(option: ConfigOption[Any]) -> None:
    existing = _REGISTRY.get(option.key)
    if existing is not None and existing != option:
        raise ConfigurationError(f"configuration key {option.key!r} is defined twice")
    _REGISTRY[option.key] = option
    for old in option.deprecated_keys:
        _ALIASES[old] = option.key


def registered_options() -> Mapping[str, ConfigOption[Any]]:
    """The options defined so far, by key (``option_lookup.all_options`` has every one)."""
    return _REGISTRY


def deprecated_names() -> Mapping[str, str]:
    """Older key -> the key of the option that now answers to it."""
    return _ALIASES
