"""KeyedStream: hash edges on the key selector, keyed operator descriptions, aggregations with
field checks, and the operations a keyed stream refuses."""

from typing import Any

import pytest

from flintlock.common import Types
from flintlock.common.operator_spec import Aggregation, AggregationKind, OperatorKind
from flintlock.datastream import (
    DataStream,
    KeyedProcessFunction,
    KeySelector,
    ProcessFunction,
    ReduceFunction,
    StreamExecutionEnvironment,
)
from flintlock.datastream.errors import (
    InvalidOperatorSettingError,
    KeyedStreamOperationError,
    KeyedStreamRequiredError,
)
from flintlock.datastream.functions import FunctionTypeError
from flintlock.graph.stream_graph import PartitionerKind, StreamGraph

PAIR = Types.TUPLE([Types.STRING(), Types.INT()])


def first(value: Any) -> Any:
    return value[0]


def pairs(env: StreamExecutionEnvironment) -> DataStream:
    return env.from_collection([("a", 1), ("b", 2)], PAIR)


def keyed_node(graph: StreamGraph, node_id: int = 2) -> Any:
    node = graph.node(node_id)
    (edge,) = graph.in_edges(node_id)
    return node, edge


def test_key_by_makes_a_hash_edge_and_a_keyed_node(env: StreamExecutionEnvironment) -> None:
    pairs(env).key_by(first).reduce(lambda a, b: (a[0], a[1] + b[1])).print()
    node, edge = keyed_node(env.get_stream_graph())
    assert edge.partitioner.kind is PartitionerKind.HASH
    assert edge.partitioner.key_selector is first
    assert node.key_selectors == (first,)
    assert node.name == "Keyed Reduce"
    assert node.operator.kind is OperatorKind.REDUCE and node.operator.keyed
    assert node.operator.output_type == PAIR
    assert len(env.get_stream_graph().nodes) == 3


def test_key_selector_objects_use_their_get_key(env: StreamExecutionEnvironment) -> None:
    class ByFirst(KeySelector):
        def get_key(self, value: Any) -> Any:
            return value[0]

    selector = ByFirst()
    pairs(env).key_by(selector).sum(1).print()
    node, edge = keyed_node(env.get_stream_graph())
    assert edge.partitioner.key_selector == selector.get_key
    assert node.key_selectors == (selector.get_key,)


def test_reduce_accepts_reduce_functions(env: StreamExecutionEnvironment) -> None:
    class Add(ReduceFunction):
        def reduce(self, value1: Any, value2: Any) -> Any:
            return value1 + value2

    add = Add()
    env.from_collection([1]).key_by(lambda v: v).reduce(add).print()
    assert env.get_stream_graph().node(2).operator.function is add


@pytest.mark.parametrize(("method", "kind"), [
    ("sum", AggregationKind.SUM), ("min", AggregationKind.MIN), ("max", AggregationKind.MAX),
    ("min_by", AggregationKind.MIN_BY), ("max_by", AggregationKind.MAX_BY),
])
def test_aggregations(env: StreamExecutionEnvironment, method: str,
                      kind: AggregationKind) -> None:
    result = getattr(pairs(env).key_by(first), method)(1)
    result.print()
    node, edge = keyed_node(env.get_stream_graph())
    assert node.name == "Keyed Aggregation"
    assert node.operator.kind is OperatorKind.AGGREGATION and node.operator.keyed
    assert node.operator.aggregation == Aggregation(kind, 1)
    assert edge.partitioner.kind is PartitionerKind.HASH
    assert result.get_type() == PAIR


@pytest.mark.parametrize(("type_info", "field", "problem"), [
    (PAIR, 2, "the tuple has 2 fields"),
    (PAIR, "count", "tuples have no field names"),
    (Types.ROW_NAMED(["word", "count"], [Types.STRING(), Types.INT()]), "total",
     "the row has fields"),
    (Types.ROW([Types.INT()]), 1, "the row has 1 fields"),
    (Types.INT(), 1, "only position 0"),
    (None, -1, "must not be negative"),
    (None, 1.5, "position (int) or a field name"),
])
def test_aggregation_fields_are_checked_against_the_declared_type(
        env: StreamExecutionEnvironment, type_info: Any, field: Any, problem: str) -> None:
    stream = env.from_collection([("a", 1)]) if type_info is None else env.from_collection(
        [_sample(type_info)], type_info)
    with pytest.raises(InvalidOperatorSettingError, match=problem.replace("(", r"\(")
                       .replace(")", r"\)")):
        stream.key_by(first).sum(field)


def _sample(type_info: Any) -> Any:
    from flintlock.common import Row

    if type_info == PAIR:
        return ("a", 1)
    if type_info == Types.INT():
        return 1
    if type_info == Types.ROW([Types.INT()]):
        return Row(1)
    return Row(word="a", count=1)


def test_valid_fields_by_name_and_position(env: StreamExecutionEnvironment) -> None:
    from flintlock.common import Row

    rows = env.from_collection([Row(word="a", count=1)],
                               Types.ROW_NAMED(["word", "count"], [Types.STRING(), Types.INT()]))
    rows.key_by(lambda row: row.word).sum("count").print()
    env.from_collection([1, 2], Types.INT()).key_by(lambda v: v % 2).max().print()
    graph = env.get_stream_graph()
    assert graph.node(2).operator.aggregation == Aggregation(AggregationKind.SUM, "count")
    assert graph.node(5).operator.aggregation == Aggregation(AggregationKind.MAX, 0)


