import random
import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flintlock.common.ids import CheckpointId
from flintlock.runtime.network.barriers import CancelCheckpointMarker
from flintlock.runtime.network.buffer import NetworkBufferPool
from flintlock.runtime.network.channel_selector import (
    BroadcastSelector,
    ChannelSelectorSetupError,
    CustomPartitionerSelector,
    ForwardSelector,
    InvalidChannelError,
    KeyGroupSelector,
    RebalanceSelector,
    RescaleSelector,
)
from flintlock.runtime.network.events import decode_event
from flintlock.runtime.network.output_flusher import OutputFlusher
from flintlock.runtime.network.serialization import RecordDeserializer
from flintlock.runtime.network.writer import OutputFlushFailedError, RecordWriter
from flintlock.runtime.state.keygroups import assign_key_to_operator
from flintlock.testing.exchange import CountingListener, new_partition


def setup(selector, n, buffer_timeout_ms=-1, segment=256, listener=None, **kwargs):
    network = NetworkBufferPool(256, segment)
    partition = new_partition(network, n)
    views = [partition.create_subpartition_view(i, listener or CountingListener())
             for i in range(n)]
    writer = RecordWriter(partition, selector, buffer_timeout_ms=buffer_timeout_ms, **kwargs)
    return network, partition, views, writer


def drain(view, deserializer):
    out = []
    while (item := view.poll_next()) is not None:
        buffer = item.buffer
        if buffer.is_event:
            out.append(decode_event(buffer))
        else:
            out.extend(deserializer.deserialize(buffer.view()))
        buffer.recycle()
    return out


def test_forward_needs_exactly_one_channel():
    ForwardSelector().setup(1)
    with pytest.raises(ChannelSelectorSetupError):
        ForwardSelector().setup(2)


def test_rebalance_is_round_robin_from_a_random_start():
    selector = RebalanceSelector(random.Random(7))
    selector.setup(4)
    start = random.Random(7).randrange(4)
    assert [selector.select_channel(None) for _ in range(6)] == [
        (start + i) % 4 for i in range(6)]


def test_rescale_is_round_robin_from_zero():
    selector = RescaleSelector()
    selector.setup(3)
    assert [selector.select_channel(None) for _ in range(5)] == [0, 1, 2, 0, 1]


def test_key_group_selector_matches_key_group_assignment_and_caches_boundedly():
    selector = KeyGroupSelector(lambda record: record[0], max_parallelism=128, cache_size=4)
    selector.setup(3)
    for key in ["a", "b", 17, ("x", 1), None, "a", 17] * 3:
        assert selector.select_channel((key, 0)) == assign_key_to_operator(key, 128, 3)
    assert len(selector._cache) <= 4
    assert selector.select_channel(([1, 2], 0)) == assign_key_to_operator([1, 2], 128, 3)
    with pytest.raises(ChannelSelectorSetupError):
        KeyGroupSelector(lambda r: r, 2).setup(3)


@given(keys=st.lists(st.one_of(
    st.integers(), st.integers(min_value=-(2**63) - 2, max_value=-(2**63) + 2),
    st.integers(min_value=2**63 - 2, max_value=2**63 + 2), st.booleans(), st.text(),
    st.tuples(st.integers(), st.text())), max_size=50),
    channels=st.integers(min_value=1, max_value=9))
def test_the_selectors_inline_integer_hash_agrees_with_the_state_backends_key_groups(
        keys, channels):
    """The writer's cache-miss path spells out key → key group → channel; it must place
    every key on the subtask that owns its key group in keyed state."""
    selector = KeyGroupSelector(lambda record: record, max_parallelism=128)
    selector.setup(channels)
    for key in keys:
        assert selector.channel_for_key(key) == assign_key_to_operator(key, 128, channels)


def test_custom_partitioner_out_of_range_is_a_typed_error():
    selector = CustomPartitionerSelector(lambda key, n: key % n, lambda record: record)
    selector.setup(3)
    assert selector.select_channel(7) == 1
    bad = CustomPartitionerSelector(lambda key, n: n, lambda record: record)
    bad.setup(3)
    with pytest.raises(InvalidChannelError) as info:
        bad.select_channel(1)
    assert info.value.channel == 3 and "[0, 3)" in str(info.value)


