"""The filesystem table's source: ``FileSource``'s files and splits, its lines decoded into the
table's rows a batch at a time inside the reader (issue 33).

``RowFileSource`` discovers and assigns files as ``FileSource`` does (one split per file, its
checkpointed position the start of the next line); its ``RowLineReader`` reads up to a poll's
budget of lines and decodes them at once with the format's batch reader (``formats._columns``:
csv splits and converts whole columns), so a poll's rows are all emitted with the split
position after their lines (a checkpoint neither repeats nor skips a line).

``Decoding`` says how the lines become rows: the format's batch reader (only the columns
``wanted`` are converted), constant columns (a partition's values) and, when the planner fused
a Calc over the table into the source (``calc``, a ``codegen.compiler.compile_column_calc``
function), the Calc's rows built from the columns, so the table's own rows are never built.
A changelog format (canal-json, debezium-json) gives rows with kinds; a fused Calc runs on
each run of rows of one kind.

Built on the driver; the reader runs on its source task's thread.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from itertools import groupby
from operator import attrgetter
from typing import Any

from flintlock.common.row_batches import rows_from_columns, rows_of
from flintlock.common.types import Row, RowKind
from flintlock.datastream.connectors._file_source import FileSplit, TextLineReader
from flintlock.datastream.connectors.file_system import FileSource, StreamFormat
from flintlock.table.formats._columns import BatchRead, Columns, transpose

_KINDS = tuple(RowKind)
_INSERT_CODE = bytes([_KINDS.index(RowKind.INSERT)])

MAX_EMPTY_READ_S = 0.2
"""How long a poll reads on while a fused filter keeps none of the lines, before it returns
nothing (the task then runs its mail and idles ``IDLE_POLL_S``, 50 ms, before it polls
again): long enough that a filter dropping every row costs little idle time, short enough
that checkpoint triggers are not held up."""

_COLUMN_READ = re.compile(r"columns\[(\d+)\]")


def calc_columns(calc: Any) -> frozenset[int] | None:
    """The columns a compiled column Calc reads (from its generated source: ``columns[i]``),
    or None (all) for anything else."""
    source = getattr(calc, "source", None)
    if not isinstance(source, str):
        return None
    return frozenset(int(i) for i in _COLUMN_READ.findall(source))


@dataclass(frozen=True)
class Decoding:
    """How a batch of lines becomes rows (see the module). ``data``: the table positions of
    the format's columns; ``constants``: (position, value) of columns the files do not hold;
    ``width``: the table's number of columns. ``changes``: a changelog format's per-line
    reader (then ``read`` is None)."""

    read: BatchRead | None
    data: tuple[int, ...]
    width: int
    constants: tuple[tuple[int, Any], ...] = ()
    calc: Any = None
    changes: Any = field(default=None)

    def rows(self, lines: list[str]) -> list[Row]:
        if self.changes is not None:
            return self._changelog_rows(lines)
        assert self.read is not None
        columns, count = self.read(lines)
        if self.constants or list(self.data) != list(range(self.width)):
            columns = self._placed(columns, count)
        if self.calc is not None:
            return self.calc(columns, count, RowKind.INSERT)  # type: ignore[no-any-return]
        if not count:
            return []
        try:  # each row's list built at its size from the columns (in C where built)
            return rows_from_columns(_INSERT_CODE * count, _KINDS, columns)
        except (ValueError, TypeError):  # a column that is not a list of ``count`` values
            return rows_of(list(map(list, zip(*columns, strict=True))), RowKind.INSERT)

    def _placed(self, columns: Columns, count: int) -> Columns:
        placed: Columns = [None] * self.width
        for position, column in zip(self.data, columns, strict=True):
            placed[position] = column
        for position, value in self.constants:
            placed[position] = [value] * count
        return placed

    def _changelog_rows(self, lines: list[str]) -> list[Row]:
        rows: list[Row] = []
        for line in lines:
            rows.extend(self.changes(line))
        if self.calc is None or not rows:
            return rows
        out: list[Row] = []
        for kind, run in groupby(rows, key=attrgetter("_row_kind")):
            values = [row._values for row in run]
            out.extend(self.calc(transpose(values, self.width, None), len(values), kind))
        return out


class RowLineReader(TextLineReader):
    """``TextLineReader`` whose records are the rows ``decoding`` makes of its lines."""

    def __init__(self, charset: str, decoding: Decoding) -> None:
        super().__init__(charset)
        self._decoding = decoding

    def read_split(self, split: Any, budget: int, out: list[Any]) -> tuple[Any, bool]:
        give_up = time.perf_counter() + MAX_EMPTY_READ_S
        while True:
            cursor = self._cursor_for(split)
            lines: list[str] = []
            done = cursor.read(budget, lines)
            if lines:
                out.extend(self._decoding.rows(lines))
            if done:
                return split, True
            split = FileSplit(split.path, cursor.position)
            if out or time.perf_counter() > give_up:
                return split, False


class RowFileSource(FileSource):
    """A ``FileSource`` of text files whose reader emits the table's rows (``Decoding``)."""

    def __init__(self, paths: tuple[str, ...], interval_ms: int | None, charset: str,
                 decoding: Decoding) -> None:
        super().__init__(StreamFormat.text_line_format(charset), paths, interval_ms)
        self._charset = charset
        self._decoding = decoding

    def create_reader(self, subtask_index: int, parallelism: int) -> Any:
        return RowLineReader(self._charset, self._decoding)

    def __repr__(self) -> str:
        return "Row" + super().__repr__()


__all__ = ["Decoding", "RowFileSource", "RowLineReader", "calc_columns"]
