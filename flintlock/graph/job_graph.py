"""The job graph: the stream graph after operator chaining.

``build_job_graph(stream_graph)`` validates the stream graph, fuses operators into chains and
returns a ``JobGraph``: one ``JobVertex`` per chain (one subtask of it runs the whole chain,
records passing between chained operators by function call), one ``IntermediateDataSet`` per
stream edge that leaves a chain, and one ``JobEdge`` connecting that data set to the vertex
that reads it.

Chaining rule (as Flink's): a stream edge is chained when all of these hold —

* chaining is enabled for the job (``pipeline.operator-chaining.enabled``);
* its partitioner resolves to FORWARD (explicit, or unset with equal parallelism);
* the upstream operator is not NEVER and the downstream one is ALWAYS (not HEAD or NEVER);
* both are in the same slot sharing group and have the same parallelism and max parallelism
  (the last is flintlock's: one vertex has one key-group count);
* the downstream operator has exactly one input edge.

Chains may fan out: an operator may have several chained successors; a vertex's operators form
a tree rooted at its head, listed in the stream graph's topological order. Only the head can
have non-chained inputs (a chained operator has exactly one input, the chained one), so every
input gate of a vertex feeds its head; gates are ordered by the head's input index, then by the
order the edges were added (one gate per job edge). Each operator lists its chained successors
and its non-chained outputs (the data sets it writes, with partitioner and consumer
parallelism, which is all a record writer needs).

Partition type: PIPELINED_BOUNDED in streaming mode (``execution.runtime-mode``), BLOCKING in
batch mode. ``automatic`` is treated as streaming here: boundedness of sources is the API's to
decide (it sets ``StreamGraph.runtime_mode`` to ``batch`` when all sources are bounded).

All classes are frozen: a job graph is immutable and travels from the driver to every
TaskManager. Built on the driver thread that runs ``env.execute()``.
"""

from __future__ import annotations

import enum
import hashlib
import random
from collections.abc import Mapping
from dataclasses import dataclass, field

from flintlock.common.config import Configuration
from flintlock.common.ids import IntermediateDataSetId, JobId, JobVertexId, new_id
from flintlock.graph.operator_ids import operator_ids
from flintlock.graph.stream_graph import (
    ChainingStrategy,
    KeySelector,
    Partitioner,
    PartitionerKind,
    StreamEdge,
    StreamGraph,
    StreamNode,
)


class ResultPartitionType(enum.Enum):
    """How an intermediate data set is exchanged (same names as the network layer's enum)."""

    BLOCKING = "BLOCKING"  # written fully, read after the producer finished
    PIPELINED = "PIPELINED"  # read while produced, unbounded buffering
    PIPELINED_BOUNDED = "PIPELINED_BOUNDED"  # read while produced, bounded: backpressure

    @property
    def is_pipelined(self) -> bool:
        return self is not ResultPartitionType.BLOCKING


class DistributionPattern(enum.Enum):
    """How producer subtasks connect to consumer subtasks (see ``execution_graph``)."""

    ALL_TO_ALL = "all-to-all"
    POINTWISE = "pointwise"


@dataclass(frozen=True, slots=True)
class ChainedOutput:
    """A chained successor: records go to ``target_node_id`` by a direct call."""

    target_node_id: int
    output_tag: str | None = None


@dataclass(frozen=True, slots=True)
class NonChainedOutput:
    """An output that leaves the chain: one record writer writing data set ``data_set``."""

    data_set: IntermediateDataSetId
    target_vertex: JobVertexId
    partitioner: Partitioner
    consumer_parallelism: int
    consumer_max_parallelism: int  # key-group count for HASH
    buffer_timeout_ms: int
    output_tag: str | None = None


@dataclass(frozen=True, slots=True)
class ChainedOperator:
    """One operator inside a vertex's chain."""

    node_id: int
    operator_id: str  # stable across builds, see operator_ids
    name: str
    operator: object  # the opaque operator description from the stream graph
    uid: str | None
    num_inputs: int
    key_selectors: tuple[KeySelector | None, ...]
    output_type: object | None
    chained_outputs: tuple[ChainedOutput, ...]
    non_chained_outputs: tuple[NonChainedOutput, ...]


@dataclass(frozen=True, slots=True)
class IntermediateDataSet:
    """The output of one operator of ``producer`` along one non-chained stream edge."""

    id: IntermediateDataSetId
    producer: JobVertexId
    producer_node_id: int
    partition_type: ResultPartitionType
    consumers: tuple[JobVertexId, ...]


