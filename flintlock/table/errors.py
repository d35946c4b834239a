"""The errors of the Table API and SQL layer, typed by cause (STYLE.md §5).

``TableError`` is the root; below it a statement that does not parse (``SqlParseError``, with
line, column and token), one that parses but means nothing valid (``ValidationError``: unknown
table, column or function with the closest known name, a type mismatch naming both types), a
plan flintlock cannot run yet (``UnsupportedFeatureError``, naming the feature), and a plan that
Flink refuses as well (``TableException``: an update stream into an append-only sink).

PyFlink users catch ``pyflink.util.exceptions.TableException`` and ``ValidationException``;
``flintlock.util.exceptions`` is not a module flintlock has, so the names live here and
``ValidationException`` / ``TableException`` are aliases a ported ``except`` can use.
Every error keeps its constructor arguments in ``args`` so it survives pickling.
"""

from __future__ import annotations

from flintlock.common.errors import FlintlockError


class TableError(FlintlockError):
    """Base class of the Table layer's errors."""


class SqlParseError(TableError):
    """A SQL statement that does not parse: where (1-based line and column) and at which token."""

    def __init__(self, message: str, line: int = 0, column: int = 0, token: str = "") -> None:
        super().__init__(message, line, column, token)
        self.message = message
        self.line = line
        self.column = column
        self.token = token

    def __str__(self) -> str:
        return self.message


class ValidationError(TableError):
    """A statement or Table API call that refers to something unknown or mixes types wrongly."""


class UnsupportedFeatureError(TableError):
    """A valid statement that flintlock cannot run yet; the message names the feature."""

    def __init__(self, feature: str, hint: str = "") -> None:
        super().__init__(feature, hint)
        self.feature = feature
        self.hint = hint

    def __str__(self) -> str:
        text = f"{self.feature} is not supported by flintlock yet"
        return f"{text}; {self.hint}" if self.hint else text


class TableException(TableError):
    """A plan that Flink refuses too (for instance updates into an append-only sink)."""


ValidationException = ValidationError
