"""Regular (unbounded) equi-join of two changelogs: Flink's ``StreamingJoinOperator`` without
mini-batch, as a ``KeyedCoProcessFunction`` keyed by the equi-join fields on both inputs.

State per join key and side: a ``MapState`` from a row's values (a tuple) to its multiplicity
— Flink's "input side has no unique key" view — and, on an outer side (the left of a LEFT
join, both of a FULL join), also its number of associations: how many rows of the other side
it joins with, so a null-padded row is retracted or re-emitted exactly when that number
leaves or reaches 0. Records of one key come out in the order they were first stored.

For a row arriving on one side ("input"), with ``matches`` the other side's stored rows (each
repeated by its multiplicity) that satisfy the residual ``condition``:

* accumulate (+I, +U), input side outer: no match -> ``+I[input, null...]``, stored with 0
  associations; else, per match: (other side outer, match had 0 associations ->
  ``-D[null..., other]``; its associations + 1) then ``+I[input, other]``; stored with
  ``len(matches)`` associations.
* accumulate, input side inner: stored; per match: other side outer -> as above; else
  ``[input, other]`` with the input's own kind (+I or +U).
* retract (-U, -D): removed from the state first; no match -> ``-D[input, null...]`` if the
  input side is outer; else per match ``[input, other]`` as ``-D`` (input side outer) or with
  the input's own kind (-D or -U), then (other side outer) the match's associations - 1, and
  ``+I[null..., other]`` when it had exactly 1.

Output rows are the left fields followed by the right fields (``left_arity`` +
``right_arity``), null-padded on the side that has no match. A row whose equi-join key has a
null in a field that SQL's ``=`` compares matches nothing (``filter_null_keys``; IS NOT
DISTINCT FROM keys pass False), though an outer row is still emitted null-padded.

Constructor (what the planner passes)::

    StreamingJoinFunction(join_type, left_arity, right_arity, left_keys, right_keys,
                          condition=None, filter_null_keys=None, state_retention_ms=0)

* ``join_type`` — ``JoinType.INNER`` / ``LEFT`` / ``RIGHT`` / ``FULL``.
* ``left_arity``, ``right_arity`` — number of fields of each input row.
* ``left_keys``, ``right_keys`` — positions of the equi-join fields in each input, pairwise;
  key input 1 with ``left_key_selector()`` and input 2 with ``right_key_selector()``.
* ``condition`` — the non-equi residual ``condition(left, right) -> bool`` over the two rows'
  values (sequences indexed by field position); None: always true.
* ``filter_null_keys`` — per key field, whether a null there never matches (default: all).
* ``state_retention_ms`` — > 0 puts that TTL on both sides' state (Flink's
  ``table.exec.state.ttl``).

Threads: built on the planner's thread; the task thread owns the function once opened.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from typing import Any

from flintlock.common.state import MapStateDescriptor, StateTtlConfig
from flintlock.datastream.changelog.errors import InvalidOperatorArgumentError
from flintlock.datastream.changelog.rows import DELETE, INSERT, UPDATE_AFTER, key_selector, new_row
from flintlock.datastream.functions import KeyedCoProcessFunction, RuntimeContext


class JoinType(enum.Enum):
    INNER = "INNER"
    LEFT = "LEFT"
    RIGHT = "RIGHT"
    FULL = "FULL"


class _Side:
    """One input's state and shape, bound to the running function."""

    __slots__ = ("arity", "is_left", "null_key", "outer", "state")

    def __init__(self, is_left: bool, outer: bool, arity: int, null_key: Any,
                 state: Any) -> None:
        self.is_left = is_left
        self.outer = outer
        self.arity = arity
        self.null_key = null_key
        self.state = state


