"""Group aggregation with Python aggregate functions, a bundle at a time, as PyFlink runs it.

PyFlink evaluates an aggregation that calls a Python ``AggregateFunction`` (a ``udaf``) or a
``TableAggregateFunction`` (a ``udtaf``, ``flat_aggregate``) in its Python worker, which
buffers a bundle's rows per key and aggregates each key's rows when the bundle ends. So its
changelog differs from the per-row ``GroupAggFunction``: a key touched by several rows of one
bundle emits one result. The planner runs these functions as KEYED_BUNDLE_PROCESS
(``KeyedStream._process_bundles``; ``runtime.tasks.bundle_process_operator`` decides where a
bundle ends), which calls ``process_bundle(rows, ctx)`` once per key.

``BundledGroupAggFunction(grouping, calls, generate_update_before=True)`` — per key and
bundle: a key without state skips its leading retract messages (nothing to retract) and, if
that leaves no row, emits nothing; otherwise every row is accumulated (+I, +U) or retracted
(-U, -D) into the accumulators, then:

* the key had no state: ``+I[key..., values...]``;
* the count of rows (accumulated minus retracted) is 0: ``-D[previous result]`` and the state
  is cleared;
* the result changed: ``-U[previous]`` (with ``generate_update_before``) and ``+U[new]``;
  unchanged: nothing.

``BundledGroupTableAggFunction(grouping, call, generate_update_before=True)`` — one
``udtaf``: when the key had state (and ``generate_update_before``), every row its
``emit_value`` gives for the state before the bundle is retracted as ``-D``; then the rows are
applied and, unless the count is 0 (state cleared), ``emit_value`` gives the new rows as ``+I``.
A value ``emit_value`` yields becomes the row's trailing fields: a ``Row``'s or a tuple's
values, anything else one field.

Calls are ``group_agg.AggregateCall``s (argument positions or a callable, filter, distinct).
The state per key (one value state, ``accState``): [count, accumulator per call, the distinct
values' multiplicities per call]; an accumulator's ``ListView`` / ``MapView`` fields are kept
in keyed list / map states of their own (``agg_views``), as PyFlink keeps them. Output rows
are positional: the grouping fields, then the values. Built on the planner's thread and
pickled to the TaskManagers; the task thread owns it.

One difference from PyFlink 2.3.0, kept on purpose: when a bundle's rows for a new key are all
retractions, PyFlink's worker stops handling that bundle altogether (later keys of the bundle
are not aggregated); here only that key is skipped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from flintlock.common.state import ValueStateDescriptor
from flintlock.common.types import Row
from flintlock.datastream.changelog.agg_views import AccumulatorViews
from flintlock.datastream.changelog.errors import InvalidOperatorArgumentError
from flintlock.datastream.changelog.group_agg import AggregateCall
from flintlock.datastream.changelog.rows import (
    DELETE,
    INSERT,
    UPDATE_AFTER,
    UPDATE_BEFORE,
    is_accumulate,
    key_selector,
    new_row,
)
from flintlock.datastream.functions import KeyedProcessFunction, RuntimeContext

ACC_STATE = "accState"


def _argument_reader(call: AggregateCall) -> Callable[[Row], tuple[Any, ...]]:
    arguments = call.arguments
    if callable(arguments):
        return arguments
    positions = tuple(arguments)
    return lambda row: tuple(row._values[i] for i in positions)


def _distinct_changes(counts: dict[Any, int], arguments: tuple[Any, ...],
                      accumulate: bool) -> bool:
    """Counts one more (or one fewer) row of ``arguments``; True when the value enters (or
    leaves) the call's distinct set, so the function sees it."""
    value = arguments[0] if len(arguments) == 1 else arguments
    before = counts.get(value, 0)
    if accumulate:
        counts[value] = before + 1
        return before == 0
    if before <= 1:
        counts.pop(value, None)
        return before == 1
    counts[value] = before - 1
    return False


