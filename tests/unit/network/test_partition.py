import os

import pytest

from flintlock.common.config import Configuration
from flintlock.common.ids import CheckpointId
from flintlock.runtime.network.barriers import (
    END_OF_PARTITION,
    AlignmentType,
    CheckpointBarrier,
    CheckpointOptions,
)
from flintlock.runtime.network.buffer import UNBOUNDED, DataType, NetworkBufferPool
from flintlock.runtime.network.events import decode_event
from flintlock.runtime.network.partition import (
    IllegalPartitionStateError,
    PartitionNotFoundError,
    PartitionState,
    ResultPartitionManager,
    ResultPartitionType,
    SubpartitionAlreadyConsumedError,
)
from flintlock.testing.exchange import (
    CountingListener,
    filled_buffer,
    new_partition,
    partition_id,
    write,
)

UNALIGNED = CheckpointBarrier(
    CheckpointId(1), 0, CheckpointOptions(alignment=AlignmentType.UNALIGNED)
)


def drain(view):
    out = []
    while (item := view.poll_next()) is not None:
        out.append(item)
    return out


def test_pipelined_subpartition_keeps_order_and_counts_backlog():
    network = NetworkBufferPool(32, 64)
    partition = new_partition(network)
    listener = CountingListener()
    view = partition.create_subpartition_view(0, listener)
    for payload in (b"a", b"b", b"c"):
        write(partition, 0, payload)
    assert listener.calls == 1
    assert view.get_backlog() == 3
    items = drain(view)
    assert [bytes(i.buffer.view()) for i in items] == [b"a", b"b", b"c"]
    assert [i.backlog for i in items] == [2, 1, 0]
    assert [i.sequence_number for i in items] == [0, 1, 2]
    assert [i.next_data_type for i in items] == [DataType.DATA_BUFFER, DataType.DATA_BUFFER, None]
    for item in items:
        item.buffer.recycle()
    write(partition, 0, b"d")
    assert listener.calls == 2


def test_priority_events_overtake_data_but_not_each_other():
    network = NetworkBufferPool(32, 64)
    partition = new_partition(network)
    listener = CountingListener()
    view = partition.create_subpartition_view(1, listener)
    write(partition, 1, b"x")
    partition.add_event(1, CheckpointBarrier(CheckpointId(9), 0))
    partition.add_event(1, UNALIGNED)
    second = CheckpointBarrier(CheckpointId(2), 0, UNALIGNED.options)
    partition.add_event(1, second)
    assert listener.calls == 3
    items = drain(view)
    kinds = [i.buffer.data_type for i in items]
    assert kinds == [DataType.PRIORITY_EVENT_BUFFER, DataType.PRIORITY_EVENT_BUFFER,
                     DataType.DATA_BUFFER, DataType.EVENT_BUFFER]
    assert decode_event(items[0].buffer) == UNALIGNED and decode_event(items[1].buffer) == second
    assert [i.backlog for i in items] == [1, 1, 0, 0]


def test_availability_depends_on_credit_only_for_data():
    network = NetworkBufferPool(32, 64)
    partition = new_partition(network)
    view = partition.create_subpartition_view(0, CountingListener())
    assert not view.is_available(5)
    write(partition, 0, b"x")
    assert not view.is_available(0) and view.is_available(1)
    partition.add_event(0, UNALIGNED)
    assert view.is_available(0)


def test_finish_appends_end_of_partition_and_forbids_more_data():
    network = NetworkBufferPool(32, 64)
    partition = new_partition(network)
    views = [partition.create_subpartition_view(i, CountingListener()) for i in range(2)]
    partition.finish()
    assert partition.state is PartitionState.FINISHED
    for view in views:
        (item,) = drain(view)
        assert decode_event(item.buffer) == END_OF_PARTITION
    with pytest.raises(IllegalPartitionStateError):
        write(partition, 0, b"late")
    with pytest.raises(IllegalPartitionStateError):
        partition.finish()


def test_failure_reaches_the_view_and_recycles_queued_buffers():
    network = NetworkBufferPool(8, 64)
    partition = new_partition(network)
    listener = CountingListener()
    view = partition.create_subpartition_view(0, listener)
    write(partition, 0, b"x")
    cause = RuntimeError("boom")
    partition.fail(cause)
    assert view.is_released and view.failure_cause is cause and listener.calls == 2
    assert view.poll_next() is None
    assert network.statistics().free_segments == 8


def test_second_view_on_pipelined_subpartition_is_refused():
    partition = new_partition(NetworkBufferPool(8, 64))
    partition.create_subpartition_view(0, CountingListener())
    with pytest.raises(SubpartitionAlreadyConsumedError):
        partition.create_subpartition_view(0, CountingListener())


