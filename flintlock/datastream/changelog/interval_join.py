"""Interval join (``a JOIN b ON a.k = b.k AND a.ts BETWEEN b.ts - INTERVAL .. AND b.ts + ..``):
Flink 2.3's ``RowTimeIntervalJoin`` / ``ProcTimeIntervalJoin`` (the table runtime's
``TimeIntervalJoin``), as a ``KeyedCoProcessFunction`` keyed by the equi-join fields on both
inputs. Insert-only in and out; the rows keep their fields (and so their rowtime attributes).

``IntervalJoinFunction(join_type, left_arity, right_arity, left_keys, right_keys,
lower_bound, upper_bound, left_time, right_time, condition=None, filter_null_keys=None,
proctime=False)``:

* the time bounds: a left row at ``lt`` and a right row at ``rt`` may join when
  ``rt + lower_bound <= lt <= rt + upper_bound`` (milliseconds; a strict ``<`` / ``>`` is
  the non-strict bound one millisecond in); ``left_time`` / ``right_time``: ``row -> epoch
  milliseconds`` of each side's rowtime (ignored with ``proctime``: a row's time is the
  processing time it arrives at, and timers are processing-time timers);
* ``condition(left_values, right_values) -> bool``: the rest of the ON condition;
* the other arguments as ``join.StreamingJoinFunction``'s.

Algorithm (Flink's): the operator time of both sides is the current watermark (at least 0).
A row joins with the other side's cached rows whose time is within its bounds, marking them
joined; on the way it drops the other side's rows that expired (time <= operator time - the
other side's relative size - 1), emitting an outer side's never-joined rows NULL-padded. It is
cached (per key, ``MapState`` time -> rows with a joined flag) unless the operator time has
passed its upper bound — then, never joined and on an outer side, it is emitted NULL-padded at
once. A side's first cached row registers a clean-up timer at ``time + relative size +
(both relative sizes) / 2 + 1``; the timer expires rows as above and registers the next one at
the earliest row left, or clears the cache. Late rows are not dropped: they still join the
rows that are cached. On event time the output's watermark is the input's held back by the
larger relative size (``output_watermark_delay``, read by the operator), so a joined row is
not late downstream.

Order: the cached rows of a key are visited in the order Flink's heap state iterates its
``HashMap<Long, List>``: by bucket (Java's ``Long.hashCode`` spread, over the map's current
capacity, 16 doubling at 3/4 full, reset when the cache is cleared), then by insertion. The
sequence numbers and capacity that reproduce it are state too, so any backend gives that
order.

The task thread owns a function once opened.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from flintlock.common.state import ValueStateDescriptor
from flintlock.datastream.changelog.errors import InvalidOperatorArgumentError, NotInsertOnlyError
from flintlock.datastream.changelog.join import JoinType
from flintlock.datastream.changelog.rows import INSERT, key_selector, new_row
from flintlock.datastream.functions import KeyedCoProcessFunction, RuntimeContext

__all__ = ["IntervalJoinFunction", "java_long_bucket"]

_END_OF_TIME = 2**63 - 1
"""The watermark at the end of input (Long.MAX_VALUE)."""


def java_long_bucket(value: int, capacity: int) -> int:
    """The bucket of a ``java.util.HashMap`` of ``capacity`` buckets holding ``Long`` value."""
    bits = value & 0xFFFF_FFFF_FFFF_FFFF
    hashed = (bits ^ (bits >> 32)) & 0xFFFF_FFFF
    return (hashed ^ (hashed >> 16)) & (capacity - 1)


_CAPACITY, _SEQUENCE, _TIMER, _ENTRIES = range(4)


def _new_cache() -> list[Any]:
    return [16, 0, None, {}]


class _Side:
    """One side of the join: its cached rows of the current key in one ``ValueState``, a
    list ``[capacity, next sequence, clean-up timer, {time: (sequence, [(values, joined),
    ...])}]`` — the capacity and insertion sequence of the HashMap it mirrors, the time of
    the timer that cleans this side's rows up (None: none registered), the rows. One read and
    at most one write per row and side; the list is changed in place between a ``value()``
    and an ``update()`` (the heap backend copies a value a snapshot shares before it is
    read, the others store what ``update`` gives)."""

    __slots__ = ("outer", "state")

    def __init__(self, runtime_context: RuntimeContext, name: str, outer: bool) -> None:
        self.state = runtime_context.get_state(ValueStateDescriptor(f"{name}-cache"))
        self.outer = outer


def _ordered(cache: list[Any]) -> list[tuple[int, Any]]:
    """(time, (sequence, rows)) in the HashMap's iteration order."""
    entries = cache[_ENTRIES]
    if len(entries) < 2:  # the common case of a short interval: no order to find
        return list(entries.items())
    capacity = cache[_CAPACITY]
    return sorted(entries.items(),
                  key=lambda entry: (java_long_bucket(entry[0], capacity), entry[1][0]))