@pytest.mark.parametrize("method", ["map", "flat_map", "filter"])
def test_map_flat_map_filter_on_a_keyed_stream_are_keyed(env: StreamExecutionEnvironment,
                                                          method: str) -> None:
    getattr(pairs(env).key_by(first), method)(lambda value: [value]).print()
    node, edge = keyed_node(env.get_stream_graph())
    assert node.operator.keyed and node.key_selectors == (first,)
    assert edge.partitioner.kind is PartitionerKind.HASH


def test_keyed_filter_keeps_the_type(env: StreamExecutionEnvironment) -> None:
    assert pairs(env).key_by(first).filter(bool).get_type() == PAIR


def test_process_needs_a_keyed_process_function(env: StreamExecutionEnvironment) -> None:
    class Count(KeyedProcessFunction):
        def process_element(self, value: Any, ctx: Any) -> Any:
            yield ctx.get_current_key()

    class Plain(ProcessFunction):
        def process_element(self, value: Any, ctx: Any) -> Any:
            yield value

    count = Count()
    pairs(env).key_by(first).process(count, Types.STRING()).print()
    node, _ = keyed_node(env.get_stream_graph())
    assert node.operator.kind is OperatorKind.KEYED_PROCESS
    assert node.operator.function is count and node.operator.output_type == Types.STRING()
    assert node.name == "KeyedProcess"
    with pytest.raises(FunctionTypeError, match="KeyedProcessFunction"):
        pairs(env).key_by(first).process(Plain())  # type: ignore[arg-type]


def test_keyed_operations_on_a_plain_stream_point_to_key_by(env: StreamExecutionEnvironment
                                                            ) -> None:
    for method in ("reduce", "sum", "min", "max", "min_by", "max_by"):
        arguments = (lambda a, b: a,) if method == "reduce" else ()
        with pytest.raises(KeyedStreamRequiredError, match=r"call key_by\(key_selector\) first"):
            getattr(pairs(env), method)(*arguments)


def test_key_by_again_rekeys_the_original_stream(env: StreamExecutionEnvironment) -> None:
    second = lambda value: value[1]  # noqa: E731
    pairs(env).key_by(first).key_by(second).sum(1).print()
    node, edge = keyed_node(env.get_stream_graph())
    assert node.key_selectors == (second,)
    assert edge.partitioner.key_selector is second


def test_key_by_after_partitioning_replaces_it(env: StreamExecutionEnvironment) -> None:
    pairs(env).rebalance().key_by(first).sum(1).print()
    _, edge = keyed_node(env.get_stream_graph())
    assert edge.partitioner.kind is PartitionerKind.HASH


def test_key_by_on_a_union_hashes_every_input(env: StreamExecutionEnvironment) -> None:
    pairs(env).union(pairs(env)).key_by(first).sum(1).print()
    graph = env.get_stream_graph()
    assert [edge.partitioner.kind for edge in graph.in_edges(3)] == [PartitionerKind.HASH] * 2


def test_sinks_and_union_of_a_keyed_stream_keep_the_hash_partitioning(
        env: StreamExecutionEnvironment) -> None:
    keyed = pairs(env).key_by(first)
    keyed.print()
    keyed.union(pairs(env)).map(str).print()
    graph = env.get_stream_graph()
    assert graph.in_edges(2)[0].partitioner.kind is PartitionerKind.HASH
    kinds = [edge.partitioner.kind if edge.partitioner else None for edge in graph.in_edges(4)]
    assert kinds == [PartitionerKind.HASH, None]
    assert not graph.node(2).operator.keyed


@pytest.mark.parametrize("method", ["shuffle", "rebalance", "rescale", "forward", "broadcast",
                                    "global_"])
def test_a_keyed_stream_cannot_be_repartitioned(env: StreamExecutionEnvironment,
                                                method: str) -> None:
    with pytest.raises(KeyedStreamOperationError, match="cannot override the partitioning"):
        getattr(pairs(env).key_by(first), method)()
    with pytest.raises(KeyedStreamOperationError):
        pairs(env).key_by(first).partition_custom(lambda k, n: 0, first)


@pytest.mark.parametrize(("method", "arguments"), [
    ("name", ("x",)), ("uid", ("x",)), ("set_parallelism", (2,)), ("set_max_parallelism", (2,)),
    ("get_name", ()), ("disable_chaining", ()), ("start_new_chain", ()),
    ("slot_sharing_group", ("x",)), ("set_buffer_timeout", (1,)), ("force_non_parallel", ()),
])
def test_a_keyed_stream_has_no_operator_settings(env: StreamExecutionEnvironment, method: str,
                                                 arguments: tuple[Any, ...]) -> None:
    with pytest.raises(KeyedStreamOperationError, match="key_by\\(\\) creates no operator"):
        getattr(pairs(env).key_by(first), method)(*arguments)


def test_key_type(env: StreamExecutionEnvironment) -> None:
    assert pairs(env).key_by(first, Types.STRING()).get_key_type() == Types.STRING()
    assert pairs(env).key_by(first).get_key_type() == Types.PICKLED_BYTE_ARRAY()
    with pytest.raises(TypeError):
        pairs(env).key_by(first, "string")  # type: ignore[arg-type]
