"""Plan → DataStream: each logical node becomes the transformations that compute its rows.

Records between the planned operators are ``Row`` objects whose value list is the node's
output schema, in order, and whose ``RowKind`` is the change they describe. Stateless nodes
(``Calc``, ``Correlate``, ``Union``) keep the kind of the row they came from; stateful nodes
run the changelog operators of ``flintlock.datastream.changelog`` on a stream keyed by their
keys, so their state is keyed state: checkpointed, rescaled by key groups, restored exactly.

One ``Translator`` per job: it memoizes the stream of each node, so a sub-plan used twice
(a view read by two sinks of a statement set) is computed once. Runs on the driver.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

from flintlock.common.changelog_rows import CHANGELOG_ROWS as ROWS
from flintlock.common.options import table_optimizer as optimizer_options
from flintlock.common.types import Row, RowKind, row_of
from flintlock.datastream.changelog import (
    aggregates,
    aggregates_retract,
    bundled_agg,
    deduplicate,
    final_rows,
    group_agg,
    join,
    mini_batch_agg,
)
from flintlock.datastream.changelog.rows import key_selector
from flintlock.datastream.changelog.sort_keys import SortKeySelector
from flintlock.datastream.changelog.top1 import Top1Function
from flintlock.datastream.changelog.topn_append import AppendOnlyTopNFunction
from flintlock.datastream.changelog.topn_retract import RetractableTopNFunction
from flintlock.datastream.data_stream import DataStream
from flintlock.datastream.functions import (
    FilterFunction,
    FlatMapFunction,
    MapFunction,
)
from flintlock.datastream.stream_execution_environment import StreamExecutionEnvironment
from flintlock.table import types as t
from flintlock.table.codegen.compiler import (
    CompiledFunction,
    compile_calc,
    compile_column_calc,
    compile_join_condition,
    compile_predicate,
    compile_projection,
    compile_values,
    is_value_identity,
)
from flintlock.table.codegen.vectorized import (
    VectorizedCalc,
    has_batch_calls,
    refuse_streaming_pandas_aggregates,
)
from flintlock.table.connectors.registry import validate
from flintlock.table.errors import UnsupportedFeatureError, ValidationError
from flintlock.table.plan import nodes as n
from flintlock.table.plan import type_rules as tr
from flintlock.table.plan.changelog import ChangelogKind, mode
from flintlock.table.plan.rewrite import fuse_calcs
from flintlock.table.plan.rex import InputRef, Rex
from flintlock.table.planner.subplan_reuse import ReuseKeys


class _UserFunctions:
    """Opens and closes the user-defined functions a compiled function calls."""

    compiled: CompiledFunction

    def open(self, runtime_context: Any) -> None:
        for function in self.compiled.user_functions():
            function.open(runtime_context)

    def close(self) -> None:
        for function in self.compiled.user_functions():
            function.close()


class CompiledMap(_UserFunctions, MapFunction):
    """A compiled projection as a MapFunction (its ``map`` is the compiled function itself)."""

    def __init__(self, compiled: CompiledFunction) -> None:
        self.compiled = compiled
        self.map = compiled.function  # type: ignore[method-assign]

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (CompiledMap, (self.compiled,))

    def map(self, value: Any) -> Any:  # shadowed by the compiled function in __init__
        return self.compiled.function(value)


class CompiledFilter(_UserFunctions, FilterFunction):
    def __init__(self, compiled: CompiledFunction) -> None:
        self.compiled = compiled
        self.filter = compiled.function  # type: ignore[method-assign]

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (CompiledFilter, (self.compiled,))

    def filter(self, value: Any) -> Any:  # shadowed by the compiled function in __init__
        return self.compiled.function(value)


class CompiledFlatMap(_UserFunctions, FlatMapFunction):
    def __init__(self, compiled: CompiledFunction) -> None:
        self.compiled = compiled
        self.flat_map = compiled.function  # type: ignore[method-assign]

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (CompiledFlatMap, (self.compiled,))

    def flat_map(self, value: Any) -> Any:  # shadowed by the compiled function in __init__
        return self.compiled.function(value)


class ConvertRecords(MapFunction):
    """A DataStream's records as rows of the table's schema (``from_data_stream``)."""

    def __init__(self, convert: Callable[[Any], list[Any]], keep_kind: bool) -> None:
        self.convert = convert
        self.keep_kind = keep_kind

    def map(self, value: Any) -> Row:
        kind = value.get_row_kind() if self.keep_kind and isinstance(value, Row) else (
            RowKind.INSERT)
        return row_of(self.convert(value), kind)


class CorrelateFunction(FlatMapFunction):
    """Each row joined with the rows a table function yields for it (``join_lateral``)."""

    def __init__(self, function: Any, arguments: CompiledFunction, width: int,
                 left_outer: bool, condition: CompiledFunction | None) -> None:
        self.function = function
        self.arguments = arguments
        self.width = width
        self.left_outer = left_outer
        self.condition = condition

    def open(self, runtime_context: Any) -> None:
        opener = getattr(self.function, "open", None)
        if opener is not None:
            opener(runtime_context)

    def close(self) -> None:
        closer = getattr(self.function, "close", None)
        if closer is not None:
            closer()

    def flat_map(self, value: Row) -> list[Row]:
        base = value._values
        out = []
        produced = self.function.eval_rows(*self.arguments(value))
        for extra in produced:
            row = row_of(base + extra, value._row_kind)
            if self.condition is None or self.condition(row):
                out.append(row)
        if not out and self.left_outer:
            out.append(row_of(base + [None] * self.width, value._row_kind))
        return out


class Translator:
    """Builds the DataStream of each plan node on ``env``."""

    def __init__(self, env: StreamExecutionEnvironment, connectors: Any,
                 streaming: bool = True, state_retention_ms: int = 0,
                 mini_batch: MiniBatch | None = None) -> None:
        self.env = env
        self.connectors = connectors
        self.streaming = streaming
        self.state_retention_ms = state_retention_ms
        self.mini_batch = mini_batch if streaming else None
        self._streams: dict[Hashable, DataStream] = {}
        self.no_update_before: frozenset[int] = frozenset()
        """Ids of the Aggregate and Rank nodes built without -U rows (``update_kinds``)."""
        configuration = getattr(getattr(connectors, "context", None), "configuration", None)
        self.reuse_sub_plans = configuration is None or bool(
            configuration.get(optimizer_options.REUSE_SUB_PLAN_ENABLED))
        """Equal sub-plans built once (``table.optimizer.reuse-sub-plan-enabled``)."""
        self._reuse: ReuseKeys | None = None

    def stream(self, node: n.PlanNode) -> DataStream:
        if self._reuse is None or self._reuse.no_update_before is not self.no_update_before:
            self._reuse = ReuseKeys(self.no_update_before, self.reuse_sub_plans)
        key = self._reuse.of(node)  # equal sub-plans: one stream (subplan_reuse, issue 33)
        known = self._streams.get(key)
        if known is None:
            handler = getattr(self, f"_t_{type(node).__name__}", None)
            if handler is None:
                raise UnsupportedFeatureError(f"the plan node {type(node).__name__}")
            known = handler(node)
            self._streams[key] = known
        return known

    # -- leaves -------------------------------------------------------------------------------

    def _t_Values(self, node: n.Values) -> DataStream:
        rows = [row_of(list(values)) for values in node.rows]
        if not rows:
            return self.env.from_collection([None]).filter(_never)
        return self.env.from_collection(rows, ROWS)

    def _t_StreamScan(self, node: n.StreamScan) -> DataStream:
        stream: DataStream = node.stream.map(ConvertRecords(node.convert, node.changelog), ROWS)
        return stream

    def _t_Scan(self, node: n.Scan) -> DataStream:
        physical = [f.name for f in node.table.physical]
        if node.names == physical:
            source: DataStream = self.connectors.source(self.env, node.table, self)
            return source
        computed = dict(node.table.computed)
        projections = [InputRef(f.type, physical.index(f.name)) if f.name in physical
                       else computed[f.name] for f in node.fields]
        fused = self._fused_source(node, projections, None)  # computed columns in the source
        if fused is not None:
            return fused
        stream: DataStream = self.connectors.source(self.env, node.table, self)
        return stream.map(CompiledMap(compile_projection(projections, "_computed")), ROWS)

    # -- stateless ----------------------------------------------------------------------------

    def _t_Calc(self, node: n.Calc) -> DataStream:
        fused_calc = fuse_calcs(node)  # a chain of Calcs is one compiled function
        node = fused_calc if isinstance(fused_calc, n.Calc) else node
        if has_batch_calls(node.condition) or any(map(has_batch_calls, node.projections)):
            # pandas / async scalar functions: a bundle at a time (codegen/vectorized.py)
            return self.stream(node.input)._fold_bundles(VectorizedCalc(
                node.projections, node.condition, len(node.input.fields),
                getattr(getattr(self.connectors, "context", None), "configuration", None)), ROWS)
        identity = is_value_identity(node.projections, len(node.input.fields))
        if node.condition is None and identity:  # e.g. a sink's widening CAST: no work
            return self.stream(node.input)
        scan = node.input
        if isinstance(scan, n.Scan) and scan.names == [f.name for f in scan.table.physical]:
            fused = self._fused_source(scan, node.projections, node.condition)
            if fused is not None:
                return fused
        stream = self.stream(node.input)
        if node.condition is not None and not identity:
            return stream.flat_map(CompiledFlatMap(compile_calc(node.projections,
                                                                node.condition)), ROWS)
        if node.condition is not None:
            return stream.filter(CompiledFilter(compile_predicate(node.condition)))
        if not identity:
            return stream.map(CompiledMap(compile_projection(node.projections)), ROWS)
        return stream

    def _fused_source(self, scan: n.Scan, projections: Sequence[Rex], condition: Rex | None
                      ) -> DataStream | None:
        """A Calc over the physical columns of ``scan``'s table (a Calc node, or the table's
        computed columns) run inside the batch loop of its source, where the connector
        builds batches column-wise and takes a Calc (``accepts_calc``: datagen) and no
        user-defined function the Calc calls needs ``open`` with an operator's runtime
        context (a plain function wrapped by ``udf`` does not); else None."""
        context = getattr(self.connectors, "context", None)
        if context is None:
            return None
        factory = validate(scan.table)
        if not getattr(factory, "accepts_calc", False):
            return None
        calc = compile_column_calc(projections, condition)
        if calc.needs_open():
            return None
        extra = ({"condition": condition} if getattr(factory, "prunes_partitions", False)
                 else {})  # the filesystem connector prunes partitions with it
        stream: DataStream = factory.create_source(scan.table, context, calc=calc, **extra)
        return stream

    def _t_Union(self, node: n.Union) -> DataStream:
        first, *rest = [self.stream(member) for member in node.members]
        return first.union(*rest) if rest else first

    def _t_Correlate(self, node: n.Correlate) -> DataStream:
        stream = self.stream(node.input)
        width = len(node.fields) - len(node.input.fields)
        condition = compile_predicate(node.condition) if node.condition is not None else None
        return stream.flat_map(CorrelateFunction(
            node.function, compile_values(list(node.operands), "_arguments"), width,
            node.left_outer, condition), ROWS)

    # -- stateful -----------------------------------------------------------------------------

    def _t_Aggregate(self, node: n.Aggregate) -> DataStream:
        from flintlock.table.planner import split_distinct  # issue 32

        split = split_distinct.plan_split(self, node)
        if split is not None:
            return self.stream(split)
        stream = self.stream(node.input)
        calls = _aggregate_calls(node)
        if self.streaming:
            refuse_streaming_pandas_aggregates(call.function for call in node.calls)
        if any(call.function is not None for call in node.calls):
            # a Python aggregate function: PyFlink aggregates a bundle at a time
            bundled = bundled_agg.BundledGroupAggFunction(node.group, calls, True)
            return stream.key_by(bundled.key_selector())._process_bundles(bundled, ROWS)
        if self.mini_batch is not None:
            return self._mini_batch_aggregate(stream, node, calls, self.mini_batch)
        function = group_agg.GroupAggFunction(node.group, calls,
                                              id(node) not in self.no_update_before,
                                              self.state_retention_ms)
        return stream.key_by(function.key_selector())._process_batches(function, ROWS)

    def _mini_batch_aggregate(self, stream: DataStream, node: n.Aggregate,
                              calls: list[group_agg.AggregateCall], settings: MiniBatch
                              ) -> DataStream:
        """Flink's mini-batch GROUP BY, in one or two phases (``mini_batch_agg``)."""
        tags = key_type_tags([node.input.fields[i].type for i in node.group])
        if settings.two_phase(node):
            local = mini_batch_agg.MiniBatchLocalAggFunction(node.group, calls, tags)
            settings.size_bundles(local)
            partials = stream._fold_bundles(local, ROWS)
            width = len(node.group)
            global_ = mini_batch_agg.MiniBatchGlobalAggFunction(
                width, calls, tags, True, self.state_retention_ms)
            settings.size_bundles(global_)
            return partials.key_by(global_.key_selector())._process_bundles(global_, ROWS)
        function = mini_batch_agg.MiniBatchGroupAggFunction(
            node.group, calls, tags, True, self.state_retention_ms)
        settings.size_bundles(function)
        return stream.key_by(function.key_selector())._process_bundles(function, ROWS)

    def _t_SplitInput(self, node: Any) -> DataStream:
        from flintlock.table.planner import split_distinct  # issue 32

        stream: DataStream = split_distinct.translate_split_input(self, node)
        return stream

    def _t_TableAggregate(self, node: n.TableAggregate) -> DataStream:
        stream = self.stream(node.input)
        function = bundled_agg.BundledGroupTableAggFunction(node.group,
                                                            _aggregate_calls(node)[0], True)
        return stream.key_by(function.key_selector())._process_bundles(function, ROWS)

    def _t_Join(self, node: n.Join) -> DataStream:
        if node.kind in (n.JoinKind.SEMI, n.JoinKind.ANTI):
            raise UnsupportedFeatureError("semi and anti joins (IN / EXISTS subqueries)")
        left = self.stream(node.left)
        right = self.stream(node.right)
        condition = None
        if node.condition is not None:
            condition = compile_join_condition(node.condition)
        function = join.StreamingJoinFunction(
            join.JoinType[node.kind.value], len(node.left.fields), len(node.right.fields),
            node.left_keys, node.right_keys, condition,
            filter_null_keys=[not safe for safe in node.null_safe] if node.null_safe else None,
            state_retention_ms=self.state_retention_ms)
        connected = left.connect(right).key_by(function.left_key_selector(),
                                               function.right_key_selector())
        joined: DataStream = connected.process(function, ROWS)
        return joined

    def _t_IntervalJoin(self, node: Any) -> DataStream:
        from flintlock.table.planner import time_joins  # issue 32

        return time_joins.translate_interval_join(self, node)

    def _t_TemporalJoin(self, node: Any) -> DataStream:
        from flintlock.table.planner import time_joins  # issue 32

        return time_joins.translate_temporal_join(self, node)

    def _top_n(self, stream: DataStream, partition: tuple[int, ...],
               order: tuple[n.SortKey, ...], rank_start: int, rank_end: int,
               output_number: bool, insert_only: bool, before: bool = True) -> DataStream:
        sort_key = SortKeySelector([k.index for k in order], [k.ascending for k in order],
                                   [k.effective_nulls_first() for k in order])
        function: Any
        if insert_only and rank_start == rank_end == 1 and not output_number and partition:
            function = Top1Function(partition, sort_key, before)  # Flink's FastTop1Function
        else:
            kind = AppendOnlyTopNFunction if insert_only else RetractableTopNFunction
            function = kind(partition, sort_key, rank_end, rank_start, output_number, before)
        return stream.key_by(function.key_selector()).process(function, ROWS)

    def _t_Rank(self, node: n.Rank) -> DataStream:
        from flintlock.table.planner import dedup_plan  # issue 32

        bundled = dedup_plan.mini_batch_deduplication(self, node, key_type_tags)
        if bundled is not None:
            return bundled
        return self._top_n(self.stream(node.input), node.partition, node.order, 1, node.limit,
                           node.output_number, mode(node.input) is ChangelogKind.INSERT_ONLY,
                           id(node) not in self.no_update_before)

    def _t_Deduplicate(self, node: n.Deduplicate) -> DataStream:
        stream = self.stream(node.input)
        function: Any = (deduplicate.KeepLastRowFunction() if node.keep_last else
                         deduplicate.KeepFirstRowFunction(self.state_retention_ms))
        return stream.key_by(key_selector(node.partition)).process(function, ROWS)

    def _t_Limit(self, node: n.Limit) -> DataStream:
        if node.fetch == 0:
            return self.stream(node.input).filter(_never)
        end = node.offset + node.fetch if node.fetch is not None else _UNBOUNDED
        return self._top_n(self.stream(node.input), (), (), node.offset + 1, end, False,
                           mode(node.input) is ChangelogKind.INSERT_ONLY)

    def _t_Sort(self, node: n.Sort) -> DataStream:
        if not self.streaming:  # the final table, sorted, when the bounded input ends
            order = SortKeySelector([k.index for k in node.order],
                                    [k.ascending for k in node.order],
                                    [k.effective_nulls_first() for k in node.order])
            function = final_rows.FinalRowsFunction(order, node.offset, node.fetch)
            sorted_rows: DataStream = self.stream(node.input).key_by(key_selector(())).process(
                function, ROWS)
            return sorted_rows
        if node.fetch is None:
            raise UnsupportedFeatureError(
                "ORDER BY without LIMIT in streaming mode (Flink sorts an unbounded table "
                "only on a time attribute)")
        end = node.offset + node.fetch
        if end == node.offset:
            return self.stream(node.input).filter(_never)
        return self._top_n(self.stream(node.input), (), node.order, node.offset + 1, end, False,
                           mode(node.input) is ChangelogKind.INSERT_ONLY)

    # -- event time and windows (issue 32; planner/windows.py) ---------------------------------

    def _t_WatermarkAssigner(self, node: Any) -> DataStream:
        from flintlock.table.planner import windows

        return windows.translate_watermark_assigner(self, node)

    def _t_WindowTableFunction(self, node: Any) -> DataStream:
        from flintlock.table.planner import windows

        return windows.translate_window_table_function(self, node)

    def _t_WindowAggregate(self, node: Any) -> DataStream:
        from flintlock.table.planner import windows
        from flintlock.table.planner.projection_merge import (  # issue 32
            window_aggregate_through_projection,
        )

        node = window_aggregate_through_projection(node)
        return windows.translate_window_aggregate(self, node, _aggregate_calls(node))

    def _t_WindowRank(self, node: Any) -> DataStream:
        from flintlock.table.planner import windows

        return windows.translate_window_rank(self, node)

    def _t_OverAggregate(self, node: Any) -> DataStream:
        from flintlock.table.planner import windows

        return windows.translate_over_aggregate(self, node, _aggregate_calls(node))

    def _t_WindowJoin(self, node: Any) -> DataStream:
        from flintlock.table.planner import windows

        return windows.translate_window_join(self, node)

    def _t_Sink(self, node: n.Sink) -> Any:
        return self.connectors.sink(self.final(node.input), node.table, node.input, self)

    def final(self, node: n.PlanNode) -> DataStream:
        """The stream a sink or a collected result reads: in BATCH mode an updating query's
        final table, emitted when the input ends (``FinalRowsFunction``); else as planned."""
        stream = self.stream(node)
        if self.streaming or mode(node) is ChangelogKind.INSERT_ONLY or isinstance(node, n.Sort):
            return stream
        function = final_rows.FinalRowsFunction()
        return stream.key_by(key_selector(())).process(function, ROWS)


