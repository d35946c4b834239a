"""Flink's mini-batch aggregation (``table.exec.mini-batch.enabled``), one phase and two
phases (local-global), on the bundle operators (``runtime.tasks.bundle_process_operator``:
the planner sets the bundle size to ``table.exec.mini-batch.size`` and its time to
``table.exec.mini-batch.allow-latency``).

One phase — ``MiniBatchGroupAggFunction(grouping, calls, key_tags, generate_update_before,
state_retention_ms)``, keyed by the grouping fields: the rows of a bundle are buffered per key
and each key is aggregated at the bundle's end, exactly as ``bundled_agg`` does for Python
aggregate functions (+I for a new key, -U/+U when the result changed, -D when the last row was
retracted; a state retention time turns off the unchanged-result suppression, as Flink does),
with the keys in the order Flink's buffer — a Java ``HashMap`` of the keys as
``BinaryRowData`` — walks them (``binary_rows.hash_map_order`` with the keys' type tags).

Two phases — before the shuffle, ``MiniBatchLocalAggFunction(grouping, calls, key_tags)``
(BUNDLE_PROCESS, not keyed) folds each row into its key's partial state in the bundle (a
retraction counts minus one and retracts); at the bundle's end it emits one +I row per key,
in Flink's order: the key fields, then the partial state as one field. After the shuffle,
``MiniBatchGlobalAggFunction(width, calls, key_tags, generate_update_before,
state_retention_ms)`` (keyed by the ``width`` key fields) merges a bundle's partial states per
key into the stored accumulators and emits as the one-phase function does. A partial state and
a stored state are both ``[count, accumulators, distinct maps]`` (``bundled_agg``); merging
needs every call's ``merge`` and no DISTINCT call (the planner falls back to one phase).

Built on the planner's thread, pickled to the TaskManagers; the task thread owns them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from flintlock.common.state import StateTtlConfig, ValueStateDescriptor
from flintlock.common.types import Row
from flintlock.datastream.changelog.binary_rows import hash_map_order
from flintlock.datastream.changelog.bundled_agg import ACC_STATE, BundledGroupAggFunction
from flintlock.datastream.changelog.group_agg import AggregateCall
from flintlock.datastream.changelog.rows import INSERT, key_selector, new_row
from flintlock.datastream.functions import ProcessFunction, RuntimeContext


def _key_fields(width: int) -> Callable[[Any], tuple[Any, ...]]:
    """A key's field values (the key selector gives a bare value for one field)."""
    if width == 1:
        return lambda key: (key,)
    return lambda key: key


def _state_descriptor(state_retention_ms: int) -> ValueStateDescriptor:
    descriptor = ValueStateDescriptor(ACC_STATE, None)
    if state_retention_ms > 0:
        descriptor.enable_time_to_live(StateTtlConfig.new_builder(state_retention_ms).build())
    return descriptor


class MiniBatchGroupAggFunction(BundledGroupAggFunction):
    """One-phase mini-batch GROUP BY (module docstring)."""

    def __init__(self, grouping: Sequence[int], calls: Sequence[AggregateCall],
                 key_tags: Sequence[str | None] | None, generate_update_before: bool = True,
                 state_retention_ms: int = 0) -> None:
        super().__init__(grouping, calls, generate_update_before)
        self.key_tags = None if key_tags is None else tuple(key_tags)
        self.state_retention_ms = state_retention_ms
        self.suppress_unchanged = state_retention_ms == 0

    def open(self, runtime_context: RuntimeContext) -> None:
        super().open(runtime_context)
        self._state = runtime_context.get_state(_state_descriptor(self.state_retention_ms))

    def bundle_order(self, keys: list[Any]) -> list[Any]:
        return hash_map_order(keys, self.key_tags, _key_fields(len(self.grouping)))


class MiniBatchLocalAggFunction(ProcessFunction):
    """The local half of a two-phase mini-batch GROUP BY (module docstring)."""

    def __init__(self, grouping: Sequence[int], calls: Sequence[AggregateCall],
                 key_tags: Sequence[str | None] | None) -> None:
        # the row folding is bundled_agg's: one instance does the arithmetic, no state
        self._fold = BundledGroupAggFunction(grouping, calls)
        self.grouping = tuple(grouping)
        self.key_tags = None if key_tags is None else tuple(key_tags)

    def open(self, runtime_context: RuntimeContext) -> None:
        self._fold.open_without_state(runtime_context)

    def close(self) -> None:
        self._fold.close()

    def key_selector(self) -> Callable[[Any], Any]:
        return key_selector(self.grouping)

    def add_input(self, partial: list[Any] | None, row: Row) -> list[Any]:
        if partial is None:
            partial = self._fold._new_state()
        self._fold._apply(partial, row)
        return partial

    def finish_bundle(self, bundle: dict[Any, list[Any]]) -> list[Row]:
        fields = _key_fields(len(self.grouping))
        return [new_row([*fields(key), bundle[key]], INSERT)
                for key in hash_map_order(list(bundle), self.key_tags, fields)]

    def process_element(self, value: Any, ctx: Any) -> Any:
        raise TypeError("MiniBatchLocalAggFunction runs as a BUNDLE_PROCESS operator")


class MiniBatchGlobalAggFunction(MiniBatchGroupAggFunction):
    """The global half of a two-phase mini-batch GROUP BY (module docstring): its input rows
    are the local half's (key fields, partial state)."""

    def __init__(self, width: int, calls: Sequence[AggregateCall],
                 key_tags: Sequence[str | None] | None, generate_update_before: bool = True,
                 state_retention_ms: int = 0) -> None:
        super().__init__(tuple(range(width)), calls, key_tags, generate_update_before,
                         state_retention_ms)

    def _merge(self, into: list[Any], partial: list[Any]) -> None:
        into[0] += partial[0]
        for call, accumulator, other in zip(self.calls, into[1], partial[1], strict=True):
            call.function.merge(accumulator, [other])

    def process_bundle(self, rows: list[Row], ctx: Any) -> list[Row]:
        width = len(self.grouping)
        buffered = self._new_state()
        for row in rows:
            self._merge(buffered, row._values[width])
        state = self._state.value()
        previous = None if state is None else self._values(state)
        if state is None:
            state = self._new_state()
        self._merge(state, buffered)
        return self._result(list(rows[0]._values[:width]), previous, state)
