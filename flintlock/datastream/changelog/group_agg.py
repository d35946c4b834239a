"""Group aggregation over a changelog (Flink's ``GroupAggFunction`` without mini-batch), as a
``KeyedProcessFunction`` over ``Row``s keyed by the grouping fields.

Per key the state holds one list: [number of rows accumulated minus retracted, the
accumulators of every call]. For each input row:

* an accumulate message (+I, +U) on a key without state creates the accumulators, and the
  first result is emitted as ``+I[key..., values...]``;
* a retract message (-U, -D) on a key without state is dropped (Flink: the state may have
  expired);
* otherwise the row is accumulated or retracted; when the count reaches 0 the previous result
  is emitted as ``-D`` and the key's state is cleared; when the result did not change nothing
  is emitted (Flink's equaliser; unless a state retention time is set, then the update is
  emitted anyway so downstream state stays alive); else ``-U[old]`` (only with
  ``generate_update_before``) and ``+U[new]``.

Output rows are positional: the grouping fields (in ``grouping`` order) then one value per
aggregate call. A global aggregation (no GROUP BY) is ``grouping=()`` keyed by the constant
key ``()``: the same messages with no key fields.

Constructor (what the planner passes)::

    GroupAggFunction(grouping, calls, generate_update_before=True, state_retention_ms=0,
                     inline=True)

* ``grouping`` — field positions of the GROUP BY keys in the input row; key the input stream
  with ``key_selector(grouping)`` (``GroupAggFunction.key_selector()`` returns it).
* ``calls`` — ``AggregateCall``s, one per output value, in output order.
* ``generate_update_before`` — emit ``-U`` before each ``+U`` (the sink or a downstream
  operator needs retractions); False for upsert consumers.
* ``state_retention_ms`` — Flink's ``table.exec.state.ttl``: > 0 sets that TTL on the state
  (processing time, refreshed on write, expired never returned) and disables the
  unchanged-result suppression, as in Flink; 0 keeps state forever.
* ``inline`` — paste the built-ins' inline templates into the compiled step (default); False
  calls every function through its methods (the reference path the tests compare with).

Batches: the planner runs it as KEYED_BATCH_PROCESS (``KeyedStream._process_batches``): on
the heap backend the operator hands whole batches to ``process_batch`` (the compiled
``batch_step`` over the ``accState`` dict, no per-record calls); elsewhere (RocksDB, a TTL,
timestamped batches) it calls the per-record step. Same state, same rows either way.

Threads: built on the planner's thread, pickled to the TaskManagers; ``open`` compiles the
per-record and the batch step (``agg_codegen``) on the task thread, which owns them from then
on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from flintlock.common.column_batches import ColumnBatch
from flintlock.common.state import StateTtlConfig, ValueStateDescriptor
from flintlock.common.types import Row
from flintlock.datastream.changelog.agg_codegen import (
    StepSpec,
    compile_group_batch,
    compile_group_step,
)
from flintlock.datastream.changelog.errors import InvalidOperatorArgumentError
from flintlock.datastream.changelog.rows import key_selector
from flintlock.datastream.functions import KeyedProcessFunction, RuntimeContext


@dataclass(frozen=True, slots=True)
class AggregateCall:
    """One aggregate in a GROUP BY: ``function(arguments) FILTER (WHERE filter)``.

    * ``function`` — an object with ``create_accumulator`` / ``accumulate(acc, *args)`` /
      ``retract(acc, *args)`` / ``get_value(acc)`` (a built-in of ``aggregates`` or a user's
      ``AggregateFunction``; ``open(runtime_context)`` / ``close()`` are called if present).
    * ``arguments`` — the argument field positions in the input row (``()`` for COUNT(*)),
      or a callable ``row -> tuple`` computing them (then ``argument_count`` says how many).
    * ``filter`` — callable ``row -> bool``; rows for which it is false are neither
      accumulated nor retracted by this call.
    * ``distinct`` — the function sees each distinct argument value once (a per-key map of
      value -> number of rows holds the multiplicities).
    """

    function: Any
    arguments: tuple[int, ...] | Callable[[Row], tuple[Any, ...]] = ()
    filter: Callable[[Row], Any] | None = None
    distinct: bool = False
    argument_count: int = 1


ACC_STATE = "accState"
_PROTOCOL = ("create_accumulator", "accumulate", "get_value")


class GroupAggFunction(KeyedProcessFunction):
    """GROUP BY aggregation with retraction; see the module docstring."""

    def __init__(self, grouping: Sequence[int], calls: Sequence[AggregateCall],
                 generate_update_before: bool = True, state_retention_ms: int = 0,
                 inline: bool = True) -> None:
        for call in calls:
            if not isinstance(call, AggregateCall):
                raise InvalidOperatorArgumentError(
                    "GroupAggFunction", f"calls must be AggregateCall objects, got {call!r}")
            missing = [m for m in _PROTOCOL if not callable(getattr(call.function, m, None))]
            if missing:
                raise InvalidOperatorArgumentError(
                    "GroupAggFunction", f"the aggregate function {call.function!r} has no "
                    f"{', '.join(missing)} (an aggregate function needs {', '.join(_PROTOCOL)}, "
                    "and retract for an updating input)")
        if state_retention_ms < 0:
            raise InvalidOperatorArgumentError(
                "GroupAggFunction", f"state_retention_ms must be >= 0, got {state_retention_ms}")
        self.grouping = tuple(grouping)
        self.calls = tuple(calls)
        self.generate_update_before = generate_update_before
        self.state_retention_ms = state_retention_ms
        self.inline = inline

    def key_selector(self) -> Callable[[Any], Any]:
        return key_selector(self.grouping)

    def _spec(self) -> StepSpec:
        return StepSpec(self.grouping, self.calls, self.generate_update_before,
                        self.state_retention_ms == 0, self.inline)

    def batch_step(self) -> Callable[..., list[Any]]:
        """The same aggregation as a compiled ``process_batch(records, table, copied, own)``
        over a plain dict of key -> accumulators (``agg_codegen.compile_group_batch``): for an
        operator that holds the heap backend's ``direct_table`` of the ``accState`` value
        state, as the keyed reduce operator does. No per-record calls into the state or the
        function; the output rows of the whole batch in order. No TTL on this path."""
        return compile_group_batch(self._spec())

    def open(self, runtime_context: RuntimeContext) -> None:
        descriptor = ValueStateDescriptor(ACC_STATE, None)
        if self.state_retention_ms > 0:
            descriptor.enable_time_to_live(
                StateTtlConfig.new_builder(self.state_retention_ms).build())
        state = runtime_context.get_state(descriptor)
        self._descriptor = descriptor
        self._batch = compile_group_batch(self._spec())
        for call in self.calls:
            opener = getattr(call.function, "open", None)
            if opener is not None:
                opener(runtime_context)
        # the compiled step shadows the method below: the operator calls it directly
        self.process_element = compile_group_step(self._spec(), state)  # type: ignore[method-assign,assignment]

    def batch_state(self) -> ValueStateDescriptor:
        """The accumulators' state (after ``open``): for the batch operator
        (``runtime.tasks.batch_process_operator``), which hands ``process_batch`` its dict
        when the backend has one (heap, no TTL)."""
        return self._descriptor

    takes_column_batches = True
    """``process_batch`` also takes a ``ColumnBatch`` (the keyed batch operator then has its
    input decoded as columns, ``common.column_batches``)."""

    def process_batch(self, records: Any, access: Any) -> list[Any]:
        """The output rows of a batch (a list, or a ``ColumnBatch``), in order, as
        ``process_element`` per record would give them (``batch_step``, compiled in ``open``,
        over ``access.table``; the C kernel reads a ``ColumnBatch``'s columns)."""
        batch = self._batch
        if type(records) is ColumnBatch and getattr(batch, "kernel", None) is None:
            records = records.rows()
        return batch(records, access.table, access.copied, access.own)

    def close(self) -> None:
        for call in self.calls:
            closer = getattr(call.function, "close", None)
            if closer is not None:
                closer()

    def process_element(self, value: Any, ctx: Any) -> Any:
        raise InvalidOperatorArgumentError("GroupAggFunction",
                                           "process_element called before open()")

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("process_element", None)
        state.pop("_batch", None)
        return state


class GlobalGroupAggFunction(GroupAggFunction):
    """An aggregation without GROUP BY keys: ``GroupAggFunction(())``, keyed by ``()``."""

    def __init__(self, calls: Sequence[AggregateCall], generate_update_before: bool = True,
                 state_retention_ms: int = 0, inline: bool = True) -> None:
        super().__init__((), calls, generate_update_before, state_retention_ms, inline)
