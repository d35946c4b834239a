import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flintlock.runtime.network.buffer import Buffer, NetworkBufferPool
from flintlock.runtime.network.serialization import (
    CHUNK_HEADER,
    BatchSizer,
    CorruptChannelDataError,
    PickleBatchSerializer,
    RecordDeserializer,
    write_chunk,
)

SEGMENT = 64


def chunks_to_buffers(batches, segment_size=SEGMENT):
    """Writes each batch as a chunk into buffers; returns the emitted buffers' bytes."""
    network = NetworkBufferPool(1024, segment_size)
    pool = network.create_buffer_pool(1, 1024)
    emitted: list[Buffer] = []
    current = None
    serializer = PickleBatchSerializer()
    for batch in batches:
        current = write_chunk(serializer.dumps(batch), current, pool.request_buffer_blocking,
                              emitted.append)
    if current is not None:
        emitted.append(current)
    return [bytes(b.view()) for b in emitted], emitted


RECORDS = st.one_of(
    st.integers(), st.text(max_size=20), st.binary(max_size=400),
    st.tuples(st.integers(), st.text(max_size=5)),
)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(RECORDS, min_size=1, max_size=8), max_size=12),
       st.sampled_from([16, 64, 100]))
def test_any_records_round_trip_in_order(batches, segment_size):
    data, buffers = chunks_to_buffers(batches, segment_size)
    assert all(len(b.segment) == segment_size for b in buffers)
    deserializer = RecordDeserializer()
    out = []
    for chunk in data:
        out.extend(deserializer.deserialize(chunk))
    deserializer.check_complete()
    assert out == [record for batch in batches for record in batch]


def test_huge_record_spans_many_buffers():
    record = bytes(range(256)) * 40
    data, _ = chunks_to_buffers([[record, "tail"]])
    assert len(data) > 100
    deserializer = RecordDeserializer()
    results = [deserializer.deserialize(chunk) for chunk in data]
    assert all(r == [] for r in results[:-1]) and results[-1] == [record, "tail"]


def test_header_never_spans_a_buffer():
    data, _ = chunks_to_buffers([[i] for i in range(40)], segment_size=32)
    for chunk in data:
        assert len(chunk) <= 32
    assert all(len(chunk) > 32 - CHUNK_HEADER.size for chunk in data[:-1])


def test_truncated_stream_is_detected():
    data, _ = chunks_to_buffers([[b"x" * 200]])
    deserializer = RecordDeserializer()
    deserializer.deserialize(data[0])
    assert deserializer.has_partial_chunk
    with pytest.raises(CorruptChannelDataError):
        deserializer.check_complete()
    with pytest.raises(CorruptChannelDataError):
        RecordDeserializer().deserialize(b"\x01\x00")


def test_batch_must_decode_to_a_list():
    bad = pickle.dumps({"not": "a list"})
    with pytest.raises(CorruptChannelDataError):
        RecordDeserializer().deserialize(CHUNK_HEADER.pack(len(bad)) + bad)


class UpperSerializer:
    """A pluggable serializer: newline-joined strings."""

    def dumps(self, records):
        return "\n".join(records).encode()

    def loads(self, data):
        return bytes(data).decode().split("\n")


def test_serializer_is_pluggable():
    network = NetworkBufferPool(8, 64)
    pool = network.create_buffer_pool(1, 8)
    emitted: list[Buffer] = []
    current = write_chunk(UpperSerializer().dumps(["a", "b"]), None,
                          pool.request_buffer_blocking, emitted.append)
    assert current is not None
    assert RecordDeserializer(UpperSerializer()).deserialize(current.view()) == ["a", "b"]


def test_batch_sizer_aims_to_fill_a_buffer():
    sizer = BatchSizer(32 * 1024)
    assert sizer.limit(32 * 1024) == 1
    sizer.observe(1, 10)
    assert sizer.limit(32 * 1024) == 3276
    assert sizer.limit(1000) == 3376
    sizer.observe(10, 10_000)
    assert sizer.bytes_per_record == 0.75 * 10 + 0.25 * 1000
    assert sizer.limit(100) == int((100 + 32 * 1024) / sizer.bytes_per_record)
    sizer.observe(1, 10**9)
    assert sizer.limit(32 * 1024) == 1
