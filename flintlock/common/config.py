"""The ``Configuration`` object users and the runtime share, and where its values come from.

The options themselves are ``config_option.ConfigOption``s (a key, a value type, a default, a
description), one module per area in ``flintlock.common.options``; ``option_lookup`` finds
the option of a key. Module layering, bottom up: ``config_option`` <- ``options`` <-
``option_lookup`` <- ``flink_conf`` <- this module, so none imports another in a circle.

``Configuration`` mirrors PyFlink's class (``set_string``, ``get_integer``, ``to_dict``, ...).
Values are stored as given (strings from YAML or the CLI, native values from code) and parsed
by the option's type on every typed read, so a bad value fails with an error naming the key
and the expected type or allowed values (see ``config_option`` for units and bounds). Setting
a key that no option defines fails at once with the nearest valid keys as suggestions. Keys
under ``spark.`` pass through untouched to the Spark launcher; they are Spark's to validate.

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
import enum
import logging
import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar, cast

from flintlock.common import flink_conf
from flintlock.common.config_option import (
    ConfigOption,
    OptionType,
    parse_bool,
    parse_int,
)
from flintlock.common.errors import (
    ConfigurationError,
    InvalidConfigValueError,
    UnknownConfigKeyError,
)
from flintlock.common.option_lookup import flatten_nested, is_passthrough, lookup_option

T = TypeVar("T")
_LOG = logging.getLogger(__name__)

CONF_FILE_NAME = "flintlock-conf.yaml"
CONF_DIR_ENV = "FLINTLOCK_CONF_DIR"


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
        return cast(int, self._get_typed(key, default_value, parse_int))

    def set_integer(self, key: str, value: int) -> Configuration:
        return self._set_raw(key, value)

    def get_boolean(self, key: str, default_value: bool | None = None) -> bool:
        return cast(bool, self._get_typed(key, default_value, parse_bool))

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
