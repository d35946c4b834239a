"""Result partitions: one subtask's output for one intermediate data set, and their registry.

A ``ResultPartition`` has one subpartition per consumer subtask. Its producer (through a
``RecordWriter``) adds finished buffers and events to subpartitions, then ``finish``es it
(end of partition on every subpartition) or ``fail``s it. Consumers read a subpartition
through a view created by the TaskManager's ``ResultPartitionManager`` — directly for a local
input channel, through the network I/O thread for a remote one.

Partition types (DESIGN.md §1): PIPELINED_BOUNDED (streaming default; the pool is bounded, so
a slow consumer stalls the producer), PIPELINED (the pool may borrow any free segment),
BLOCKING (spilled to a file as written, readable only after finish, more than once; see
``blocking``). Pool sizes: min = subpartitions (one current buffer per channel), max =
subpartitions * ``buffers-per-channel`` + ``floating-buffers-per-gate`` when bounded;
``max-buffers-per-channel`` caps one subpartition's share.

Unaligned checkpoints: broadcasting a priority barrier makes every pipelined subpartition put
it ahead of its queued data; copies of the data buffers it overtook are kept per checkpoint
until the producing task takes them (``take_overtaken``) to store as output channel state.
``restore_buffer`` puts a restored output buffer back (before any new output).

States: PRODUCING → FINISHED | RELEASED, FINISHED → RELEASED; anything else raises
``IllegalPartitionStateError``. ``fail(cause)`` is a release that hands ``cause`` to every
view, whose consumer must then fail with it. A pipelined partition whose
every subpartition has been consumed (its view released) releases itself.

Threads: producer-side calls come from the producing task thread; ``release``/``fail`` may
come from any thread (cancellation); the state is guarded by ``_lock``.
"""

from __future__ import annotations

import enum
import threading
from collections.abc import Callable
from dataclasses import dataclass

from flintlock.common.config import Configuration
from flintlock.common.ids import CheckpointId, ResultPartitionId
from flintlock.common.options.network import (
    BUFFERS_PER_CHANNEL,
    FLOATING_BUFFERS_PER_GATE,
    MAX_BUFFERS_PER_CHANNEL,
    TMP_DIRS,
)
from flintlock.runtime.network.barriers import END_OF_PARTITION, CheckpointBarrier
from flintlock.runtime.network.blocking import BlockingSubpartition, SpillFile
from flintlock.runtime.network.buffer import (
    UNBOUNDED,
    Buffer,
    DataType,
    LocalBufferPool,
    LocalBufferPoolStatistics,
    NetworkBufferPool,
    unpooled_buffer,
)
from flintlock.runtime.network.events import encode_event, event_bytes, event_data_type
from flintlock.runtime.network.subpartition import (
    BufferAndBacklog,
    BufferAvailabilityListener,
    IllegalPartitionStateError,
    PartitionNotFoundError,
    PipelinedSubpartition,
    ResultSubpartitionView,
    SubpartitionAlreadyConsumedError,
    SubpartitionStatistics,
)
from flintlock.runtime.state.keygroups import assign_to_key_group

__all__ = [
    "BufferAndBacklog",
    "BufferAvailabilityListener",
    "IllegalPartitionStateError",
    "PartitionNotFoundError",
    "PartitionState",
    "ResultPartition",
    "ResultPartitionManager",
    "ResultPartitionStatistics",
    "ResultPartitionType",
    "ResultSubpartitionView",
    "SubpartitionAlreadyConsumedError",
    "create_partition_pool",
    "create_result_partition",
]


class ResultPartitionType(enum.Enum):
    PIPELINED = "pipelined"
    PIPELINED_BOUNDED = "pipelined_bounded"
    BLOCKING = "blocking"

    @property
    def is_pipelined(self) -> bool:
        return self is not ResultPartitionType.BLOCKING

    @property
    def is_bounded(self) -> bool:
        return self is not ResultPartitionType.PIPELINED


class PartitionState(enum.Enum):
    PRODUCING = "producing"
    FINISHED = "finished"
    RELEASED = "released"
    """Released by the consumers, the TaskManager, or the producer's failure (with a cause)."""


