"""Planning time-bounded joins onto the DataStream (issue 32): the ``Translator``'s handlers of
``IntervalJoin`` — both inputs keyed by the equi-join fields and connected into
``interval_join.IntervalJoinFunction`` with the bounds the binder found, each side's rowtime
read from its time attribute field (``RowtimeOf``) or, on processing time, the clock — and of
``TemporalJoin`` — keyed by the equi-join fields (the versioned table's primary key) into
``temporal_join.TemporalRowTimeJoinFunction``.

Refuses an updating input of an interval join as Flink does (it consumes insert-only input). Runs
on the driver; the function built here is picklable.
"""

from __future__ import annotations

from typing import Any

from flintlock.common.changelog_rows import CHANGELOG_ROWS as ROWS
from flintlock.datastream.changelog.interval_join import IntervalJoinFunction
from flintlock.datastream.changelog.join import JoinType
from flintlock.datastream.changelog.temporal_join import TemporalRowTimeJoinFunction
from flintlock.datastream.data_stream import DataStream
from flintlock.table.codegen.compiler import compile_join_condition
from flintlock.table.errors import TableException
from flintlock.table.plan import nodes as n
from flintlock.table.plan.changelog import ChangelogKind, describe, first_updating, mode
from flintlock.table.plan.time_join_nodes import IntervalJoin, TemporalJoin
from flintlock.table.planner.windows import RowtimeOf

__all__ = ["translate_interval_join", "translate_temporal_join"]


def translate_interval_join(translator: Any, node: IntervalJoin) -> DataStream:
    for side in node.inputs:
        if mode(side) is ChangelogKind.UPDATES:
            raise TableException(
                "StreamPhysicalIntervalJoin doesn't support consuming update and delete "
                f"changes which is produced by node {describe(first_updating(side))}")
    left: DataStream = translator.stream(node.left)
    right: DataStream = translator.stream(node.right)
    condition = compile_join_condition(node.condition) if node.condition is not None else None
    function = IntervalJoinFunction(
        JoinType[node.kind.value], len(node.left.fields), len(node.right.fields),
        node.left_keys, node.right_keys, node.lower_bound, node.upper_bound,
        None if node.proctime else RowtimeOf(node.left_time),
        None if node.proctime else RowtimeOf(node.right_time),
        condition, proctime=node.proctime)
    connected = left.connect(right).key_by(function.left_key_selector(),
                                           function.right_key_selector())
    joined: DataStream = connected.process(function, ROWS)
    return joined


def translate_temporal_join(translator: Any, node: TemporalJoin) -> DataStream:
    left: DataStream = translator.stream(node.left)
    right: DataStream = translator.stream(node.right)
    condition = compile_join_condition(node.condition) if node.condition is not None else None
    function = TemporalRowTimeJoinFunction(
        len(node.left.fields), len(node.right.fields), node.left_keys, node.right_keys,
        RowtimeOf(node.left_time), RowtimeOf(node.right_time), condition,
        node.kind is n.JoinKind.LEFT, translator.state_retention_ms)
    connected = left.connect(right).key_by(function.left_key_selector(),
                                           function.right_key_selector())
    joined: DataStream = connected.process(function, ROWS)
    return joined
