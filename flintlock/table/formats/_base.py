"""What every table format shares: its typed error and the reading of its prefixed options.

``FormatSettings(options, prefix)`` reads ``<prefix>.<key>`` (``json.ignore-parse-errors``,
``value.csv.field-delimiter``) with Flink's wording for a bad value. ``FormatParseError`` is a
line that does not parse, or a value a format cannot write; its message is Flink's.
Pure values; any thread.
"""

from __future__ import annotations

from collections.abc import Iterable

from flintlock.table.connectors._options import Options
from flintlock.table.errors import TableError, ValidationError


class FormatParseError(TableError):
    """A record a format cannot read, or a value it cannot write."""


class FormatSettings:
    """A format's options under ``prefix`` (e.g. ``json`` or ``value.json``)."""

    def __init__(self, options: Options, prefix: str) -> None:
        self.options = options
        self.prefix = prefix

    def key(self, name: str) -> str:
        return f"{self.prefix}.{name}"

    def flag(self, name: str, default: bool = False) -> bool:
        return self.options.get_bool(self.key(name), default)

    def text(self, name: str, default: str) -> str:
        value = self.options.get_str(self.key(name), default)
        return default if value is None else value

    def optional_text(self, name: str) -> str | None:
        return self.options.get_str(self.key(name))

    def choice(self, name: str, choices: Iterable[str], default: str) -> str:
        return self.options.get_choice(self.key(name), choices, default)

    def char(self, name: str, default: str | None) -> str | None:
        value = self.options.get_str(self.key(name), default)
        if value is not None and len(value) != 1:
            raise ValidationError(
                f"Option '{self.key(name)}' must be a string with single character, but was: "
                f"{value}")
        return value


__all__ = ["FormatParseError", "FormatSettings"]
