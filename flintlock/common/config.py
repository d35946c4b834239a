"""Typed configuration options and the ``Configuration`` object users and the runtime share.

A ``ConfigOption`` is a key with a value type, a default and a description. Options register
themselves in one process-wide registry when defined; every option module lives in
``flintlock.common.options`` and is imported by ``all_options()``, so the registry is complete
before any key is validated. Keys are Flink's names wherever Flink has the setting.

``Configuration`` mirrors PyFlink's class (``set_string``, ``get_integer``, ``to_dict``, ...).
Values are stored as given (strings from YAML or the CLI, native values from code) and parsed
by the option's type on every typed read, so a bad value fails with an error naming the key
and the expected type or allowed values. Durations and memory sizes are read in the units
Flink defines for the key (``config_units``: a bare duration is milliseconds, or seconds for
Flink's ``*Sec`` options; fractions are refused), and an option may set a ``maximum`` where a
larger value could exhaust memory (``ConfigValueOutOfRangeError``). Setting a key that no
option defines fails at once with the nearest valid keys as suggestions. Keys under ``spark.``
pass through untouched to the Spark launcher; they are Spark's to validate.

Loading order (later wins): option defaults < Flink's ``config.yaml`` or ``flink-conf.yaml``
from ``$FLINK_CONF_DIR`` (``flink_conf``: Flink keys with no meaning here are ignored with one
warning) < ``flintlock-conf.yaml`` (from ``$FLINTLOCK_CONF_DIR``, else the working directory) <
values set in code or on the CLI. Nested YAML maps are flattened into dotted keys, as Flink's
``config.yaml`` allows.

Thread ownership: a ``Configuration`` is not synchronised; it is built on one thread (the
user's, or the driver's) and read-only once a job is submitted.
"""

from __future__ import annotations

import builtins
import difflib
import enum
import logging
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
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
    UnknownConfigKeyError,
)

T = TypeVar("T")
_LOG = logging.getLogger(__name__)

PASSTHROUGH_PREFIXES = ("spark.",)
CONF_FILE_NAME = "flintlock-conf.yaml"
CONF_DIR_ENV = "FLINTLOCK_CONF_DIR"

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


def _parse_bool(raw: object) -> bool:
    if isinstance(raw, bool):
        return raw
    text = str(raw).strip().lower()
    if text in ("true", "yes", "on", "1"):
        return True
    if text in ("false", "no", "off", "0"):
        return False
    raise ValueError(f"not a boolean: {raw!r}")


def _parse_int(raw: object) -> int:
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
    OptionType.INT: _parse_int,
    OptionType.FLOAT: lambda raw: float(cast(Any, raw)),
    OptionType.BOOLEAN: _parse_bool,
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


def all_options() -> Mapping[str, ConfigOption[Any]]:
    """Every defined option by key (imports every option module first)."""
    import flintlock.common.options  # noqa: F401  (registers the options)

    return _REGISTRY


def lookup_option(key: str) -> ConfigOption[Any]:
    """The option for ``key`` (or one of its deprecated names); raises with suggestions."""
    options = all_options()
    canonical = _ALIASES.get(key, key)
    if canonical in options:
        return options[canonical]
    raise UnknownConfigKeyError(key, tuple(difflib.get_close_matches(key, list(options), n=2)))


def is_passthrough(key: str) -> bool:
    return key.startswith(PASSTHROUGH_PREFIXES)


def defined_keys() -> frozenset[str]:
    """Every key an option answers to: canonical keys and their deprecated names."""
    return frozenset(all_options()) | frozenset(_ALIASES)