def test_records_reach_the_channel_the_selector_picks():
    selector = KeyGroupSelector(lambda record: record % 10, 128)
    _, _, views, writer = setup(selector, 3)
    records = list(range(500))
    for record in records:
        writer.emit(record)
    writer.close()
    for channel, view in enumerate(views):
        got = drain(view, RecordDeserializer())
        assert got == [r for r in records if assign_key_to_operator(r % 10, 128, 3) == channel]


def test_buffer_timeout_zero_flushes_every_record():
    _, _, (view,), writer = setup(ForwardSelector(), 1, buffer_timeout_ms=0)
    deserializer = RecordDeserializer()
    for record in ("a", "b", "c"):
        writer.emit(record)
        item = view.poll_next()
        assert item is not None and view.poll_next() is None
        assert deserializer.deserialize(item.buffer.view()) == [record]
        item.buffer.recycle()
    writer.close()


def test_buffer_timeout_minus_one_keeps_data_until_a_buffer_is_full():
    _, _, (view,), writer = setup(ForwardSelector(), 1, segment=4096)
    for record in range(10):
        writer.emit(record)
    assert view.poll_next() is None
    writer.flush_all()
    assert drain(view, RecordDeserializer()) == list(range(10))
    for record in range(3000):
        writer.emit(record)
    assert view.get_backlog() >= 1
    writer.close()


def test_a_batch_larger_than_the_batch_limit_goes_out_in_buffer_sized_chunks():
    _, _, (view,), writer = setup(ForwardSelector(), 1, segment=256)
    writer.emit(-1)  # the first batch measures the record size
    writer.emit_batch(list(range(300)))  # fits the partition's pool: nobody reads meanwhile
    # one chunk of 300 records would span ~4 buffers and decode only at its end; split
    # into chunks of about a buffer, the records already in full buffers decode now
    deserializer = RecordDeserializer()
    early = drain(view, deserializer)
    assert 1 < len(early) < 301
    assert early == list(range(-1, len(early) - 1))
    writer.emit_batch([300, 301])
    writer.emit(302)
    writer.close()
    assert early + drain(view, deserializer) == list(range(-1, 303))


def test_buffer_timeout_zero_flushes_every_record_of_a_batch():
    _, _, (view,), writer = setup(ForwardSelector(), 1, buffer_timeout_ms=0)
    writer.emit_batch(["a", "b", "c"])
    deserializer = RecordDeserializer()
    for record in ("a", "b", "c"):
        item = view.poll_next()
        assert item is not None
        assert deserializer.deserialize(item.buffer.view()) == [record]
        item.buffer.recycle()
    assert view.poll_next() is None
    writer.close()


def test_events_follow_the_records_emitted_before_them():
    _, _, views, writer = setup(RescaleSelector(), 2)
    for record in range(6):
        writer.emit(record)
    marker = CancelCheckpointMarker(CheckpointId(3))
    writer.broadcast_event(marker)
    writer.emit(6)
    writer.close()
    assert drain(views[0], RecordDeserializer()) == [0, 2, 4, marker, 6]
    assert drain(views[1], RecordDeserializer()) == [1, 3, 5, marker]


def test_broadcast_emit_sends_to_every_channel():
    _, _, views, writer = setup(BroadcastSelector(), 3)
    for record in ("x", "y"):
        writer.emit(record)
    writer.close()
    assert [drain(v, RecordDeserializer()) for v in views] == [["x", "y"]] * 3


def flusher_threads():
    return [t for t in threading.enumerate() if t.name.startswith("output flusher")]


