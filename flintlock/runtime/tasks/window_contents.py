"""What a window holds for the current key, and what it hands to the window function when it
fires (the contents part of Flink's ``WindowOperator``).

Two shapes, chosen once per operator:

- incremental (a reduce or aggregate function and no eviction): one accumulator per window
  (``ACCUMULATORS``: window → accumulator), folded as elements arrive;
- otherwise the elements themselves, appended in O(1) as ``(window, sequence)`` entries
  (``ELEMENTS``) with the window's sequence bounds (``BOUNDS``), so a count evictor can keep
  only the last n elements without rewriting the rest. With an ``Evictor`` each entry is
  ``(value, timestamp)`` (``timestamped``; the smallest long when the record had none, as
  Flink's sources stamp such records): the evictor sees the timestamps, and what it leaves is
  written back with ``replace``.

All of it is keyed state of the operator's backend (map states keyed by window): snapshotted,
restored and rescaled by key group. The state names are part of the savepoint format.
Belongs to the task thread; every method works on the backend's current key.
"""

from __future__ import annotations

from typing import Any

from flintlock.common.operator_spec import WindowSpec
from flintlock.common.state import MapStateDescriptor
from flintlock.runtime.network.event_time import NO_TIMESTAMP
from flintlock.runtime.tasks.window_grouping import fold_added

ACCUMULATORS = MapStateDescriptor("_flintlock_window_accumulators", None, None)
ELEMENTS = MapStateDescriptor("_flintlock_window_elements", None, None)
BOUNDS = MapStateDescriptor("_flintlock_window_bounds", None, None)


class WindowContents:
    """The contents of the current key's windows (see the module docstring)."""

    def __init__(self, backend: Any, spec: WindowSpec) -> None:
        self.incremental = spec.incremental
        self.accumulators = backend.get_partitioned_state(ACCUMULATORS)
        self._elements = backend.get_partitioned_state(ELEMENTS)
        self._bounds = backend.get_partitioned_state(BOUNDS)
        self._reduce = getattr(spec.reduce_function, "reduce", spec.reduce_function)
        self._aggregate = spec.aggregate_function
        self._keep_last = spec.keep_last
        self.timestamped = spec.evictor is not None

    def add(self, window: Any, value: Any, timestamp: int = NO_TIMESTAMP) -> None:
        """``value`` into ``window``; its ``timestamp`` is kept when ``timestamped``."""
        if self.incremental:
            self.accumulators.put(window, self.accumulate(self.accumulators.get(window), value))
            return
        self._append(window, (value, timestamp) if self.timestamped else value)

    def _append(self, window: Any, entry: Any) -> None:
        first, following = self._bounds.get(window) or (0, 0)
        self._elements.put((window, following), entry)
        self._bounds.put(window, (first, following + 1))

    def accumulate(self, accumulator: Any, value: Any) -> Any:
        """``value`` folded into ``accumulator`` (None: nothing yet)."""
        if self._aggregate is not None:
            if accumulator is None:
                accumulator = self._aggregate.create_accumulator()
            return self._aggregate.add(value, accumulator)
        return value if accumulator is None else self._reduce(accumulator, value)

    def fold_into(self, accumulator: Any, values: list[Any]) -> Any:
        """``values`` folded into ``accumulator`` in order (None: nothing yet): ``accumulate``
        for each, in one loop."""
        aggregate = self._aggregate
        if aggregate is not None:
            add = aggregate.add
            if accumulator is None:
                accumulator = aggregate.create_accumulator()
            if type(values) is list:
                return fold_added(add, values, accumulator)
            for value in values:
                accumulator = add(value, accumulator)
            return accumulator
        reduce = self._reduce
        for value in values:
            accumulator = value if accumulator is None else reduce(accumulator, value)
        return accumulator

    def _combine(self, a: Any, b: Any) -> Any:
        """Two accumulators into one (merging sessions)."""
        if a is None or b is None:
            return b if a is None else a
        if self._aggregate is not None:
            return self._aggregate.merge(a, b)
        return self._reduce(a, b)

    def _result(self, accumulator: Any) -> Any:
        return (self._aggregate.get_result(accumulator) if self._aggregate is not None
                else accumulator)

    def values(self, window: Any) -> list[Any]:
        """The window's entries, oldest first (``(value, timestamp)`` pairs when
        ``timestamped``)."""
        bounds = self._bounds.get(window)
        if bounds is None:
            return []
        get = self._elements.get
        return [get((window, sequence)) for sequence in range(*bounds)]

    def evicting_contents(self, window: Any) -> list[Any]:
        """The ``(value, timestamp)`` entries an evictor gets, after the count eviction of
        sliding count windows (``keep_last``)."""
        self._evict(window)
        return self.values(window)

    def replace(self, window: Any, entries: list[Any]) -> None:
        """The window holds ``entries`` from now on (what an evictor left)."""
        self.clear(window)
        for entry in entries:
            self._append(window, entry)

    def fold(self, values: list[Any]) -> list[Any]:
        """What the window function gets for ``values`` fired together: the values; or, with
        a reduce or aggregate function, its one result (nothing for a reduce over no
        values; an aggregate's result of an empty accumulator, as Flink's)."""
        if self._reduce is None and self._aggregate is None:
            return values
        if not values and self._aggregate is None:
            return []
        accumulator = self._aggregate.create_accumulator() if (
            self._aggregate is not None) else None
        for value in values:
            accumulator = self.accumulate(accumulator, value)
        return [self._result(accumulator)]

    def for_firing(self, window: Any) -> list[Any] | None:
        """What the window function gets when ``window`` fires (evicting first, as Flink's
        evictor before the function); None when the window holds nothing."""
        if self.incremental:
            accumulator = self.accumulators.get(window)
            return None if accumulator is None else [self._result(accumulator)]
        self._evict(window)
        contents = self.values(window)
        return self.fold(contents) if contents else None

    def _evict(self, window: Any) -> None:
        """Keeps the last ``keep_last`` elements (Flink's count evictor)."""
        keep = self._keep_last
        bounds = self._bounds.get(window)
        if keep is None or bounds is None or bounds[1] - bounds[0] <= keep:
            return
        first, following = bounds
        for sequence in range(first, following - keep):
            self._elements.remove((window, sequence))
        self._bounds.put(window, (following - keep, following))

    def clear(self, window: Any) -> None:
        if self.incremental:
            self.accumulators.remove(window)
            return
        bounds = self._bounds.get(window)
        if bounds is not None:
            for sequence in range(*bounds):
                self._elements.remove((window, sequence))
            self._bounds.remove(window)

    def move(self, source: Any, target: Any) -> None:
        """Everything of ``source`` into ``target`` (a session merged into another)."""
        if self.incremental:
            moved = self.accumulators.get(source)
            if moved is not None:
                self.accumulators.put(target, self._combine(self.accumulators.get(target), moved))
                self.accumulators.remove(source)
            return
        for entry in self.values(source):
            self._append(target, entry)
        self.clear(source)