def flatten_nested(data: Mapping[Any, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    """A YAML map with nested maps as ``(dotted key, value)`` pairs, as Flink's
    ``config.yaml`` allows; a map under the key of a MAP option is that option's value."""
    for name, value in data.items():
        key = f"{prefix}{name}"
        if isinstance(value, Mapping) and key not in all_options():
            yield from flatten_nested(value, key + ".")
        else:
            yield key, value


class Configuration:
    """A mutable set of configuration values, with PyFlink's ``Configuration`` methods.

    Every ``set_*`` and ``set`` validates the key (unknown keys fail with suggestions) and the
    value's type (a bad value fails naming the key). ``get_*`` with a key return the stored
    value or the option's default when the caller gives no default of their own.
    """

    def __init__(self, other_config: Configuration | Mapping[str, Any] | None = None) -> None:
        self._values: dict[str, Any] = {}
        if other_config is not None:
            self.add_all(other_config)

    # -- construction -------------------------------------------------------------------

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> Configuration:
        return cls(values)

    @classmethod
    def from_yaml_file(cls, path: str | os.PathLike[str]) -> Configuration:
        """Read a ``flintlock-conf.yaml``; nested maps become dotted keys. A bad key or value
        fails naming the file."""
        import yaml

        try:
            with open(path, encoding="utf-8") as handle:
                data = yaml.safe_load(handle) or {}
        except yaml.YAMLError as exc:
            raise ConfigurationError(f"{path}: not valid YAML: {exc}") from exc
        if not isinstance(data, Mapping):
            raise ConfigurationError(f"{path}: expected a map of keys to values at the top level")
        return cls()._add_from_file(flatten_nested(data), str(path))

    @classmethod
    def load(
        cls,
        conf_dir: str | os.PathLike[str] | None = None,
        flink_conf_dir: str | os.PathLike[str] | None = None,
    ) -> Configuration:
        """The file configuration: Flink's ``config.yaml`` (or ``flink-conf.yaml``) from
        ``flink_conf_dir`` (default ``$FLINK_CONF_DIR``), then ``flintlock-conf.yaml`` from
        ``conf_dir`` (default ``$FLINTLOCK_CONF_DIR``, then the working directory), the later
        winning; empty when neither exists. Keys of the Flink file that mean nothing here are
        logged in one warning."""
        from flintlock.common import flink_conf

        config = cls()
        flink_dir = flink_conf_dir or os.environ.get(flink_conf.FLINK_CONF_DIR_ENV)
        flink_path = flink_conf.find_flink_conf(flink_dir) if flink_dir else None
        if flink_path is not None:
            read = flink_conf.read_flink_conf(flink_path)
            config._add_from_file(read.values.items(), str(flink_path))
            message = read.warning()
            if message is not None:
                _LOG.warning("%s", message)
        elif flink_dir:
            _LOG.warning("Flink configuration directory %s has no %s or %s; nothing read from it",
                         flink_dir, flink_conf.FLINK_CONF_FILE, flink_conf.LEGACY_FLINK_CONF_FILE)
        path = Path(conf_dir or os.environ.get(CONF_DIR_ENV) or os.getcwd()) / CONF_FILE_NAME
        if path.is_file():
            config.add_all(cls.from_yaml_file(path))
        return config

    def _add_from_file(self, items: Iterable[tuple[str, Any]], source: str) -> Configuration:
        for key, value in items:
            try:
                self._set_raw(str(key), value)
            except (UnknownConfigKeyError, InvalidConfigValueError) as exc:
                raise exc.in_source(source) from exc.__cause__
        return self

    # -- typed access by option (what the runtime uses) -------------------------------

    def get(self, option: ConfigOption[T], default: T | None = None) -> T:
        """The option's value parsed by its type; ``default`` (if given) before the option's."""
        raw = self._values.get(option.key)
        if raw is None:
            for old in option.deprecated_keys:
                if old in self._values:
                    raw = self._values[old]
                    break
        if raw is None:
            return option.default if default is None else default
        return option.parse(raw)

    def set(self, option: ConfigOption[T] | str, value: Any) -> Configuration:
        key = option if isinstance(option, str) else option.key
        return self._set_raw(key, value)

    def _set_raw(self, key: str, value: Any) -> Configuration:
        if not is_passthrough(key):
            option = lookup_option(key)
            option.parse(value)
            key = option.key
        self._values[key] = value
        return self

    # -- PyFlink's Configuration methods ----------------------------------------------

    def _get_typed(self, key: str, default: Any, parser: Callable[[object], Any]) -> Any:
        raw = self._values.get(key)
        if is_passthrough(key):
            return default if raw is None else parser(raw)
        option = lookup_option(key)
        if raw is None:
            return option.default if default is None else default
        if option.type is not OptionType.STRING:
            return option.parse(raw)
        try:
            return parser(raw)
        except (TypeError, ValueError) as exc:
            raise InvalidConfigValueError(key, raw, "a value of the requested type") from exc

    def get_string(self, key: str, default_value: str | None = None) -> str | None:
        raw = self._values.get(key)
        if raw is None:
            if default_value is not None or is_passthrough(key):
                return default_value
            fallback = lookup_option(key).default
            return None if fallback is None else _to_string(fallback)
        return _to_string(raw)

    def set_string(self, key: str, value: str) -> Configuration:
        return self._set_raw(key, value)

    def get_integer(self, key: str, default_value: int | None = None) -> int:
        return cast(int, self._get_typed(key, default_value, _parse_int))

    def set_integer(self, key: str, value: int) -> Configuration:
        return self._set_raw(key, value)

    def get_boolean(self, key: str, default_value: bool | None = None) -> bool:
        return cast(bool, self._get_typed(key, default_value, _parse_bool))

    def set_boolean(self, key: str, value: bool) -> Configuration:
        return self._set_raw(key, value)

    def get_float(self, key: str, default_value: float | None = None) -> float:
        return cast(float, self._get_typed(key, default_value, lambda raw: float(cast(Any, raw))))

    def set_float(self, key: str, value: float) -> Configuration:
        return self._set_raw(key, value)

    def keys_set(self) -> builtins.set[str]:
        return builtins.set(self._values)

    def contains_key(self, key: str) -> bool:
        return key in self._values

    def remove_config(self, key: str) -> bool:
        return self._values.pop(key, None) is not None

    def to_dict(self) -> dict[str, str]:
        """Every explicitly set key with its value as a string (as PyFlink returns it)."""
        return {key: _to_string(value) for key, value in self._values.items()}

    def add_all(
        self, other: Configuration | Mapping[str, Any], prefix: str | None = None
    ) -> Configuration:
        items: Iterable[tuple[str, Any]]
        items = other._values.items() if isinstance(other, Configuration) else other.items()
        for key, value in items:
            self._set_raw(f"{prefix or ''}{key}", value)
        return self

    def add_all_to_dict(self, target: dict[str, Any]) -> None:
        target.update(self.to_dict())

    def merged(self, overrides: Configuration | Mapping[str, Any]) -> Configuration:
        """A new configuration: this one with ``overrides`` applied on top."""
        return Configuration(self).add_all(overrides)

    def raw_items(self) -> dict[str, Any]:
        """The stored values as given (for shipping to TaskManagers)."""
        return dict(self._values)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Configuration) and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:  # mutable: hash by identity
        return id(self)

    def __repr__(self) -> str:
        return f"Configuration({self.to_dict()!r})"


def _to_string(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, enum.Enum):
        return str(value.value)
    if isinstance(value, (list, tuple)):
        return ";".join(str(item) for item in value)
    if isinstance(value, Mapping):
        return ",".join(f"{key}:{item}" for key, item in value.items())
    return str(value)