_UNBOUNDED = 1 << 62
"""The rank end of an OFFSET without FETCH."""


def _is_true(index: int) -> CompiledFunction:
    """``row -> bool``: whether a FILTER (WHERE ...) column of the row is TRUE."""
    source = f"def _filter(row):\n    return row._values[{index}] is True\n"
    return CompiledFunction("_filter", source, {})


def _never(value: Any) -> bool:
    return False


@dataclass(frozen=True, slots=True)
class MiniBatch:
    """``table.exec.mini-batch.*`` and ``table.optimizer.agg-phase-strategy`` as the planner
    applies them (docs/table.md, "Mini-batch and two-phase aggregation")."""

    size: int
    latency_ms: int
    phases: str  # AUTO, ONE_PHASE or TWO_PHASE

    @staticmethod
    def of(configuration: Any) -> MiniBatch | None:
        """The settings, or None where mini-batch is off; refuses a batch without bounds."""
        if not configuration.get(optimizer_options.MINI_BATCH_ENABLED):
            return None
        latency = int(configuration.get(optimizer_options.MINI_BATCH_ALLOW_LATENCY) or 0)
        size = int(configuration.get(optimizer_options.MINI_BATCH_SIZE))
        if latency <= 0:
            raise ValidationError(
                "table.exec.mini-batch.allow-latency must be more than 0 when "
                "table.exec.mini-batch.enabled is true")
        if size <= 0:
            raise ValidationError(
                "table.exec.mini-batch.size must be more than 0 when "
                "table.exec.mini-batch.enabled is true")
        return MiniBatch(size, latency,
                         str(configuration.get(optimizer_options.AGG_PHASE_STRATEGY)).upper())

    def two_phase(self, node: n.Aggregate) -> bool:
        """Whether ``node`` aggregates locally before the shuffle: TWO_PHASE or AUTO, and
        every call mergeable without DISTINCT (else one phase, as Flink falls back)."""
        if self.phases == "ONE_PHASE":
            return False
        return all(not call.distinct and _mergeable(builtin_aggregate(call, node.input, True))
                   for call in node.calls)

    def size_bundles(self, function: Any) -> None:
        function.bundle_size = self.size
        function.bundle_time_ms = self.latency_ms


