"""The old names of the network tests' builders, for the task tests that still import them
(a support module: it holds no tests). The builders live in ``flintlock.testing.exchange``."""

from __future__ import annotations

from flintlock.runtime.network.buffer import NetworkBufferPool
from flintlock.runtime.network.partition import ResultPartition
from flintlock.testing.exchange import CountingListener as Recorder
from flintlock.testing.exchange import filled_buffer as data_buffer
from flintlock.testing.exchange import local_gate, new_partition
from flintlock.testing.exchange import partition_id as pid

__all__ = ["Recorder", "data_buffer", "local_gate", "make_partition", "pid"]


def make_partition(network: NetworkBufferPool, n: int = 2, name: str = "ds") -> ResultPartition:
    """``new_partition`` with ``n`` subpartitions, under its old name."""
    return new_partition(network, n, name=name)