def test_flusher_thread_flushes_by_itself_and_stops_on_close():
    before = len(flusher_threads())
    listener_event = threading.Event()

    class Listener:
        def notify_data_available(self) -> None:
            listener_event.set()

    _, _, (view,), writer = setup(ForwardSelector(), 1, buffer_timeout_ms=1, name="t1",
                                  listener=Listener())
    writer.emit("lonely")
    assert listener_event.wait(10)
    assert drain(view, RecordDeserializer()) == ["lonely"]
    assert len(flusher_threads()) == before + 1
    writer.close()
    assert len(flusher_threads()) == before


def test_one_flusher_serves_several_writers():
    flusher = OutputFlusher(1000, "task")
    writers = [setup(ForwardSelector(), 1, buffer_timeout_ms=1000, flusher=flusher)[3]
               for _ in range(2)]
    for writer in writers:
        writer.close()
    assert flusher.is_alive
    flusher.stop()
    assert not flusher.is_alive


def test_flusher_error_is_raised_on_the_task_thread():
    _, partition, _, writer = setup(ForwardSelector(), 1)
    writer.emit("x")
    partition.finish()
    writer._flush_from_flusher()
    with pytest.raises(OutputFlushFailedError) as info:
        writer.flush_all()
    assert info.value.__cause__ is not None


def test_close_without_flush_recycles_everything():
    network, partition, _, writer = setup(ForwardSelector(), 1)
    writer.emit("x")
    writer.flush(0)
    for _ in range(100):  # until a batch sits in a partly filled buffer
        writer.emit("y")
        if writer.statistics().current_buffer_bytes[0] > 0:
            break
    assert writer.statistics().current_buffer_bytes[0] > 0
    writer.close(flush=False)
    partition.release()
    assert network.statistics().free_segments == 256


def test_statistics_count_records_buffers_and_bytes():
    _, _, _, writer = setup(RescaleSelector(), 2)
    for record in range(10):
        writer.emit(record)
    writer.flush_all()
    stats = writer.statistics()
    assert stats.records_out == 10 and stats.buffers_out == 2 and stats.bytes_out > 0
    assert stats.pending_records == (0, 0) and stats.bytes_per_record > 0
    writer.close()


def test_keyed_fast_path_handles_unhashable_keys_and_bounds_its_cache():
    selector = KeyGroupSelector(lambda record: record[0], 128, cache_size=3)
    _, _, views, writer = setup(selector, 2)
    records = [([i % 5], i) for i in range(20)] + [(i % 7, i) for i in range(20)]
    for record in records:
        writer.emit(record)
    assert len(writer._key_cache) <= 3
    writer.close()
    for channel, view in enumerate(views):
        expected = [r for r in records if assign_key_to_operator(r[0], 128, 2) == channel]
        assert drain(view, RecordDeserializer()) == expected


def test_writer_waits_for_buffers_when_the_consumer_does_not_read():
    from flintlock.common.config import Configuration
    from flintlock.testing.clock import ManualClock

    network = NetworkBufferPool(64, 256)
    config = Configuration({"taskmanager.network.memory.buffers-per-channel": 2,
                            "taskmanager.network.memory.floating-buffers-per-gate": 0})
    partition = new_partition(network, 1, config=config)
    (view,) = [partition.create_subpartition_view(0, CountingListener())]
    writer = RecordWriter(partition, ForwardSelector(), buffer_timeout_ms=0, clock=ManualClock())
    writer.emit("a")
    writer.emit("b")
    assert partition.buffer_pool.statistics().in_use == 2
    done = threading.Event()

    def emit_third() -> None:
        writer.emit("c")
        done.set()

    producer = threading.Thread(target=emit_third)
    producer.start()
    for _ in range(10_000):
        if partition.buffer_pool.statistics().waiters:
            break
        threading.Event().wait(0.001)
    assert partition.buffer_pool.statistics().waiters == 1 and not done.is_set()
    item = view.poll_next()
    item.buffer.recycle()
    producer.join(10)
    assert done.is_set()
    stats = writer.statistics()
    assert (stats.backpressure_waits, stats.backpressured_ms) == (1, 0.0)
    writer.close()
    assert drain(view, RecordDeserializer()) == ["b", "c"]
