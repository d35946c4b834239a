"""Planning event time and windows onto the DataStream (issue 32): the ``Translator``'s
handlers of ``WatermarkAssigner``, ``WindowTableFunction`` and ``WindowAggregate``.

* ``WatermarkAssigner``: ``assign_timestamps_and_watermarks`` with
  ``WatermarkStrategy.for_watermark_expression`` — each row's timestamp is its rowtime, its
  watermark the compiled watermark expression (Flink's WatermarkAssignerOperator: the largest
  so far, from 0, emitted at once when it passed the last one by more than
  ``pipeline.auto-watermark-interval``, else periodically), idle after
  ``table.exec.source.idle-timeout`` when that is set; the maximum watermark at the end of a
  bounded input. ``SOURCE_WATERMARK()`` keeps the DataStream's own watermarks.
* ``WindowTableFunction``: the row's windows appended (``window_tvf``).
* ``WindowAggregate``: keyed by its keys, ``window_agg.WindowAggFunction``.
* ``WindowRank``: keyed by its partition, ``window_rank.WindowRankFunction``.
* ``OverAggregate``: keyed by its partition, ``over_agg.OverAggFunction``.
* ``WindowJoin``: both inputs keyed by their join keys, ``window_join.WindowJoinFunction``.

A TIMESTAMP_LTZ time column aligns windows in ``table.local-time-zone``: the zone's UTC
offset now is added to the row's instant (a fixed shift; a zone's daylight-saving changes
within a job are not followed). Runs on the driver; the functions built here are picklable.
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from typing import Any

from flintlock.common.changelog_rows import CHANGELOG_ROWS as ROWS
from flintlock.common.time import Duration
from flintlock.common.watermark_strategy import TimestampAssigner, WatermarkStrategy
from flintlock.datastream.changelog.group_agg import AggregateCall
from flintlock.datastream.changelog.over_agg import OverAggFunction
from flintlock.datastream.changelog.sort_keys import SortKeySelector
from flintlock.datastream.changelog.window_agg import WindowAggFunction
from flintlock.datastream.changelog.window_assigners import field_millis, to_millis
from flintlock.datastream.changelog.window_join import WindowJoinFunction
from flintlock.datastream.changelog.window_local import LocalWindowAggFunction, split_calls
from flintlock.datastream.changelog.window_rank import WindowRankFunction
from flintlock.datastream.changelog.window_tvf import (
    AlignedWindowTableFunction,
    SessionWindowTableFunction,
)
from flintlock.datastream.data_stream import DataStream
from flintlock.table import types as t
from flintlock.table.codegen.compiler import CompiledFunction, compile_values
from flintlock.table.errors import TableException, UnsupportedFeatureError
from flintlock.table.plan import nodes as n
from flintlock.table.plan.changelog import ChangelogKind, describe, first_updating, mode
from flintlock.table.plan.rex import Call, InputRef, Literal
from flintlock.table.plan.window_nodes import (
    OverAggregate,
    WatermarkAssigner,
    WindowAggregate,
    WindowJoin,
    WindowRank,
    WindowSpec,
    WindowTableFunction,
)
from flintlock.table.time_attributes import is_proctime

__all__ = ["translate_over_aggregate", "translate_watermark_assigner",
           "translate_window_aggregate", "translate_window_join",
           "translate_window_rank", "translate_window_table_function"]


class RowtimeNullError(TableException):
    """A row reached a watermark assigner with NULL in its rowtime column."""

    def __str__(self) -> str:
        return ("RowTime field should not be null, please convert it to a non-null long "
                "value.")


class RowtimeOf:
    """``row -> epoch milliseconds`` of the rowtime field ``index``."""

    def __init__(self, index: int) -> None:
        self.index = index

    def __call__(self, row: Any) -> int:
        value = row._values[self.index]
        if value is None:
            raise RowtimeNullError()
        return to_millis(value)

    def of_rows(self, rows: Sequence[Any]) -> list[int]:
        """This of each row, a batch at a time: naive datetimes (TIMESTAMP) in one loop
        (``field_millis``), anything else (NULL, an aware value) row by row, with the errors
        above (the interval join's batch path, issue 32)."""
        try:
            return field_millis(rows, self.index)
        except TypeError:
            return [self(row) for row in rows]


class RowtimeAssigner(TimestampAssigner):
    def __init__(self, index: int) -> None:
        self.rowtime = RowtimeOf(index)

    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        return self.rowtime(value)

    def extract_timestamps(self, values: Sequence[Any]) -> list[int]:
        """``extract_timestamp`` of each value, a batch at a time: naive datetimes (TIMESTAMP)
        in one loop (``field_millis``); a batch holding anything else (NULL, an aware value) row by
        row, with ``RowtimeOf``'s errors."""
        index = self.rowtime.index
        try:
            return field_millis(values, index)
        except TypeError:
            return [self.rowtime(row) for row in values]


class WatermarkOf:
    """``row -> watermark`` (epoch milliseconds, None for a NULL) of the compiled watermark
    expression. ``timestamp_offset``: with an expression ``rowtime - <constant interval>``
    (or the rowtime itself) on a TIMESTAMP rowtime, the interval's milliseconds — a row's
    watermark is then its timestamp minus them, which the watermark emitter computes from
    the batch's timestamps without a call per row; else None."""

    def __init__(self, expression: CompiledFunction, timestamp_offset: int | None = None
                 ) -> None:
        self.expression = expression
        self.timestamp_offset = timestamp_offset

    def __call__(self, row: Any) -> int | None:
        value = self.expression(row)[0]
        return None if value is None else to_millis(value)


def translate_watermark_assigner(translator: Any, node: WatermarkAssigner) -> DataStream:
    if node.watermark is None:  # SOURCE_WATERMARK(): the DataStream's own watermarks
        own: DataStream = translator.stream(node.input)
        return own
    strategy = WatermarkStrategy.for_watermark_expression(
        WatermarkOf(compile_values([node.watermark], "_watermark"),
                    timestamp_offset(node.watermark, node.rowtime))).with_timestamp_assigner(
        RowtimeAssigner(node.rowtime))
    idle = _idle_timeout_ms(translator)
    if idle > 0:
        strategy = strategy.with_idleness(Duration.of_millis(idle))
    scan = node.input
    if (isinstance(scan, n.Scan) and scan.names == [f.name for f in scan.table.physical]
            and translator.connectors.pushes_watermarks(scan.table)):
        # pushed into the source (Flink's watermark push-down): a Kafka source makes them
        # per partition, so a partition read ahead does not make another's rows late
        pushed: DataStream = translator.connectors.source(
            translator.env, scan.table, translator, watermark_strategy=strategy)
        return pushed
    stream: DataStream = translator.stream(node.input)
    assigned: DataStream = stream.assign_timestamps_and_watermarks(strategy)
    return assigned


def timestamp_offset(watermark: Any, rowtime: int) -> int | None:
    """The milliseconds ``m`` when ``watermark`` is ``rowtime - m`` exactly for every row: the
    rowtime field read as it is, or minus a constant whole-millisecond interval, on a
    TIMESTAMP (not TIMESTAMP_LTZ: an aware value's arithmetic is by its wall clock); else
    None (the watermark is the compiled expression's, row by row)."""
    time = watermark.operands[0] if isinstance(watermark, Call) else watermark
    if not (isinstance(time, InputRef) and time.index == rowtime
            and type(time.type) is t.TimestampType):
        return None
    if time is watermark:
        return 0
    interval = watermark.operands[1]
    if (watermark.function != "-" or len(watermark.operands) != 2
            or not isinstance(interval, Literal)
            or not isinstance(interval.value, datetime.timedelta)):
        return None
    milliseconds, rest = divmod(interval.value, datetime.timedelta(milliseconds=1))
    return int(milliseconds) if not rest else None


def _idle_timeout_ms(translator: Any) -> int:
    from flintlock.common.options.table import SOURCE_IDLE_TIMEOUT

    configuration = translator.connectors.context.configuration
    return int(configuration.get(SOURCE_IDLE_TIMEOUT) or 0)


def _shift(translator: Any, time_type: t.DataType) -> tuple[int, bool]:
    """(milliseconds to add to an instant for window alignment, whether LTZ)."""
    if not isinstance(time_type, t.LocalZonedTimestampType):
        return 0, False
    from flintlock.table.table_result import zone_of

    zone = zone_of(translator.connectors.context.local_time_zone)
    offset = datetime.datetime.now(zone).utcoffset() or datetime.timedelta()
    return int(offset.total_seconds() * 1000), True


def _description(spec: WindowSpec) -> tuple[str, int, int, int]:
    if spec.kind == "SESSION":
        return ("SESSION", spec.gap, 0, 0)
    return (spec.kind, spec.size, spec.slide, spec.offset)


def translate_window_table_function(translator: Any, node: WindowTableFunction
                                    ) -> DataStream:
    stream: DataStream = translator.stream(node.input)
    shift, ltz = _shift(translator, node.input.fields[node.time_field].type)
    rowtime = RowtimeOf(node.time_field)
    window = _description(node.window)
    if node.window.kind != "SESSION":
        return stream.flat_map(AlignedWindowTableFunction(window, rowtime, shift, ltz), ROWS)
    if is_proctime(node.input.fields[node.time_field].type):
        raise UnsupportedFeatureError(
            "the SESSION window table function on a processing-time attribute without a "
            "window aggregation over it")
    function = SessionWindowTableFunction(node.partition, window, rowtime, shift, ltz)
    sessions: DataStream = stream.key_by(function.key_selector()).process(function, ROWS)
    return sessions


def translate_window_aggregate(translator: Any, node: WindowAggregate,
                               calls: list[AggregateCall]) -> DataStream:
    """``calls``: the node's aggregate calls as the changelog operators take them (the
    translator builds them as for a group aggregation over an insert-only input)."""
    stream: DataStream = translator.stream(node.input)
    shift, ltz = _shift(translator, node.input.fields[node.time_field].type)
    proctime = is_proctime(node.input.fields[node.time_field].type)
    merged = (None if proctime or shift or node.window.kind != "TUMBLE"
              or not _two_phase(translator) else split_calls(calls, len(node.group)))
    if merged is not None:  # Flink's LocalWindowAggregate -> GlobalWindowAggregate
        local = LocalWindowAggFunction(node.group, calls, _description(node.window),
                                       node.time_field, RowtimeOf(node.time_field))
        stream = stream._fold_bundles(local, ROWS)
        width = len(node.group)
        function = WindowAggFunction(range(width), merged, _description(node.window),
                                     RowtimeOf(width + len(calls)))
    else:
        function = WindowAggFunction(node.group, calls, _description(node.window),
                                     RowtimeOf(node.time_field), shift, ltz, proctime)
    aggregated: DataStream = stream.key_by(function.key_selector()).process(function, ROWS)
    return aggregated


def _two_phase(translator: Any) -> bool:
    """``table.optimizer.agg-phase-strategy`` is not ONE_PHASE (Flink splits a window
    aggregation in two wherever its calls merge, with or without mini-batch)."""
    from flintlock.common.options import table_optimizer

    configuration = getattr(getattr(translator.connectors, "context", None),
                            "configuration", None)
    if configuration is None:
        return True
    return str(configuration.get(table_optimizer.AGG_PHASE_STRATEGY)).upper() != "ONE_PHASE"


def translate_window_rank(translator: Any, node: WindowRank) -> DataStream:
    stream: DataStream = translator.stream(node.input)
    sort_key = SortKeySelector([k.index for k in node.order], [k.ascending for k in node.order],
                               [k.effective_nulls_first() for k in node.order])
    shift = _shift(translator, t.LocalZonedTimestampType(3))[0] if node.ltz else 0
    function = WindowRankFunction(node.partition, sort_key, node.limit, node.window_end,
                                  node.output_number, node.keep_last, shift)
    ranked: DataStream = stream.key_by(function.key_selector()).process(function, ROWS)
    return ranked


def translate_over_aggregate(translator: Any, node: OverAggregate,
                             calls: list[AggregateCall]) -> DataStream:
    if mode(node.input) is ChangelogKind.UPDATES:  # Flink refuses it when it plans the query
        raise TableException(
            "StreamPhysicalOverAggregate doesn't support consuming update and delete changes "
            f"which is produced by node {describe(first_updating(node.input))}")
    stream: DataStream = translator.stream(node.input)
    function = OverAggFunction(node.partition, calls, RowtimeOf(node.order), node.rows,
                               node.preceding,
                               is_proctime(node.input.fields[node.order].type))
    aggregated: DataStream = stream.key_by(function.key_selector()).process(function, ROWS)
    return aggregated


def translate_window_join(translator: Any, node: WindowJoin) -> DataStream:
    from flintlock.datastream.changelog.join import JoinType
    from flintlock.table.codegen.compiler import compile_join_condition

    left: DataStream = translator.stream(node.left)
    right: DataStream = translator.stream(node.right)
    condition = compile_join_condition(node.condition) if node.condition is not None else None
    shift = _shift(translator, t.LocalZonedTimestampType(3))[0] if node.ltz else 0
    function = WindowJoinFunction(JoinType[node.kind.value], len(node.left.fields),
                                  len(node.right.fields), node.left_keys, node.right_keys,
                                  node.left_end, node.right_end, condition, shift)
    connected = left.connect(right).key_by(function.left_key_selector(),
                                           function.right_key_selector())
    joined: DataStream = connected.process(function, ROWS)
    return joined
