"""Result partitions and input gates wired together as a TaskManager wires them, in a line or two
of a test of the data plane.

What the runtime does in ``tasks.task_io`` (a partition with the pool its type and width call
for, registered with the partition manager; a gate whose local channels read that manager and
whose remote channels come from a transport, with a floating pool when any channel is remote),
this module does from plain arguments instead of a deployment descriptor:

* ``new_partition`` — one producer's ``ResultPartition``, optionally registered;
* ``local_gate`` / ``remote_gate`` — a consumer's ``SingleInputGate`` over local channels (one
  per producer partition) or over remote channels of a transport (TCP, TLS or in-memory);
* ``local_exchange`` — N producers with M subpartitions each and M gates, gate ``c`` reading
  subpartition ``c`` of every producer: the all-to-all exchange of one job edge in one process;
* ``write`` / ``read_one`` — one buffer into a subpartition, one out of a gate;
* ``detached_remote_gate`` — a gate of remote channels whose transport is a recorder: the test
  plays the network I/O thread (``deliver``), sees the partition requests, credit
  announcements and cancellations the channels send, and runs their retry timers by hand.

Only the public constructors of ``flintlock.runtime.network`` are used, so what is built is
what a job runs. Threads: everything is built on the test's thread; afterwards a partition
belongs to the thread that writes it and a gate to the thread that reads it, as in a task.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from flintlock.common.config import Configuration
from flintlock.common.ids import (
    ChannelIndex,
    IntermediateDataSetId,
    ResultPartitionId,
    SubtaskIndex,
)
from flintlock.runtime.network.buffer import Buffer, DataType, NetworkBufferPool
from flintlock.runtime.network.gate import SingleInputGate
from flintlock.runtime.network.input_channel import Cancellable, Scheduler
from flintlock.runtime.network.local_channel import LocalInputChannel
from flintlock.runtime.network.partition import (
    ResultPartition,
    ResultPartitionManager,
    ResultPartitionType,
    create_partition_pool,
)
from flintlock.runtime.network.protocol import PartitionRequest
from flintlock.runtime.network.remote_channel import RemoteInputChannel
from flintlock.runtime.network.request_backoff import RequestBackoff
from flintlock.runtime.network.transport import RemoteChannelFactory

__all__ = [
    "CountingListener",
    "DetachedRemoteGate",
    "LocalExchange",
    "RecordingClient",
    "RecordingConnections",
    "deliver",
    "detached_remote_gate",
    "filled_buffer",
    "local_exchange",
    "local_gate",
    "new_partition",
    "partition_id",
    "read_one",
    "remote_gate",
    "write",
]

Address = tuple[str, int]


def partition_id(name: str = "ds", subtask: int = 0) -> ResultPartitionId:
    """The id of subtask ``subtask``'s partition of the data set ``name``."""
    return ResultPartitionId(IntermediateDataSetId(name), SubtaskIndex(subtask))


def new_partition(
    network: NetworkBufferPool, subpartitions: int = 2,
    kind: ResultPartitionType = ResultPartitionType.PIPELINED_BOUNDED,
    config: Configuration | None = None, name: str = "ds", spill_dir: str | None = None,
    *, subtask: int = 0, manager: ResultPartitionManager | None = None,
) -> ResultPartition:
    """A partition with the pool its type and width get from ``config``; registered with
    ``manager`` when one is given (consumers can then find it)."""
    pool = create_partition_pool(network, kind, subpartitions, config or Configuration())
    partition = ResultPartition(partition_id(name, subtask), kind, subpartitions, pool, spill_dir)
    if manager is not None:
        manager.register(partition)
    return partition


def filled_buffer(partition: ResultPartition, subpartition: int, payload: bytes,
                  timeout_s: float = 10.0) -> Buffer:
    """A data buffer of ``partition``'s pool holding ``payload``, not added yet."""
    buffer = partition.request_buffer_blocking(subpartition, timeout_s)
    buffer.segment[: len(payload)] = payload
    buffer.size = len(payload)
    if buffer.data_type is not DataType.DATA_BUFFER:
        raise AssertionError(f"a partition's pool gave a {buffer.data_type.name} buffer")
    return buffer


