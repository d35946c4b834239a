"""The print connector's output line, as Flink's ``PrintSinkOutputWriter`` writes it.

A line is an optional prefix and the row as Java's ``Row.toString`` of its external values
(``+I[1, abc]``, ``-U[a, 1]``; values by ``java_values.print_value``). The prefix: the
``print-identifier`` (may be empty); when the sink runs with parallelism > 1 the subtask's
number (index + 1) is added, after a ``:`` if there is an identifier; a non-empty prefix is
followed by ``> ``. So ``+I[1, a]``, ``sink1> +I[1, a]``, ``2> +I[1, a]``,
``sink2:2> +I[1, a]``. With ``standard-error`` the same line goes to stderr instead of stdout
(the caller picks the stream; the text does not change).

Pure functions; no state.
"""

from __future__ import annotations

from typing import Any

from flintlock.table.formatting.java_values import print_row
from flintlock.table.types import RowType


def print_prefix(identifier: str | None, subtask_index: int, parallelism: int) -> str:
    """The text before the row (module docstring), ``''`` when there is none."""
    prefix = identifier or ""
    if parallelism > 1:
        prefix = f"{prefix}:{subtask_index + 1}" if prefix else str(subtask_index + 1)
    return f"{prefix}> " if prefix else ""


def print_connector_line(row: Any, row_type: RowType, identifier: str | None = None,
                         subtask_index: int = 0, parallelism: int = 1,
                         standard_error: bool = False) -> str:
    """One line of the print connector's output for ``row`` (no trailing newline);
    ``standard_error`` only says which stream the caller writes it to."""
    del standard_error  # the stream, not the text, depends on it
    return print_prefix(identifier, subtask_index, parallelism) + print_row(row, row_type)