class _BundledAggregation(KeyedProcessFunction):
    """What both bundled aggregations share: the calls, the state and applying a row."""

    def __init__(self, grouping: Sequence[int], calls: Sequence[AggregateCall],
                 generate_update_before: bool, protocol: tuple[str, ...]) -> None:
        name = type(self).__name__
        for call in calls:
            if not isinstance(call, AggregateCall):
                raise InvalidOperatorArgumentError(
                    name, f"calls must be AggregateCall objects, got {call!r}")
            missing = [m for m in protocol if not callable(getattr(call.function, m, None))]
            if missing:
                raise InvalidOperatorArgumentError(
                    name, f"the aggregate function {call.function!r} has no "
                    f"{', '.join(missing)}")
        self.grouping = tuple(grouping)
        self.calls = tuple(calls)
        self.generate_update_before = generate_update_before

    def key_selector(self) -> Callable[[Any], Any]:
        return key_selector(self.grouping)

    _views: AccumulatorViews | None
    """The calls' state-backed data views (None: no accumulator has one, or no state)."""

    suppress_unchanged = True
    """Emit nothing when a key's result did not change (Flink's equaliser; off with a state
    retention time, ``mini_batch_agg``)."""

    def open(self, runtime_context: RuntimeContext) -> None:
        self.open_without_state(runtime_context)
        self._state = runtime_context.get_state(ValueStateDescriptor(ACC_STATE, None))
        self._views = AccumulatorViews.bind(runtime_context,
                                            [call.function for call in self.calls])

    def open_without_state(self, runtime_context: RuntimeContext) -> None:
        """Opens the calls (no keyed state: ``mini_batch_agg``'s local half folds rows)."""
        self._readers = [_argument_reader(call) for call in self.calls]
        self._views = None
        for call in self.calls:
            opener = getattr(call.function, "open", None)
            if opener is not None:
                opener(runtime_context)

    def close(self) -> None:
        for call in self.calls:
            closer = getattr(call.function, "close", None)
            if closer is not None:
                closer()

    def _new_state(self) -> list[Any]:
        return [0, [call.function.create_accumulator() for call in self.calls],
                [{} if call.distinct else None for call in self.calls]]

    def _apply(self, state: list[Any], row: Row) -> None:
        accumulate = is_accumulate(row)
        state[0] += 1 if accumulate else -1
        accumulators, seen = state[1], state[2]
        for index, call in enumerate(self.calls):
            if call.filter is not None and not call.filter(row):
                continue
            arguments = self._readers[index](row)
            counts = seen[index]
            if counts is not None and not _distinct_changes(counts, arguments, accumulate):
                continue
            function = call.function
            if accumulate:
                function.accumulate(accumulators[index], *arguments)
            else:
                function.retract(accumulators[index], *arguments)

    def _rows(self, rows: list[Row]) -> tuple[list[Any] | None, list[Row]]:
        """The key's state (None: none yet) and the rows to apply (a new key's leading
        retractions dropped)."""
        state = self._state.value()
        if state is not None:
            if self._views is not None:
                state = [state[0], self._views.attach(state[1]), state[2]]
            return state, rows
        start = 0
        while start < len(rows) and not is_accumulate(rows[start]):
            start += 1
        return None, rows[start:]

    def _first_state(self) -> list[Any]:
        """A new key's state, its views bound to the key's view states."""
        state = self._new_state()
        if self._views is not None:
            state[1] = self._views.adopt(state[1])
        return state

    def _store(self, state: list[Any]) -> None:
        """Stores the key's ``state`` (cleared when its count is 0), without its views."""
        if state[0] == 0:
            self._state.clear()
            if self._views is not None:
                self._views.clear()
        elif self._views is None:
            self._state.update(state)
        else:
            self._state.update([state[0], self._views.detach(state[1]), state[2]])

    def _key_values(self, row: Row) -> list[Any]:
        values = row._values
        return [values[i] for i in self.grouping]

    def process_element(self, value: Any, ctx: Any) -> Any:
        """One row is a bundle of one (the operator calls ``process_bundle``)."""
        return self.process_bundle([value], ctx)

    def process_bundle(self, rows: list[Row], ctx: Any) -> Any:
        raise NotImplementedError


class BundledGroupAggFunction(_BundledAggregation):
    """GROUP BY with Python aggregate functions, a bundle at a time (module docstring)."""

    def __init__(self, grouping: Sequence[int], calls: Sequence[AggregateCall],
                 generate_update_before: bool = True) -> None:
        super().__init__(grouping, calls, generate_update_before,
                         ("create_accumulator", "accumulate", "get_value"))

    def _values(self, state: list[Any]) -> list[Any]:
        return [call.function.get_value(acc) for call, acc in zip(self.calls, state[1],
                                                                   strict=True)]

    def process_bundle(self, rows: list[Row], ctx: Any) -> list[Row]:
        state, todo = self._rows(rows)
        if not todo:
            return []
        first = state is None
        if state is None:
            state = self._first_state()
        previous = None if first else self._values(state)
        for row in todo:
            self._apply(state, row)
        return self._result(self._key_values(todo[0]), previous, state)

    def _result(self, key: list[Any], previous: list[Any] | None, state: list[Any]
                ) -> list[Row]:
        """Stores the key's new ``state`` and returns its changelog rows; ``previous`` is its
        result before (None: the key had no state)."""
        self._store(state)
        if state[0] == 0:
            return [] if previous is None else [new_row(key + previous, DELETE)]
        current = self._values(state)
        if previous is None:
            return [new_row(key + current, INSERT)]
        if self.suppress_unchanged and previous == current:
            return []
        out = [new_row(key + current, UPDATE_AFTER)]
        if self.generate_update_before:
            out.insert(0, new_row(key + previous, UPDATE_BEFORE))
        return out


class BundledGroupTableAggFunction(_BundledAggregation):
    """``group_by(...).flat_aggregate(udtaf)``, a bundle at a time (module docstring)."""

    def __init__(self, grouping: Sequence[int], call: AggregateCall,
                 generate_update_before: bool = True) -> None:
        super().__init__(grouping, (call,), generate_update_before,
                         ("create_accumulator", "accumulate", "emit_value"))

    def _emitted(self, key: list[Any], state: list[Any], kind: Any) -> Iterator[Row]:
        for value in self.calls[0].function.emit_value(state[1][0]) or ():
            if isinstance(value, Row):
                fields = list(value._values)
            elif isinstance(value, tuple):
                fields = list(value)
            else:
                fields = [value]
            yield new_row(key + fields, kind)

    def process_bundle(self, rows: list[Row], ctx: Any) -> list[Row]:
        state, todo = self._rows(rows)
        if not todo:
            return []
        key = self._key_values(todo[0])
        out: list[Row] = []
        if state is None:
            state = self._first_state()
        elif self.generate_update_before:
            out.extend(self._emitted(key, state, DELETE))
        for row in todo:
            self._apply(state, row)
        if state[0] != 0:
            out.extend(self._emitted(key, state, INSERT))
        self._store(state)
        return out
