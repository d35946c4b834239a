import pickle
import random
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flintlock.runtime.network.buffer import (
    UNBOUNDED,
    Buffer,
    BufferPoolDestroyedError,
    BufferRequestTimeoutError,
    DataType,
    IllegalBufferStateError,
    InsufficientNetworkBuffersError,
    NetworkBufferPool,
    unpooled_buffer,
)


def test_buffer_view_and_single_recycle():
    pool = NetworkBufferPool(2, 64).create_buffer_pool(1, 2)
    buffer = pool.request_buffer()
    assert buffer is not None and buffer.capacity == 64
    buffer.segment[:3] = b"abc"
    buffer.size = 3
    assert bytes(buffer.view()) == b"abc"
    buffer.recycle()
    with pytest.raises(IllegalBufferStateError):
        buffer.recycle()
    with pytest.raises(IllegalBufferStateError):
        buffer.view()


def test_unpooled_buffer_is_an_event_when_typed_so():
    buffer = unpooled_buffer(b"xy", DataType.EVENT_BUFFER)
    assert buffer.is_event and bytes(buffer.view()) == b"xy"
    buffer.recycle()
    assert not Buffer(bytearray(4), buffer.recycler).is_event


def test_pool_creation_fails_when_minimum_cannot_be_met():
    network = NetworkBufferPool(4, 64)
    network.create_buffer_pool(3, 10)
    with pytest.raises(InsufficientNetworkBuffersError) as info:
        network.create_buffer_pool(2, 10)
    assert info.value.needed == 2 and info.value.available == 1
    assert "taskmanager.memory.network.max" in str(info.value)
    copy = pickle.loads(pickle.dumps(info.value))
    assert (copy.needed, copy.available) == (2, 1)


def test_minimum_is_guaranteed_even_when_another_pool_borrowed():
    network = NetworkBufferPool(4, 64)
    greedy = network.create_buffer_pool(0, UNBOUNDED)
    modest = network.create_buffer_pool(2, 2)
    taken = [greedy.request_buffer() for _ in range(4)]
    assert sum(b is not None for b in taken) == 2
    assert modest.request_buffer() is not None and modest.request_buffer() is not None


def test_bounded_pool_stops_at_max_and_blocking_request_times_out():
    network = NetworkBufferPool(10, 64)
    pool = network.create_buffer_pool(1, 3)
    held = [pool.request_buffer_blocking(0) for _ in range(3)]
    assert pool.request_buffer() is None
    with pytest.raises(BufferRequestTimeoutError):
        pool.request_buffer_blocking(timeout_s=0.01)
    held[0].recycle()
    assert pool.request_buffer_blocking(timeout_s=0.01) is not None


def _wait_for_waiter(pool) -> None:
    for _ in range(10_000):
        if pool.statistics().waiters:
            return
        threading.Event().wait(0.001)
    raise AssertionError("no thread started waiting")


def test_blocked_request_is_woken_by_a_recycle_from_another_thread():
    pool = NetworkBufferPool(1, 64).create_buffer_pool(1, 1)
    first = pool.request_buffer()
    assert first is not None
    got: list[Buffer] = []
    waiter = threading.Thread(target=lambda: got.append(pool.request_buffer_blocking(10)))
    waiter.start()
    _wait_for_waiter(pool)
    first.recycle()
    waiter.join(10)
    assert len(got) == 1


def test_destroy_fails_waiters_and_returns_all_segments():
    network = NetworkBufferPool(3, 64)
    pool = network.create_buffer_pool(2, 3)
    in_flight = pool.request_buffer()
    errors: list[BaseException] = []
    taken: list[Buffer] = []

    def wait() -> None:
        try:
            while True:
                taken.append(pool.request_buffer_blocking(10))
        except BufferPoolDestroyedError as exc:
            errors.append(exc)

    waiter = threading.Thread(target=wait)
    waiter.start()
    _wait_for_waiter(pool)
    pool.destroy()
    waiter.join(10)
    assert len(errors) == 1
    assert in_flight is not None and len(taken) == 2
    for buffer in [in_flight, *taken]:
        buffer.recycle()
    stats = network.statistics()
    assert stats.free_segments == 3 and stats.reserved_segments == 0 and stats.num_pools == 0