def _add(cache: list[Any], time: int, values: tuple[Any, ...], joined: bool) -> None:
    entries = cache[_ENTRIES]
    stored = entries.get(time)
    if stored is not None:
        entries[time] = (stored[0], [*stored[1], (values, joined)])
        return
    if len(entries) + 1 > cache[_CAPACITY] * 3 // 4:
        cache[_CAPACITY] *= 2
    entries[time] = (cache[_SEQUENCE], [(values, joined)])
    cache[_SEQUENCE] += 1


def _rowtimes(time_of: Any, records: list[Any]) -> list[Any]:
    """Each record's rowtime: a batch at a time when ``time_of`` offers ``of_rows`` (the
    planner's ``RowtimeOf``), else a call per record."""
    of_rows = getattr(time_of, "of_rows", None)
    if of_rows is not None:
        return of_rows(records)  # type: ignore[no-any-return]
    return [time_of(row) for row in records]


def _event_registrar(timers: Any) -> Callable[[int, Any], Any]:
    """``(timestamp, namespace)`` registering an event-time timer for the current key: the
    internal timer queue's own method when ``timers`` (``ctx.timer_service()``) gives it."""
    registrar = getattr(getattr(timers, "internal", None), "event_timer_registrar", None)
    if registrar is not None:
        return registrar()  # type: ignore[no-any-return]
    return lambda timestamp, _namespace: timers.register_event_time_timer(timestamp)


