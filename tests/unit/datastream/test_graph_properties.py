"""Laws of graph building, for random programs: the graph validates, has one node per
operator call, edges point from older to newer operators, and keyed operators read exactly
through hash partitioners on their own key selectors."""

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from flintlock.datastream import CoMapFunction, DataStream, StreamExecutionEnvironment
from flintlock.graph.stream_graph import PartitionerKind


class Pair(CoMapFunction):
    def map1(self, value: Any) -> Any:
        return value

    def map2(self, value: Any) -> Any:
        return value


def key(value: Any) -> Any:
    return value


STEPS = ["map", "filter", "shuffle_map", "rebalance_map", "keyed_reduce", "keyed_map",
         "union_map", "connect_map", "keyed_connect_map", "parallel_map"]


def apply(step: str, first: DataStream, second: DataStream) -> tuple[DataStream, int]:
    """Apply one step; return the new stream and how many operators it added."""
    if step == "map":
        return first.map(str), 1
    if step == "filter":
        return first.filter(bool), 1
    if step == "shuffle_map":
        return first.shuffle().map(str), 1
    if step == "rebalance_map":
        return first.rebalance().map(str), 1
    if step == "keyed_reduce":
        return first.key_by(key).reduce(lambda a, b: b), 1
    if step == "keyed_map":
        return first.key_by(key).map(str), 1
    if step == "union_map":
        return first.union(second).map(str), 1
    if step == "connect_map":
        return first.connect(second).map(Pair()), 1
    if step == "keyed_connect_map":
        return first.connect(second).key_by(key, key).map(Pair()), 1
    return first.map(str).set_parallelism(3), 1


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(STEPS), st.integers(0, 50), st.integers(0, 50)),
                min_size=1, max_size=12),
       st.integers(1, 3))
def test_random_programs_build_valid_graphs(steps: list[tuple[str, int, int]],
                                            sources: int) -> None:
    env = StreamExecutionEnvironment()
    streams = [env.from_collection([index]) for index in range(sources)]
    operators = sources
    for step, first, second in steps:
        stream, added = apply(step, streams[first % len(streams)],
                              streams[second % len(streams)])
        streams.append(stream)
        operators += added
    for stream in streams:
        stream.print()
    operators += len(streams)
    graph = env.get_stream_graph()
    assert len(graph.nodes) == operators
    for edge in graph.edges:
        assert edge.source_id < edge.target_id
    for node in graph.nodes.values():
        in_edges = graph.in_edges(node.id)
        assert len(in_edges) >= (0 if node.is_source else node.num_inputs)
        assert {edge.input_index for edge in in_edges} == set(range(node.num_inputs))
        if node.operator.keyed:
            assert len(node.key_selectors) == node.num_inputs
            for edge in in_edges:
                assert edge.partitioner is not None
                assert edge.partitioner.kind is PartitionerKind.HASH
                assert edge.partitioner.key_selector is node.key_selectors[edge.input_index]
        else:
            assert node.key_selectors == ()