def write(partition: ResultPartition, subpartition: int, payload: bytes,
          timeout_s: float = 10.0) -> None:
    """Adds one data buffer holding ``payload`` to ``subpartition`` (waits for a free buffer)."""
    partition.add_buffer(subpartition, filled_buffer(partition, subpartition, payload, timeout_s))


class CountingListener:
    """A ``BufferAvailabilityListener`` that counts its notifications."""

    def __init__(self) -> None:
        self.calls = 0

    def notify_data_available(self) -> None:
        self.calls += 1


def timer_scheduler(delay_s: float, callback: Callable[[], None]) -> Cancellable:
    """A ``Scheduler`` for channels outside a TaskManager (which has its network I/O thread's
    ``call_later``): a daemon ``threading.Timer``."""
    timer = threading.Timer(delay_s, callback)
    timer.daemon = True
    timer.start()
    return timer


def local_gate(
    manager: ResultPartitionManager, partition_ids: Sequence[ResultPartitionId],
    subpartition: int, *, gate_index: int = 0, backoff_initial_ms: int = 100,
    backoff_max_ms: int = 10_000,
    scheduler: Scheduler = timer_scheduler,
) -> SingleInputGate:
    """A gate with one local channel per partition of ``partition_ids`` (channel i reads
    ``subpartition`` of partition i), with the request back-off given."""
    gate = SingleInputGate(gate_index)
    gate.set_channels([
        LocalInputChannel(gate, ChannelIndex(index), partition, subpartition, manager,
                          RequestBackoff(backoff_initial_ms, backoff_max_ms), scheduler)
        for index, partition in enumerate(partition_ids)
    ])
    return gate


def remote_gate(
    transport: RemoteChannelFactory, producer: Address,
    channels: Sequence[tuple[ResultPartitionId, int]], *, floating: int = 4,
    gate_index: int = 0,
) -> SingleInputGate:
    """A gate of remote channels created by ``transport`` (its buffers-per-channel credit and
    back-off), channel i reading ``channels[i]`` (partition id, subpartition) from the
    TaskManager at ``producer``, with ``floating`` floating buffers."""
    gate = SingleInputGate(gate_index, transport.network_pool.create_buffer_pool(0, floating))
    gate.set_channels([
        transport.create_remote_channel(gate, ChannelIndex(index), partition, subpartition,
                                        producer)
        for index, (partition, subpartition) in enumerate(channels)
    ])
    return gate


@dataclass
class LocalExchange:
    """Producers and consumers of one job edge inside one TaskManager (``local_exchange``)."""

    network: NetworkBufferPool
    manager: ResultPartitionManager
    partitions: list[ResultPartition]
    gates: list[SingleInputGate]

    @property
    def partition_ids(self) -> list[ResultPartitionId]:
        return [partition.partition_id for partition in self.partitions]

    def close(self) -> None:
        """Closes every gate (releasing its channels)."""
        for gate in self.gates:
            gate.close()


def local_exchange(
    producers: int = 2, consumers: int = 1, *, segments: int = 16, segment_size: int = 64,
    config: Configuration | None = None,
    kind: ResultPartitionType = ResultPartitionType.PIPELINED_BOUNDED,
    names: Sequence[str] | None = None,
    scheduler: Scheduler = timer_scheduler,
) -> LocalExchange:
    """``producers`` registered partitions (named ``p0``, ``p1``… or ``names``) with
    ``consumers`` subpartitions each, over one network pool of ``segments`` segments, and
    ``consumers`` gates: gate c has one local channel per producer, reading subpartition c."""
    network = NetworkBufferPool(segments, segment_size)
    manager = ResultPartitionManager()
    names = list(names) if names is not None else [f"p{i}" for i in range(producers)]
    partitions = [new_partition(network, consumers, kind, config, name, manager=manager)
                  for name in names]
    ids = [partition.partition_id for partition in partitions]
    gates = [local_gate(manager, ids, consumer, gate_index=0, scheduler=scheduler)
             for consumer in range(consumers)]
    return LocalExchange(network, manager, partitions, gates)


