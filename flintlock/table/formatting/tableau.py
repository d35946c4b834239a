"""``TableResult.print()``'s tableau text, byte for byte as PyFlink 2.3.0 prints it.

The rules, found by running PyFlink (tests/table/oracle/tableau.py, fixture
tests/table/fixtures/tableau.txt):

* A table is a border line, the column names, a border line, one line per row, a border line
  and a footer: ``N rows in set`` (``1 row in set``). No rows at all prints only ``Empty set``
  (no header: the header waits for the first row).
* A border is ``+`` then, per column, ``-`` times (width + 2) and ``+``. A line is ``|`` then, per
  column, a space, the text right-aligned to the width, a space and ``|``. Names are
  right-aligned too. Widths count display cells: East Asian wide and full-width characters
  take two.
* A query result's widths come from the column types, not the values (in both modes, so rows
  can be printed as they arrive): TINYINT 4, SMALLINT 6, INT 11, BIGINT 20 (digits and a sign),
  DECIMAL(p, s) p + 2, BOOLEAN 5, DATE 10, TIME(p) 8 or p + 9, TIMESTAMP(p) and
  TIMESTAMP_LTZ(p) 19 (p = 0), 23 (p ≤ 3), 26 (p ≤ 6) or 29, every other type
  ``table.display.max-column-width`` (30); then at least 6 (``<NULL>``) and at least the
  name's width. A value wider than its column is cut to width - 3 cells and ``...`` appended.
* **Streaming mode** (``in_streaming_mode``) adds a first column ``op`` holding each row's kind
  (``+I``, ``-U``, ``+U``, ``-D``); **batch mode** has no ``op`` column.
* NULL prints as ``<NULL>``; values are formatted by ``java_values.tableau_value``.
* DESCRIBE and SHOW print in another layout, whatever the mode: no ``op`` column, each width
  the widest of the name and the values (``render_cells``); DESCRIBE prints NULL as an empty
  cell and has no width cap.
* A DDL statement's result prints as the bare line ``OK``, and an INSERT's (or a statement
  set's) as its row's values joined by ``, `` (``-1`` per sink: the affected-row count Flink
  does not know; ``-1, -1`` for two sinks); no table (``render_raw``).

Pure functions and a small stateless helper for printing rows as they arrive; no I/O.
"""

from __future__ import annotations

import datetime
import unicodedata
from collections.abc import Iterable, Sequence
from typing import Any

from flintlock.table.formatting.java_values import UTC, tableau_value
from flintlock.table.types import (
    BigIntType,
    BooleanType,
    DataType,
    DateType,
    DecimalType,
    IntType,
    LocalZonedTimestampType,
    SmallIntType,
    TimestampType,
    TimeType,
    TinyIntType,
)

DEFAULT_MAX_COLUMN_WIDTH = 30
"""``table.display.max-column-width``'s default."""
NULL_TEXT = "<NULL>"
ROW_KIND_COLUMN = "op"
EMPTY_SET = "Empty set"


def display_width(text: str) -> int:
    """Terminal cells ``text`` takes: two for East Asian wide and full-width characters."""
    return sum(2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1 for ch in text)


def truncate(text: str, width: int) -> str:
    """``text`` cut to ``width - 3`` cells with ``...`` appended, if it is wider than
    ``width``."""
    if display_width(text) <= width:
        return text
    kept, used = [], 0
    for ch in text:
        cells = display_width(ch)
        if used + cells > width - 3:
            break
        kept.append(ch)
        used += cells
    return "".join(kept) + "..."


def _timestamp_width(precision: int) -> int:
    if precision == 0:
        return 19
    if precision <= 3:
        return 23
    if precision <= 6:
        return 26
    return 29


_TYPE_WIDTHS: dict[type, int] = {TinyIntType: 4, SmallIntType: 6, IntType: 11, BigIntType: 20,
                                 BooleanType: 5, DateType: 10}


def type_width(data_type: DataType, max_column_width: int = DEFAULT_MAX_COLUMN_WIDTH) -> int:
    """The width a column of ``data_type`` gets in streaming mode (before names and NULL)."""
    fixed = _TYPE_WIDTHS.get(type(data_type))
    if fixed is not None:
        return fixed
    if isinstance(data_type, DecimalType):
        return data_type.precision + 2
    if isinstance(data_type, TimeType):
        return 8 if data_type.precision == 0 else data_type.precision + 9
    if isinstance(data_type, (TimestampType, LocalZonedTimestampType)):
        return _timestamp_width(data_type.precision)
    return max_column_width


def border(widths: Sequence[int]) -> str:
    return "+" + "".join("-" * (width + 2) + "+" for width in widths)