@dataclass(frozen=True, slots=True)
class JobEdge:
    """Data set ``source`` read by vertex ``target`` through its input gate ``gate_index``,
    feeding input ``input_index`` of the chained operator ``target_node_id``."""

    source: IntermediateDataSetId
    source_vertex: JobVertexId
    target: JobVertexId
    partitioner: Partitioner
    partition_type: ResultPartitionType
    input_index: int
    target_node_id: int
    gate_index: int

    @property
    def distribution_pattern(self) -> DistributionPattern:
        if self.partitioner.is_pointwise:
            return DistributionPattern.POINTWISE
        return DistributionPattern.ALL_TO_ALL


@dataclass(frozen=True, slots=True)
class JobVertex:
    """One operator chain; runs as ``parallelism`` subtasks."""

    id: JobVertexId
    name: str
    operators: tuple[ChainedOperator, ...]  # head first, stream-graph topological order
    parallelism: int
    max_parallelism: int
    slot_sharing_group: str
    is_source: bool
    inputs: tuple[JobEdge, ...]  # index = input gate index
    produced: tuple[IntermediateDataSetId, ...]

    @property
    def head(self) -> ChainedOperator:
        return self.operators[0]


@dataclass(frozen=True)
class JobGraph:
    """Vertices in topological order plus the data sets and edges between them."""

    job_id: JobId
    name: str
    vertices: tuple[JobVertex, ...]
    data_sets: Mapping[IntermediateDataSetId, IntermediateDataSet]
    configuration: Configuration = field(default_factory=Configuration)
    checkpoint_config: object | None = None
    runtime_mode: str = "streaming"

    def vertex(self, vertex_id: JobVertexId) -> JobVertex:
        for vertex in self.vertices:
            if vertex.id == vertex_id:
                return vertex
        raise KeyError(vertex_id)

    def vertex_of_node(self, node_id: int) -> JobVertex:
        """The vertex whose chain contains stream node ``node_id``."""
        for vertex in self.vertices:
            if any(op.node_id == node_id for op in vertex.operators):
                return vertex
        raise KeyError(node_id)

    @property
    def edges(self) -> tuple[JobEdge, ...]:
        return tuple(edge for vertex in self.vertices for edge in vertex.inputs)

    def sources(self) -> tuple[JobVertex, ...]:
        return tuple(vertex for vertex in self.vertices if vertex.is_source)


def build_job_graph(
    stream_graph: StreamGraph, *, job_id: JobId | None = None, rng: random.Random | None = None
) -> JobGraph:
    """Validate ``stream_graph`` and chain it into a job graph (see the module docstring)."""
    stream_graph.validate()
    return _JobGraphBuilder(stream_graph, job_id or JobId(new_id(rng))).build()


def is_chainable(graph: StreamGraph, edge: StreamEdge) -> bool:
    """Whether ``edge`` fuses its two operators into one chain (the rule above)."""
    upstream, downstream = graph.node(edge.source_id), graph.node(edge.target_id)
    return (
        graph.chaining_enabled
        and graph.resolved_partitioner(edge).kind is PartitionerKind.FORWARD
        and upstream.chaining is not ChainingStrategy.NEVER
        and downstream.chaining is ChainingStrategy.ALWAYS
        and upstream.slot_sharing_group == downstream.slot_sharing_group
        and graph.parallelism_of(upstream.id) == graph.parallelism_of(downstream.id)
        and graph.max_parallelism_of(upstream.id) == graph.max_parallelism_of(downstream.id)
        and len(graph.in_edges(downstream.id)) == 1
    )


def chain_heads(graph: StreamGraph) -> dict[int, int]:
    """Stream node id -> the node id of the head of the chain it belongs to."""
    heads: dict[int, int] = {}
    for node in graph.topological_order():
        in_edges = graph.in_edges(node.id)
        chained = len(in_edges) == 1 and is_chainable(graph, in_edges[0])
        heads[node.id] = heads[in_edges[0].source_id] if chained else node.id
    return heads


def chained_name(graph: StreamGraph, node_id: int) -> str:
    """Flink's chain name: ``A -> B`` for one chained successor, ``A -> (B, C)`` for more."""
    node = graph.node(node_id)
    own = _display_name(node)
    successors = [
        chained_name(graph, edge.target_id)
        for edge in graph.out_edges(node_id) if is_chainable(graph, edge)
    ]
    if len(successors) == 1:
        return f"{own} -> {successors[0]}"
    if successors:
        return f"{own} -> ({', '.join(successors)})"
    return own


def _display_name(node: StreamNode) -> str:
    if node.is_source and not node.name.startswith("Source:"):
        return f"Source: {node.name}"
    return node.name


def _partition_type(runtime_mode: str) -> ResultPartitionType:
    if runtime_mode.strip().lower() == "batch":
        return ResultPartitionType.BLOCKING
    return ResultPartitionType.PIPELINED_BOUNDED