_TRANSITIONS: dict[PartitionState, frozenset[PartitionState]] = {
    PartitionState.PRODUCING: frozenset({PartitionState.FINISHED, PartitionState.RELEASED}),
    PartitionState.FINISHED: frozenset({PartitionState.RELEASED}),
    PartitionState.RELEASED: frozenset(),
}


@dataclass(frozen=True, slots=True)
class ResultPartitionStatistics:
    partition_id: ResultPartitionId
    partition_type: ResultPartitionType
    state: PartitionState
    subpartitions: tuple[SubpartitionStatistics, ...]
    pool: LocalBufferPoolStatistics


def create_partition_pool(
    network_pool: NetworkBufferPool, partition_type: ResultPartitionType,
    num_subpartitions: int, config: Configuration,
) -> LocalBufferPool:
    """The local pool a partition of this type and width gets (see the module docstring)."""
    per_channel = config.get(BUFFERS_PER_CHANNEL)
    floating = config.get(FLOATING_BUFFERS_PER_GATE)
    maximum = UNBOUNDED
    if partition_type.is_bounded:
        maximum = max(num_subpartitions, num_subpartitions * per_channel + floating)
    return network_pool.create_buffer_pool(
        num_subpartitions, maximum, num_subpartitions, config.get(MAX_BUFFERS_PER_CHANNEL)
    )


def create_result_partition(
    network_pool: NetworkBufferPool, partition_id: ResultPartitionId,
    partition_type: ResultPartitionType, num_subpartitions: int, config: Configuration,
) -> ResultPartition:
    """A partition with the pool its type and width call for; BLOCKING ones spill to one of
    ``io.tmp.dirs`` (chosen by the partition id, so partitions spread over the disks)."""
    pool = create_partition_pool(network_pool, partition_type, num_subpartitions, config)
    spill_dir = None
    directories = config.get(TMP_DIRS)
    if directories:
        spill_dir = directories[assign_to_key_group(str(partition_id), len(directories))]
    return ResultPartition(partition_id, partition_type, num_subpartitions, pool, spill_dir)


_Subpartition = PipelinedSubpartition | BlockingSubpartition


