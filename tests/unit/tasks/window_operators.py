"""The window operator run outside a task, for the window operator's and the PyFlink-parity
tests: ``window_operator`` opens one keyed by a record's first field, ``sum_reduce`` sums
second fields, ``stamped`` makes a timestamped batch of (key, value, timestamp) records."""

from __future__ import annotations

from typing import Any

from flintlock.common.operator_spec import OperatorKind, OperatorSpec, WindowSpec
from flintlock.datastream.functions import wrap_reduce
from flintlock.runtime.network.event_time import TimestampedBatch
from flintlock.runtime.state.heap import HeapKeyedStateBackend
from flintlock.runtime.state.keygroups import KeyGroupRange
from flintlock.testing.operators import CollectingOutput, ManualTimers, open_operator


def window_operator(window: WindowSpec, timers: Any = None, backend: Any = None,
                    late_tag: Any = None) -> tuple[Any, CollectingOutput, CollectingOutput]:
    """The opened window operator of ``window``, its output and its late-data side output."""
    late = CollectingOutput()
    operator, out = open_operator(
        OperatorSpec(OperatorKind.WINDOW, keyed=True, window=window),
        timers=timers or ManualTimers(),
        keyed_backend=backend or HeapKeyedStateBackend(KeyGroupRange(0, 127), 128),
        key_selectors=(lambda v: v[0],), side_outputs={"late": late} if late_tag else {})
    return operator, out, late


def sum_reduce() -> Any:
    """A reduce function summing the second fields of (key, value) records."""
    return wrap_reduce(lambda a, b: (a[0], a[1] + b[1]))


def stamped(*records: tuple[Any, Any, int]) -> TimestampedBatch:
    """(key, value) records with the timestamps of their third fields."""
    return TimestampedBatch([r[:2] for r in records], [r[2] for r in records])
