"""The network buffer pool makes its segments lazily (``segments.FreeSegments``): none at
start, one per first use, returned ones reused before new ones are made."""

from __future__ import annotations

import pytest

from flintlock.runtime.network.buffer import NetworkBufferPool
from flintlock.runtime.network.segments import FreeSegments


def test_segments_are_made_when_first_taken_and_reused_once_returned() -> None:
    free = FreeSegments(3, 16)
    assert len(free) == 3 and free._segments == []  # nothing allocated yet
    first = free.pop()
    assert len(first) == 16 and len(free) == 2
    free.extend([first])
    assert free.pop() is first and len(free) == 2
    free.pop(), free.pop()
    with pytest.raises(IndexError):
        free.pop()


def test_a_large_pool_allocates_only_what_its_pools_take() -> None:
    pool = NetworkBufferPool(100_000, 32 * 1024)  # 3.2 GB if made up front
    local = pool.create_buffer_pool(2, 4)
    buffers = [local.request_buffer() for _ in range(3)]
    assert all(buffer is not None for buffer in buffers)
    assert pool._free._untouched == 100_000 - 3
    assert pool.statistics().total_segments == 100_000