class ResultPartition:
    """One producer's output, split into subpartitions (see the module docstring)."""

    def __init__(
        self, partition_id: ResultPartitionId, partition_type: ResultPartitionType,
        num_subpartitions: int, buffer_pool: LocalBufferPool, spill_dir: str | None = None,
    ) -> None:
        if num_subpartitions < 1:
            raise ValueError("a result partition needs at least one subpartition")
        self.partition_id = partition_id
        self.partition_type = partition_type
        self.num_subpartitions = num_subpartitions
        self.buffer_pool = buffer_pool
        self._lock = threading.Lock()
        self._state = PartitionState.PRODUCING  # guarded by _lock
        self._failure: BaseException | None = None
        self._consumed: set[int] = set()  # subpartitions whose view was released
        self._on_released: list[Callable[[ResultPartition], None]] = []
        self._spill: SpillFile | None = None
        self._overtaken: dict[int, dict[int, tuple[bytes, ...]]] = {}  # producer thread
        self._subpartitions: list[_Subpartition]
        if partition_type is ResultPartitionType.BLOCKING:
            spill = self._spill = SpillFile(spill_dir)
            self._subpartitions = [BlockingSubpartition(i, spill) for i in range(num_subpartitions)]
        else:
            self._subpartitions = [
                PipelinedSubpartition(i, self._subpartition_consumed)
                for i in range(num_subpartitions)
            ]

    # -- producer side ------------------------------------------------------------------------

    @property
    def segment_size(self) -> int:
        return self.buffer_pool.segment_size

    def request_buffer(self, subpartition: int) -> Buffer | None:
        """A buffer to fill for ``subpartition`` if one is free now, else None."""
        return self.buffer_pool.request_buffer(subpartition)

    def request_buffer_blocking(self, subpartition: int, timeout_s: float | None = None) -> Buffer:
        """A buffer to fill for ``subpartition`` (blocks: backpressure)."""
        return self.buffer_pool.request_buffer_blocking(timeout_s, subpartition)

    def add_buffer(self, subpartition: int, buffer: Buffer) -> tuple[bytes, ...]:
        """Queues a finished buffer (the caller gives up ownership); for a priority event,
        returns copies of the data buffers it overtook in that subpartition."""
        if self._state is not PartitionState.PRODUCING:
            buffer.recycle()
            if self._state is PartitionState.FINISHED:
                raise IllegalPartitionStateError(f"{self.partition_id}: buffer added after finish")
            return ()
        return self._subpartitions[subpartition].add(buffer) or ()

    def restore_buffer(
        self, subpartition: int, data: bytes, timeout_s: float | None = None
    ) -> None:
        """Queues restored output channel state ``data`` as a data buffer (blocks for a free
        buffer: the consumer drains the restored data like any other)."""
        if len(data) > self.segment_size:
            raise ValueError(
                f"{self.partition_id}: restored buffer of {len(data)} bytes exceeds the "
                f"segment size {self.segment_size}"
            )
        buffer = self.request_buffer_blocking(subpartition, timeout_s)
        buffer.segment[: len(data)] = data
        buffer.size = len(data)
        self.add_buffer(subpartition, buffer)

    def add_event(self, subpartition: int, event: object) -> None:
        self.add_buffer(subpartition, encode_event(event))

    def broadcast_event(self, event: object) -> None:
        """Adds ``event`` to every subpartition (encoded once)."""
        data = bytearray(event_bytes(event))
        data_type = event_data_type(event)
        priority = data_type is DataType.PRIORITY_EVENT_BUFFER
        overtaken: dict[int, tuple[bytes, ...]] = {}
        for index in range(self.num_subpartitions):
            copies = self.add_buffer(index, unpooled_buffer(data, data_type))
            if copies:
                overtaken[index] = copies
        if priority and isinstance(event, CheckpointBarrier):
            self._overtaken[event.checkpoint_id] = overtaken

    def convert_barrier_to_priority(
        self, barrier: CheckpointBarrier
    ) -> dict[int, tuple[bytes, ...]]:
        """Alignment timed out: the aligned barrier of ``barrier.checkpoint_id`` still queued
        in a subpartition is replaced by ``barrier`` (a priority one) at its head. Returns, per
        converted subpartition, copies of the data buffers it then overtook."""
        data = bytearray(event_bytes(barrier))
        data_type = event_data_type(barrier)
        converted: dict[int, tuple[bytes, ...]] = {}
        for index, subpartition in enumerate(self._subpartitions):
            if isinstance(subpartition, PipelinedSubpartition):
                copies = subpartition.convert_to_priority(
                    barrier.checkpoint_id, unpooled_buffer(data, data_type))
                if copies is not None:
                    converted[index] = copies
        return converted

    def has_queued_barrier(self, checkpoint_id: CheckpointId) -> bool:
        """Whether some subpartition still queues the barrier of ``checkpoint_id``."""
        return any(
            isinstance(sub, PipelinedSubpartition) and sub.has_queued_barrier(checkpoint_id)
            for sub in self._subpartitions
        )

    def take_overtaken(self, checkpoint_id: CheckpointId) -> dict[int, tuple[bytes, ...]]:
        """Copies of the data buffers the priority barrier of ``checkpoint_id`` overtook, by
        subpartition, in queue order (forgotten once taken; older ones are dropped too)."""
        found = self._overtaken.pop(checkpoint_id, {})
        for older in [cid for cid in self._overtaken if cid < checkpoint_id]:
            del self._overtaken[older]
        return found

    def finish(self) -> None:
        """Appends end of partition to every subpartition; no more adds after this."""
        self.broadcast_event(END_OF_PARTITION)
        with self._lock:
            if self._state is PartitionState.RELEASED:
                # Consumers may read the end of partition and release every view before
                # this line (a local one, or the network thread serving a remote one): the
                # partition is then fully consumed already. Checked and moved under one lock.
                return
            self._transition_locked(PartitionState.FINISHED)
        if self._spill is not None:
            self._spill.finish()
            for subpartition in self._subpartitions:
                assert isinstance(subpartition, BlockingSubpartition)
                subpartition.mark_finished()

    def fail(self, cause: BaseException) -> None:
        """The producer failed: every consumer must fail with ``cause``."""
        self.release(cause)

    def release(self, cause: BaseException | None = None) -> None:
        """Drops all queued data, destroys the pool, deletes spill files. Idempotent."""
        with self._lock:
            if self._state is PartitionState.RELEASED:
                return
            self._state = PartitionState.RELEASED
            self._failure = cause
            callbacks, self._on_released = self._on_released, []
        for subpartition in self._subpartitions:
            subpartition.release(cause)
        self.buffer_pool.destroy()
        if self._spill is not None:
            self._spill.delete()
        for callback in callbacks:
            callback(self)

    def _transition(self, target: PartitionState) -> None:
        with self._lock:
            self._transition_locked(target)

    def _transition_locked(self, target: PartitionState) -> None:
        if target not in _TRANSITIONS[self._state]:
            raise IllegalPartitionStateError(
                f"{self.partition_id}: cannot go from {self._state.name} to {target.name}"
            )
        self._state = target

    # -- consumer side ------------------------------------------------------------------------

    def create_subpartition_view(
        self, index: int, listener: BufferAvailabilityListener
    ) -> ResultSubpartitionView:
        if not 0 <= index < self.num_subpartitions:
            raise IndexError(f"{self.partition_id} has no subpartition {index}")
        if self._state is PartitionState.RELEASED:
            raise PartitionNotFoundError(self.partition_id)
        return self._subpartitions[index].create_view(listener)

    def _subpartition_consumed(self, index: int) -> None:
        with self._lock:
            self._consumed.add(index)
            all_consumed = len(self._consumed) == self.num_subpartitions
        if all_consumed:
            self.release()

    def add_release_callback(self, callback: Callable[[ResultPartition], None]) -> None:
        self._on_released.append(callback)

    @property
    def state(self) -> PartitionState:
        return self._state

    @property
    def is_released(self) -> bool:
        return self._state is PartitionState.RELEASED

    @property
    def is_finished(self) -> bool:
        return self._state is PartitionState.FINISHED

    @property
    def failure_cause(self) -> BaseException | None:
        return self._failure

    def statistics(self) -> ResultPartitionStatistics:
        return ResultPartitionStatistics(
            self.partition_id, self.partition_type, self._state,
            tuple(sub.statistics() for sub in self._subpartitions), self.buffer_pool.statistics(),
        )

    def __repr__(self) -> str:
        kind, state = self.partition_type.name, self._state.name
        return f"ResultPartition({self.partition_id}, {kind}, {state})"


