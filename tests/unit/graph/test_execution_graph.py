"""Expanding the job graph by parallelism: partitions, subpartitions, gates, channels, regions."""

from __future__ import annotations

import dataclasses
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flintlock.common.ids import ResultPartitionId, SubtaskIndex
from flintlock.graph.execution_graph import (
    ConsumedSubpartition,
    ExecutionGraph,
    ExecutionVertex,
    SubpartitionConsumer,
    build_execution_graph,
    channels_of,
    pointwise_consumer_range,
    pointwise_producer_range,
)
from flintlock.graph.job_graph import (
    DistributionPattern,
    JobEdge,
    JobGraph,
    ResultPartitionType,
    build_job_graph,
)
from flintlock.graph.regions import pipelined_regions, region_of
from flintlock.graph.stream_graph import Partitioner, PartitionerKind, StreamGraph


def _key(value: object) -> object:
    return value


def two_vertices(
    producers: int, consumers: int, partitioner: Partitioner, mode: str = "streaming"
) -> JobGraph:
    graph = StreamGraph(runtime_mode=mode, chaining_enabled=False)
    source = graph.add_node("src", None, is_source=True, parallelism=producers)
    sink = graph.add_node("sink", None, parallelism=consumers)
    graph.add_edge(source.id, sink.id, partitioner)
    return build_job_graph(graph)


def sub(vertex_id: str, index: int, parallelism: int) -> ExecutionVertex:
    return ExecutionVertex(vertex_id, SubtaskIndex(index), parallelism)  # type: ignore[arg-type]


class TestPointwisePattern:
    @pytest.mark.parametrize(("producers", "consumers", "expected"), [
        (2, 2, [[0], [1]]),
        (2, 4, [[0, 1], [2, 3]]),
        (3, 7, [[0, 1, 2], [3, 4], [5, 6]]),
        (7, 3, [[0], [0], [1], [1], [2], [2], [2]]),
        (1, 3, [[0, 1, 2]]),
    ])
    def test_consumers_per_producer_like_flink(
        self, producers: int, consumers: int, expected: list[list[int]]
    ) -> None:
        assert [list(pointwise_consumer_range(i, producers, consumers))
                for i in range(producers)] == expected

    @pytest.mark.parametrize(("producers", "consumers", "expected"), [
        (4, 2, [[0, 1], [2, 3]]),
        (7, 3, [[0, 1], [2, 3], [4, 5, 6]]),
        (3, 7, [[0], [0], [0], [1], [1], [2], [2]]),
        (3, 1, [[0, 1, 2]]),
    ])
    def test_producers_per_consumer_like_flink(
        self, producers: int, consumers: int, expected: list[list[int]]
    ) -> None:
        assert [list(pointwise_producer_range(j, producers, consumers))
                for j in range(consumers)] == expected

    def test_channels_of_fan_out_number_subpartitions_per_producer(self) -> None:
        assert channels_of(DistributionPattern.POINTWISE, 2, 4) == (
            ((0, 0),), ((0, 1),), ((1, 0),), ((1, 1),))
        assert channels_of(DistributionPattern.POINTWISE, 4, 2) == (
            ((0, 0), (1, 0)), ((2, 0), (3, 0)))

    def test_all_to_all_reads_own_subpartition_of_every_producer(self) -> None:
        assert channels_of(DistributionPattern.ALL_TO_ALL, 2, 3) == (
            ((0, 0), (1, 0)), ((0, 1), (1, 1)), ((0, 2), (1, 2)))


