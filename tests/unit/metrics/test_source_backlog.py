"""Sources' backlog gauges: the Kafka reader's ``pendingRecords`` (stop offsets, or the high
watermarks librdkafka cached from its fetches; against librdkafka's mock cluster) and the file
reader's ``pendingBytes`` (sizes less positions, byte-oriented charsets only)."""

import uuid

import pytest

from flintlock.common.serialization import SimpleStringSchema
from flintlock.datastream.connectors._file_source import FileSplit, TextLineReader
from flintlock.datastream.connectors._kafka_source import KafkaPartitionReader, KafkaPartitionSplit
from flintlock.testing.waiting import wait_for
from tests.unit.connectors.kafka_broker import kafka_broker


@pytest.fixture(scope="module")
def broker():
    with kafka_broker() as running:
        yield running


def _topic_with(broker, count):
    from confluent_kafka import Producer

    topic = f"pending-{uuid.uuid4().hex[:8]}"
    broker.create_topic(topic, 1)
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    for i in range(count):
        producer.produce(topic, f"v{i}".encode(), partition=0)
    assert producer.flush(10) == 0
    return topic


def _reader(broker):
    return KafkaPartitionReader({"bootstrap.servers": broker.bootstrap}, SimpleStringSchema(),
                                commit_on_checkpoint=False)


def _poll_some(reader, max_records, bound_s=20.0):
    return list(wait_for(lambda: reader.poll(max_records)[0], bool, bound_s, "no record"))


def test_a_bounded_kafka_split_has_its_stop_offset_less_its_next_offset(broker):
    topic = _topic_with(broker, 10)
    reader = _reader(broker)
    reader.restore([KafkaPartitionSplit(topic, 0, 2, 9)])
    try:
        assert reader.pending_records() == 7
        got = _poll_some(reader, 3)
        assert reader.pending_records() == 7 - len(got)
    finally:
        reader.close()


def test_an_unbounded_kafka_split_counts_up_to_the_cached_high_watermark(broker):
    topic = _topic_with(broker, 10)
    reader = _reader(broker)
    reader.add_splits([KafkaPartitionSplit(topic, 0, 0)])
    try:
        assert reader.pending_records() == 0  # no fetch yet: the end is not known
        got = _poll_some(reader, 4)
        assert reader.pending_records() == 10 - len(got)
    finally:
        reader.close()


def test_a_file_reader_reports_the_bytes_left_in_its_files(tmp_path):
    first, second = tmp_path / "a.txt", tmp_path / "b.txt"
    first.write_text("one\ntwo\nthree\n")  # 14 bytes
    second.write_text("four\n")  # 5 bytes
    reader = TextLineReader("UTF-8")
    reader.add_splits([FileSplit(str(first)), FileSplit(str(second))])
    assert reader.pending_bytes() == 19
    records, _ = reader.poll(2)
    assert records == ["one", "two"] and reader.pending_bytes() == 19 - 8
    reader.notify_no_more_splits()
    records, finished = reader.poll(10)
    assert finished and reader.pending_bytes() == 0
    reader.restore([FileSplit(str(first), 4)])  # a restored position counts from there
    assert reader.pending_bytes() == 10


def test_a_file_reader_without_byte_offsets_reports_no_bytes():
    assert not hasattr(TextLineReader("UTF-16"), "pending_bytes")
    assert hasattr(TextLineReader("latin-1"), "pending_bytes")