class ResultPartitionManager:
    """The TaskManager's registry of the partitions its subtasks produce. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._partitions: dict[ResultPartitionId, ResultPartition] = {}  # guarded by _lock

    def register(self, partition: ResultPartition) -> None:
        with self._lock:
            if partition.partition_id in self._partitions:
                raise IllegalPartitionStateError(f"{partition.partition_id} is already registered")
            self._partitions[partition.partition_id] = partition
        partition.add_release_callback(self._forget)

    def create_subpartition_view(
        self, partition_id: ResultPartitionId, index: int, listener: BufferAvailabilityListener
    ) -> ResultSubpartitionView:
        with self._lock:
            partition = self._partitions.get(partition_id)
        if partition is None:
            raise PartitionNotFoundError(partition_id)
        return partition.create_subpartition_view(index, listener)

    def get(self, partition_id: ResultPartitionId) -> ResultPartition | None:
        with self._lock:
            return self._partitions.get(partition_id)

    def release(self, partition_id: ResultPartitionId, cause: BaseException | None = None) -> None:
        with self._lock:
            partition = self._partitions.pop(partition_id, None)
        if partition is not None:
            partition.release(cause)

    def release_all(self) -> None:
        with self._lock:
            partitions = list(self._partitions.values())
            self._partitions.clear()
        for partition in partitions:
            partition.release()

    @property
    def partition_ids(self) -> list[ResultPartitionId]:
        with self._lock:
            return list(self._partitions)

    def _forget(self, partition: ResultPartition) -> None:
        with self._lock:
            if self._partitions.get(partition.partition_id) is partition:
                del self._partitions[partition.partition_id]