def line(cells: Sequence[str], widths: Sequence[int]) -> str:
    parts = []
    for cell, width in zip(cells, widths, strict=True):
        text = truncate(cell, width)
        parts.append(" " + " " * (width - display_width(text)) + text + " |")
    return "|" + "".join(parts)


def footer(count: int) -> str:
    return f"{count} row in set" if count == 1 else f"{count} rows in set"


def row_cells(row: Any, types: Sequence[DataType], zone: datetime.tzinfo = UTC,
              null_text: str = NULL_TEXT) -> list[str]:
    """The texts of one row's fields (``null_text`` for None)."""
    values = list(row)
    return [null_text if value is None else tableau_value(value, kind, zone)
            for value, kind in zip(values, types, strict=True)]


def _kind(row: Any) -> str:
    return row.get_row_kind().short_string() if hasattr(row, "get_row_kind") else "+I"


class TypedTableau:
    """A query result's layout, line by line, so rows print as they arrive: ``header()`` once
    the first row is there, ``row(r)`` per row, then ``footer(n)`` (or only ``Empty set``).
    ``row_kind`` adds the ``op`` column (streaming mode)."""

    def __init__(self, names: Sequence[str], types: Sequence[DataType],
                 zone: datetime.tzinfo = UTC, row_kind: bool = True,
                 max_column_width: int = DEFAULT_MAX_COLUMN_WIDTH) -> None:
        self.names = list(names)
        self.types = list(types)
        self.zone = zone
        self.row_kind = row_kind
        widths = [max(type_width(kind, max_column_width), len(NULL_TEXT), display_width(name))
                  for name, kind in zip(names, types, strict=True)]
        self.widths = [len(ROW_KIND_COLUMN), *widths] if row_kind else widths

    def header(self) -> list[str]:
        rule = border(self.widths)
        names = [ROW_KIND_COLUMN, *self.names] if self.row_kind else self.names
        return [rule, line(names, self.widths), rule]

    def row(self, row: Any) -> str:
        cells = row_cells(row, self.types, self.zone)
        return line([_kind(row), *cells] if self.row_kind else cells, self.widths)

    def footer(self, count: int) -> list[str]:
        return [border(self.widths), footer(count)]


StreamingTableau = TypedTableau


def render(names: Sequence[str], types: Sequence[DataType], rows: Iterable[Any],
           streaming: bool, zone: datetime.tzinfo = UTC,
           max_column_width: int = DEFAULT_MAX_COLUMN_WIDTH) -> str:
    """``TableResult.print()``'s text for a query result in the given mode (each line ends
    with a newline)."""
    table = TypedTableau(names, types, zone, streaming, max_column_width)
    lines: list[str] = []
    count = 0
    for row in rows:
        if count == 0:
            lines.extend(table.header())
        lines.append(table.row(row))
        count += 1
    lines.extend(table.footer(count) if count else [EMPTY_SET])
    return "".join(text + "\n" for text in lines)


def render_batch(names: Sequence[str], types: Sequence[DataType], rows: Iterable[Any],
                 zone: datetime.tzinfo = UTC,
                 max_column_width: int = DEFAULT_MAX_COLUMN_WIDTH) -> str:
    """Batch mode's text for a query result: typed widths, no ``op`` column."""
    return render(names, types, rows, False, zone, max_column_width)


def render_cells(names: Sequence[str], cell_rows: Sequence[Sequence[str]],
                 max_column_width: int | None = DEFAULT_MAX_COLUMN_WIDTH) -> str:
    """The layout of DESCRIBE, SHOW and OK for rows already turned into texts: no ``op``
    column, widths from the contents, capped at ``max_column_width`` unless it is None."""
    if not cell_rows:
        return EMPTY_SET + "\n"
    widths = [display_width(name) for name in names]
    for cells in cell_rows:
        widths = [max(width, display_width(cell)) for width, cell in zip(widths, cells,
                                                                          strict=True)]
    if max_column_width is not None:
        widths = [min(width, max_column_width) for width in widths]
    rule = border(widths)
    lines = [rule, line(names, widths), rule]
    lines += [line(cells, widths) for cells in cell_rows]
    lines += [rule, footer(len(cell_rows))]
    return "".join(text + "\n" for text in lines)


def render_raw(cell_rows: Iterable[Sequence[Any]]) -> str:
    """The raw layout: each row's values joined by ``, `` (a statement set of two INSERTs
    prints ``-1, -1``), one line per row."""
    return "".join(", ".join(str(cell) for cell in cells) + "\n" for cells in cell_rows)


def render_ok() -> str:
    """What ``print()`` shows for a DDL or other statement whose result is just ``OK``."""
    return render_raw([["OK"]])
