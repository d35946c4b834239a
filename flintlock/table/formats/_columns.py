"""Decoding a batch of lines column-wise: the filesystem source's fast path (issue 33).

A batch reader is ``lines -> (columns, count)``: ``count`` rows (skipped lines left out) whose
field i is ``columns[i][k]``; a column not in ``wanted`` is None (nothing reads it: a Calc
fused into the source reads only some columns, and, as with Flink's projection pushed into its
CSV reader, a column nobody reads is not converted, so a bad value in it is no error).

Every format has the generic one (``per_line``): its per-line reader over every line, the value
lists turned into columns. CSV has a faster one (``csv.batch_reader``) that splits and converts
whole columns with C loops (``str.split``, ``map(int, ...)``, ``datetime.fromisoformat``) and
falls back to the per-line reader for a batch where anything is irregular, so errors, skipped
lines and NULLs are exactly the per-line reader's. The typed column converters live here.

Pure functions; the readers run on the source's task thread.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable, Collection, Sequence
from operator import itemgetter
from typing import Any

from flintlock.table import types as t

Columns = list[Any]
BatchRead = Callable[[list[str]], tuple[Columns, int]]
ColumnRead = Callable[[Sequence[str]], list[Any]]
LineRead = Callable[[str], "list[Any] | None"]

_PLAIN_TIMESTAMPS = re.compile(
    r"(?:[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,6})?\n)*")


class Irregular(Exception):
    """A column the fast path does not convert exactly (the per-line reader decides)."""


def transpose(value_lists: list[list[Any]], width: int, wanted: Collection[int] | None
              ) -> Columns:
    """Value lists as columns (None for a column not in ``wanted``)."""
    return [list(map(itemgetter(i), value_lists)) if wanted is None or i in wanted else None
            for i in range(width)]


def per_line(read: LineRead, width: int, wanted: Collection[int] | None = None) -> BatchRead:
    """The batch reader of a per-line reader: every line read, skipped lines left out."""
    def decode(lines: list[str]) -> tuple[Columns, int]:
        value_lists = [values for values in map(read, lines) if values is not None]
        return transpose(value_lists, width, wanted), len(value_lists)
    return decode


def _timestamps(texts: Sequence[str], fallback: Callable[[str], Any]) -> list[Any]:
    """TIMESTAMP texts, each distinct text converted once (event times repeat): with
    ``fromisoformat`` (C) where every text has the plain shape ``yyyy-MM-dd HH:mm:ss[.f]``
    (ASCII digits, at most 6 fraction digits), on which it reads exactly what
    ``_text.parse_timestamp`` reads; else with ``fallback``."""
    distinct = list(set(texts))
    if distinct and _PLAIN_TIMESTAMPS.fullmatch("\n".join(distinct) + "\n") is not None:
        values = list(map(datetime.datetime.fromisoformat, distinct))
    else:
        values = list(map(fallback, distinct))
    return list(map(dict(zip(distinct, values, strict=True)).__getitem__, texts))


def column_converter(data_type: t.DataType, read: Callable[[str], Any],
                     null: str | None) -> ColumnRead:
    """Converts a column of texts as ``read`` converts each (``null``: the NULL literal).
    Raises ``Irregular`` where the per-line reader must decide (a NULL literal, a value that
    does not convert: its error, or its NULL with ignore-parse-errors, is the per-line
    reader's)."""
    convert: ColumnRead
    if isinstance(data_type, (t.CharType, t.VarCharType)):
        convert = list
    elif isinstance(data_type, (t.TinyIntType, t.SmallIntType, t.IntType, t.BigIntType)):
        convert = lambda texts: list(map(int, texts))  # noqa: E731 (int() strips as read())
    elif isinstance(data_type, t.TimestampType):
        convert = lambda texts: _timestamps(texts, read)  # noqa: E731
    else:
        convert = lambda texts: list(map(read, texts))  # noqa: E731

    def column(texts: Sequence[str]) -> list[Any]:
        if null is not None and null in texts:
            raise Irregular
        try:
            return convert(texts)
        except (ValueError, ArithmeticError, TypeError) as error:
            raise Irregular from error
    return column


__all__ = ["BatchRead", "Irregular", "column_converter", "per_line", "transpose"]