# -- remote channels without a network ----------------------------------------------------


class RecordingIO:
    """The part of the network I/O thread a remote channel uses: timers, kept for the test."""

    def __init__(self) -> None:
        self.timers: list[tuple[float, Callable[[], None]]] = []

    def call_later(self, delay_s: float, task: Callable[[], None]) -> None:
        self.timers.append((delay_s, task))


class RecordingClient:
    """A data connection's client side that records what the channels ask it to send."""

    def __init__(self) -> None:
        self.requests: list[PartitionRequest] = []
        self.credit_notifications = 0
        self.cancelled: list[int] = []

    def request(self, channel: RemoteInputChannel) -> None:
        if not channel.is_released:
            self.requests.append(channel.partition_request())

    def notify_credit(self, channel: RemoteInputChannel) -> None:
        self.credit_notifications += 1

    def cancel(self, channel: RemoteInputChannel) -> None:
        self.cancelled.append(channel.receiver_id)


class RecordingConnections:
    """A ``ConnectionProvider`` with one recording client for every producer address."""

    def __init__(self) -> None:
        self.io = RecordingIO()
        self.client = RecordingClient()

    def client_for(self, address: Address) -> RecordingClient:
        return self.client


@dataclass
class DetachedRemoteGate:
    """A gate of remote channels on a recording transport (``detached_remote_gate``)."""

    network: NetworkBufferPool
    gate: SingleInputGate
    connections: RecordingConnections
    channels: list[RemoteInputChannel] = field(default_factory=list)


def detached_remote_gate(
    channels: int = 1, *, credit: int = 2, floating: int | None = 4,
    backoff_ms: tuple[int, int] = (10, 40), segments: int = 32, segment_size: int = 1024,
    partition: ResultPartitionId | None = None, subpartition: int = 0, request: bool = True,
) -> DetachedRemoteGate:
    """A gate of ``channels`` remote channels reading ``subpartition`` of ``partition`` with
    ``credit`` exclusive buffers each and a floating pool of ``floating`` buffers (none when
    None); with ``request``, each channel has requested its subpartition."""
    network = NetworkBufferPool(segments, segment_size)
    pool = None if floating is None else network.create_buffer_pool(0, floating)
    gate = SingleInputGate(0, pool)
    connections = RecordingConnections()
    source = partition or partition_id()
    made = [
        RemoteInputChannel(gate, ChannelIndex(index), source, subpartition,
                           connections, ("host", 1), network, credit,  # type: ignore[arg-type]
                           *backoff_ms)
        for index in range(channels)
    ]
    gate.set_channels(list(made))
    if request:
        for channel in made:
            channel.request_subpartition()
    return DetachedRemoteGate(network, gate, connections, made)


def deliver(channel: RemoteInputChannel, sequence: int, payload: bytes, backlog: int = 0,
            data_type: DataType = DataType.DATA_BUFFER) -> Buffer:
    """Hands ``channel`` a received buffer holding ``payload``, as the I/O thread does."""
    target = channel.take_target(data_type, len(payload))
    if target is None:
        raise AssertionError(f"channel {channel.channel_index} took no buffer for {payload!r}")
    view, buffer = target
    view[: len(payload)] = payload
    buffer.size = len(payload)
    channel.on_buffer(buffer, sequence, backlog)
    return buffer


def read_one(gate: SingleInputGate, timeout_s: float = 10.0) -> tuple[int, bytes]:
    """The next (channel index, payload) of ``gate``, its buffer recycled; ``AssertionError``
    if none came within ``timeout_s`` (reader's thread)."""
    item = gate.get_next(timeout_s=timeout_s)
    if item is None:
        raise AssertionError(f"gate {gate.gate_index} gave no buffer within {timeout_s:g} s")
    channel, buffer = item
    payload = bytes(buffer.view())
    buffer.recycle()
    return channel, payload
