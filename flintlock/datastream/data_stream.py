"""``DataStream``, ``KeyedStream``, ``ConnectedStreams`` and ``DataStreamSink`` with PyFlink's
methods. Calling them builds the job; nothing runs until ``env.execute()``.

A stream is a view: the environment it belongs to, the ``StreamInput`` list the next operator
will read (upstream transformation + partitioner), its type, and — when the stream is an
operator's output — that operator's ``Transformation``, on which ``name``, ``uid``,
``set_parallelism``, chaining and slot-sharing calls act. Partitioning calls (``shuffle``,
``rebalance``, ``key_by``, ...) and ``union`` return views without a transformation; operator
settings on them raise ``NotAnOperatorError``.

A ``KeyedStream`` reads its inputs through HASH partitioners on its key selector; its
operators (``map``, ``flat_map``, ``filter``, ``reduce``, the aggregations, ``process``) are
keyed: the node carries the key selector per input and the operator description is marked
``keyed``, so they may use keyed state, as in PyFlink. Sinks and ``union`` on a keyed stream
keep the hash partitioning. PyFlink methods flintlock lacks raise ``NotImplementedError``.

Owned by the user's thread while the job is built.
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from flintlock.common.job_client import CloseableIterator
from flintlock.common.key_encoding import check_key_type
from flintlock.common.operator_spec import (
    Aggregation,
    AggregationKind,
    CollectSink,
    OperatorKind,
    OperatorSpec,
    PrintSink,
)
from flintlock.common.typeinfo import (
    BasicTypeInfo,
    PickledBytesTypeInfo,
    RowTypeInfo,
    SqlTimeTypeInfo,
    TupleTypeInfo,
    TypeInformation,
    Types,
)
from flintlock.common.watermark_strategy import WatermarkStrategy
from flintlock.common.windowing import (
    CountSlidingWindowAssigner,
    CountTumblingWindowAssigner,
    InvalidWindowError,
)
from flintlock.datastream import functions as fn
from flintlock.datastream.broadcast_stream import (
    BroadcastConnectedStream,
    BroadcastStream,
    connect_broadcast,
)
from flintlock.datastream.connectors.base import Sink, SupportsPreprocessing
from flintlock.datastream.errors import (
    ForeignStreamError,
    InvalidOperatorSettingError,
    KeyedStreamOperationError,
    KeyedStreamRequiredError,
    UnionTypeMismatchError,
)
from flintlock.datastream.operator_settings import OperatorSettings
from flintlock.datastream.transformations import StreamInput, Transformation
from flintlock.datastream.unsupported import unsupported
from flintlock.datastream.windowed_stream import (
    AllWindowedStream,
    WindowedStream,
    all_windowed,
    windowed,
)
from flintlock.graph.stream_graph import Partitioner

if TYPE_CHECKING:
    from flintlock.datastream.stream_execution_environment import StreamExecutionEnvironment

FunctionLike = Callable[..., Any] | fn.Function


class DataStream(OperatorSettings):
    """A stream of elements of one type; transform it into new streams."""

    def __init__(self, env: StreamExecutionEnvironment, inputs: tuple[StreamInput, ...],
                 output_type: TypeInformation | None,
                 transformation: Transformation | None = None, origin: str = "") -> None:
        super().__init__(env, transformation, origin)
        self._inputs = inputs
        self._output_type = output_type

    # -- properties -----------------------------------------------------------------------

    def get_type(self) -> TypeInformation:
        return self._output_type if self._output_type is not None else (
            Types.PICKLED_BYTE_ARRAY())

    def get_execution_environment(self) -> StreamExecutionEnvironment:
        return self._env

    def get_execution_config(self) -> Any:
        return self._env.get_config()

    # -- one-input operators ----------------------------------------------------------------

    def _one_input(self, name: str, kind: OperatorKind, function: Any,
                   output_type: TypeInformation | None, keyed: bool = False) -> DataStream:
        spec = OperatorSpec(kind, function=function, output_type=output_type, keyed=keyed)
        return self._add_operator(name, spec)

    def _add_operator(self, name: str, spec: OperatorSpec) -> DataStream:
        """A one-input operator described by ``spec`` after this stream."""
        return self._output_of(name, spec, [(stream_input, 0) for stream_input in self._inputs],
                               key_selectors=self._key_selectors() if spec.keyed else ())

    def _output_of(self, name: str, spec: OperatorSpec, inputs: list[tuple[StreamInput, int]],
                   operation: str | None = None, **placement: Any) -> DataStream:
        """Adds the operator ``spec`` reading ``inputs`` (stream input, input index) to this
        stream's job; returns its output stream. ``operation`` names the call in errors
        (default: ``name``); ``placement``: key selectors, parallelism, non-parallel
        (``_add_transformation``'s). The windowed and broadcast streams add their operators
        through here, so they need not know this module."""
        _check_type_info(spec.output_type, operation or name)
        transformation = self._env._add_transformation(
            name, spec, inputs, spec.output_type, **placement)
        return DataStream(self._env, (StreamInput(transformation.id),), spec.output_type,
                          transformation)

    def _key_selectors(self) -> tuple[Any, ...]:
        return ()

    @property
    def _is_keyed(self) -> bool:
        """A ``KeyedStream``: its operators are keyed."""
        return bool(self._key_selectors())

    def map(self, func: FunctionLike, output_type: TypeInformation | None = None
            ) -> DataStream:
        return self._one_input("Map", OperatorKind.MAP, fn.wrap_map(func), output_type)

    def flat_map(self, func: FunctionLike, output_type: TypeInformation | None = None
                 ) -> DataStream:
        return self._one_input("FlatMap", OperatorKind.FLAT_MAP, fn.wrap_flat_map(func),
                               output_type)

    def filter(self, func: FunctionLike) -> DataStream:
        return self._one_input("Filter", OperatorKind.FILTER, fn.wrap_filter(func),
                               self._output_type)

    def process(self, func: fn.ProcessFunction, output_type: TypeInformation | None = None
                ) -> DataStream:
        if isinstance(func, fn.KeyedProcessFunction):
            raise KeyedStreamRequiredError("process(KeyedProcessFunction)")
        function = fn.require(func, (fn.ProcessFunction,), "DataStream.process")
        return self._one_input("Process", OperatorKind.PROCESS, function, output_type)

    def _fold_bundles(self, func: fn.ProcessFunction,
                      output_type: TypeInformation | None = None) -> DataStream:
        """Internal (the Table planner's local aggregation): a function that folds each
        record into its bundle (``key_selector``, ``add_input``, ``finish_bundle``; see
        ``runtime.tasks.bundle_process_operator``), before a shuffle."""
        function = fn.require(func, (fn.ProcessFunction,), "DataStream.process")
        for method in ("key_selector", "add_input", "finish_bundle"):
            if not callable(getattr(function, method, None)):
                raise TypeError(f"{type(function).__name__} has no {method}()")
        return self._one_input("LocalBundle", OperatorKind.BUNDLE_PROCESS, function,
                               output_type)

    def project(self, *field_indexes: int) -> DataStream:
        """Keep the given fields of a stream of tuples (its type must be a declared TUPLE)."""
        declared = self._output_type
        if not isinstance(declared, TupleTypeInfo):
            raise TypeError("project() needs a stream of declared type Types.TUPLE([...]); "
                            f"this stream's type is {self.get_type()!r}")
        types = declared.get_field_types()
        for index in field_indexes:
            if not isinstance(index, int) or not 0 <= index < len(types):
                raise InvalidOperatorSettingError("Projection", "field index", repr(index),
                                                  f"expected 0 <= index < {len(types)}")
        output_type = Types.TUPLE([types[index] for index in field_indexes])
        return self._one_input("Projection", OperatorKind.MAP,
                               _Projection(tuple(field_indexes)), output_type)

    # -- keyed operations on a non-keyed stream ---------------------------------------------

    def reduce(self, func: FunctionLike) -> DataStream:
        raise KeyedStreamRequiredError("reduce()")

    def sum(self, position_to_sum: int | str = 0) -> DataStream:
        raise KeyedStreamRequiredError("sum()")

    def min(self, position_to_min: int | str = 0) -> DataStream:
        raise KeyedStreamRequiredError("min()")

    def max(self, position_to_max: int | str = 0) -> DataStream:
        raise KeyedStreamRequiredError("max()")

    def min_by(self, position_to_min_by: int | str = 0) -> DataStream:
        raise KeyedStreamRequiredError("min_by()")

    def max_by(self, position_to_max_by: int | str = 0) -> DataStream:
        raise KeyedStreamRequiredError("max_by()")

    def window(self, window_assigner: Any) -> WindowedStream:
        """Not a PyFlink method of a DataStream: windows per key need ``key_by`` first (or
        ``window_all`` for windows over the whole stream)."""
        raise KeyedStreamRequiredError("window() (or use window_all())")

    def count_window(self, size: int, slide: int = 0) -> WindowedStream:
        raise KeyedStreamRequiredError("count_window() (or use count_window_all())")

    # -- partitioning ----------------------------------------------------------------------

    def _partitioned(self, partitioner: Partitioner, origin: str) -> DataStream:
        self._env._check_open(origin)
        inputs = tuple(stream_input.with_partitioner(partitioner) for stream_input in self._inputs)
        return DataStream(self._env, inputs, self._output_type, origin=origin)

    def key_by(self, key_selector: FunctionLike, key_type: TypeInformation | None = None
               ) -> KeyedStream:
        self._env._check_open("key_by()")
        selector = fn.wrap_key_selector(key_selector, "key_by")
        _check_type_info(key_type, "key_by")
        check_key_type(key_type, f"key_by(key_type={key_type!r})")
        return KeyedStream(self._env, self._inputs, self._output_type, selector, key_type)

    def shuffle(self) -> DataStream:
        return self._partitioned(Partitioner.shuffle(), "shuffle()")

    def rebalance(self) -> DataStream:
        return self._partitioned(Partitioner.rebalance(), "rebalance()")

    def rescale(self) -> DataStream:
        return self._partitioned(Partitioner.rescale(), "rescale()")

    def forward(self) -> DataStream:
        return self._partitioned(Partitioner.forward(), "forward()")

    def global_(self) -> DataStream:
        """Send every record to the first subtask of the next operator (Flink's ``global``)."""
        return self._partitioned(Partitioner.global_(), "global_()")

    def broadcast(self, *broadcast_state_descriptors: Any) -> Any:
        """Every element to every parallel instance of the next operator; with
        ``MapStateDescriptor``s, a ``BroadcastStream`` for ``connect`` (broadcast state)."""
        stream = self._partitioned(Partitioner.broadcast(), "broadcast()")
        if not broadcast_state_descriptors:
            return stream
        return BroadcastStream(stream, tuple(broadcast_state_descriptors))

    def partition_custom(self, partitioner: FunctionLike, key_selector: FunctionLike
                         ) -> DataStream:
        custom = fn.wrap_partitioner(partitioner)
        selector = fn.wrap_key_selector(key_selector, "partition_custom")
        return self._partitioned(Partitioner.custom_partition(custom.partition, selector.get_key),
                                 "partition_custom()")

    # -- combining streams -------------------------------------------------------------------

    def union(self, *streams: DataStream) -> DataStream:
        self._env._check_open("union()")
        inputs = list(self._inputs)
        for stream in streams:
            if not isinstance(stream, DataStream):
                raise TypeError(f"union() takes DataStreams, got {stream!r}")
            if stream._env is not self._env:
                raise ForeignStreamError("union()")
            if stream.get_type() != self.get_type():
                raise UnionTypeMismatchError(repr(self.get_type()), repr(stream.get_type()))
            inputs.extend(stream._inputs)
        return DataStream(self._env, tuple(inputs), self._output_type, origin="union()")

    def connect(self, ds: DataStream | BroadcastStream) -> Any:
        """Two streams into one two-input operator; with a ``BroadcastStream``, a
        ``BroadcastConnectedStream`` (broadcast state)."""
        self._env._check_open("connect()")
        if isinstance(ds, BroadcastStream):
            return connect_broadcast(self, ds)
        if not isinstance(ds, DataStream):
            raise TypeError(f"connect() takes a DataStream or a BroadcastStream, got {ds!r}")
        if ds._env is not self._env:
            raise ForeignStreamError("connect()")
        return ConnectedStreams(self, ds)

    # -- sinks -----------------------------------------------------------------------------

    def _add_sink(self, name: str, sink: Any, parallelism: int | None = None
                  ) -> DataStreamSink:
        spec = OperatorSpec(OperatorKind.SINK, output_type=self._output_type, sink=sink)
        transformation = self._env._add_transformation(
            name, spec, [(stream_input, 0) for stream_input in self._inputs], None,
            parallelism=parallelism)
        return DataStreamSink(self._env, transformation)

    def print(self, sink_identifier: str | None = None) -> DataStreamSink:
        return self._add_sink("Print to Std. Out", PrintSink(sink_identifier))

    def sink_to(self, sink: Sink) -> DataStreamSink:
        if not isinstance(sink, Sink):
            raise TypeError(f"sink_to() takes a Sink connector, got {sink!r}")
        transformer = (sink.get_transformer() if isinstance(sink, SupportsPreprocessing)
                       else None)
        if transformer is not None:  # as PyFlink: the sink's preprocessing comes first
            transformed: DataStream = transformer.apply(self)
            return transformed._add_sink(type(sink).__name__, sink)
        return self._add_sink(type(sink).__name__, sink)

    def execute_and_collect(self, job_execution_name: str | None = None,
                            limit: int | None = None) -> CloseableIterator | list[Any]:
        """Run the job and return its records: an iterator, or a list of at most ``limit``."""
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)
                                  or limit <= 0):
            raise ValueError(f"limit must be a positive int, got {limit!r}")
        collect_id = uuid.uuid4().hex
        self._add_sink("Data stream collect sink", CollectSink(collect_id), parallelism=1)
        iterator = self._env._execute_and_collect(collect_id, job_execution_name)
        if limit is None:
            return iterator
        try:
            return list(itertools.islice(iterator, limit))
        finally:
            iterator.close()

    def add_sink(self, sink_func: Any) -> DataStreamSink:
        """PyFlink's ``add_sink`` for the connector sinks PyFlink passes to it (``JdbcSink``);
        a user's own SinkFunction is the unsupported legacy API."""
        if isinstance(sink_func, Sink):
            return self._add_sink(type(sink_func).__name__, sink_func)
        raise NotImplementedError(
            "DataStream.add_sink(): the legacy SinkFunction API (use sink_to or print) is not "
            "supported yet (issue #5)")

    # -- not supported yet -------------------------------------------------------------------

    def assign_timestamps_and_watermarks(self, watermark_strategy: WatermarkStrategy
                                         ) -> DataStream:
        """Records get the timestamps the strategy's ``TimestampAssigner`` extracts, and the
        strategy's watermarks follow them (periodically, ``pipeline.auto-watermark-interval``)."""
        if not isinstance(watermark_strategy, WatermarkStrategy):
            raise TypeError("assign_timestamps_and_watermarks() needs a WatermarkStrategy, got "
                            f"{watermark_strategy!r}")
        self._env._check_open("assign_timestamps_and_watermarks()")
        spec = OperatorSpec(OperatorKind.TIMESTAMPS, output_type=self._output_type,
                            watermark_strategy=watermark_strategy)
        transformation = self._env._add_transformation(
            "Timestamps/Watermarks", spec,
            [(stream_input, 0) for stream_input in self._inputs], self._output_type)
        return DataStream(self._env, (StreamInput(transformation.id),), self._output_type,
                          transformation)

    def window_all(self, window_assigner: Any) -> AllWindowedStream:
        """Windows over the whole stream (one window operator at parallelism 1)."""
        self._env._check_open("window_all()")
        return all_windowed(self, window_assigner, "window_all()")

    def count_window_all(self, size: int, slide: int = 0) -> AllWindowedStream:
        self._env._check_open("count_window_all()")
        assigner, keep_last = _count_assigner(size, slide)
        return all_windowed(self, assigner, "count_window_all()", keep_last)

    def get_side_output(self, output_tag: Any) -> DataStream:
        """The values this operator's process function emitted with ``ctx.output(tag, ...)``."""
        from flintlock.datastream.output_tag import OutputTag

        if not isinstance(output_tag, OutputTag):
            raise TypeError(f"get_side_output() takes an OutputTag, got {output_tag!r}")
        transformation = self._transformation
        if transformation is None or len(self._inputs) != 1 or (
                self._inputs[0].transformation_id != transformation.id):
            raise TypeError("get_side_output() is only available on the stream an operator "
                            "returned (e.g. the result of process())")
        side = StreamInput(transformation.id, None, output_tag.tag_id)
        return DataStream(self._env, (side,), output_tag.type_info)
    def cache(self) -> CachedDataStream:
        """Keep this stream's records for the later jobs of this environment (BATCH mode):
        the first job that runs it stores them, later ones read them instead of computing
        the stream again (``flintlock.datastream.cache``)."""
        from flintlock.common.options import execution
        from flintlock.datastream import cache

        cache.check_batch_mode(str(self._env._configuration.get(execution.RUNTIME_MODE)))
        spec = OperatorSpec(OperatorKind.CACHE, output_type=self._output_type,
                            cache=cache.new_cached_result())
        view = self._add_operator("Cache", spec)
        transformation = view._transformation
        assert transformation is not None
        transformation.cached = cache.CachedStream(
            spec.cache, spec, list(transformation.inputs), transformation.chaining)
        return CachedDataStream(self._env, view._inputs, self._output_type, transformation)

    set_uid_hash = unsupported("user-provided operator hashes (use uid)")


class CachedDataStream(DataStream):
    """A stream whose records are computed once and kept for the later jobs of its
    environment (``DataStream.cache()``)."""

    def invalidate(self) -> None:
        """Drop the stored records; the next job that uses this stream computes it again."""
        transformation = self._transformation
        assert transformation is not None and transformation.cached is not None
        transformation.cached.invalidate(transformation)


class DataStreamSink(OperatorSettings):
    """The end of a stream: a sink operator whose settings can still be changed."""

    def __init__(self, env: StreamExecutionEnvironment, transformation: Transformation) -> None:
        super().__init__(env, transformation, "")

    set_uid_hash = unsupported("user-provided operator hashes (use uid)")


class KeyedStream(DataStream):
    """A stream partitioned by key; its operators may use keyed state."""

    def __init__(self, env: StreamExecutionEnvironment, origin_inputs: tuple[StreamInput, ...],
                 output_type: TypeInformation | None, key_selector: fn.KeySelector,
                 key_type: TypeInformation | None) -> None:
        hashed = Partitioner.hash(key_selector.get_key)
        inputs = tuple(stream_input.with_partitioner(hashed) for stream_input in origin_inputs)
        super().__init__(env, inputs, output_type, origin="key_by()")
        self._origin_inputs = origin_inputs
        self._key_selector = key_selector
        self._key_type = key_type

    def _key_selectors(self) -> tuple[Any, ...]:
        return (self._key_selector.get_key,)

    def get_key_type(self) -> TypeInformation:
        return self._key_type if self._key_type is not None else Types.PICKLED_BYTE_ARRAY()

    # -- keyed operators ---------------------------------------------------------------------

    def map(self, func: FunctionLike, output_type: TypeInformation | None = None
            ) -> DataStream:
        return self._one_input("Map", OperatorKind.MAP, fn.wrap_map(func), output_type, True)

    def flat_map(self, func: FunctionLike, output_type: TypeInformation | None = None
                 ) -> DataStream:
        return self._one_input("FlatMap", OperatorKind.FLAT_MAP, fn.wrap_flat_map(func),
                               output_type, True)

    def filter(self, func: FunctionLike) -> DataStream:
        return self._one_input("Filter", OperatorKind.FILTER, fn.wrap_filter(func),
                               self._output_type, True)

    def process(self, func: fn.KeyedProcessFunction,  # type: ignore[override]
                output_type: TypeInformation | None = None) -> DataStream:
        function = fn.require(func, (fn.KeyedProcessFunction,), "KeyedStream.process")
        return self._one_input("KeyedProcess", OperatorKind.KEYED_PROCESS, function,
                               output_type, True)

    def _process_batches(self, func: fn.KeyedProcessFunction,
                         output_type: TypeInformation | None = None) -> DataStream:
        """Internal (the Table planner's): ``process`` for a function that can also take a
        whole batch against its keyed value state (``batch_state`` / ``process_batch``; see
        ``runtime.tasks.batch_process_operator``). Same node name, state and key groups as
        ``process`` (the operator falls back to it per record where it must)."""
        function = fn.require(func, (fn.KeyedProcessFunction,), "KeyedStream.process")
        for method in ("batch_state", "process_batch"):
            if not callable(getattr(function, method, None)):
                raise TypeError(f"{type(function).__name__} has no {method}(): "
                                "use KeyedStream.process")
        return self._one_input("KeyedProcess", OperatorKind.KEYED_BATCH_PROCESS, function,
                               output_type, True)

    def _process_bundles(self, func: fn.KeyedProcessFunction,
                         output_type: TypeInformation | None = None) -> DataStream:
        """Internal (the Table planner's): ``process`` for a function that takes its input a
        bundle at a time, ``process_bundle(rows, ctx)`` once per key at each bundle's end, as
        PyFlink runs its Python aggregate functions (``runtime.tasks.bundle_process_operator``)."""
        function = fn.require(func, (fn.KeyedProcessFunction,), "KeyedStream.process")
        if not callable(getattr(function, "process_bundle", None)):
            raise TypeError(f"{type(function).__name__} has no process_bundle(): "
                            "use KeyedStream.process")
        return self._one_input("KeyedProcess", OperatorKind.KEYED_BUNDLE_PROCESS, function,
                               output_type, True)

    def reduce(self, func: FunctionLike) -> DataStream:
        return self._one_input("Keyed Reduce", OperatorKind.REDUCE, fn.wrap_reduce(func),
                               self._output_type, True)

    def _aggregate(self, kind: AggregationKind, position: int | str) -> DataStream:
        _check_field(self._output_type, position, kind.value)
        self._env._check_open(f"{kind.value}()")
        spec = OperatorSpec(OperatorKind.AGGREGATION, output_type=self._output_type,
                            keyed=True, aggregation=Aggregation(kind, position))
        transformation = self._env._add_transformation(
            "Keyed Aggregation", spec, [(stream_input, 0) for stream_input in self._inputs],
            self._output_type, key_selectors=self._key_selectors())
        return DataStream(self._env, (StreamInput(transformation.id),), self._output_type,
                          transformation)

    def sum(self, position_to_sum: int | str = 0) -> DataStream:
        return self._aggregate(AggregationKind.SUM, position_to_sum)

    def min(self, position_to_min: int | str = 0) -> DataStream:
        return self._aggregate(AggregationKind.MIN, position_to_min)

    def max(self, position_to_max: int | str = 0) -> DataStream:
        return self._aggregate(AggregationKind.MAX, position_to_max)

    def min_by(self, position_to_min_by: int | str = 0) -> DataStream:
        return self._aggregate(AggregationKind.MIN_BY, position_to_min_by)

    def max_by(self, position_to_max_by: int | str = 0) -> DataStream:
        return self._aggregate(AggregationKind.MAX_BY, position_to_max_by)

    def key_by(self, key_selector: FunctionLike, key_type: TypeInformation | None = None
               ) -> KeyedStream:
        """Re-key the stream the key_by was applied to (as PyFlink does)."""
        return DataStream(self._env, self._origin_inputs, self._output_type).key_by(
            key_selector, key_type)

    # -- not allowed on a keyed stream -------------------------------------------------------

    def _no_repartition(self, operation: str) -> KeyedStreamOperationError:
        return KeyedStreamOperationError(operation, "cannot override the partitioning of a "
                                         "KeyedStream; apply it before key_by()")

    def shuffle(self) -> DataStream:
        raise self._no_repartition("shuffle()")

    def rebalance(self) -> DataStream:
        raise self._no_repartition("rebalance()")

    def rescale(self) -> DataStream:
        raise self._no_repartition("rescale()")

    def forward(self) -> DataStream:
        raise self._no_repartition("forward()")

    def global_(self) -> DataStream:
        raise self._no_repartition("global_()")

    def broadcast(self, *broadcast_state_descriptors: Any) -> DataStream:
        raise self._no_repartition("broadcast()")

    def partition_custom(self, partitioner: FunctionLike, key_selector: FunctionLike
                         ) -> DataStream:
        raise self._no_repartition("partition_custom()")

    def _operator(self, method: str) -> Transformation:
        raise KeyedStreamOperationError(
            f"{method}()", "key_by() creates no operator, so it has no name, uid, "
            f"parallelism or chaining of its own; call {method}() on the operator before "
            "key_by() or on the keyed operator after it")

    def window(self, window_assigner: Any) -> WindowedStream:
        """Cut the keyed stream into the windows ``window_assigner`` picks."""
        self._env._check_open("window()")
        return windowed(self, window_assigner, "window()")

    def count_window(self, size: int, slide: int = 0) -> WindowedStream:
        """Windows of ``size`` elements per key; with ``slide``, a window of the last
        ``size`` elements every ``slide`` elements."""
        self._env._check_open("count_window()")
        assigner, keep_last = _count_assigner(size, slide)
        return windowed(self, assigner, "count_window()", keep_last)


class ConnectedStreams:
    """Two streams, possibly of different types, processed by one two-input operator."""

    def __init__(self, stream1: DataStream, stream2: DataStream) -> None:
        self.stream1 = stream1
        self.stream2 = stream2

    @property
    def _keyed(self) -> bool:
        return isinstance(self.stream1, KeyedStream) and isinstance(self.stream2, KeyedStream)

    def key_by(self, key_selector1: FunctionLike, key_selector2: FunctionLike,
               key_type: TypeInformation | None = None) -> ConnectedStreams:
        return ConnectedStreams(self.stream1.key_by(key_selector1, key_type),
                                self.stream2.key_by(key_selector2, key_type))

    def _two_input(self, name: str, kind: OperatorKind, function: Any,
                   output_type: TypeInformation | None, keyed: bool) -> DataStream:
        _check_type_info(output_type, name)
        env = self.stream1._env
        spec = OperatorSpec(kind, function=function, output_type=output_type, keyed=keyed)
        inputs = [(stream_input, 0) for stream_input in self.stream1._inputs]
        inputs += [(stream_input, 1) for stream_input in self.stream2._inputs]
        selectors = (self.stream1._key_selectors() + self.stream2._key_selectors()
                     if keyed else ())
        transformation = env._add_transformation(name, spec, inputs, output_type,
                                                 key_selectors=selectors)
        return DataStream(env, (StreamInput(transformation.id),), output_type, transformation)

    def map(self, func: fn.CoMapFunction, output_type: TypeInformation | None = None
            ) -> DataStream:
        function = fn.require(func, (fn.CoMapFunction,), "ConnectedStreams.map")
        return self._two_input("Co-Map", OperatorKind.CO_MAP, function, output_type,
                               self._keyed)

    def flat_map(self, func: fn.CoFlatMapFunction, output_type: TypeInformation | None = None
                 ) -> DataStream:
        function = fn.require(func, (fn.CoFlatMapFunction,), "ConnectedStreams.flat_map")
        return self._two_input("Co-Flat Map", OperatorKind.CO_FLAT_MAP, function, output_type,
                               self._keyed)

    def process(self, func: fn.CoProcessFunction | fn.KeyedCoProcessFunction,
                output_type: TypeInformation | None = None) -> DataStream:
        function = fn.require(func, (fn.CoProcessFunction, fn.KeyedCoProcessFunction),
                              "ConnectedStreams.process")
        if isinstance(function, fn.KeyedCoProcessFunction):
            if not self._keyed:
                raise KeyedStreamRequiredError("process(KeyedCoProcessFunction) on both "
                                               "connected streams")
            return self._two_input("KeyedCoProcess", OperatorKind.KEYED_CO_PROCESS, function,
                                   output_type, True)
        return self._two_input("Co-Process", OperatorKind.CO_PROCESS, function, output_type,
                               self._keyed)


class _Projection(fn.MapFunction):
    """The map function of ``project``: keeps the fields at the given positions."""

    def __init__(self, field_indexes: tuple[int, ...]) -> None:
        self.field_indexes = field_indexes

    def map(self, value: Any) -> Any:
        return tuple(value[index] for index in self.field_indexes)


def _count_assigner(size: int, slide: int) -> tuple[Any, int | None]:
    """The assigner of ``count_window(size, slide)`` and how many elements a window keeps."""
    for value, what in ((size, "size"), (slide, "slide")):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"count window {what} must be an int, got {value!r}")
    if slide < 0:
        raise InvalidWindowError(f"count window slide must not be negative, got {slide}")
    if slide == 0:
        return CountTumblingWindowAssigner.of(size), None
    return CountSlidingWindowAssigner.of(size, slide), size


