"""Timestamped batches in a chain and on the wire; watermark events."""

import pickle

import pytest

from flintlock.runtime.network.buffer import Buffer, DataType
from flintlock.runtime.network.channel_selector import BroadcastSelector, KeyGroupSelector
from flintlock.runtime.network.event_time import (
    MAX_WATERMARK,
    MIN_WATERMARK,
    NO_TIMESTAMP,
    StampedRun,
    TimestampedBatch,
    Watermark,
    WatermarkStatus,
    as_wire_records,
    expand_runs,
)
from flintlock.runtime.network.events import (
    MalformedEventError,
    decode_event,
    encode_event,
    event_bytes,
)
from flintlock.runtime.network.writer import RecordWriter
from flintlock.runtime.tasks.channel_state_io import CheckpointableDeserializer


def test_slicing_a_timestamped_batch_keeps_its_timestamps():
    batch = TimestampedBatch(["a", "b", "c"], [1, 2, 3])
    part = batch[1:]
    assert type(part) is TimestampedBatch
    assert list(part) == ["b", "c"] and part.timestamps == [2, 3]
    assert batch[0] == "a"
    assert list(batch.pairs()) == [("a", 1), ("b", 2), ("c", 3)]


def test_a_timestamped_batch_needs_one_timestamp_per_value():
    with pytest.raises(ValueError, match="2 values but 1 timestamps"):
        TimestampedBatch([1, 2], [5])


def test_a_timestamped_batch_pickles_with_its_timestamps():
    batch = pickle.loads(pickle.dumps(TimestampedBatch([{"k": 1}], [7])))
    assert type(batch) is TimestampedBatch and batch.timestamps == [7]


def test_runs_expand_into_one_batch_in_order_and_plain_lists_stay_as_they_are():
    plain = [1, 2]
    assert expand_runs(plain) is plain
    mixed = expand_runs([0, StampedRun([1, 2], [10, 11]), 3])
    assert type(mixed) is TimestampedBatch
    assert list(mixed) == [0, 1, 2, 3]
    assert mixed.timestamps == [NO_TIMESTAMP, 10, 11, NO_TIMESTAMP]
    assert as_wire_records(mixed) == [StampedRun([0, 1, 2, 3], mixed.timestamps)]
    assert as_wire_records(plain) is plain


@pytest.mark.parametrize("event", [
    Watermark(0), Watermark(MIN_WATERMARK), Watermark(MAX_WATERMARK), Watermark(-5),
    WatermarkStatus(True), WatermarkStatus(False),
])
def test_watermark_events_round_trip_in_a_few_bytes(event):
    assert len(event_bytes(event)) <= 9
    buffer = encode_event(event)
    assert buffer.data_type is DataType.EVENT_BUFFER
    assert decode_event(buffer) == event


def test_a_malformed_watermark_event_is_a_typed_error():
    with pytest.raises(MalformedEventError):
        decode_event(bytes([3, 0, 0]))
    with pytest.raises(MalformedEventError):
        decode_event(bytes([4, 7]))


class _Partition:
    """Collects the buffers a record writer adds, per subpartition."""

    segment_size = 32 * 1024

    def __init__(self, channels):
        self.num_subpartitions = channels
        self.buffers = {c: [] for c in range(channels)}

    def request_buffer(self, subpartition):
        return Buffer(bytearray(self.segment_size), lambda _: None)

    def request_buffer_blocking(self, subpartition, timeout_s=None):
        return self.request_buffer(subpartition)

    def add_buffer(self, subpartition, buffer):
        self.buffers[subpartition].append(buffer)

    def broadcast_event(self, event):
        for channel in range(self.num_subpartitions):
            self.buffers[channel].append(encode_event(event))


