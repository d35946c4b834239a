"""A source task whose output is full still takes its checkpoint trigger.

The output (a rebalance over two channels) is a partition nobody reads, with two buffers of
64 bytes: the first batch needs more than that whatever the availability check saw before it.
Without overdraft the task blocked inside that batch for a buffer that never comes, and the
trigger waited in its mailbox forever; with it the batch completes, the task waits for output
availability in its mailbox loop, and the unaligned checkpoint is taken and acknowledged while
the output is still full. Nothing here depends on timing: the test only waits for facts."""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from flintlock.common.config import Configuration
from flintlock.datastream import StreamExecutionEnvironment
from flintlock.graph.job_graph import build_job_graph
from flintlock.runtime.execution_state import ExecutionState
from flintlock.runtime.network.barriers import AlignmentType, CheckpointOptions
from flintlock.runtime.network.buffer import NetworkBufferPool
from flintlock.runtime.network.channel_selector import RebalanceSelector
from flintlock.runtime.network.partition import ResultPartition, ResultPartitionType
from flintlock.runtime.network.writer import RecordWriter
from flintlock.runtime.tasks.operator_factory import create_operator
from flintlock.runtime.tasks.stream_task import (
    BATCH_TARGET_S,
    AdaptiveBatch,
    CheckpointingSettings,
    StreamTask,
    TaskIO,
    TaskSpec,
)
from flintlock.testing.exchange import partition_id
from flintlock.testing.operators import MemoryStateWriter
from flintlock.testing.waiting import wait_for, wait_until

BOUND_S = 30.0
"""Only how long a failing run waits before it reports: no assertion is about speed."""


class _Reports:
    """The task's callbacks: acknowledgements go into a queue the test reads."""

    def __init__(self) -> None:
        self.acks: queue.Queue[int] = queue.Queue()
        self.states: list[ExecutionState] = []

    def task_state_changed(self, task: Any, state: ExecutionState, error: Any) -> None:
        self.states.append(state)

    def acknowledge_checkpoint(self, task: Any, checkpoint_id: int, state: Any,
                               metrics: Any) -> None:
        self.acks.put(checkpoint_id)

    def decline_checkpoint(self, task: Any, checkpoint_id: int, reason: Any,
                           error: Any) -> None:
        raise AssertionError(f"checkpoint {checkpoint_id} declined: {reason} {error!r}")


class _InlineSnapshots:
    """Runs the asynchronous part at once, into memory."""

    def state_writer(self, checkpoint_id: int, is_savepoint: bool) -> MemoryStateWriter:
        return MemoryStateWriter()

    def submit(self, work: Any) -> None:
        work()


def _source_vertex() -> Any:
    env = StreamExecutionEnvironment.get_execution_environment(Configuration())
    env.from_collection([f"record {i:04d}" for i in range(1000)]).rebalance() \
        .map(str.upper).set_parallelism(2)
    job = build_job_graph(env.get_stream_graph())
    return job.sources()[0]


@pytest.fixture
def full_output() -> Iterator[tuple[StreamTask, ResultPartition, _Reports]]:
    vertex = _source_vertex()
    network = NetworkBufferPool(8, 64)
    pool = network.create_buffer_pool(2, 2, num_channels=2, max_per_channel=2)
    partition = ResultPartition(partition_id(), ResultPartitionType.PIPELINED_BOUNDED, 2, pool)
    writer = RecordWriter(partition, RebalanceSelector(), buffer_timeout_ms=-1)
    io = TaskIO(gates=[], gate_inputs=[], writers={vertex.produced[0]: writer},
                partitions=[partition])
    spec = TaskSpec(vertex, 0, 0, Configuration(),
                    CheckpointingSettings(enabled=True, unaligned=True))
    reports = _Reports()
    task = StreamTask(spec, io, reports, _InlineSnapshots(), read_state=None,
                      create_operator=create_operator)
    thread = threading.Thread(target=task.run, name="source task under test", daemon=True)
    thread.start()
    yield task, partition, reports
    task.cancel()
    thread.join(BOUND_S)
    assert not thread.is_alive()


def _output_full(partition: ResultPartition) -> bool:
    stats = partition.buffer_pool.statistics()
    return stats.held == stats.max_buffers and stats.available == 0


