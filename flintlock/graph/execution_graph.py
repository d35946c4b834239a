"""The execution graph: the job graph expanded by parallelism.

Every job vertex of parallelism p becomes p ``ExecutionVertex``es (its subtasks). Every job
edge becomes, per producer subtask, one result partition (``ResultPartitionId``: data set,
producer subtask, attempt) split into subpartitions, and per consumer subtask one input gate
whose channels each read one (result partition, subpartition). Which subtasks connect is
decided by the edge's distribution pattern:

* ALL_TO_ALL (hash, rebalance, broadcast, shuffle, custom, global): every producer has one
  subpartition per consumer; consumer j reads subpartition j of every producer, channel i being
  producer i.
* POINTWISE (forward, rescale), with p producers and c consumers:
  - p == c: producer i feeds consumer i alone (one subpartition);
  - p > c: consumer j reads the contiguous producers [j*p//c, (j+1)*p//c), one subpartition each;
  - p < c: producer i feeds the contiguous consumers [ceil(i*c/p), ceil((i+1)*c/p)), one
    subpartition per consumer in that order.

Laws (tested with hypothesis): every (result partition, subpartition) is read by exactly one
consumer channel; a gate's channel order is its channel indices, so a producer's
``consumers[k]`` and the consumer's ``channels[n]`` name each other.

Pipelined regions (``regions.pipelined_regions(graph)``) group the subtasks that must run
together; that module reads this one, never the other way.

Immutable; built on the driver (once per job attempt: ``attempt`` goes into every partition id)
and shipped to the TaskManagers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from flintlock.common.ids import ChannelIndex, JobVertexId, ResultPartitionId, SubtaskIndex
from flintlock.graph.job_graph import (
    DistributionPattern,
    JobEdge,
    JobGraph,
    JobVertex,
    ResultPartitionType,
)


@dataclass(frozen=True, slots=True, order=True)
class ExecutionVertex:
    """One subtask of a job vertex; also its id."""

    job_vertex_id: JobVertexId
    subtask_index: SubtaskIndex
    parallelism: int

    def __str__(self) -> str:
        return f"{self.job_vertex_id}[{self.subtask_index + 1}/{self.parallelism}]"


@dataclass(frozen=True, slots=True)
class ConsumedSubpartition:
    """What one input channel reads: subpartition ``subpartition`` of ``partition``."""

    partition: ResultPartitionId
    subpartition: int


@dataclass(frozen=True, slots=True)
class SubpartitionConsumer:
    """Who reads one subpartition: channel ``channel_index`` of gate ``gate_index`` of the
    consumer vertex's subtask ``subtask``."""

    subtask: SubtaskIndex
    gate_index: int
    channel_index: ChannelIndex


@dataclass(frozen=True, slots=True)
class InputGateDescriptor:
    """One input gate of one subtask: the job edge it reads and its channels in index order."""

    gate_index: int
    edge: JobEdge
    channels: tuple[ConsumedSubpartition, ...]


@dataclass(frozen=True, slots=True)
class ResultPartitionDescriptor:
    """One producer subtask's output for one data set; ``consumers[k]`` reads subpartition k."""

    id: ResultPartitionId
    partition_type: ResultPartitionType
    producer: ExecutionVertex
    consumer_vertex: JobVertexId
    consumers: tuple[SubpartitionConsumer, ...]

    @property
    def num_subpartitions(self) -> int:
        return len(self.consumers)