def _read(partition, channel):
    """What a consuming task hands its chain, per buffer, for one channel."""
    deserializer = CheckpointableDeserializer()
    out = []
    for buffer in partition.buffers[channel]:
        if buffer.data_type is DataType.DATA_BUFFER:
            out.append(deserializer.deserialize(buffer.view()))
        else:
            out.append(decode_event(buffer))
    return out


def test_timestamps_cross_a_keyed_exchange_with_their_records_and_in_order():
    partition = _Partition(2)
    selector = KeyGroupSelector(lambda record: record[0], 128)
    writer = RecordWriter(partition, selector, buffer_timeout_ms=-1)
    writer.emit_batch([("a", "plain")])
    writer.emit_stamped_batch([("a", 1), ("b", 2), ("a", 3)], [100, 200, 300])
    writer.broadcast_event(Watermark(250))
    writer.close()
    seen = {}
    for channel in range(2):
        for item in _read(partition, channel):
            if isinstance(item, Watermark):
                seen.setdefault(channel, []).append(item)
            else:
                seen.setdefault(channel, []).extend(
                    item.pairs() if type(item) is TimestampedBatch else
                    [(v, NO_TIMESTAMP) for v in item])
    everything = seen[0] + seen[1]
    assert (("a", "plain"), NO_TIMESTAMP) in everything
    assert (("a", 1), 100) in everything and (("a", 3), 300) in everything
    assert (("b", 2), 200) in everything
    channel_of_a = next(c for c in seen if (("a", 1), 100) in seen[c])
    records_of_a = [item for item in seen[channel_of_a] if not isinstance(item, Watermark)]
    assert [r for r in records_of_a if r[0][0] == "a"] == [
        (("a", "plain"), NO_TIMESTAMP), (("a", 1), 100), (("a", 3), 300)]
    assert all(isinstance(seen[c][-1], Watermark) for c in seen)  # after the records


def test_a_broadcast_timestamped_batch_reaches_every_channel():
    partition = _Partition(3)
    writer = RecordWriter(partition, BroadcastSelector(), buffer_timeout_ms=-1)
    writer.emit_stamped_batch(["x", "y"], [1, 2])
    writer.close()
    for channel in range(3):
        (batch,) = _read(partition, channel)
        assert list(batch.pairs()) == [("x", 1), ("y", 2)]


def test_leftover_records_re_encode_with_their_timestamps():
    deserializer = CheckpointableDeserializer()
    data = deserializer.encode(TimestampedBatch(["p", "q"], [4, 5]))
    restored = CheckpointableDeserializer().deserialize(data)
    assert list(restored.pairs()) == [("p", 4), ("q", 5)]


@pytest.mark.parametrize("seed", range(3))
def test_keyed_timestamped_batches_go_where_the_selector_sends_each_record_in_order(seed):
    """The key-cache path of ``emit_stamped_batch`` against ``select_channel`` per record:
    every channel gets exactly its records with their timestamps, in the batch's order, for
    hashable keys and unhashable ones (hashed every time), over several batches."""
    import random

    rng = random.Random(seed)
    partition = _Partition(3)
    selector = KeyGroupSelector(lambda record: record[0], 128)
    writer = RecordWriter(partition, selector, buffer_timeout_ms=-1)
    expected = {channel: [] for channel in range(3)}
    reference = KeyGroupSelector(lambda record: record[0], 128)
    reference.setup(3)
    for _ in range(5):
        values = [(rng.choice(["a", "b", 7, (1, 2), frozenset({3})]), rng.random())
                  for _ in range(rng.randrange(1, 40))]
        values += [([1, 2], "unhashable")] if rng.random() < 0.5 else []
        stamps = [rng.randrange(10**12) for _ in values]
        writer.emit_stamped_batch(values, stamps)
        for value, stamp in zip(values, stamps, strict=True):
            expected[reference.select_channel(value)].append((value, stamp))
    writer.close()
    for channel in range(3):
        got = [pair for batch in _read(partition, channel) for pair in batch.pairs()]
        assert got == expected[channel]