class TestExpansion:
    def test_hash_edge_all_to_all(self) -> None:
        job = two_vertices(2, 3, Partitioner.hash(_key))
        execution = build_execution_graph(job)
        src, sink = job.vertices
        (data_set,) = src.produced
        assert execution.vertices == (
            sub(src.id, 0, 2), sub(src.id, 1, 2),
            sub(sink.id, 0, 3), sub(sink.id, 1, 3), sub(sink.id, 2, 3))
        partition = execution.partitions[ResultPartitionId(data_set, SubtaskIndex(1))]
        assert partition.num_subpartitions == 3
        assert partition.producer == sub(src.id, 1, 2)
        assert partition.consumers == tuple(
            SubpartitionConsumer(SubtaskIndex(j), 0, 1) for j in range(3))  # type: ignore[arg-type]
        (gate,) = execution.input_gates(sub(sink.id, 2, 3))
        assert gate.gate_index == 0 and gate.edge is sink.inputs[0]
        assert gate.channels == (
            ConsumedSubpartition(ResultPartitionId(data_set, SubtaskIndex(0)), 2),
            ConsumedSubpartition(ResultPartitionId(data_set, SubtaskIndex(1)), 2))
        assert execution.input_gates(sub(src.id, 0, 2)) == ()
        assert execution.produced_partitions(sub(src.id, 1, 2)) == (partition,)

    @pytest.mark.parametrize("partitioner", [
        Partitioner.rebalance(), Partitioner.broadcast(), Partitioner.shuffle(),
        Partitioner.global_(), Partitioner.custom(lambda k, n: 0, _key)])
    def test_every_non_pointwise_partitioner_is_all_to_all(self, partitioner: Partitioner) -> None:
        execution = build_execution_graph(two_vertices(2, 2, partitioner))
        assert {p.num_subpartitions for p in execution.partitions.values()} == {2}

    def test_rescale_fan_in(self) -> None:
        job = two_vertices(4, 2, Partitioner.rescale())
        execution = build_execution_graph(job)
        _, sink = job.vertices
        gate = execution.input_gates(sub(sink.id, 1, 2))[0]
        assert [(c.partition.producer_subtask, c.subpartition) for c in gate.channels] == [
            (2, 0), (3, 0)]
        assert {p.num_subpartitions for p in execution.partitions.values()} == {1}

    def test_forward_is_one_to_one(self) -> None:
        job = two_vertices(3, 3, Partitioner.forward())
        execution = build_execution_graph(job)
        _, sink = job.vertices
        for j in range(3):
            (gate,) = execution.input_gates(sub(sink.id, j, 3))
            assert [(c.partition.producer_subtask, c.subpartition) for c in gate.channels] == [
                (j, 0)]

    def test_attempt_is_part_of_every_partition_id(self) -> None:
        execution = build_execution_graph(two_vertices(2, 2, Partitioner.rebalance()), attempt=3)
        assert {p.attempt for p in execution.partitions} == {3}
        assert execution.attempt == 3

    def test_two_gates_in_gate_order(self) -> None:
        graph = StreamGraph()
        left = graph.add_node("l", None, is_source=True, parallelism=2)
        right = graph.add_node("r", None, is_source=True, parallelism=1)
        join = graph.add_node("join", None, num_inputs=2, parallelism=2)
        graph.add_edge(right.id, join.id, Partitioner.broadcast(), input_index=1)
        graph.add_edge(left.id, join.id, Partitioner.hash(_key), input_index=0)
        job = build_job_graph(graph)
        execution = ExecutionGraph(job)
        gates = execution.input_gates(execution.subtasks(job.vertices[2].id)[0])
        assert [(g.gate_index, g.edge.input_index, len(g.channels)) for g in gates] == [
            (0, 0, 2), (1, 1, 1)]


class TestRegions:
    def test_pipelined_all_to_all_is_one_region(self) -> None:
        execution = build_execution_graph(two_vertices(2, 3, Partitioner.rebalance()))
        assert pipelined_regions(execution) == (frozenset(execution.vertices),)

    def test_pipelined_forward_splits_per_subtask(self) -> None:
        job = two_vertices(2, 2, Partitioner.forward())
        execution = build_execution_graph(job)
        src, sink = job.vertices
        assert pipelined_regions(execution) == (
            frozenset({sub(src.id, 0, 2), sub(sink.id, 0, 2)}),
            frozenset({sub(src.id, 1, 2), sub(sink.id, 1, 2)}))
        assert region_of(execution, sub(sink.id, 1, 2)) == pipelined_regions(execution)[1]

    def test_blocking_edges_split_regions(self) -> None:
        execution = build_execution_graph(two_vertices(2, 3, Partitioner.rebalance(), "batch"))
        assert len(pipelined_regions(execution)) == 5
        assert all(len(region) == 1 for region in pipelined_regions(execution))

    def test_blocking_cycle_between_regions_is_merged(self) -> None:
        # a -pipelined-> d, a -blocking-> b -blocking-> d: regions {a, d} and {b} would each
        # wait for the other, so they must be one region.
        graph = StreamGraph(chaining_enabled=False)
        a = graph.add_node("a", None, is_source=True)
        b = graph.add_node("b", None)
        d = graph.add_node("d", None, num_inputs=2)
        graph.add_edge(a.id, b.id)
        graph.add_edge(b.id, d.id, input_index=1)
        graph.add_edge(a.id, d.id, input_index=0)
        job = with_blocking(build_job_graph(graph), {(a.id, b.id), (b.id, d.id)})
        assert len(pipelined_regions(build_execution_graph(job))) == 1
        only_first = with_blocking(build_job_graph(graph), {(a.id, b.id)})
        assert len(pipelined_regions(build_execution_graph(only_first))) == 1
        split = with_blocking(build_job_graph(graph), {(a.id, d.id), (b.id, d.id)})
        regions = pipelined_regions(build_execution_graph(split))
        assert sorted(len(region) for region in regions) == [1, 2]

    def test_blocking_pointwise_chain_splits_every_subtask(self) -> None:
        regions = pipelined_regions(build_execution_graph(
            two_vertices(1, 1, Partitioner.forward(), "batch")))
        assert len(regions) == 2


