"""Operator chaining and the job graph's vertices, data sets and edges."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flintlock.graph.errors import ForwardPartitioningError
from flintlock.graph.job_graph import (
    ChainedOutput,
    DistributionPattern,
    JobGraph,
    ResultPartitionType,
    build_job_graph,
)
from flintlock.graph.stream_graph import (
    ChainingStrategy,
    Partitioner,
    PartitionerKind,
    StreamGraph,
)


def _key(value: object) -> object:
    return value


def chain_of(*names: str, parallelism: int = 2) -> StreamGraph:
    graph = StreamGraph("job")
    previous = graph.add_node(names[0], f"op:{names[0]}", parallelism=parallelism, is_source=True)
    for name in names[1:]:
        node = graph.add_node(name, f"op:{name}", parallelism=parallelism)
        graph.add_edge(previous.id, node.id)
        previous = node
    return graph


def names(job: JobGraph) -> list[str]:
    return [vertex.name for vertex in job.vertices]


class TestChaining:
    def test_forward_pipeline_becomes_one_vertex_named_like_flink(self) -> None:
        job = build_job_graph(chain_of("numbers", "Map", "Filter"))
        (vertex,) = job.vertices
        assert vertex.name == "Source: numbers -> Map -> Filter"
        assert [op.name for op in vertex.operators] == ["numbers", "Map", "Filter"]
        assert [op.operator for op in vertex.operators] == ["op:numbers", "op:Map", "op:Filter"]
        assert vertex.operators[0].chained_outputs == (ChainedOutput(2),)
        assert vertex.operators[2].chained_outputs == ()
        assert (vertex.parallelism, vertex.max_parallelism, vertex.is_source) == (2, 128, True)
        assert vertex.inputs == () and vertex.produced == ()
        assert job.data_sets == {}

    def test_source_name_keeps_an_existing_prefix(self) -> None:
        job = build_job_graph(chain_of("Source: Collection", "Map"))
        assert names(job) == ["Source: Collection -> Map"]

    def test_disabled_chaining_gives_one_vertex_per_operator(self) -> None:
        graph = chain_of("s", "a", "b")
        graph.chaining_enabled = False
        job = build_job_graph(graph)
        assert names(job) == ["Source: s", "a", "b"]
        assert all(e.partitioner.kind is PartitionerKind.FORWARD for e in job.edges)

    @pytest.mark.parametrize("strategy", [ChainingStrategy.HEAD, ChainingStrategy.NEVER])
    def test_head_or_never_target_starts_a_chain(self, strategy: ChainingStrategy) -> None:
        graph = chain_of("s", "a", "b")
        graph.nodes[2].chaining = strategy
        expected = ["Source: s", "a -> b"] if strategy is ChainingStrategy.HEAD else [
            "Source: s", "a", "b"]
        assert names(build_job_graph(graph)) == expected

    def test_head_source_still_lets_successors_chain(self) -> None:
        graph = chain_of("s", "a")
        graph.nodes[1].chaining = ChainingStrategy.HEAD
        assert names(build_job_graph(graph)) == ["Source: s -> a"]

    def test_never_source_does_not_chain(self) -> None:
        graph = chain_of("s", "a")
        graph.nodes[1].chaining = ChainingStrategy.NEVER
        assert names(build_job_graph(graph)) == ["Source: s", "a"]

    def test_different_slot_sharing_groups_do_not_chain(self) -> None:
        graph = chain_of("s", "a", "b")
        graph.nodes[3].slot_sharing_group = "other"
        job = build_job_graph(graph)
        assert names(job) == ["Source: s -> a", "b"]
        assert [v.slot_sharing_group for v in job.vertices] == ["default", "other"]

    def test_different_parallelism_rebalances_instead_of_chaining(self) -> None:
        graph = chain_of("s", "a")
        graph.nodes[2].parallelism = 3
        job = build_job_graph(graph)
        assert names(job) == ["Source: s", "a"]
        (edge,) = job.edges
        assert edge.partitioner.kind is PartitionerKind.REBALANCE
        assert edge.distribution_pattern is DistributionPattern.ALL_TO_ALL

    def test_different_max_parallelism_does_not_chain(self) -> None:
        graph = chain_of("s", "a")
        graph.nodes[2].max_parallelism = 64
        assert names(build_job_graph(graph)) == ["Source: s", "a"]

    @pytest.mark.parametrize("partitioner", [
        Partitioner.rebalance(), Partitioner.rescale(), Partitioner.hash(_key),
        Partitioner.broadcast(), Partitioner.shuffle(), Partitioner.global_(),
    ])
    def test_only_forward_edges_chain(self, partitioner: Partitioner) -> None:
        graph = StreamGraph()
        source = graph.add_node("s", None, is_source=True, parallelism=2)
        op = graph.add_node("a", None, parallelism=2)
        graph.add_edge(source.id, op.id, partitioner)
        job = build_job_graph(graph)
        assert names(job) == ["Source: s", "a"]
        assert job.edges[0].partitioner is partitioner

    def test_explicit_forward_chains(self) -> None:
        graph = StreamGraph()
        source = graph.add_node("s", None, is_source=True, parallelism=2)
        op = graph.add_node("a", None, parallelism=2)
        graph.add_edge(source.id, op.id, Partitioner.forward())
        assert names(build_job_graph(graph)) == ["Source: s -> a"]

    def test_a_union_target_with_two_input_edges_does_not_chain(self) -> None:
        graph = StreamGraph()
        s1 = graph.add_node("s1", None, is_source=True)
        s2 = graph.add_node("s2", None, is_source=True)
        union_map = graph.add_node("map", None)
        graph.add_edge(s1.id, union_map.id)
        graph.add_edge(s2.id, union_map.id)
        job = build_job_graph(graph)
        assert names(job) == ["Source: s1", "Source: s2", "map"]
        assert [edge.gate_index for edge in job.vertex_of_node(union_map.id).inputs] == [0, 1]

    def test_fan_out_chain_is_named_with_parentheses(self) -> None:
        graph = StreamGraph()
        source = graph.add_node("s", None, is_source=True)
        left = graph.add_node("left", None)
        right = graph.add_node("right", None)
        tail = graph.add_node("tail", None)
        graph.add_edge(source.id, left.id)
        graph.add_edge(source.id, right.id)
        graph.add_edge(right.id, tail.id)
        (vertex,) = build_job_graph(graph).vertices
        assert vertex.name == "Source: s -> (left, right -> tail)"
        assert [op.name for op in vertex.operators] == ["s", "left", "right", "tail"]
        assert vertex.head.chained_outputs == (ChainedOutput(2), ChainedOutput(3))


class TestJobGraphStructure:
    def keyed_job(self, mode: str = "streaming") -> JobGraph:
        """src(2) -> map(2) -hash-> reduce(4) -> sink(4), plus map -broadcast-> side(1)."""
        graph = StreamGraph("keyed", runtime_mode=mode, max_parallelism=32)
        src = graph.add_node("src", None, is_source=True, parallelism=2)
        mapper = graph.add_node("map", None, parallelism=2, buffer_timeout_ms=5)
        reduce = graph.add_node("reduce", None, parallelism=4, key_selectors=(_key,))
        sink = graph.add_node("sink", None, parallelism=4)
        side = graph.add_node("side", None, parallelism=1)
        graph.add_edge(src.id, mapper.id)
        graph.add_edge(mapper.id, reduce.id, Partitioner.hash(_key))
        graph.add_edge(reduce.id, sink.id)
        graph.add_edge(mapper.id, side.id, Partitioner.broadcast(), output_tag="late")
        return build_job_graph(graph, rng=random.Random(7))

    def test_vertices_in_topological_order(self) -> None:
        assert names(self.keyed_job()) == ["Source: src -> map", "reduce -> sink", "side"]

    def test_non_chained_outputs_carry_what_a_record_writer_needs(self) -> None:
        job = self.keyed_job()
        source_vertex, reduce_vertex, side_vertex = job.vertices
        mapper = source_vertex.operators[1]
        to_reduce, to_side = mapper.non_chained_outputs
        assert (to_reduce.target_vertex, to_reduce.partitioner.kind) == (
            reduce_vertex.id, PartitionerKind.HASH)
        assert (to_reduce.consumer_parallelism, to_reduce.consumer_max_parallelism) == (4, 32)
        assert to_reduce.buffer_timeout_ms == 5
        assert (to_side.target_vertex, to_side.output_tag) == (side_vertex.id, "late")
        assert source_vertex.produced == (to_reduce.data_set, to_side.data_set)
        assert source_vertex.operators[0].non_chained_outputs == ()

    def test_data_sets_and_edges_connect_producer_and_consumer(self) -> None:
        job = self.keyed_job()
        source_vertex, reduce_vertex, _ = job.vertices
        (edge,) = reduce_vertex.inputs
        data_set = job.data_sets[edge.source]
        assert (data_set.producer, data_set.producer_node_id) == (source_vertex.id, 2)
        assert data_set.consumers == (reduce_vertex.id,)
        assert (edge.source_vertex, edge.target, edge.target_node_id) == (
            source_vertex.id, reduce_vertex.id, 3)
        assert (edge.input_index, edge.gate_index) == (0, 0)
        assert edge.partition_type is ResultPartitionType.PIPELINED_BOUNDED
        assert data_set.partition_type.is_pipelined
        assert len(job.edges) == 2 and len(job.data_sets) == 2

    def test_batch_mode_uses_blocking_partitions(self) -> None:
        job = self.keyed_job("BATCH")
        assert {e.partition_type for e in job.edges} == {ResultPartitionType.BLOCKING}
        assert not ResultPartitionType.BLOCKING.is_pipelined

    def test_job_settings_travel_along(self) -> None:
        job = self.keyed_job()
        assert job.name == "keyed" and job.runtime_mode == "streaming"
        assert job.job_id == self.keyed_job().job_id
        assert len(job.job_id) == 32
        assert [v.name for v in job.sources()] == ["Source: src -> map"]

    def test_default_buffer_timeout_comes_from_the_job(self) -> None:
        graph = chain_of("s", "a")
        graph.nodes[2].parallelism = 1
        graph.buffer_timeout_ms = 0
        (edge_output,) = build_job_graph(graph).vertices[0].head.non_chained_outputs
        assert edge_output.buffer_timeout_ms == 0

    def test_two_input_gates_ordered_by_input_index(self) -> None:
        graph = StreamGraph()
        a = graph.add_node("a", None, is_source=True)
        b = graph.add_node("b", None, is_source=True)
        join = graph.add_node("join", None, num_inputs=2)
        graph.add_edge(b.id, join.id, input_index=1)
        graph.add_edge(a.id, join.id, input_index=0)
        vertex = build_job_graph(graph).vertex_of_node(join.id)
        assert [(e.input_index, e.gate_index, e.source_vertex) for e in vertex.inputs] == [
            (0, 0, build_job_graph(graph).vertices[0].id), (1, 1, vertex.inputs[1].source_vertex)]
        assert vertex.inputs[1].source_vertex != vertex.inputs[0].source_vertex

    def test_invalid_stream_graph_is_rejected_before_chaining(self) -> None:
        graph = StreamGraph()
        source = graph.add_node("s", None, is_source=True, parallelism=2)
        op = graph.add_node("a", None, parallelism=3)
        graph.add_edge(source.id, op.id, Partitioner.forward())
        with pytest.raises(ForwardPartitioningError):
            build_job_graph(graph)


class TestOperatorIds:
    def test_same_program_same_ids_and_parallelism_does_not_matter(self) -> None:
        first = build_job_graph(chain_of("s", "a", parallelism=2))
        second = build_job_graph(chain_of("s", "a", parallelism=5))
        ids = [op.operator_id for op in first.vertices[0].operators]
        assert ids == [op.operator_id for op in second.vertices[0].operators]
        assert len(set(ids)) == 2
        assert first.vertices[0].id == ids[0]

    def test_uid_survives_topology_changes_auto_ids_do_not(self) -> None:
        small = chain_of("s", "a")
        small.nodes[2].uid = "stateful"
        big = chain_of("s", "extra", "a")
        big.nodes[3].uid = "stateful"
        small_ops = build_job_graph(small).vertices[0].operators
        big_ops = build_job_graph(big).vertices[0].operators
        assert small_ops[1].operator_id == big_ops[2].operator_id
        assert small_ops[1].uid == "stateful"
        plain_small = build_job_graph(chain_of("s", "a")).vertices[0].operators
        plain_big = build_job_graph(chain_of("s", "extra", "a")).vertices[0].operators
        assert plain_small[1].operator_id != plain_big[2].operator_id
        assert plain_small[1].operator_id != small_ops[1].operator_id


@st.composite
def random_stream_graphs(draw: st.DrawFn) -> StreamGraph:
    """Random DAGs: each new node reads 1-2 earlier nodes (or is a source)."""
    graph = StreamGraph(chaining_enabled=draw(st.booleans()))
    count = draw(st.integers(1, 9))
    for index in range(count):
        parallelism = draw(st.integers(1, 3))
        strategy = draw(st.sampled_from(list(ChainingStrategy)))
        group = draw(st.sampled_from(["default", "default", "g"]))
        if index == 0 or draw(st.integers(0, 4)) == 0:
            graph.add_node(f"n{index}", None, is_source=True, parallelism=parallelism,
                           chaining=strategy, slot_sharing_group=group)
            continue
        inputs = draw(st.lists(st.integers(1, index), min_size=1, max_size=2, unique=True))
        node = graph.add_node(f"n{index}", None, parallelism=parallelism, chaining=strategy,
                              slot_sharing_group=group)
        for source in inputs:
            kind = draw(st.sampled_from([None, PartitionerKind.REBALANCE, PartitionerKind.RESCALE]))
            graph.add_edge(source, node.id, None if kind is None else Partitioner(kind))
    return graph


@settings(max_examples=150, deadline=None)
@given(random_stream_graphs())
def test_chaining_laws(graph: StreamGraph) -> None:
    job = build_job_graph(graph)
    members = [op.node_id for vertex in job.vertices for op in vertex.operators]
    assert sorted(members) == sorted(graph.nodes)  # every operator in exactly one vertex
    position = {vertex.id: i for i, vertex in enumerate(job.vertices)}
    for edge in graph.edges:
        source_vertex = job.vertex_of_node(edge.source_id)
        target_vertex = job.vertex_of_node(edge.target_id)
        if source_vertex.id == target_vertex.id:  # chained: the rule holds
            assert graph.chaining_enabled
            assert graph.resolved_partitioner(edge).kind is PartitionerKind.FORWARD
            assert graph.nodes[edge.target_id].chaining is ChainingStrategy.ALWAYS
            assert graph.nodes[edge.source_id].chaining is not ChainingStrategy.NEVER
            assert len(graph.in_edges(edge.target_id)) == 1
            assert target_vertex.head.node_id != edge.target_id
        else:
            assert position[source_vertex.id] < position[target_vertex.id]
            assert target_vertex.head.node_id == edge.target_id
    for vertex in job.vertices:
        nodes = [graph.nodes[op.node_id] for op in vertex.operators]
        assert {graph.parallelism_of(n.id) for n in nodes} == {vertex.parallelism}
        assert {n.slot_sharing_group for n in nodes} == {vertex.slot_sharing_group}
    non_chained = sum(
        1 for e in graph.edges
        if job.vertex_of_node(e.source_id).id != job.vertex_of_node(e.target_id).id)
    assert len(job.edges) == len(job.data_sets) == non_chained
