"""The root of flintlock's error hierarchy.

Errors are typed by cause (STYLE.md §5) and must survive pickling, because they travel from
Spark executors to the driver: every subclass keeps the constructor arguments in ``args`` so
that ``pickle`` can rebuild it, and chained causes stay in ``__cause__`` where Python keeps
them. Layers define their own subclasses next to the code that raises them.
"""

from __future__ import annotations


class FlintlockError(Exception):
    """Base class of every error flintlock raises on purpose."""


class ConfigurationError(FlintlockError, ValueError):
    """A configuration key or value is invalid; the message names the key and what is allowed."""


class UnknownConfigKeyError(ConfigurationError, KeyError):
    """A key that no option defines. Carries the key and the nearest valid keys."""

    def __init__(self, key: str, suggestions: tuple[str, ...] = ()) -> None:
        super().__init__(key, suggestions)
        self.key = key
        self.suggestions = suggestions

    def __str__(self) -> str:
        hint = f"; did you mean {' or '.join(repr(s) for s in self.suggestions)}?"
        return f"unknown configuration key {self.key!r}" + (hint if self.suggestions else "")


class InvalidConfigValueError(ConfigurationError):
    """A value that does not parse as the option's type or is not one of its allowed values."""

    def __init__(self, key: str, value: object, expected: str) -> None:
        super().__init__(key, value, expected)
        self.key = key
        self.value = value
        self.expected = expected

    def __str__(self) -> str:
        return (f"invalid value {self.value!r} for configuration key {self.key!r}: "
                f"expected {self.expected}")
