"""Shared builders for the network unit tests (a support module: it holds no tests)."""

from __future__ import annotations

from flintlock.common.config import Configuration
from flintlock.common.ids import (
    ChannelIndex,
    IntermediateDataSetId,
    ResultPartitionId,
    SubtaskIndex,
)
from flintlock.runtime.network.buffer import Buffer, DataType, NetworkBufferPool
from flintlock.runtime.network.gate import LocalInputChannel, SingleInputGate
from flintlock.runtime.network.partition import (
    ResultPartition,
    ResultPartitionManager,
    ResultPartitionType,
    create_partition_pool,
)


def pid(name: str = "ds", subtask: int = 0) -> ResultPartitionId:
    return ResultPartitionId(IntermediateDataSetId(name), SubtaskIndex(subtask))


class Recorder:
    """A BufferAvailabilityListener counting notifications."""

    def __init__(self) -> None:
        self.calls = 0

    def notify_data_available(self) -> None:
        self.calls += 1


def make_partition(
    network: NetworkBufferPool, n: int = 2,
    kind: ResultPartitionType = ResultPartitionType.PIPELINED_BOUNDED,
    config: Configuration | None = None, name: str = "ds", spill_dir: str | None = None,
) -> ResultPartition:
    pool = create_partition_pool(network, kind, n, config or Configuration())
    return ResultPartition(pid(name), kind, n, pool, spill_dir)


def data_buffer(partition: ResultPartition, channel: int, payload: bytes) -> Buffer:
    buffer = partition.request_buffer_blocking(channel, timeout_s=5)
    buffer.segment[: len(payload)] = payload
    buffer.size = len(payload)
    assert buffer.data_type is DataType.DATA_BUFFER
    return buffer


def local_gate(
    manager: ResultPartitionManager, partition_ids: list[ResultPartitionId], subpartition: int,
    **channel_options: object,
) -> SingleInputGate:
    gate = SingleInputGate()
    gate.set_channels([
        LocalInputChannel(gate, ChannelIndex(i), p, subpartition, manager, **channel_options)  # type: ignore[arg-type]
        for i, p in enumerate(partition_ids)
    ])
    return gate