def test_availability_listener_is_one_shot_and_called_on_recycle():
    pool = NetworkBufferPool(1, 64).create_buffer_pool(1, 1)
    buffer = pool.request_buffer()
    assert buffer is not None
    calls: list[int] = []
    pool.add_availability_listener(lambda: calls.append(1))
    assert calls == []
    buffer.recycle()
    assert calls == [1]
    again = pool.request_buffer()
    assert again is not None
    again.recycle()
    assert calls == [1]


def test_listener_called_at_once_when_a_buffer_is_available():
    pool = NetworkBufferPool(2, 64).create_buffer_pool(1, 2)
    calls: list[int] = []
    pool.add_availability_listener(lambda: calls.append(1))
    assert calls == [1]


def test_listener_woken_when_global_pool_frees_a_segment():
    network = NetworkBufferPool(1, 64)
    floating = network.create_buffer_pool(0, 4)
    exclusive = network.request_exclusive_segments(1)
    calls: list[int] = []
    floating.add_availability_listener(lambda: calls.append(1))
    assert calls == []
    network.recycle_exclusive_segments(exclusive)
    assert calls == [1]
    assert floating.request_buffer() is not None


def test_exclusive_segments_respect_reservations():
    network = NetworkBufferPool(3, 64)
    network.create_buffer_pool(2, 2)
    assert len(network.request_exclusive_segments(1)) == 1
    with pytest.raises(InsufficientNetworkBuffersError):
        network.request_exclusive_segments(1)


def test_max_buffers_per_channel_caps_one_subpartition():
    pool = NetworkBufferPool(10, 64).create_buffer_pool(2, 10, num_channels=2, max_per_channel=2)
    a = [pool.request_buffer(channel=0) for _ in range(2)]
    assert pool.request_buffer(channel=0) is None
    assert pool.request_buffer(channel=1) is not None
    assert pool.statistics().per_channel_in_use == (2, 1)
    a[0].recycle()
    assert pool.request_buffer(channel=0) is not None


OPS = st.lists(
    st.tuples(st.sampled_from(["request", "recycle", "destroy", "exclusive", "unexclusive"]),
              st.integers(0, 2), st.integers(0, 50)),
    max_size=60,
)


@settings(max_examples=150, deadline=None)
@given(OPS)
def test_pools_never_leak_a_segment(ops):
    network = NetworkBufferPool(8, 16)
    pools = [network.create_buffer_pool(1, 3), network.create_buffer_pool(2, UNBOUNDED),
             network.create_buffer_pool(0, 2, num_channels=2, max_per_channel=1)]
    held: list[Buffer] = []
    exclusive: list[list[bytearray]] = []
    for op, which, n in ops:
        pool = pools[which]
        if op == "request" and not pool.is_destroyed:
            buffer = pool.request_buffer(channel=n % 2 if which == 2 else None)
            if buffer is not None:
                held.append(buffer)
        elif op == "recycle" and held:
            held.pop(n % len(held)).recycle()
        elif op == "destroy":
            pool.destroy()
        elif op == "exclusive":
            try:
                exclusive.append(network.request_exclusive_segments(1 + n % 2))
            except InsufficientNetworkBuffersError:
                pass
        elif op == "unexclusive" and exclusive:
            network.recycle_exclusive_segments(exclusive.pop())
        stats = network.statistics()
        assert stats.free_segments >= stats.reserved_segments >= 0
    for buffer in held:
        buffer.recycle()
    for segments in exclusive:
        network.recycle_exclusive_segments(segments)
    for pool in pools:
        pool.destroy()
    stats = network.statistics()
    assert (stats.free_segments, stats.reserved_segments, stats.exclusive_segments) == (8, 0, 0)


def test_concurrent_requests_and_recycles_leak_nothing():
    network = NetworkBufferPool(6, 16)
    pools = [network.create_buffer_pool(1, 4), network.create_buffer_pool(2, UNBOUNDED)]
    errors: list[BaseException] = []

    def churn(pool, seed: int) -> None:
        rng = random.Random(seed)
        held: list[Buffer] = []
        try:
            for _ in range(500):
                if held and (rng.random() < 0.5 or len(held) >= 2):
                    held.pop(rng.randrange(len(held))).recycle()
                else:
                    held.append(pool.request_buffer_blocking(10))
            for buffer in held:
                buffer.recycle()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=churn, args=(pools[i % 2], i)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors and not any(t.is_alive() for t in threads)
    for pool in pools:
        pool.destroy()
    assert network.statistics().free_segments == 6
