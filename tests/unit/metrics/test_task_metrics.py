"""The TaskManager's reading of a subtask's counters (runtime/task_metrics.py) with fake gates:
Flink's inPoolUsage estimate over remote channels' exclusive buffers and the floating pool."""

from flintlock.common.errors import FlintlockError
from flintlock.runtime.network.buffer import LocalBufferPoolStatistics
from flintlock.runtime.network.credit import CreditStatistics
from flintlock.runtime.task_metrics import input_usage, process_stats


class RemoteChannel:
    def __init__(self, initial, empty_exclusive, empty_floating):
        self.stats = CreditStatistics(initial, empty_exclusive, empty_floating, 0, 0, False)

    def credit_statistics(self):
        return self.stats


class LocalChannel:
    pass


class Pool:
    is_destroyed = False

    def __init__(self, max_buffers, in_use):
        self.stats = LocalBufferPoolStatistics(0, max_buffers, in_use, 0, in_use, 0, ())

    def statistics(self):
        return self.stats


class Gate:
    def __init__(self, channels, pool=None):
        self.channels = channels
        self._pool = pool

    @property
    def buffer_pool(self):
        if self._pool is None:
            raise FlintlockError("no floating pool")
        return self._pool


def test_remote_channels_and_the_floating_pool():
    gate = Gate([RemoteChannel(2, 0, 1), RemoteChannel(2, 2, 0), LocalChannel()], Pool(8, 3))
    # exclusive: 2 + 0 full of 4; floating: 3 in use, 1 of them held empty -> 2 of 8
    assert input_usage(gate) == (2 + 0 + 2) / (4 + 8)


def test_a_gate_of_local_channels_has_no_input_buffers():
    assert input_usage(Gate([LocalChannel(), LocalChannel()])) == 0.0


def test_a_full_gate_is_one():
    assert input_usage(Gate([RemoteChannel(2, 0, 0)], Pool(4, 4))) == 1.0


def test_process_stats_of_this_process():
    import os

    stats = process_stats()
    assert stats.pid == os.getpid() and stats.rss_bytes > 0
    assert stats.cpu_cores >= 1 and stats.physical_memory_bytes >= stats.rss_bytes
    assert stats.peak_rss_bytes >= stats.rss_bytes and stats.network is None


def test_network_memory_is_the_task_managers_pool_seen_through_a_subtask():
    from types import SimpleNamespace

    from flintlock.runtime.network.buffer import NetworkBufferPool
    from flintlock.runtime.task_metrics import network_memory

    network = NetworkBufferPool(8, 1024)
    pool = network.create_buffer_pool(2, 4)
    held = [pool.request_buffer() for _ in range(3)]
    io = SimpleNamespace(partitions=[SimpleNamespace(buffer_pool=pool)], gates=[])
    memory = network_memory(io)
    assert (memory.segment_size, memory.total_segments) == (1024, 8)
    assert memory.used_segments == 8 - network.statistics().free_segments >= 3
    for buffer in held:
        buffer.recycle()
    assert network_memory(SimpleNamespace(partitions=[], gates=[])) is None
