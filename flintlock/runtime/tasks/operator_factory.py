"""Turns the description a stream node carries (``OperatorSpec``) into the operator a subtask runs.

``create_operator(spec)`` is the one place that knows every operator class, one per
``OperatorKind`` of ``flintlock.common.operator_spec``: the function operators of
``operators``, sources, sinks, windows, broadcast, cache, async I/O and timestamp assignment.
It imports those modules; none of them imports it, so the operators form no circle with their
factory. Called by the TaskManager when it deploys a subtask (its deploying thread).

The async I/O operator is imported when a job has one: it brings asyncio (8-14 ms), which no
other operator needs, and these modules are imported by every TaskManager (and Spark's
Python daemon) before its first record.
"""

from __future__ import annotations

from collections.abc import Callable

from flintlock.common.operator_spec import OperatorKind, OperatorSpec
from flintlock.runtime.tasks.batch_process_operator import KeyedBatchProcessOperator
from flintlock.runtime.tasks.broadcast_operator import BroadcastProcessOperator
from flintlock.runtime.tasks.bundle_process_operator import (
    BundleProcessOperator,
    KeyedBundleProcessOperator,
)
from flintlock.runtime.tasks.cache_operator import CacheOperator
from flintlock.runtime.tasks.co_batch_operator import KeyedCoBatchOperator, takes_batches
from flintlock.runtime.tasks.keyed_rows_operator import KeyedRowsOperator, takes_keyed_batches
from flintlock.runtime.tasks.operator import StreamOperator
from flintlock.runtime.tasks.operators import (
    CoOperator,
    FilterOperator,
    FlatMapOperator,
    KeyedFunctionOperator,
    MapOperator,
    ProcessOperator,
    ReduceOperator,
)
from flintlock.runtime.tasks.sinks import create_sink_operator
from flintlock.runtime.tasks.sources import create_source_operator
from flintlock.runtime.tasks.timestamps_operator import TimestampsAndWatermarksOperator
from flintlock.runtime.tasks.window_operator import WindowOperator


def _async_wait_operator(spec: OperatorSpec) -> StreamOperator:
    from flintlock.runtime.tasks.async_operator import AsyncWaitOperator

    return AsyncWaitOperator(spec)


_FACTORIES: dict[OperatorKind, Callable[[OperatorSpec], StreamOperator]] = {
    OperatorKind.SOURCE: create_source_operator,
    OperatorKind.SINK: create_sink_operator,
    OperatorKind.BROADCAST_PROCESS: BroadcastProcessOperator,
    OperatorKind.KEYED_BROADCAST_PROCESS: BroadcastProcessOperator,
    OperatorKind.WINDOW: WindowOperator,
    OperatorKind.CACHE: CacheOperator,
    OperatorKind.ASYNC: _async_wait_operator,
    OperatorKind.TIMESTAMPS: TimestampsAndWatermarksOperator,
    OperatorKind.MAP: MapOperator,
    OperatorKind.FLAT_MAP: FlatMapOperator,
    OperatorKind.FILTER: FilterOperator,
    OperatorKind.PROCESS: ProcessOperator,
    OperatorKind.KEYED_PROCESS: ProcessOperator,
    OperatorKind.KEYED_BATCH_PROCESS: KeyedBatchProcessOperator,
    OperatorKind.KEYED_BUNDLE_PROCESS: KeyedBundleProcessOperator,
    OperatorKind.BUNDLE_PROCESS: BundleProcessOperator,
    OperatorKind.REDUCE: ReduceOperator,
    OperatorKind.AGGREGATION: ReduceOperator,
    OperatorKind.CO_MAP: CoOperator,
    OperatorKind.CO_FLAT_MAP: CoOperator,
    OperatorKind.CO_PROCESS: CoOperator,
    OperatorKind.KEYED_CO_PROCESS: CoOperator,
}
_KEYED_FUNCTIONS = frozenset({OperatorKind.MAP, OperatorKind.FLAT_MAP, OperatorKind.FILTER})


def create_operator(spec: OperatorSpec) -> StreamOperator:
    """The runtime operator for ``spec`` (sources and sinks included)."""
    if spec.keyed and spec.kind in _KEYED_FUNCTIONS:
        return KeyedFunctionOperator(spec)
    if spec.kind is OperatorKind.KEYED_CO_PROCESS and takes_batches(spec.function):
        return KeyedCoBatchOperator(spec)
    if spec.kind is OperatorKind.KEYED_PROCESS and takes_keyed_batches(spec.function):
        return KeyedRowsOperator(spec)
    return _FACTORIES[spec.kind](spec)