def test_pipelined_partition_released_once_every_view_is_released():
    network = NetworkBufferPool(8, 64)
    manager = ResultPartitionManager()
    partition = new_partition(network)
    manager.register(partition)
    views = [manager.create_subpartition_view(partition_id(), i, CountingListener())
             for i in range(2)]
    write(partition, 1, b"unread")
    views[0].release()
    assert not partition.is_released
    views[1].release()
    assert partition.is_released and manager.partition_ids == []
    assert network.statistics().free_segments == 8


def test_manager_lookup_release_and_errors():
    network = NetworkBufferPool(8, 64)
    manager = ResultPartitionManager()
    with pytest.raises(PartitionNotFoundError) as info:
        manager.create_subpartition_view(partition_id(), 0, CountingListener())
    assert info.value.partition_id == partition_id()
    partition = new_partition(network)
    manager.register(partition)
    with pytest.raises(IllegalPartitionStateError):
        manager.register(partition)
    other = new_partition(network, name="other")
    manager.register(other)
    cause = ValueError("cancelled")
    view = manager.create_subpartition_view(partition_id(), 0, CountingListener())
    manager.release(partition_id(), cause)
    assert view.failure_cause is cause and partition.is_released
    assert manager.partition_ids == [other.partition_id]
    manager.release_all()
    assert other.is_released and manager.partition_ids == []
    assert network.statistics().free_segments == 8


def test_pool_sizes_follow_the_partition_type():
    network = NetworkBufferPool(100, 64)
    config = Configuration({"taskmanager.network.memory.buffers-per-channel": 3,
                            "taskmanager.network.memory.floating-buffers-per-gate": 5})
    bounded = new_partition(network, 4, config=config, name="a")
    assert (bounded.buffer_pool.min_buffers, bounded.buffer_pool.max_buffers) == (4, 17)
    unbounded = new_partition(network, 4, ResultPartitionType.PIPELINED, config, name="b")
    assert unbounded.buffer_pool.max_buffers == UNBOUNDED


def test_blocking_partition_is_readable_after_finish_more_than_once(tmp_path):
    network = NetworkBufferPool(4, 64)
    partition = new_partition(network, 2, ResultPartitionType.BLOCKING, spill_dir=str(tmp_path))
    listener = CountingListener()
    early = partition.create_subpartition_view(0, listener)
    for index in range(10):
        partition.add_buffer(index % 2, filled_buffer(partition, index % 2, bytes([index])))
    assert partition.buffer_pool.statistics().in_use == 0
    assert early.poll_next() is None and listener.calls == 0
    partition.finish()
    assert listener.calls == 1
    for view in (early, partition.create_subpartition_view(0, CountingListener())):
        items = drain(view)
        assert [bytes(i.buffer.view()) for i in items[:-1]] == [bytes([i]) for i in range(0, 10, 2)]
        assert decode_event(items[-1].buffer) == END_OF_PARTITION
        assert [i.backlog for i in items] == [4, 3, 2, 1, 0, 0]
        for item in items:
            item.buffer.recycle()
    (spill,) = os.listdir(tmp_path)
    partition.release()
    assert os.listdir(tmp_path) == []
    assert spill.endswith(".spill")
    assert network.statistics().free_segments == 4


def test_blocking_view_reads_nothing_after_release(tmp_path):
    network = NetworkBufferPool(4, 64)
    partition = new_partition(network, 1, ResultPartitionType.BLOCKING, spill_dir=str(tmp_path))
    write(partition, 0, b"abc")
    partition.finish()
    view = partition.create_subpartition_view(0, CountingListener())
    partition.release(RuntimeError("cancelled"))
    assert view.poll_next() is None
    assert view.is_released and isinstance(view.failure_cause, RuntimeError)


def test_blocking_partitions_spill_into_the_configured_directories(tmp_path):
    from flintlock.runtime.network.partition import create_result_partition

    dirs = [tmp_path / "a", tmp_path / "b"]
    for directory in dirs:
        directory.mkdir()
    config = Configuration({"io.tmp.dirs": ";".join(str(d) for d in dirs)})
    network = NetworkBufferPool(64, 64)
    partitions = [create_result_partition(network, partition_id(f"ds{i}"),
                                          ResultPartitionType.BLOCKING, 2, config)
                  for i in range(8)]
    used = {d.name for d in dirs if os.listdir(d)}
    assert used == {"a", "b"}
    for partition in partitions:
        partition.release()
    assert all(os.listdir(d) == [] for d in dirs)
    pipelined = create_result_partition(network, partition_id("p"),
                                        ResultPartitionType.PIPELINED_BOUNDED, 2, config)
    assert pipelined.buffer_pool.min_buffers == 2
