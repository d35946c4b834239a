"""Creates the network side of a subtask from the execution graph: its result partitions and
record writers, its input gates with local or remote channels.

A channel is local (``LocalInputChannel``: no socket, no copy) when the producing subtask runs
in the same TaskManager, remote (``RemoteInputChannel`` over the TaskManager's TCP transport)
otherwise; where a subtask runs comes from the allocation plan, where a TaskManager listens
from the addresses the JobManager collected at registration.

Called on the TaskManager's deployment thread before the task thread starts; the objects made
here then belong to the task (writers, gates) and to the network (partitions, channels).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from flintlock.common.config import Configuration
from flintlock.common.ids import ChannelIndex, IntermediateDataSetId, ResultPartitionId
from flintlock.common.options import network as network_options
from flintlock.common.typeinfo import TypeInformation
from flintlock.graph.execution_graph import (
    ExecutionGraph,
    ExecutionVertex,
    InputGateDescriptor,
    ResultPartitionDescriptor,
)
from flintlock.graph.job_graph import ChainedOperator, NonChainedOutput
from flintlock.graph.scheduling import AllocationPlan
from flintlock.graph.stream_graph import Partitioner, PartitionerKind
from flintlock.runtime.network.buffer import NetworkBufferPool
from flintlock.runtime.network.channel_selector import (
    BroadcastSelector,
    ChannelSelector,
    CustomPartitionerSelector,
    ForwardSelector,
    KeyGroupSelector,
    RebalanceSelector,
    RescaleSelector,
)
from flintlock.runtime.network.gate import SingleInputGate
from flintlock.runtime.network.input_channel import InputChannel, Scheduler
from flintlock.runtime.network.local_channel import LocalInputChannel
from flintlock.runtime.network.output_flusher import OutputFlusher
from flintlock.runtime.network.partition import (
    ResultPartition,
    ResultPartitionManager,
    ResultPartitionType,
    create_result_partition,
)
from flintlock.runtime.network.serialization import BatchSerializer
from flintlock.runtime.network.typed_serializer import serializer_for
from flintlock.runtime.network.writer import RecordWriter
from flintlock.runtime.tasks.stream_task import TaskIO

DataAddress = tuple[str, int]


class GlobalSelector(ChannelSelector):
    """Every record to the first downstream subtask (``DataStream.global``)."""

    def select_channel(self, record: Any) -> int:
        return 0


class ShuffleSelector(ChannelSelector):
    """A uniformly random downstream subtask per record (``DataStream.shuffle``)."""

    def __init__(self, rng: random.Random) -> None:
        super().__init__()
        self._rng = rng

    def select_channel(self, record: Any) -> int:
        return self._rng.randrange(self.num_channels)


def _callable(function: Any, method: str) -> Callable[..., Any]:
    """The user's callable: a function object's method, or the callable itself."""
    return getattr(function, method, function)  # type: ignore[no-any-return]


def create_selector(
    partitioner: Partitioner, max_parallelism: int, rng: random.Random
) -> ChannelSelector:
    kind = partitioner.kind
    if kind is PartitionerKind.HASH:
        return KeyGroupSelector(_callable(partitioner.key_selector, "get_key"), max_parallelism)
    if kind is PartitionerKind.CUSTOM:
        return CustomPartitionerSelector(
            _callable(partitioner.custom, "partition"),
            _callable(partitioner.key_selector, "get_key"))
    if kind is PartitionerKind.FORWARD:
        return ForwardSelector()
    if kind is PartitionerKind.REBALANCE:
        return RebalanceSelector(rng)
    if kind is PartitionerKind.RESCALE:
        return RescaleSelector()
    if kind is PartitionerKind.BROADCAST:
        return BroadcastSelector()
    if kind is PartitionerKind.GLOBAL:
        return GlobalSelector()
    return ShuffleSelector(rng)


@dataclass(slots=True)
class NetworkContext:
    """The TaskManager-wide pieces every subtask's I/O is built from."""

    configuration: Configuration
    network_pool: NetworkBufferPool
    partition_manager: ResultPartitionManager
    flusher: OutputFlusher | None
    create_remote_channel: Callable[
        [SingleInputGate, ChannelIndex, ResultPartitionId, int, DataAddress], InputChannel] | None
    rng: random.Random
    scheduler: Scheduler
    """The TaskManager's timer service (its network I/O thread's ``call_later``): local
    channels' partition-request retries wait on it."""


