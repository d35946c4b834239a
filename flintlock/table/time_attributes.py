"""Time attributes: which column of a table is its event time (rowtime) or processing time.

Flink keeps the mark in the column's type (a TIMESTAMP of kind ROWTIME or PROCTIME); so does
flintlock: a time attribute is a ``TimestampType`` / ``LocalZonedTimestampType`` instance
carrying ``_time_attribute`` (``*ROWTIME*`` or ``*PROCTIME*``, the text ``print_schema`` and
DESCRIBE append). The mark travels wherever the type does — a column read as it is
(``InputRef``) stays a time attribute through projections, filters, views and the window
table functions — and is dropped where Flink materializes the time (any expression over it,
a group aggregation's output). Two types differing only in the mark compare unequal, as
Flink's do.

Pure functions of types; no state.
"""

from __future__ import annotations

from copy import copy

from flintlock.table import types as t

ROWTIME = "*ROWTIME*"
PROCTIME = "*PROCTIME*"

__all__ = ["PROCTIME", "ROWTIME", "as_rowtime", "is_proctime", "is_rowtime", "materialized",
           "proctime_type", "time_attribute"]


def time_attribute(data_type: t.DataType) -> str | None:
    """``*ROWTIME*``, ``*PROCTIME*`` or None."""
    return getattr(data_type, "_time_attribute", None)


def is_rowtime(data_type: t.DataType) -> bool:
    return time_attribute(data_type) == ROWTIME


def is_proctime(data_type: t.DataType) -> bool:
    return time_attribute(data_type) == PROCTIME


def as_rowtime(data_type: t.DataType) -> t.DataType:
    """``data_type`` marked as the event-time attribute."""
    marked = copy(data_type)
    marked._time_attribute = ROWTIME  # type: ignore[attr-defined]
    return marked


def proctime_type() -> t.DataType:
    """The type of ``PROCTIME()``: ``TIMESTAMP_LTZ(3) NOT NULL *PROCTIME*``."""
    marked = t.LocalZonedTimestampType(3, False)
    marked._time_attribute = PROCTIME  # type: ignore[attr-defined]
    return marked


def materialized(data_type: t.DataType) -> t.DataType:
    """The same type without a time attribute mark (a plain timestamp)."""
    if time_attribute(data_type) is None:
        return data_type
    plain = copy(data_type)
    del plain._time_attribute  # type: ignore[attr-defined]
    return plain


def valid_rowtime_type(data_type: t.DataType) -> bool:
    """Flink's rule: a rowtime column is TIMESTAMP(p) or TIMESTAMP_LTZ(p) with p <= 3."""
    return isinstance(data_type, (t.TimestampType, t.LocalZonedTimestampType)) and (
        data_type.precision <= 3)