def _mergeable(function: Any) -> bool:
    merge_one = getattr(type(function), "_merge_one", None)
    return merge_one is not None and merge_one is not aggregates.BuiltInAggregate._merge_one


def key_type_tags(types: list[t.DataType]) -> list[str | None]:
    """The grouping key's field types as ``binary_rows`` tags (None: no binary form known;
    the keys then keep their arrival order)."""
    tags: list[str | None] = []
    for data_type in types:
        name = type(data_type).__name__
        if isinstance(data_type, (t.VarCharType, t.CharType)):
            tags.append("STRING")
        elif isinstance(data_type, (t.TimestampType, t.LocalZonedTimestampType)):
            tags.append("TIMESTAMP3" if data_type.precision <= 3 else "TIMESTAMP9")
        elif isinstance(data_type, t.DecimalType):
            wide = "" if data_type.precision <= 18 else "WIDE"
            tags.append(f"{wide}DECIMAL:{data_type.scale}")
        else:
            tags.append(_TAGS.get(name))
    return tags


_TAGS = {"BooleanType": "BOOLEAN", "TinyIntType": "TINYINT", "SmallIntType": "SMALLINT",
         "IntType": "INT", "BigIntType": "BIGINT", "FloatType": "FLOAT",
         "DoubleType": "DOUBLE", "DateType": "DATE"}