def build_task_io(
    subtask: ExecutionVertex, graph: ExecutionGraph, plan: AllocationPlan,
    addresses: Mapping[int, DataAddress], my_tm: int, net: NetworkContext,
) -> TaskIO:
    vertex = graph.job_graph.vertex(subtask.job_vertex_id)
    outputs: dict[IntermediateDataSetId, tuple[ChainedOperator, NonChainedOutput]] = {
        out.data_set: (op, out) for op in vertex.operators for out in op.non_chained_outputs}
    partitions, writers = [], {}
    for descriptor in graph.produced_partitions(subtask):
        partition = _create_partition(descriptor, net)
        partitions.append(partition)
        producer, out = outputs[descriptor.id.data_set]
        writers[descriptor.id.data_set] = RecordWriter(
            partition, create_selector(out.partitioner, out.consumer_max_parallelism, net.rng),
            serializer=_edge_serializer(producer, out),
            buffer_timeout_ms=out.buffer_timeout_ms, flusher=net.flusher,
            name=f"{vertex.name}->{out.target_vertex}",
        )
    gates = [
        _create_gate(gate, graph, plan, addresses, my_tm, net)
        for gate in graph.input_gates(subtask)
    ]
    gate_inputs = [gate.edge.input_index for gate in graph.input_gates(subtask)]
    return TaskIO(gates=gates, gate_inputs=gate_inputs, writers=writers, partitions=partitions)


def _edge_serializer(producer: ChainedOperator, out: NonChainedOutput) -> BatchSerializer:
    """The typed codec of the producer's declared type (side outputs are pickled: their type
    belongs to their tag, which the edge does not carry)."""
    declared = producer.output_type if out.output_tag is None else None
    return serializer_for(declared if isinstance(declared, TypeInformation) else None,
                          producer.name)


def _create_partition(
    descriptor: ResultPartitionDescriptor, net: NetworkContext
) -> ResultPartition:
    partition_type = ResultPartitionType[descriptor.partition_type.name]
    partition = create_result_partition(  # BLOCKING ones spill into one of io.tmp.dirs
        net.network_pool, descriptor.id, partition_type, descriptor.num_subpartitions,
        net.configuration)
    net.partition_manager.register(partition)
    return partition


def _create_gate(
    descriptor: InputGateDescriptor, graph: ExecutionGraph, plan: AllocationPlan,
    addresses: Mapping[int, DataAddress], my_tm: int, net: NetworkContext,
) -> SingleInputGate:
    config = net.configuration
    remote = [
        plan.task_manager_of(_producer(graph, consumed.partition)) != my_tm
        for consumed in descriptor.channels
    ]
    pool = None
    if any(remote):
        floating = config.get(network_options.FLOATING_BUFFERS_PER_GATE)
        pool = net.network_pool.create_buffer_pool(0, max(1, floating))
    gate = SingleInputGate(descriptor.gate_index, pool)
    channels: list[InputChannel] = []
    for index, (consumed, is_remote) in enumerate(zip(descriptor.channels, remote, strict=True)):
        channel_index = ChannelIndex(index)
        if is_remote:
            assert net.create_remote_channel is not None, "remote channel without a transport"
            producer_tm = plan.task_manager_of(_producer(graph, consumed.partition))
            channels.append(net.create_remote_channel(
                gate, channel_index, consumed.partition, consumed.subpartition,
                addresses[producer_tm]))
        else:
            channels.append(LocalInputChannel.from_config(
                gate, channel_index, consumed.partition, consumed.subpartition,
                net.partition_manager, config, net.scheduler))
    gate.set_channels(channels)
    return gate


def _producer(graph: ExecutionGraph, partition: ResultPartitionId) -> ExecutionVertex:
    return graph.partitions[partition].producer