class StreamingJoinFunction(KeyedCoProcessFunction):
    """INNER / LEFT / RIGHT / FULL regular join; see the module docstring."""

    def __init__(self, join_type: JoinType, left_arity: int, right_arity: int,
                 left_keys: Sequence[int], right_keys: Sequence[int],
                 condition: Callable[[Any, Any], Any] | None = None,
                 filter_null_keys: Sequence[bool] | None = None,
                 state_retention_ms: int = 0) -> None:
        if not isinstance(join_type, JoinType):
            raise InvalidOperatorArgumentError("StreamingJoinFunction",
                                               f"join_type must be a JoinType, got {join_type!r}")
        if len(left_keys) != len(right_keys):
            raise InvalidOperatorArgumentError(
                "StreamingJoinFunction", f"{len(left_keys)} left key fields but "
                f"{len(right_keys)} right key fields")
        filters = tuple(filter_null_keys) if filter_null_keys is not None else (
            (True,) * len(left_keys))
        if len(filters) != len(left_keys):
            raise InvalidOperatorArgumentError(
                "StreamingJoinFunction", "filter_null_keys needs one flag per key field")
        self.join_type = join_type
        self.left_arity, self.right_arity = left_arity, right_arity
        self.left_keys, self.right_keys = tuple(left_keys), tuple(right_keys)
        self.condition = condition
        self.filter_null_keys = filters
        self.state_retention_ms = state_retention_ms

    def left_key_selector(self) -> Callable[[Any], Any]:
        return key_selector(self.left_keys)

    def right_key_selector(self) -> Callable[[Any], Any]:
        return key_selector(self.right_keys)

    def open(self, runtime_context: RuntimeContext) -> None:
        outer_left = self.join_type in (JoinType.LEFT, JoinType.FULL)
        outer_right = self.join_type in (JoinType.RIGHT, JoinType.FULL)
        self._left = _Side(True, outer_left, self.left_arity,
                           self._null_check(self.left_keys),
                           self._map_state(runtime_context, "left-records"))
        self._right = _Side(False, outer_right, self.right_arity,
                            self._null_check(self.right_keys),
                            self._map_state(runtime_context, "right-records"))

    def _map_state(self, runtime_context: RuntimeContext, name: str) -> Any:
        descriptor = MapStateDescriptor(name, None, None)
        if self.state_retention_ms > 0:
            descriptor.enable_time_to_live(
                StateTtlConfig.new_builder(self.state_retention_ms).build())
        return runtime_context.get_map_state(descriptor)

    def _null_check(self, keys: Sequence[int]) -> tuple[int, ...]:
        return tuple(k for k, f in zip(keys, self.filter_null_keys, strict=True) if f)

    def process_element1(self, value: Any, ctx: Any) -> list[Any]:
        if self.join_type is JoinType.INNER:
            return self._inner(value, self._left, self._right)
        return self._process(value, self._left, self._right)

    def process_element2(self, value: Any, ctx: Any) -> list[Any]:
        if self.join_type is JoinType.INNER:
            return self._inner(value, self._right, self._left)
        return self._process(value, self._right, self._left)

    def _inner(self, row: Any, side: _Side, other: _Side) -> list[Any]:
        """An INNER join's step in one function (what ``_accumulate`` / ``_retract`` do when
        neither side is outer): the row counted in or out of its side's multiplicities, then
        joined, with its own kind, with each copy of every match."""
        values = tuple(row._values)
        kind = row._row_kind
        state = side.state
        stored = state.get(values)
        if kind is INSERT or kind is UPDATE_AFTER:
            state.put(values, 1 if stored is None else stored + 1)
        elif stored is not None:
            if stored > 1:
                state.put(values, stored - 1)
            else:
                state.remove(values)
        for index in side.null_key:
            if values[index] is None:
                return []
        matches = other.state.items()
        if not matches:
            return []
        condition, left = self.condition, side.is_left
        out: list[Any] = []
        for record, count in matches:
            if condition is not None and not (condition(values, record) if left
                                              else condition(record, values)):
                continue
            for _ in range(count):
                out.append(new_row([*values, *record] if left else [*record, *values], kind))
        return out

    # -- a batch at a time (runtime.tasks.co_batch_operator) -------------------------------

    def process_batch(self, index: int, records: list[Any], timestamps: list[int] | None,
                      get_key: Callable[[Any], Any], set_key: Callable[[Any], None],
                      ctx: Any) -> tuple[list[Any], list[int] | None]:
        """A batch of input ``index`` (0: left), as ``process_element1/2`` per record with
        its key set: the outputs in order, and each output's record's timestamp when
        ``timestamps`` is given. An INNER join's step runs inline (``_inner_batch``)."""
        side, other = (self._left, self._right) if index == 0 else (self._right, self._left)
        if self.join_type is JoinType.INNER and timestamps is None:
            return self._inner_batch(records, side, other, get_key, set_key), None
        step = self._inner if self.join_type is JoinType.INNER else self._process
        out: list[Any] = []
        stamps: list[int] | None = None if timestamps is None else []
        for position, row in enumerate(records):
            set_key(get_key(row))
            produced = step(row, side, other)
            if produced:
                out.extend(produced)
                if stamps is not None:
                    stamps.extend([timestamps[position]] * len(produced))  # type: ignore[index]
        return out, stamps

    def _inner_batch(self, records: list[Any], side: _Side, other: _Side,
                     get_key: Callable[[Any], Any], set_key: Callable[[Any], None]) -> list[Any]:
        """``_inner`` for each record of a plain batch, in one loop. The other side's state
        does not change during the batch, so its rows are read once per key (without TTL,
        whose reads depend on the time)."""
        get, put, remove = side.state.get, side.state.put, side.state.remove
        matches_of, null_key = other.state.items, side.null_key
        single = null_key[0] if len(null_key) == 1 else -1  # one key column: no generator
        condition, left = self.condition, side.is_left
        read: dict[Any, Any] | None = {} if self.state_retention_ms <= 0 else None
        out: list[Any] = []
        append = out.append
        for row in records:
            key = get_key(row)
            set_key(key)
            values, kind = tuple(row._values), row._row_kind
            stored = get(values)
            if kind is INSERT or kind is UPDATE_AFTER:
                put(values, 1 if stored is None else stored + 1)
            elif stored is not None:
                if stored > 1:
                    put(values, stored - 1)
                else:
                    remove(values)
            if read is None:
                matches = matches_of()
            else:
                matches = read.get(key)
                if matches is None:
                    matches = read[key] = matches_of()
            if not matches or (values[single] is None if single >= 0 else
                               any(values[i] is None for i in null_key)):
                continue
            for record, count in matches:
                if condition is not None and not (condition(values, record) if left
                                                  else condition(record, values)):
                    continue
                joined = [*values, *record] if left else [*record, *values]
                append(new_row(joined, kind))
                for _ in range(count - 1):
                    append(new_row(list(joined), kind))
        return out

    def on_event_timers(self, timers: Any, ctx: Any) -> tuple[list[Any], list[int]]:
        """A watermark's due timers: a regular join registers none (its TTL is the state's)."""
        for _timer in timers:
            pass
        return [], []

    # -- the algorithm ------------------------------------------------------------------------

    def _matches(self, values: tuple[Any, ...], side: _Side,
                 other: _Side) -> list[tuple[tuple[Any, ...], int, int]]:
        """(other row, its multiplicity, its associations) once per copy, in state order."""
        for index in side.null_key:
            if values[index] is None:
                return []
        condition = self.condition
        found = []
        for record, stored in other.state.items():
            count, associations = stored if other.outer else (stored, -1)
            if condition is not None and not (condition(values, record) if side.is_left
                                              else condition(record, values)):
                continue
            found.extend([(record, count, associations)] * count)
        return found

    def _process(self, row: Any, side: _Side, other: _Side) -> list[Any]:
        values = tuple(row._values)
        kind = row._row_kind
        out: list[Any] = []
        if kind is INSERT or kind is UPDATE_AFTER:
            self._accumulate(values, kind, side, other, out)
        else:
            self._retract(values, kind, side, other, out)
        return out

    def _accumulate(self, values: tuple[Any, ...], kind: Any, side: _Side, other: _Side,
                    out: list[Any]) -> None:
        if not side.outer:
            state = side.state
            state.put(values, (state.get(values) or 0) + 1)
        matches = self._matches(values, side, other)
        if side.outer and not matches:
            out.append(self._padded(values, side, INSERT))
            self._store_outer(side, values, 0)
            return
        for record, _count, associations in matches:
            if other.outer:
                if associations == 0:
                    out.append(self._padded(record, other, DELETE))
                self._set_associations(other, record, associations + 1)
                out.append(self._joined(values, record, side, INSERT))
            else:
                out.append(self._joined(values, record, side, INSERT if side.outer else kind))
        if side.outer:
            self._store_outer(side, values, len(matches))

    def _retract(self, values: tuple[Any, ...], kind: Any, side: _Side, other: _Side,
                 out: list[Any]) -> None:
        self._remove(side, values)
        matches = self._matches(values, side, other)
        if not matches:
            if side.outer:
                out.append(self._padded(values, side, DELETE))
            return
        for record, _count, associations in matches:
            out.append(self._joined(values, record, side, DELETE if side.outer else kind))
            if other.outer:
                if associations == 1:
                    out.append(self._padded(record, other, INSERT))
                self._set_associations(other, record, associations - 1)

    # -- state views ----------------------------------------------------------------------------

    @staticmethod
    def _store_outer(side: _Side, values: tuple[Any, ...], associations: int) -> None:
        stored = side.state.get(values)
        side.state.put(values, (1 if stored is None else stored[0] + 1, associations))

    @staticmethod
    def _set_associations(side: _Side, values: tuple[Any, ...], associations: int) -> None:
        stored = side.state.get(values)
        if stored is not None:
            side.state.put(values, (stored[0], associations))

    @staticmethod
    def _remove(side: _Side, values: tuple[Any, ...]) -> None:
        state = side.state
        stored = state.get(values)
        if stored is None:
            return
        count = stored[0] if side.outer else stored
        if count > 1:
            state.put(values, (count - 1, stored[1]) if side.outer else count - 1)
        else:
            state.remove(values)

    # -- output rows ----------------------------------------------------------------------------

    @staticmethod
    def _joined(values: tuple[Any, ...], record: tuple[Any, ...], side: _Side,
                kind: Any) -> Any:
        return new_row([*values, *record] if side.is_left else [*record, *values], kind)

    def _padded(self, values: tuple[Any, ...], side: _Side, kind: Any) -> Any:
        if side.is_left:
            return new_row([*values, *((None,) * self.right_arity)], kind)
        return new_row([*((None,) * self.left_arity), *values], kind)
