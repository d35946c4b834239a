"""Finding the option for a key: every option flintlock defines, by its key or older names.

``all_options`` imports every module of ``flintlock.common.options`` (which registers its
options in ``config_option``), so a key is never judged unknown because its module was not
imported yet. ``lookup_option`` answers for a key or a deprecated name, and fails with the
nearest valid keys as suggestions. Keys under ``spark.`` are passthrough keys: Spark's to
validate, never looked up. ``flatten_nested`` turns a YAML map with nested maps into dotted
keys, as Flink's ``config.yaml`` allows.

Holds no state of its own (the registry is ``config_option``'s); any thread.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Mapping
from typing import Any

import flintlock.common.options  # noqa: F401  (registers every option)
from flintlock.common.config_option import ConfigOption, deprecated_names, registered_options
from flintlock.common.errors import UnknownConfigKeyError

PASSTHROUGH_PREFIXES = ("spark.",)


def all_options() -> Mapping[str, ConfigOption[Any]]:
    """Every defined option by key (every option module is imported with this one)."""
    return registered_options()


def lookup_option(key: str) -> ConfigOption[Any]:
    """The option for ``key`` (or one of its deprecated names); raises with suggestions."""
    options = all_options()
    canonical = deprecated_names().get(key, key)
    if canonical in options:
        return options[canonical]
    raise UnknownConfigKeyError(key, tuple(difflib.get_close_matches(key, list(options), n=2)))


def is_passthrough(key: str) -> bool:
    return key.startswith(PASSTHROUGH_PREFIXES)


def defined_keys() -> frozenset[str]:
    """Every key an option answers to: canonical keys and their deprecated names."""
    return frozenset(all_options()) | frozenset(deprecated_names())


def flatten_nested(data: Mapping[Any, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    """A YAML map with nested maps as ``(dotted key, value)`` pairs, as Flink's
    ``config.yaml`` allows; a map under the key of a MAP option is that option's value."""
    for name, value in data.items():
        key = f"{prefix}{name}"
        if isinstance(value, Mapping) and key not in all_options():
            yield from flatten_nested(value, key + ".")
        else:
            yield key, value