def test_a_trigger_is_taken_while_the_output_is_full(full_output):
    task, partition, reports = full_output
    wait_until(lambda: _output_full(partition), BOUND_S, "the source never filled its output")
    task.trigger_checkpoint(1, 0, CheckpointOptions(alignment=AlignmentType.UNALIGNED))
    acked = wait_for(lambda: list(reports.acks.queue), timeout_s=BOUND_S,
                     message="the trigger was not taken while the output was full")
    assert acked == [1]
    assert _output_full(partition)  # nobody read: the checkpoint did not need a consumer
    queued = [sub.queued_buffers for sub in partition.statistics().subpartitions]
    assert all(queued), queued  # the barrier went to both channels, behind no consumer
    assert reports.states[-1] is ExecutionState.RUNNING


# -- the pool: availability and overdraft ----------------------------------------------------


def test_a_subpartition_at_its_cap_makes_the_pool_unavailable():
    pool = NetworkBufferPool(8, 64).create_buffer_pool(2, 6, num_channels=2, max_per_channel=2)
    held = [pool.request_buffer(0), pool.request_buffer(0)]
    assert pool.request_buffer(1) is not None  # the other channel may still take one...
    assert not pool.is_available  # ...but a step might emit to channel 0 (Flink's rule)
    calls: list[int] = []
    pool.add_availability_listener(lambda: calls.append(1))
    assert calls == []
    held[0].recycle()
    assert calls == [1] and pool.is_available


def test_overdraft_lends_beyond_the_pool_instead_of_waiting():
    network = NetworkBufferPool(4, 64)
    pool = network.create_buffer_pool(1, 1)
    pool.enable_overdraft()
    first = pool.request_buffer_blocking(timeout_s=BOUND_S)
    extra = [pool.request_buffer_blocking(timeout_s=BOUND_S) for _ in range(3)]
    assert pool.statistics().overdraft == 3
    assert network.statistics().free_segments == 3  # overdraft is not network memory
    calls: list[int] = []
    pool.add_availability_listener(lambda: calls.append(1))
    first.recycle()
    assert calls == [] and not pool.is_available  # overdraft still out
    for buffer in extra:
        buffer.recycle()
    assert calls == [1] and pool.is_available
    assert pool.statistics().overdraft == 0 and network.statistics().free_segments == 3



def test_any_recycled_buffer_pays_the_overdraft_back():
    """As in Flink: the overdraft buffers are queued last, so waiting for them would let the
    consumer drain the whole queue before the producer resumed."""
    pool = NetworkBufferPool(8, 64).create_buffer_pool(2, 4)
    pool.enable_overdraft()
    oldest, *rest = [pool.request_buffer_blocking(timeout_s=BOUND_S) for _ in range(4)]
    overdraft = pool.request_buffer_blocking(timeout_s=BOUND_S)
    assert pool.statistics().overdraft == 1
    oldest.recycle()
    assert not pool.is_available  # 4 lent of 4: the free one pays the overdraft back
    rest[0].recycle()
    assert pool.is_available  # 3 lent, overdraft included
    overdraft.recycle()
    for buffer in rest[1:]:
        buffer.recycle()
    assert pool.statistics().overdraft == 0 and pool.statistics().in_use == 0

# -- the batch size: a slow operator's slices stay short ---------------------------------


def test_quick_short_batches_do_not_grow_the_batch_size():
    """Short input buffers (flushed by the buffer timeout) processed quickly said nothing
    about a full batch: they grew the size to 4096, and a slow operator's next full buffer was
    one 4096-record slice, during which no priority barrier was taken."""
    batch = AdaptiveBatch()
    for _ in range(20):
        batch.observe(BATCH_TARGET_S / 10, records=1)
    assert batch.size == 64
    batch.observe(BATCH_TARGET_S / 10, records=64)
    assert batch.size == 128
    batch.observe(BATCH_TARGET_S * 4, records=16)  # 4 targets for 16: 4 records per target
    assert batch.size == 4


def test_a_listener_registered_again_while_waiting_is_called_once():
    pool = NetworkBufferPool(1, 64).create_buffer_pool(1, 1)
    buffer = pool.request_buffer()
    assert buffer is not None
    calls: list[int] = []

    def listener() -> None:
        calls.append(1)

    for _ in range(3):  # the task loop, woken by mail three times while the output is full
        pool.add_availability_listener(listener)
    buffer.recycle()
    assert calls == [1]