class _JobGraphBuilder:
    """One-shot helper holding the intermediate maps while a job graph is assembled."""

    def __init__(self, graph: StreamGraph, job_id: JobId) -> None:
        self._graph = graph
        self._job_id = job_id
        self._order = graph.topological_order()
        self._heads = chain_heads(graph)
        self._op_ids = operator_ids(graph)
        self._partition_type = _partition_type(graph.runtime_mode)
        self._edge_index = {id(edge): index for index, edge in enumerate(graph.edges)}
        self._data_set_of_edge = {
            id(edge): self._data_set_id(edge) for edge in graph.edges
            if not self._is_chained(edge)
        }

    def _is_chained(self, edge: StreamEdge) -> bool:
        return self._heads[edge.target_id] != edge.target_id

    def _vertex_id(self, node_id: int) -> JobVertexId:
        return JobVertexId(self._op_ids[self._heads[node_id]])

    def _data_set_id(self, edge: StreamEdge) -> IntermediateDataSetId:
        material = f"{self._op_ids[edge.source_id]}\x00{self._edge_index[id(edge)]}"
        return IntermediateDataSetId(hashlib.sha256(material.encode()).hexdigest()[:32])

    def build(self) -> JobGraph:
        vertices = [self._vertex(node) for node in self._order if self._heads[node.id] == node.id]
        graph = self._graph
        return JobGraph(
            job_id=self._job_id, name=graph.job_name, vertices=tuple(vertices),
            data_sets=self._data_sets(), configuration=graph.configuration,
            checkpoint_config=graph.checkpoint_config, runtime_mode=graph.runtime_mode,
        )

    def _data_sets(self) -> dict[IntermediateDataSetId, IntermediateDataSet]:
        data_sets: dict[IntermediateDataSetId, IntermediateDataSet] = {}
        for edge in self._graph.edges:
            data_set = self._data_set_of_edge.get(id(edge))
            if data_set is not None:
                data_sets[data_set] = IntermediateDataSet(
                    data_set, self._vertex_id(edge.source_id), edge.source_id,
                    self._partition_type, (self._vertex_id(edge.target_id),),
                )
        return data_sets

    def _vertex(self, head: StreamNode) -> JobVertex:
        graph = self._graph
        members = [node for node in self._order if self._heads[node.id] == head.id]
        operators = tuple(self._chained_operator(node) for node in members)
        return JobVertex(
            id=self._vertex_id(head.id), name=chained_name(graph, head.id), operators=operators,
            parallelism=graph.parallelism_of(head.id),
            max_parallelism=graph.max_parallelism_of(head.id),
            slot_sharing_group=head.slot_sharing_group, is_source=head.is_source,
            inputs=tuple(self._inputs(head)),
            produced=tuple(out.data_set for op in operators for out in op.non_chained_outputs),
        )

    def _inputs(self, head: StreamNode) -> list[JobEdge]:
        return [
            JobEdge(
                source=self._data_set_of_edge[id(edge)], source_vertex=self._vertex_id(
                    edge.source_id), target=self._vertex_id(head.id),
                partitioner=self._graph.resolved_partitioner(edge),
                partition_type=self._partition_type, input_index=edge.input_index,
                target_node_id=head.id, gate_index=gate,
            )
            for gate, edge in enumerate(self._input_edges(head.id))
        ]

    def _input_edges(self, head_id: int) -> list[StreamEdge]:
        """The head's input edges in gate order: by input index, then as added."""
        return sorted(self._graph.in_edges(head_id), key=lambda edge: edge.input_index)

    def _chained_operator(self, node: StreamNode) -> ChainedOperator:
        chained, leaving = [], []
        for edge in self._graph.out_edges(node.id):
            if self._is_chained(edge):
                chained.append(ChainedOutput(edge.target_id, edge.output_tag))
            else:
                leaving.append(self._non_chained_output(node, edge))
        return ChainedOperator(
            node_id=node.id, operator_id=self._op_ids[node.id], name=node.name,
            operator=node.operator, uid=node.uid, num_inputs=node.num_inputs,
            key_selectors=node.key_selectors, output_type=node.output_type,
            chained_outputs=tuple(chained), non_chained_outputs=tuple(leaving),
        )

    def _non_chained_output(self, node: StreamNode, edge: StreamEdge) -> NonChainedOutput:
        graph = self._graph
        timeout = node.buffer_timeout_ms
        return NonChainedOutput(
            data_set=self._data_set_of_edge[id(edge)],
            target_vertex=self._vertex_id(edge.target_id),
            partitioner=graph.resolved_partitioner(edge),
            consumer_parallelism=graph.parallelism_of(edge.target_id),
            consumer_max_parallelism=graph.max_parallelism_of(edge.target_id),
            buffer_timeout_ms=graph.buffer_timeout_ms if timeout is None else timeout,
            output_tag=edge.output_tag,
        )