def with_blocking(job: JobGraph, blocking: set[tuple[int, int]]) -> JobGraph:
    """``job`` with the edges between the given (source node, target node) made BLOCKING."""
    def retype(edge: JobEdge) -> JobEdge:
        source_node = job.data_sets[edge.source].producer_node_id
        if (source_node, edge.target_node_id) in blocking:
            return dataclasses.replace(edge, partition_type=ResultPartitionType.BLOCKING)
        return edge

    vertices = tuple(
        dataclasses.replace(v, inputs=tuple(retype(e) for e in v.inputs)) for v in job.vertices)
    return dataclasses.replace(job, vertices=vertices)


@st.composite
def random_jobs(draw: st.DrawFn) -> JobGraph:
    graph = StreamGraph(
        chaining_enabled=draw(st.booleans()),
        runtime_mode=draw(st.sampled_from(["streaming", "batch"])))
    count = draw(st.integers(1, 6))
    kinds = [None, PartitionerKind.FORWARD, PartitionerKind.RESCALE, PartitionerKind.REBALANCE,
             PartitionerKind.HASH, PartitionerKind.BROADCAST, PartitionerKind.GLOBAL]
    for index in range(count):
        parallelism = draw(st.integers(1, 6))
        if index == 0 or draw(st.integers(0, 3)) == 0:
            graph.add_node(f"n{index}", None, is_source=True, parallelism=parallelism)
            continue
        two = index >= 2 and draw(st.booleans())
        node = graph.add_node(f"n{index}", None, parallelism=parallelism,
                              num_inputs=2 if two else 1)
        upstream = draw(st.lists(st.integers(1, index), min_size=1 + two, max_size=1 + two,
                                 unique=True))
        for input_index, source in enumerate(upstream):
            kind = draw(st.sampled_from(kinds))
            if kind is PartitionerKind.FORWARD and graph.parallelism_of(source) != parallelism:
                kind = PartitionerKind.RESCALE
            partitioner = None if kind is None else Partitioner(
                kind, _key if kind is PartitionerKind.HASH else None)
            graph.add_edge(source, node.id, partitioner, input_index if two else 0)
    return build_job_graph(graph)


@settings(max_examples=200, deadline=None)
@given(random_jobs())
def test_every_subpartition_is_read_by_exactly_one_channel(job: JobGraph) -> None:
    execution = build_execution_graph(job)
    reads: Counter[tuple[ResultPartitionId, int]] = Counter()
    for vertex in execution.vertices:
        for gate in execution.input_gates(vertex):
            for channel_index, consumed in enumerate(gate.channels):
                reads[consumed.partition, consumed.subpartition] += 1
                partition = execution.partitions[consumed.partition]
                assert partition.consumers[consumed.subpartition] == SubpartitionConsumer(
                    vertex.subtask_index, gate.gate_index, channel_index)  # type: ignore[arg-type]
                assert partition.consumer_vertex == vertex.job_vertex_id
    produced = {
        (partition.id, k) for partition in execution.partitions.values()
        for k in range(partition.num_subpartitions)}
    assert set(reads) == produced
    assert set(reads.values()) <= {1}
    for vertex in execution.vertices:
        job_vertex = job.vertex(vertex.job_vertex_id)
        assert len(execution.input_gates(vertex)) == len(job_vertex.inputs)
        assert all(gate.channels for gate in execution.input_gates(vertex))
    members = [v for region in pipelined_regions(execution) for v in region]
    assert sorted(members) == sorted(execution.vertices)
