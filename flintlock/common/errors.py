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
    """A key that no option defines. Carries the key, the nearest valid keys and, for a key
    read from a file, the file (``source``)."""

    def __init__(
        self, key: str, suggestions: tuple[str, ...] = (), source: str | None = None
    ) -> None:
        super().__init__(key, suggestions, source)
        self.key = key
        self.suggestions = suggestions
        self.source = source

    def in_source(self, source: str) -> UnknownConfigKeyError:
        """The same error, saying which file the key came from."""
        return type(self)(self.key, self.suggestions, source)

    def __str__(self) -> str:
        hint = f"; did you mean {' or '.join(repr(s) for s in self.suggestions)}?"
        where = f" in {self.source}" if self.source else ""
        return (f"unknown configuration key {self.key!r}{where}"
                + (hint if self.suggestions else ""))


class InvalidConfigValueError(ConfigurationError):
    """A value that does not parse as the option's type or is not one of its allowed values;
    ``expected`` says what is accepted, ``source`` the file the value came from (if any)."""

    def __init__(
        self, key: str, value: object, expected: str, source: str | None = None
    ) -> None:
        super().__init__(key, value, expected, source)
        self.key = key
        self.value = value
        self.expected = expected
        self.source = source

    def in_source(self, source: str) -> InvalidConfigValueError:
        """The same error, saying which file the value came from."""
        return type(self)(self.key, self.value, self.expected, source)

    def __str__(self) -> str:
        where = f" in {self.source}" if self.source else ""
        return (f"invalid value {self.value!r} for configuration key {self.key!r}{where}: "
                f"expected {self.expected}")


class ConfigValueOutOfRangeError(InvalidConfigValueError):
    """A value of the right type outside the option's bounds, e.g. a memory size above the
    largest one flintlock allocates for that option."""
