"""RemoteInputChannel driven directly, as the network I/O thread would (no sockets, no threads)."""

from __future__ import annotations

import pytest

from flintlock.runtime.network.buffer import DataType
from flintlock.runtime.network.credit import CreditViolationError
from flintlock.runtime.network.input_channel import InputChannelError
from flintlock.runtime.network.partition import PartitionNotFoundError
from flintlock.runtime.network.protocol import MalformedFrameError, PartitionRequest
from flintlock.runtime.network.remote_channel import BufferReorderingError
from flintlock.testing.exchange import deliver, detached_remote_gate, partition_id

PID = partition_id("ds", subtask=1)
SEGMENT = 1024


def make(credit: int = 2, floating: int = 4, backoff: tuple[int, int] = (10, 40)):  # type: ignore[no-untyped-def]
    """(network pool, gate, recording connections, channel) of one requested remote channel
    reading subpartition 3 of ``PID``."""
    wired = detached_remote_gate(credit=credit, floating=floating, backoff_ms=backoff,
                                 segment_size=SEGMENT, partition=PID, subpartition=3)
    return wired.network, wired.gate, wired.connections, wired.channels[0]


def test_request_announces_the_exclusive_buffers_as_initial_credit() -> None:
    pool, _, connections, channel = make(credit=3)
    assert connections.client.requests == [PartitionRequest(PID, 3, channel.receiver_id, 3)]
    assert pool.statistics().exclusive_segments == 3


def test_buffers_are_read_in_order_and_freed_buffers_become_credit() -> None:
    _, gate, connections, channel = make(credit=2)
    deliver(channel, 0, b"a")
    deliver(channel, 1, b"b")
    first = gate.poll_next()
    second = gate.poll_next()
    assert first is not None and second is not None
    assert bytes(first[1].view()) == b"a" and bytes(second[1].view()) == b"b"
    first[1].recycle()
    second[1].recycle()
    assert connections.client.credit_notifications == 1  # coalesced
    assert channel.announce_credit() == 2


def test_backlog_borrows_floating_buffers_and_announces_them() -> None:
    _, gate, connections, channel = make(credit=2, floating=4)
    deliver(channel, 0, b"a", backlog=3)  # wants 5 empty, holds 1
    assert connections.client.credit_notifications == 1
    assert channel.announce_credit() == 4
    assert gate.buffer_pool.statistics().in_use == 4
    statistics = channel.credit_statistics()
    assert (statistics.empty_exclusive, statistics.empty_floating) == (1, 4)


def test_a_sequence_gap_fails_the_channel() -> None:
    _, gate, _, channel = make()
    deliver(channel, 0, b"a")
    deliver(channel, 2, b"c")
    with pytest.raises(InputChannelError) as info:
        for _ in range(3):
            item = gate.poll_next()
            if item is not None:
                item[1].recycle()
    assert isinstance(info.value.__cause__, BufferReorderingError)
    assert info.value.__cause__.expected == 1


def test_data_without_credit_is_a_protocol_violation() -> None:
    _, _, _, channel = make(credit=1, floating=0)
    deliver(channel, 0, b"a")
    with pytest.raises(CreditViolationError):
        channel.take_target(DataType.DATA_BUFFER, 1)


def test_events_take_no_credit() -> None:
    _, gate, _, channel = make(credit=0, floating=0)
    deliver(channel, 0, b"\x00", data_type=DataType.EVENT_BUFFER)
    item = gate.poll_next()
    assert item is not None and item[1].data_type is DataType.EVENT_BUFFER


def test_a_payload_larger_than_a_segment_is_malformed() -> None:
    _, _, _, channel = make()
    with pytest.raises(MalformedFrameError):
        channel.take_target(DataType.DATA_BUFFER, SEGMENT + 1)


def test_release_returns_every_segment_including_buffers_still_in_use() -> None:
    pool, gate, connections, channel = make(credit=2, floating=4)
    deliver(channel, 0, b"a", backlog=2)
    deliver(channel, 1, b"b", backlog=0)
    item = gate.poll_next()
    assert item is not None
    channel.release()
    assert connections.client.cancelled == [channel.receiver_id]
    item[1].recycle()  # the consumer finishes with it after the release
    assert pool.statistics().exclusive_segments == 0
    assert gate.buffer_pool.statistics().in_use == 0
    assert channel.take_target(DataType.DATA_BUFFER, 1) is None  # late data is discarded


def test_partition_not_found_backs_off_doubling_then_fails() -> None:
    _, gate, connections, channel = make(backoff=(10, 40))
    delays = []
    for _ in range(3):
        channel.on_partition_not_found(PartitionNotFoundError(PID))
        delay, retry = connections.io.timers.pop()
        delays.append(delay)
        retry()
    assert delays == [0.01, 0.02, 0.04]
    assert len(connections.client.requests) == 4
    channel.on_partition_not_found(PartitionNotFoundError(PID))
    assert connections.io.timers == []
    with pytest.raises(InputChannelError) as info:
        gate.poll_next()
    assert isinstance(info.value.__cause__, PartitionNotFoundError)


def test_errors_after_end_of_partition_are_ignored() -> None:
    _, gate, _, channel = make()
    deliver(channel, 0, b"\x00", data_type=DataType.EVENT_BUFFER)  # tag 0 = end of partition
    channel.on_error(ConnectionResetError("producer went away after finishing"))
    item = gate.poll_next()
    assert item is not None and gate.is_finished


def test_a_gate_without_a_pool_just_has_no_floating_buffers() -> None:
    wired = detached_remote_gate(credit=1, floating=None, segments=8, segment_size=SEGMENT,
                                 partition=PID)
    gate, channel = wired.gate, wired.channels[0]
    deliver(channel, 0, b"a", backlog=5)  # wants floating buffers, there is no pool
    statistics = channel.credit_statistics()
    assert statistics.empty_floating == 0 and not statistics.waiting_for_floating
    item = gate.poll_next()
    assert item is not None
    item[1].recycle()
    assert channel.announce_credit() == 1
