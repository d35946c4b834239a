"""Reading a table's ``WITH`` options as Flink's ``ReadableConfig`` does: typed getters with
defaults, and Flink's wording when a value does not parse.

``Options(spec.options)`` wraps the table's string options; ``get_int('rows-per-second',
10000)``, ``get_bool``, ``get_float``, ``get_duration_ms`` (Flink's duration syntax, ``10 s``,
``500ms``, a bare number is milliseconds), ``get_memory`` (``128MB``) and ``get_choice`` (one of a
set, case-insensitive as Flink's enum options) raise ``ValidationError`` naming the key and the
value. ``check_keys`` refuses keys outside a set with Flink's "Unsupported options" text.

Pure functions over a dict; used by the connector factories on the driver.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from flintlock.common.config_units import parse_duration, parse_memory_bytes
from flintlock.table.errors import ValidationError


class Options:
    """The string options of one table, read with types."""

    def __init__(self, options: Mapping[str, str]) -> None:
        self.raw = dict(options)

    def has(self, key: str) -> bool:
        return key in self.raw

    def get_str(self, key: str, default: str | None = None) -> str | None:
        return self.raw.get(key, default)

    def get_int(self, key: str, default: int | None = None) -> int | None:
        if key not in self.raw:
            return default
        text = self.raw[key].strip()
        try:
            return int(text)
        except ValueError:
            raise _unparsable(key, text) from None

    def get_float(self, key: str, default: float | None = None) -> float | None:
        if key not in self.raw:
            return default
        text = self.raw[key].strip()
        try:
            return float(text)
        except ValueError:
            raise _unparsable(key, text) from None

    def get_bool(self, key: str, default: bool) -> bool:
        if key not in self.raw:
            return default
        text = self.raw[key].strip().lower()
        if text not in ("true", "false"):
            raise _unparsable(key, self.raw[key])
        return text == "true"

    def get_duration_ms(self, key: str, default: int | None = None) -> int | None:
        if key not in self.raw:
            return default
        try:
            return parse_duration(self.raw[key], "ms")
        except ValueError:
            raise _unparsable(key, self.raw[key]) from None

    def get_memory(self, key: str, default: int) -> int:
        if key not in self.raw:
            return default
        try:
            return parse_memory_bytes(self.raw[key])
        except ValueError:
            raise _unparsable(key, self.raw[key]) from None

    def get_choice(self, key: str, choices: Iterable[str], default: str) -> str:
        """One of ``choices`` (compared case-insensitively, returned as spelled in choices)."""
        if key not in self.raw:
            return default
        allowed = list(choices)
        text = self.raw[key].strip()
        for choice in allowed:
            if choice.lower() == text.lower():
                return choice
        raise ValidationError(
            f"Could not parse value '{text}' for key '{key}'. Expected one of: "
            f"[{', '.join(allowed)}]")


def _unparsable(key: str, value: str) -> ValidationError:
    return ValidationError(f"Could not parse value '{value}' for key '{key}'.")


def check_keys(connector: str, keys: Iterable[str], supported: Iterable[str]) -> None:
    """Refuses keys outside ``supported`` as Flink does (``Unsupported options found for``)."""
    allowed = set(supported)
    unknown = sorted(k for k in keys if k not in allowed)
    if unknown:
        raise ValidationError(
            f"Unsupported options found for '{connector}'.\n\nUnsupported options:\n\n"
            + "\n".join(unknown) + "\n\nSupported options:\n\n" + "\n".join(sorted(allowed)))


__all__ = ["Options", "check_keys"]