def _ceil_div(numerator: int, denominator: int) -> int:
    return -(-numerator // denominator)


def pointwise_consumer_range(producer: int, producers: int, consumers: int) -> range:
    """The consumer subtasks producer subtask ``producer`` feeds under POINTWISE."""
    if producers >= consumers:
        consumer = _ceil_div((producer + 1) * consumers, producers) - 1
        return range(consumer, consumer + 1)
    return range(
        _ceil_div(producer * consumers, producers),
        _ceil_div((producer + 1) * consumers, producers),
    )


def pointwise_producer_range(consumer: int, producers: int, consumers: int) -> range:
    """The producer subtasks consumer subtask ``consumer`` reads under POINTWISE."""
    if producers > consumers:
        return range(consumer * producers // consumers, (consumer + 1) * producers // consumers)
    producer = consumer * producers // consumers
    return range(producer, producer + 1)


def channels_of(
    pattern: DistributionPattern, producers: int, consumers: int
) -> tuple[tuple[tuple[int, int], ...], ...]:
    """Per consumer subtask, its channels in order as (producer subtask, subpartition)."""
    if pattern is DistributionPattern.ALL_TO_ALL:
        return tuple(tuple((i, j) for i in range(producers)) for j in range(consumers))
    return tuple(
        tuple(
            (i, j - pointwise_consumer_range(i, producers, consumers).start)
            for i in pointwise_producer_range(j, producers, consumers)
        )
        for j in range(consumers)
    )


class ExecutionGraph:
    """Subtasks, their result partitions and input gates for one attempt of a job."""

    def __init__(self, job_graph: JobGraph, attempt: int = 0) -> None:
        self.job_graph = job_graph
        self.attempt = attempt
        self.vertices: tuple[ExecutionVertex, ...] = tuple(
            ExecutionVertex(vertex.id, SubtaskIndex(index), vertex.parallelism)
            for vertex in job_graph.vertices for index in range(vertex.parallelism)
        )
        self._gates: dict[ExecutionVertex, list[InputGateDescriptor]] = {
            v: [] for v in self.vertices}
        self._consumers: dict[ResultPartitionId, list[SubpartitionConsumer | None]] = {}
        for vertex in job_graph.vertices:
            for edge in vertex.inputs:
                self._connect(edge, vertex)
        self.partitions: Mapping[ResultPartitionId, ResultPartitionDescriptor] = (
            self._partition_descriptors())

    def _connect(self, edge: JobEdge, consumer: JobVertex) -> None:
        producer = self.job_graph.vertex(edge.source_vertex)
        per_consumer = channels_of(
            edge.distribution_pattern, producer.parallelism, consumer.parallelism)
        for j, channels in enumerate(per_consumer):
            consumed = tuple(
                ConsumedSubpartition(self._partition_id(edge, i), k) for i, k in channels)
            for n, item in enumerate(consumed):
                slots = self._consumers.setdefault(item.partition, [])
                slots.extend([None] * (item.subpartition + 1 - len(slots)))
                slots[item.subpartition] = SubpartitionConsumer(
                    SubtaskIndex(j), edge.gate_index, ChannelIndex(n))
            subtask = ExecutionVertex(consumer.id, SubtaskIndex(j), consumer.parallelism)
            self._gates[subtask].append(InputGateDescriptor(edge.gate_index, edge, consumed))

    def _partition_id(self, edge: JobEdge, producer_subtask: int) -> ResultPartitionId:
        return ResultPartitionId(edge.source, SubtaskIndex(producer_subtask), self.attempt)

    def _partition_descriptors(self) -> dict[ResultPartitionId, ResultPartitionDescriptor]:
        descriptors = {}
        for edge in self.job_graph.edges:
            producer = self.job_graph.vertex(edge.source_vertex)
            for i in range(producer.parallelism):
                partition = self._partition_id(edge, i)
                consumers = self._consumers.get(partition, [])
                if any(c is None for c in consumers):
                    raise AssertionError(f"unconsumed subpartition in {partition}")
                descriptors[partition] = ResultPartitionDescriptor(
                    partition, edge.partition_type,
                    ExecutionVertex(producer.id, SubtaskIndex(i), producer.parallelism),
                    edge.target, tuple(c for c in consumers if c is not None),
                )
        return descriptors

    # -- reading -----------------------------------------------------------------------

    def subtasks(self, job_vertex_id: JobVertexId) -> tuple[ExecutionVertex, ...]:
        return tuple(v for v in self.vertices if v.job_vertex_id == job_vertex_id)

    def input_gates(self, vertex: ExecutionVertex) -> tuple[InputGateDescriptor, ...]:
        """The subtask's input gates, index = gate index."""
        return tuple(self._gates[vertex])

    def produced_partitions(self, vertex: ExecutionVertex) -> tuple[ResultPartitionDescriptor, ...]:
        """The subtask's result partitions, in the order of its job vertex's data sets."""
        job_vertex = self.job_graph.vertex(vertex.job_vertex_id)
        return tuple(
            self.partitions[ResultPartitionId(data_set, vertex.subtask_index, self.attempt)]
            for data_set in job_vertex.produced
        )


def build_execution_graph(job_graph: JobGraph, attempt: int = 0) -> ExecutionGraph:
    """Expand ``job_graph`` by parallelism for job attempt ``attempt``."""
    return ExecutionGraph(job_graph, attempt)