def _aggregate_calls(node: n.Aggregate) -> list[group_agg.AggregateCall]:
    updating = mode(node.input) is ChangelogKind.UPDATES
    return [group_agg.AggregateCall(
        function=builtin_aggregate(call, node.input, updating),
        arguments=call.args, distinct=call.distinct,
        filter=_is_true(call.filter) if call.filter is not None else None,
        argument_count=len(call.args)) for call in node.calls]


def builtin_aggregate(call: n.AggregateCall, source: n.PlanNode, updating: bool) -> Any:
    """The changelog operator's aggregate function object for one call."""
    if call.function is not None:
        return call.function
    name = call.name
    argument_type = source.fields[call.args[0]].type if call.args else None
    if name == "COUNT":
        return aggregates.Count1() if not call.args else aggregates.Count()
    if name in ("SUM", "SUM0"):
        bits = _integer_bits(argument_type)
        return aggregates.Sum(bits=bits) if name == "SUM" else aggregates.Sum0(bits=bits)
    if name == "AVG":
        if argument_type is not None and tr.is_integral(argument_type):
            return aggregates.Avg("int")
        if isinstance(argument_type, t.DecimalType):
            return aggregates.Avg("decimal", max(6, argument_type.scale))
        return aggregates.Avg("float")
    retracting = {"MIN": aggregates_retract.MinWithRetract,
                  "MAX": aggregates_retract.MaxWithRetract,
                  "FIRST_VALUE": aggregates_retract.FirstValueWithRetract,
                  "LAST_VALUE": aggregates_retract.LastValueWithRetract}
    appending = {"MIN": aggregates.Min, "MAX": aggregates.Max,
                 "FIRST_VALUE": aggregates.FirstValue, "LAST_VALUE": aggregates.LastValue}
    if name in retracting:
        return retracting[name]() if updating else appending[name]()
    if name == "LISTAGG":
        return aggregates_retract.ListAgg(*(call.options or (",",)))
    if name == "COLLECT":
        return aggregates_retract.Collect()
    if name in ("BOOL_AND", "BOOL_OR"):
        if updating:
            return (aggregates_retract.MinWithRetract() if name == "BOOL_AND"
                    else aggregates_retract.MaxWithRetract())
        return aggregates.Min() if name == "BOOL_AND" else aggregates.Max()
    raise UnsupportedFeatureError(f"the aggregate function {name}")


def _integer_bits(data_type: t.DataType | None) -> int | None:
    bits: dict[type, int] = {t.TinyIntType: 8, t.SmallIntType: 16, t.IntType: 32, t.BigIntType: 64}
    return bits.get(type(data_type)) if data_type is not None else None


__all__ = ["Translator"]
