"""The windows of Flink SQL's window table functions, in epoch milliseconds: which windows a
row's time falls in (TUMBLE, HOP, CUMULATE), how session windows merge (SESSION), and the
conversions between a row's time value and milliseconds.

A window is ``(start, end)``, end exclusive; it fires when the watermark reaches ``end - 1``
(its ``window_time``, Flink's ``maxTimestamp``). Alignment follows Flink's
``TimeWindow.getWindowStartWithOffset`` with Java's remainder (the sign of the dividend), so
windows before the epoch are aligned as Flink aligns them. The order of ``windows_of`` is the
order Flink's table function emits a row's windows in: HOP from the latest start back,
CUMULATE from the shortest window on.

Pure functions and small picklable classes; no state.
"""

from __future__ import annotations

import datetime
from typing import Any

_EPOCH = datetime.datetime(1970, 1, 1)
_UTC = datetime.UTC
_ONE_MS = datetime.timedelta(milliseconds=1)
_DATETIME = datetime.datetime

__all__ = ["WindowAssigner", "field_millis", "from_millis", "merge_session", "to_millis"]

_NEVER: Any = object()


def _java_rem(a: int, b: int) -> int:
    remainder = abs(a) % abs(b)
    return -remainder if a < 0 else remainder


def window_start(timestamp: int, offset: int, size: int) -> int:
    return timestamp - _java_rem(timestamp - offset + size, size)


def to_millis(value: Any) -> int:
    """A rowtime value as epoch milliseconds: a naive datetime is read as UTC (TIMESTAMP, and
    TIMESTAMP_LTZ's instants), an aware one by its zone; ints are milliseconds already."""
    if type(value) is _DATETIME and value.tzinfo is None:  # the common case, one C division
        return (value - _EPOCH) // _ONE_MS
    if isinstance(value, datetime.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(_UTC).replace(tzinfo=None)
        delta: datetime.timedelta = value - _EPOCH
        return (delta.days * 86_400_000 + delta.seconds * 1000
                + delta.microseconds // 1000)
    if isinstance(value, int):
        return value
    millis = getattr(value, "to_epoch_milli", None)
    if callable(millis):  # flintlock.common.time.Instant
        return int(millis())
    raise TypeError(f"a rowtime value must be a timestamp, got {type(value).__name__} "
                    f"{value!r}")


def field_millis(rows: Any, index: int) -> list[int]:
    """The epoch milliseconds of field ``index`` of each row (``Row``s) holding a naive
    datetime (TIMESTAMP), as ``to_millis`` gives them; a run of equal values is converted once
    (rows of one event time often come together; the comparison costs a tenth of the
    conversion). ``TypeError`` when a value is not a naive datetime (NULL, an aware one, an
    int): the caller reads such a batch value by value."""
    out: list[int] = []
    append = out.append
    last, millis = _NEVER, 0
    for row in rows:
        value = row._values[index]
        if value != last:
            millis = (value - _EPOCH) // _ONE_MS
            last = value
        append(millis)
    return out


def from_millis(millis: int) -> datetime.datetime:
    """Epoch milliseconds as a naive datetime (a TIMESTAMP(3) value)."""
    return _EPOCH + datetime.timedelta(milliseconds=millis)


class WindowAssigner:
    """The aligned windows (TUMBLE, HOP, CUMULATE) of a row time; ``shift`` (milliseconds)
    moves the alignment to a time zone's wall clock (TIMESTAMP_LTZ time columns)."""

    def __init__(self, kind: str, size: int, slide: int = 0, offset: int = 0,
                 shift: int = 0) -> None:
        if kind not in ("TUMBLE", "HOP", "CUMULATE"):
            raise ValueError(f"not an aligned window kind: {kind!r}")
        if size <= 0 or (kind != "TUMBLE" and slide <= 0):
            raise ValueError(f"{kind} needs a positive size and slide, got {size}, {slide}")
        self.kind = kind
        self.size = size
        self.slide = slide
        self.offset = offset
        self.shift = shift

    def windows_of(self, timestamp: int) -> list[tuple[int, int]]:
        """The windows of ``timestamp`` (in the shifted clock), in Flink's order."""
        size, offset = self.size, self.offset
        if self.kind == "TUMBLE":
            start = window_start(timestamp, offset, size)
            return [(start, start + size)]
        slide = self.slide
        if self.kind == "HOP":
            last = window_start(timestamp, offset, slide)
            return [(start, start + size)
                    for start in range(last, timestamp - size, -slide)]
        start = window_start(timestamp, offset, size)
        first_end = window_start(timestamp, offset, slide) + slide
        return [(start, end) for end in range(first_end, start + size + 1, slide)]

    def last_window_end(self, timestamp: int) -> int:
        """The end of the last window holding ``timestamp``: after it, a row is dropped."""
        windows = self.windows_of(timestamp)
        return max(end for _, end in windows)


def merge_session(sessions: list[tuple[int, int]], start: int, end: int
                  ) -> tuple[tuple[int, int], list[tuple[int, int]]]:
    """The session ``[start, end)`` merged with every one of ``sessions`` it overlaps or
    touches (Flink's ``TimeWindow.intersects``: ``a.start <= b.end and a.end >= b.start``):
    the merged window and the sessions merged into it."""
    merged: list[tuple[int, int]] = []
    low, high = start, end
    changed = True
    remaining = list(sessions)
    while changed:
        changed = False
        for session in list(remaining):
            if session[0] <= high and session[1] >= low:
                low = min(low, session[0])
                high = max(high, session[1])
                merged.append(session)
                remaining.remove(session)
                changed = True
    return (low, high), merged


def add_to_sessions(sessions: list[list[Any]], values: list[Any], time: int, gap: int,
                    shift: int, timers: Any) -> list[list[Any]] | None:
    """The sessions of one key (``[start, end, rows]``) after a row at ``time`` joined them,
    with the timers moved to the merged session's end - 1 (``timers``: the key's timer
    service; ``shift`` as in ``WindowAssigner``); None when that session has fired (late).
    The first merged session's row list is extended in place (``sessions`` is the key's state
    value, private to the caller: a heap snapshot in flight copies it first), so a session of
    n rows costs O(n), not O(n^2) (issue 33, q11)."""
    (start, end), merged = merge_session([(s[0], s[1]) for s in sessions], time, time + gap)
    if end - 1 - shift <= timers.current_watermark():
        return None
    rows: list[Any] | None = None
    kept = []
    for session in sessions:
        if (session[0], session[1]) in merged:
            if rows is None:  # the first merged session's list grows in place: no copy a row
                rows = session[2]
            else:
                rows.extend(session[2])
            if session[1] != end:
                timers.delete_event_time_timer(session[1] - 1 - shift)
        else:
            kept.append(session)
    if rows is None:
        rows = []
    rows.append(list(values))
    kept.append([start, end, rows])
    timers.register_event_time_timer(end - 1 - shift)
    return kept


def take_session(sessions: list[list[Any]], end: int) -> tuple[list[list[Any]], list[list[Any]]]:
    """(the sessions ending at ``end``, the others)."""
    return [s for s in sessions if s[1] == end], [s for s in sessions if s[1] != end]