def _check_type_info(type_info: Any, operation: str) -> None:
    if type_info is not None and not isinstance(type_info, TypeInformation):
        raise TypeError(f"{operation}: a type must be a TypeInformation such as Types.INT(), "
                        f"got {type_info!r}")


def _check_field(declared: TypeInformation | None, position: int | str, operation: str) -> None:
    """Reject a field that cannot exist in records of the declared type."""
    problem = _field_problem(declared, position)
    if problem is not None:
        raise InvalidOperatorSettingError("Keyed Aggregation", f"{operation} field",
                                          repr(position), problem)


def _field_problem(declared: TypeInformation | None, position: int | str) -> str | None:
    if isinstance(position, bool) or not isinstance(position, (int, str)):
        return "a field is a position (int) or a field name (str)"
    if isinstance(position, int) and position < 0:
        return "a position must not be negative"
    if declared is None or isinstance(declared, PickledBytesTypeInfo):
        return None
    if isinstance(declared, (BasicTypeInfo, SqlTimeTypeInfo)):
        return None if position == 0 else (
            f"records of type {declared!r} are scalars: only position 0 (the record) exists")
    if isinstance(declared, RowTypeInfo):
        if isinstance(position, str):
            return None if position in declared.get_field_names() else (
                f"the row has fields {declared.get_field_names()}")
        return None if position < declared.get_arity() else (
            f"the row has {declared.get_arity()} fields")
    if isinstance(declared, TupleTypeInfo):
        if isinstance(position, str):
            return "tuples have no field names; use a position"
        return None if position < declared.get_arity() else (
            f"the tuple has {declared.get_arity()} fields")
    return None


__all__ = ["AllWindowedStream", "BroadcastConnectedStream", "BroadcastStream",
           "CloseableIterator", "ConnectedStreams", "DataStream", "DataStreamSink",
           "KeyedStream", "WindowedStream"]