class IntervalJoinFunction(KeyedCoProcessFunction):
    """INNER / LEFT / RIGHT / FULL interval join; see the module docstring."""

    def __init__(self, join_type: JoinType, left_arity: int, right_arity: int,
                 left_keys: Sequence[int], right_keys: Sequence[int], lower_bound: int,
                 upper_bound: int, left_time: Callable[[Any], int] | None,
                 right_time: Callable[[Any], int] | None,
                 condition: Callable[[Any, Any], Any] | None = None,
                 filter_null_keys: Sequence[bool] | None = None, proctime: bool = False) -> None:
        if not isinstance(join_type, JoinType):
            raise InvalidOperatorArgumentError("IntervalJoinFunction",
                                               f"join_type must be a JoinType, got {join_type!r}")
        if len(left_keys) != len(right_keys):
            raise InvalidOperatorArgumentError(
                "IntervalJoinFunction", f"{len(left_keys)} left key fields but "
                f"{len(right_keys)} right key fields")
        if lower_bound > upper_bound:
            raise InvalidOperatorArgumentError(
                "IntervalJoinFunction", f"the lower bound {lower_bound} ms is above the upper "
                f"bound {upper_bound} ms: no row can join")
        if not proctime and (left_time is None or right_time is None):
            raise InvalidOperatorArgumentError(
                "IntervalJoinFunction", "an event-time interval join needs both rowtimes")
        filters = tuple(filter_null_keys) if filter_null_keys is not None else (
            (True,) * len(left_keys))
        if len(filters) != len(left_keys):
            raise InvalidOperatorArgumentError(
                "IntervalJoinFunction", "filter_null_keys needs one flag per key field")
        self.join_type = join_type
        self.left_arity, self.right_arity = left_arity, right_arity
        self.left_keys, self.right_keys = tuple(left_keys), tuple(right_keys)
        self.lower_bound, self.upper_bound = lower_bound, upper_bound
        self.left_time, self.right_time = left_time, right_time
        self.condition = condition
        self.filter_null_keys = filters
        self.proctime = proctime
        self.left_relative_size = -lower_bound
        self.right_relative_size = upper_bound
        self.min_clean_up_interval = (self.left_relative_size + self.right_relative_size) // 2
        # Flink holds the output's watermark back by the longest a row may wait to be joined
        self.output_watermark_delay = 0 if proctime else max(self.left_relative_size,
                                                             self.right_relative_size)

    def left_key_selector(self) -> Callable[[Any], Any]:
        return key_selector(self.left_keys)

    def right_key_selector(self) -> Callable[[Any], Any]:
        return key_selector(self.right_keys)

    def open(self, runtime_context: RuntimeContext) -> None:
        self._left = _Side(runtime_context, "left",
                           self.join_type in (JoinType.LEFT, JoinType.FULL))
        self._right = _Side(runtime_context, "right",
                            self.join_type in (JoinType.RIGHT, JoinType.FULL))
        self._left_nulls = self._null_check(self.left_keys)
        self._right_nulls = self._null_check(self.right_keys)
        self._expirations = {True: 0, False: 0}
        """The last expiration time of the left (True) and right (False) rows, per operator."""
        left_time, right_time = (None, None) if self.proctime else (self.left_time,
                                                                    self.right_time)
        self._sides = {
            True: (self._left, self._right, left_time, self.left_relative_size,
                   self.right_relative_size),
            False: (self._right, self._left, right_time, self.right_relative_size,
                    self.left_relative_size)}
        """Per input (left: True): its side, the other side, its rowtime (None on processing
        time), its relative size, the other side's."""

    def _null_check(self, keys: Sequence[int]) -> tuple[int, ...]:
        return tuple(k for k, f in zip(keys, self.filter_null_keys, strict=True) if f)

    # -- times --------------------------------------------------------------------------------

    def _operator_time(self, timers: Any) -> int:
        """The operator's time from ``ctx.timer_service()``."""
        if self.proctime:
            return int(timers.current_processing_time())
        watermark = int(timers.current_watermark())
        return watermark if watermark > 0 else 0

    def _expiration(self, operator_time: int, relative_size: int) -> int:
        if operator_time < _END_OF_TIME:
            return operator_time - relative_size - 1
        return _END_OF_TIME

    def _register_clean_up(self, timers: Any, time: int, left_row: bool) -> int:
        """Registers the clean-up timer of a side's rows from ``time`` on (``timers``:
        ``ctx.timer_service()``); its time."""
        size = self._sides[left_row][3]
        clean_up = time + size + self.min_clean_up_interval + 1
        if self.proctime:
            timers.register_processing_time_timer(clean_up)
        else:
            timers.register_event_time_timer(clean_up)
        return clean_up

    # -- rows ---------------------------------------------------------------------------------

    def process_element1(self, value: Any, ctx: Any) -> list[Any]:
        out: list[Any] = []
        timers = ctx.timer_service()
        self._process(value, timers, True, self._operator_time(timers), out)
        return out

    def process_element2(self, value: Any, ctx: Any) -> list[Any]:
        out: list[Any] = []
        timers = ctx.timer_service()
        self._process(value, timers, False, self._operator_time(timers), out)
        return out

    def process_batch(self, index: int, records: list[Any], timestamps: list[int] | None,
                      get_key: Callable[[Any], Any], set_key: Callable[[Any], None],
                      ctx: Any) -> tuple[list[Any], list[int] | None]:
        """A batch of input ``index`` (0: left), as ``process_element1/2`` per record with
        its key set (``runtime.tasks.co_batch_operator``): the outputs in order, and each
        output's record's timestamp when ``timestamps`` is given. On event time the
        operator time (the watermark) is read once per batch, the rowtimes a batch at a time
        (``of_rows``, when the rowtime offers it) and the rows joined in ``_event_rows``."""
        if not self.proctime:
            return self._event_rows(index == 0, records, timestamps, get_key, set_key,
                                    ctx.timer_service())
        is_left = index == 0
        out: list[Any] = []
        stamps: list[int] | None = None if timestamps is None else []
        timers = ctx.timer_service()
        process = self._process
        for position, row in enumerate(records):
            set_key(get_key(row))
            before = len(out)
            process(row, timers, is_left, self._operator_time(timers), out)
            if stamps is not None and len(out) > before:
                stamps.extend([timestamps[position]] * (len(out) - before))  # type: ignore[index]
        return out, stamps

    def _event_rows(self, is_left: bool, records: list[Any], timestamps: list[int] | None,
                    get_key: Callable[[Any], Any], set_key: Callable[[Any], None],
                    timers: Any) -> tuple[list[Any], list[int] | None]:
        """``_process`` of each row on event time, its steps inline: the operator time, the
        other side's expiration and the timer registration looked up once per batch."""
        own, other, time_of, own_size, other_size = self._sides[is_left]
        operator_time = self._operator_time(timers)
        times = _rowtimes(time_of, records)
        register = _event_registrar(timers)
        own_value, own_update, other_value = own.state.value, own.state.update, other.state.value
        expirations, other_key = self._expirations, not is_left
        expiration = self._expiration(operator_time, other_size)
        clean_up_after = own_size + self.min_clean_up_interval + 1
        one_time, join_one = not other.outer and self.condition is None, self._join_one_time
        out: list[Any] = []
        stamps: list[int] | None = None if timestamps is None else []
        for position, row in enumerate(records):
            set_key(get_key(row))
            if row._row_kind is not INSERT:
                raise NotInsertOnlyError(type(self).__name__, row._row_kind.name)
            values, time, before = tuple(row._values), times[position], len(out)
            upper, emitted = time + own_size, False
            if expirations[other_key] < upper:
                expirations[other_key] = expiration
                cached = other_value()
                if cached is not None:
                    emitted = (join_one if one_time and len(cached[_ENTRIES]) == 1
                               else self._join_cached)(cached, values, is_left, other,
                                                       time - other_size, upper, expiration, out)
            if operator_time < upper:
                cache = own_value()
                if cache is None:  # _add to a _new_cache(), and its clean-up timer
                    clean_up = int(time + clean_up_after)
                    own_update([16, 1, clean_up, {time: (0, [(values, emitted)])}])
                    register(clean_up, None)
                else:
                    _add(cache, time, values, emitted)
                    if cache[_TIMER] is None:
                        cache[_TIMER] = clean_up = int(time + clean_up_after)
                        register(clean_up, None)
                    own_update(cache)
            elif not emitted and own.outer:
                out.append(self._padded(values, is_left))
            if stamps is not None and len(out) > before:
                stamps.extend([timestamps[position]] * (len(out) - before))  # type: ignore[index]
        return out, stamps

    def _process(self, row: Any, timers: Any, is_left: bool, operator_time: int,
                 out: list[Any]) -> None:
        if row._row_kind is not INSERT:
            raise NotInsertOnlyError(type(self).__name__, row._row_kind.name)
        values = tuple(row._values)
        own, other, time_of, own_size, other_size = self._sides[is_left]
        time = operator_time if time_of is None else time_of(row)
        # a left row joins right rows in [time - right size, time + left size]; and mirrored
        lower, upper = time - other_size, time + own_size
        emitted = False
        # Flink skips the other side's rows while its last expiration time (a field of the
        # operator, shared by every key and not checkpointed) is not below this row's upper
        # bound: no row there can be joined or expired now
        if self._expirations[not is_left] < upper:
            expiration = self._expiration(operator_time, other_size)
            self._expirations[not is_left] = expiration
            cached = other.state.value()
            if cached is not None:
                emitted = self._join_cached(cached, values, is_left, other, lower, upper,
                                            expiration, out)
        if operator_time < upper:
            cache = own.state.value() or _new_cache()
            _add(cache, time, values, emitted)
            if cache[_TIMER] is None:
                cache[_TIMER] = self._register_clean_up(timers, time, is_left)
            own.state.update(cache)
        elif not emitted and own.outer:
            out.append(self._padded(values, is_left))

    def _join_cached(self, cache: list[Any], values: tuple[Any, ...], is_left: bool,
                     other: _Side, lower: int, upper: int, expiration: int,
                     out: list[Any]) -> bool:
        """Joins the row with ``other``'s cached rows (``cache``, its state's value) in its
        bounds and expires theirs; whether it joined any."""
        entries = cache[_ENTRIES]
        if not entries:
            return False
        if len(entries) == 1 and not other.outer and self.condition is None:
            return self._join_one_time(cache, values, is_left, other, lower, upper,
                                       expiration, out)
        joinable = True
        for index in self._left_nulls if is_left else self._right_nulls:
            if values[index] is None:
                joinable = False
                break
        emitted = changed = False
        ordered = list(entries.items()) if len(entries) < 2 else _ordered(cache)
        for other_time, (sequence, rows) in ordered:
            if joinable and lower <= other_time <= upper:
                marked = self._join_rows(values, is_left, other.outer, rows, out)
                if marked is not None:
                    emitted = True
                    if marked is not rows:
                        entries[other_time] = (sequence, marked)
                        rows, changed = marked, True
            if other_time <= expiration:
                if other.outer:
                    out.extend(self._padded(record, not is_left)
                               for record, joined in rows if not joined)
                del entries[other_time]
                changed = True
        if changed:
            other.state.update(cache)
        return emitted

    def _join_one_time(self, cache: list[Any], values: tuple[Any, ...], is_left: bool,
                       other: _Side, lower: int, upper: int, expiration: int,
                       out: list[Any]) -> bool:
        """``_join_cached`` when the other side holds one time, is not an outer side and no
        condition is left: its rows all join when the time is in bounds (no row to mark),
        and the time is dropped when it expired."""
        entries = cache[_ENTRIES]
        ((other_time, (_sequence, rows)),) = entries.items()
        emitted = False
        if lower <= other_time <= upper:
            for index in self._left_nulls if is_left else self._right_nulls:
                if values[index] is None:
                    break
            else:
                out.extend([new_row([*values, *record], INSERT) for record, _ in rows]
                           if is_left else
                           [new_row([*record, *values], INSERT) for record, _ in rows])
                emitted = True
        if other_time <= expiration:
            del entries[other_time]
            other.state.update(cache)
        return emitted

    def _join_rows(self, values: tuple[Any, ...], is_left: bool, outer: bool,
                   rows: list[tuple[Any, bool]], out: list[Any]) -> list[tuple[Any, bool]] | None:
        """Joins the row with one time's ``rows`` of the other side: None if none matched,
        else ``rows`` with the matched ones marked joined (a new list if any changed, as the
        stored one may be shared with a snapshot on some backends)."""
        condition = self.condition
        marked: list[tuple[Any, bool]] | None = None
        matched = False
        for index, (record, joined) in enumerate(rows):
            if condition is not None and not (condition(values, record) if is_left
                                              else condition(record, values)):
                continue
            out.append(new_row([*values, *record] if is_left else [*record, *values], INSERT))
            matched = True
            if outer and not joined:
                if marked is None:
                    marked = list(rows)
                marked[index] = (record, True)
        if not matched:
            return None
        return rows if marked is None else marked

    # -- clean-up timers ------------------------------------------------------------------

    def on_timer(self, timestamp: int, ctx: Any) -> list[Any]:
        out: list[Any] = []
        timers = ctx.timer_service()
        self._clean_up(timestamp, timers, self._operator_time(timers), out)
        return out

    def on_event_timers(self, timers: Iterable[tuple[int, Any, Any]], ctx: Any
                        ) -> tuple[list[Any], list[int]]:
        """A watermark's due timers, each with its key set (``runtime.tasks.
        co_batch_operator``), as ``on_timer`` each: the outputs, and each one's timestamp
        (its timer's)."""
        out: list[Any] = []
        stamps: list[int] = []
        service = ctx.timer_service()
        right_side, left_side = self._right, self._left
        right_value, left_value = right_side.state.value, left_side.state.value
        expirations, inner = self._expirations, (not right_side.outer, not left_side.outer)
        right_expiration = left_expiration = 0  # set once the first timer set the watermark
        started = False
        for timestamp, _key, _namespace in timers:
            if not started:
                operator_time, started = self._operator_time(service), True
                right_expiration = self._expiration(operator_time, self.right_relative_size)
                left_expiration = self._expiration(operator_time, self.left_relative_size)
            before = len(out)
            right = right_value()
            if right is not None and right[_TIMER] == timestamp:  # the right rows' clean-up
                expirations[False] = right_expiration
                entries = right[_ENTRIES]  # _expire's common case inline: one time, expired
                if inner[0] and len(entries) == 1 and min(entries) <= right_expiration:
                    right_side.state.clear()
                else:
                    self._expire(service, out, right_side, right, right_expiration, False)
            left = left_value()
            if left is not None and left[_TIMER] == timestamp:  # the left rows' clean-up
                expirations[True] = left_expiration
                entries = left[_ENTRIES]
                if inner[1] and len(entries) == 1 and min(entries) <= left_expiration:
                    left_side.state.clear()
                else:
                    self._expire(service, out, left_side, left, left_expiration, True)
            if len(out) > before:
                stamps.extend([timestamp] * (len(out) - before))
        return out, stamps

    def _clean_up(self, timestamp: int, timers: Any, operator_time: int,
                  out: list[Any]) -> None:
        right = self._right.state.value()
        if right is not None and right[_TIMER] == timestamp:  # the right rows' clean-up
            self._expirations[False] = self._expiration(operator_time, self.right_relative_size)
            self._expire(timers, out, self._right, right, self._expirations[False], False)
        left = self._left.state.value()
        if left is not None and left[_TIMER] == timestamp:  # the left rows' clean-up
            self._expirations[True] = self._expiration(operator_time, self.left_relative_size)
            self._expire(timers, out, self._left, left, self._expirations[True], True)

    def _expire(self, timers: Any, out: list[Any], side: _Side, cache: list[Any],
                expiration: int, is_left: bool) -> None:
        entries = cache[_ENTRIES]
        if len(entries) == 1 and not side.outer:  # the common case: one time, expired
            for time in entries:
                if time <= expiration:
                    side.state.clear()
                    return
        earliest = -1
        expired = []
        for time, (_sequence, rows) in _ordered(cache):
            if time <= expiration:
                if side.outer:
                    out.extend(self._padded(record, is_left) for record, joined in rows
                               if not joined)
                expired.append(time)
            elif time < earliest or earliest < 0:
                earliest = time
        if earliest > 0:  # as Flink: a row left at time 0 does not keep the cache
            for time in expired:
                del entries[time]
            cache[_TIMER] = self._register_clean_up(timers, earliest, is_left)
            side.state.update(cache)
        else:  # nothing stays: one clear instead of a removal per time
            side.state.clear()

    # -- output rows ----------------------------------------------------------------------------

    def _padded(self, values: tuple[Any, ...], is_left: bool) -> Any:
        if is_left:
            return new_row([*values, *((None,) * self.right_arity)], INSERT)
        return new_row([*((None,) * self.left_arity), *values], INSERT)
