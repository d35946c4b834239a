"""ConnectedStreams: two-input nodes with input indexes, keyed when both sides are keyed."""

from typing import Any

import pytest

from flintlock.common import Types
from flintlock.common.operator_spec import OperatorKind
from flintlock.datastream import (
    CoFlatMapFunction,
    CoMapFunction,
    CoProcessFunction,
    KeyedCoProcessFunction,
    StreamExecutionEnvironment,
)
from flintlock.datastream.errors import ForeignStreamError, KeyedStreamRequiredError
from flintlock.datastream.functions import FunctionTypeError
from flintlock.graph.stream_graph import PartitionerKind


class Tag(CoMapFunction):
    def map1(self, value: Any) -> Any:
        return ("left", value)

    def map2(self, value: Any) -> Any:
        return ("right", value)


class Both(CoFlatMapFunction):
    def flat_map1(self, value: Any) -> Any:
        yield value

    def flat_map2(self, value: Any) -> Any:
        yield value


class Merge(CoProcessFunction):
    def process_element1(self, value: Any, ctx: Any) -> Any:
        yield value

    def process_element2(self, value: Any, ctx: Any) -> Any:
        yield value


class Join(KeyedCoProcessFunction):
    def process_element1(self, value: Any, ctx: Any) -> Any:
        yield value

    def process_element2(self, value: Any, ctx: Any) -> Any:
        yield value


def left_key(value: Any) -> Any:
    return value


def right_key(value: Any) -> Any:
    return value[0]


def test_co_map_reads_two_inputs(env: StreamExecutionEnvironment) -> None:
    tag = Tag()
    left, right = env.from_collection([1]), env.from_collection(["a"])
    left.connect(right.rebalance()).map(tag, Types.TUPLE([Types.STRING(), Types.INT()])).print()
    graph = env.get_stream_graph()
    node = graph.node(3)
    assert node.num_inputs == 2 and node.name == "Co-Map"
    assert node.operator.kind is OperatorKind.CO_MAP and node.operator.function is tag
    assert not node.operator.keyed and node.key_selectors == ()
    edges = [(e.source_id, e.input_index, e.partitioner.kind if e.partitioner else None)
             for e in graph.in_edges(3)]
    assert edges == [(1, 0, None), (2, 1, PartitionerKind.REBALANCE)]


def test_co_flat_map_and_co_process(env: StreamExecutionEnvironment) -> None:
    left, right = env.from_collection([1]), env.from_collection([2])
    left.connect(right).flat_map(Both()).print()
    left.connect(right).process(Merge()).print()
    graph = env.get_stream_graph()
    assert graph.node(3).operator.kind is OperatorKind.CO_FLAT_MAP
    assert graph.node(5).operator.kind is OperatorKind.CO_PROCESS
    assert graph.node(5).name == "Co-Process"


def test_key_by_on_connected_streams_makes_a_keyed_two_input_node(
        env: StreamExecutionEnvironment) -> None:
    join = Join()
    left, right = env.from_collection([1]), env.from_collection([(1, "x")])
    left.connect(right).key_by(left_key, right_key).process(join).print()
    graph = env.get_stream_graph()
    node = graph.node(3)
    assert node.operator.kind is OperatorKind.KEYED_CO_PROCESS and node.operator.keyed
    assert node.key_selectors == (left_key, right_key)
    selectors = [(edge.input_index, edge.partitioner.key_selector) for edge in graph.in_edges(3)]
    assert selectors == [(0, left_key), (1, right_key)]


def test_connecting_two_keyed_streams_is_keyed(env: StreamExecutionEnvironment) -> None:
    left = env.from_collection([1]).key_by(left_key)
    right = env.from_collection([(1, "x")]).key_by(right_key)
    left.connect(right).map(Tag()).print()
    left.connect(right).process(Merge()).print()
    graph = env.get_stream_graph()
    for node_id in (3, 5):
        node = graph.node(node_id)
        assert node.operator.keyed and node.key_selectors == (left_key, right_key)


def test_keyed_co_process_needs_both_sides_keyed(env: StreamExecutionEnvironment) -> None:
    left = env.from_collection([1]).key_by(left_key)
    with pytest.raises(KeyedStreamRequiredError, match="KeyedCoProcessFunction"):
        left.connect(env.from_collection([2])).process(Join())


def test_functions_must_be_co_functions(env: StreamExecutionEnvironment) -> None:
    connected = env.from_collection([1]).connect(env.from_collection([2]))
    with pytest.raises(FunctionTypeError, match="CoMapFunction"):
        connected.map(lambda v: v)  # type: ignore[arg-type]
    with pytest.raises(FunctionTypeError, match="CoFlatMapFunction"):
        connected.flat_map(Tag())  # type: ignore[arg-type]
    with pytest.raises(FunctionTypeError, match="CoProcessFunction"):
        connected.process(Tag())  # type: ignore[arg-type]


def test_streams_of_two_environments_cannot_be_combined(env: StreamExecutionEnvironment) -> None:
    other = StreamExecutionEnvironment()
    with pytest.raises(ForeignStreamError):
        env.from_collection([1]).connect(other.from_collection([2]))
    with pytest.raises(ForeignStreamError):
        env.from_collection([1]).union(other.from_collection([2]))
