"""Redis Streams source and sink against a real redis-server: split resolution, reading from
checkpointed ids, bounded stops, at-least-once and exactly-once (idempotent) appends."""

import pickle

import pytest
import redis as redis_client

from flintlock.common import Duration
from flintlock.datastream.connectors import Sink, Source
from flintlock.datastream.connectors._redis_sink import StagedBatch, to_fields
from flintlock.datastream.connectors._redis_source import (
    RedisStreamSplit,
    StreamEntry,
    check_start_id,
    parse_id,
)
from flintlock.datastream.connectors.redis import (
    DeliveryGuarantee,
    RedisStreamSink,
    RedisStreamSource,
)

from .fakes import FakeEnumeratorContext, SourceHarness, drain
from .redis_server import redis_server


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with redis_server(tmp_path_factory.mktemp("redis")) as url:
        yield url


@pytest.fixture
def client(server):
    c = redis_client.Redis.from_url(server, decode_responses=True)
    c.flushdb()
    yield c
    c.close()


def _fill(client, stream, values, field="value"):
    return [client.xadd(stream, {field: v}) for v in values]


def _values(client, stream, field="value"):
    return [fields[field] for _, fields in client.xrange(stream)]


def _source(url, *streams, **options):
    builder = RedisStreamSource.builder().set_url(url).set_streams(*streams)
    if options.get("bounded"):
        builder.set_bounded()
    if "start" in options:
        builder.set_starting_id(options["start"])
    return builder.set_value_field(options.get("field", "value")).build()


def test_ids_parse_and_start_ids_are_checked():
    assert parse_id("1700-3") == (1700, 3) and parse_id("5") == (5, 0)
    assert check_start_id("0") == "0-0" and check_start_id("$") == "$"
    with pytest.raises(ValueError):
        check_start_id("latest")


def test_split_is_finished_at_its_stop_id():
    assert RedisStreamSplit("s", "10-1", "10-1").finished
    assert not RedisStreamSplit("s", "10-0", "10-1").finished
    assert not RedisStreamSplit("s", "99-0").finished


def test_bounded_source_reads_up_to_the_entries_present_at_the_start(server, client):
    _fill(client, "a", [f"a{i}" for i in range(30)])
    _fill(client, "b", ["b0"])
    source = _source(server, "a", "b", "empty", bounded=True)
    assert isinstance(source, Source) and source.is_bounded()
    harness = SourceHarness(source, 2)
    _fill(client, "a", ["after the start"])
    assert sorted(harness.run_to_end()) == sorted([f"a{i}" for i in range(30)] + ["b0"])


def test_entries_without_value_field_are_stream_entries(server, client):
    [entry_id] = _fill(client, "s", ["x"])
    source = RedisStreamSource.builder().set_url(server).set_streams("s").set_bounded().build()
    harness = SourceHarness(source, 1)
    assert harness.run_to_end() == [StreamEntry("s", entry_id, {"value": "x"})]


def test_a_restore_rereads_exactly_the_entries_after_the_checkpointed_ids(server, client):
    _fill(client, "s", [str(i) for i in range(100)])
    harness = SourceHarness(_source(server, "s", "t", bounded=True), 2)
    _fill(client, "t", ["late"])
    harness.poll(0, 10)
    harness.poll(1, 10)
    snapshot = harness.checkpoint(1)
    harness.poll(0, 25)
    harness.restore(pickle.loads(pickle.dumps(snapshot)), 3)
    assert sorted(harness.run_to_end(max_records=7)) == sorted(str(i) for i in range(100))


def test_start_from_end_reads_only_new_entries_and_unbounded_never_ends(server, client):
    _fill(client, "s", ["old"])
    source = _source(server, "s", start="$")
    assert not source.is_bounded()
    ctx = FakeEnumeratorContext(1)
    enumerator = source.create_enumerator(1, None)
    enumerator.start(ctx)
    enumerator.add_reader(0)
    reader = source.create_reader(0, 1)
    reader.add_splits(ctx.assigned[0])
    _fill(client, "s", ["new"])
    assert reader.poll(10) == (["new"], False)
    assert reader.poll(10) == ([], False)
    assert ctx.no_more == set()
    reader.close()


def test_a_bounded_split_whose_entries_were_deleted_finishes(server, client):
    ids = _fill(client, "s", ["1", "2", "3"])
    reader = _source(server, "s").create_reader(0, 1)
    reader.add_splits([RedisStreamSplit("s", ids[0], ids[2])])
    reader.notify_no_more_splits()
    client.xdel("s", ids[1], ids[2])
    assert drain(reader) == []
    reader.close()


def test_to_fields():
    assert to_fields({"a": "1"}, "value") == {"a": "1"}
    assert to_fields("x", "v") == {"v": "x"}
    assert to_fields(3, "v") == {"v": "3"}


def _sink(url, exactly_once, **options):
    builder = RedisStreamSink.builder().set_url(url).set_stream("out")
    if exactly_once:
        builder.set_delivery_guarantee(DeliveryGuarantee.EXACTLY_ONCE)
    if "max_len" in options:
        builder.set_max_len(options["max_len"])
    return builder.build()


def test_at_least_once_appends_at_once_and_keeps_no_state(server, client):
    sink = _sink(server, False)
    assert isinstance(sink, Sink)
    writer = sink.create_writer(0, 1)
    writer.restore([])
    writer.write(["a", "b"])
    assert _values(client, "out") == ["a", "b"]
    assert writer.snapshot_state(1) == []
    writer.write([{"value": "c", "extra": "1"}])
    writer.close()
    assert _values(client, "out") == ["a", "b", "c"]


def test_max_len_trims_the_stream(server, client):
    writer = _sink(server, False, max_len=10).create_writer(0, 1)
    for i in range(50):
        writer.write([str(i) for i in range(i * 10, i * 10 + 10)])
    writer.close()
    assert client.xlen("out") < 500


def test_exactly_once_appends_only_when_the_checkpoint_completes(server, client):
    writer = _sink(server, True).create_writer(0, 1)
    writer.restore([])
    writer.write(["a", "b"])
    state = writer.snapshot_state(1)
    assert [type(s) for s in state] == [StagedBatch]
    writer.write(["c"])
    assert _values(client, "out") == []
    writer.commit(1)
    assert _values(client, "out") == ["a", "b"]
    writer.commit(1)
    writer.snapshot_state(2)
    writer.commit(2)
    assert _values(client, "out") == ["a", "b", "c"]
    writer.close()


def test_exactly_once_commit_after_restore_does_not_duplicate(server, client):
    writer = _sink(server, True).create_writer(0, 1)
    writer.restore([])
    writer.write(["a"])
    state = writer.snapshot_state(1)
    writer.commit(1)
    writer.close()
    again = _sink(server, True).create_writer(0, 1)
    again.restore(pickle.loads(pickle.dumps(state)))
    again.commit(1)
    assert _values(client, "out") == ["a"]
    assert client.ttl("flintlock:redis-sink:committed:" + state[0].token) > 0
    again.close()


def test_exactly_once_restore_appends_a_batch_whose_commit_was_lost(server, client):
    writer = _sink(server, True).create_writer(0, 1)
    writer.restore([])
    writer.write(["a"])
    state = writer.snapshot_state(1)
    writer.close()
    again = _sink(server, True).create_writer(0, 1)
    again.restore(state)
    assert _values(client, "out") == ["a"]
    again.close()


def test_exactly_once_without_checkpoints_appends_at_end_input(server, client):
    writer = _sink(server, True).create_writer(0, 1)
    writer.restore([])
    writer.write(["a"])
    writer.end_input()
    writer.end_input()
    writer.close()
    assert _values(client, "out") == ["a"]


def test_exactly_once_with_checkpointing_leaves_the_tail_to_the_final_checkpoint(server,
                                                                                   client):
    writer = _sink(server, True).create_writer(0, 1)
    writer.set_checkpointing(True)
    writer.restore([])
    writer.write(["tail"])
    writer.end_input()
    assert _values(client, "out") == []
    writer.snapshot_state(1)
    writer.commit(1)
    assert _values(client, "out") == ["tail"]
    writer.close()


def test_exactly_once_told_nothing_after_a_checkpoint_leaves_the_tail(server, client):
    writer = _sink(server, True).create_writer(0, 1)
    writer.restore([])
    writer.snapshot_state(1)
    writer.write(["tail"])
    writer.end_input()
    assert _values(client, "out") == []
    writer.snapshot_state(2)
    writer.commit(2)
    assert _values(client, "out") == ["tail"]
    writer.close()


def test_builder_validation(server):
    with pytest.raises(ValueError):
        RedisStreamSink.builder().build()
    with pytest.raises(ValueError):
        RedisStreamSink.builder().set_delivery_guarantee(DeliveryGuarantee.NONE)
    with pytest.raises(ValueError):
        RedisStreamSink.builder().set_marker_ttl(Duration.of_millis(5))
    with pytest.raises(ValueError):
        RedisStreamSink.builder().set_max_len(0)
    with pytest.raises(ValueError):
        RedisStreamSource.builder().build()
    with pytest.raises(ValueError):
        RedisStreamSource.builder().set_streams("").build()
    sink = (RedisStreamSink.builder().set_stream("s").set_marker_prefix("p:")
            .set_marker_ttl(Duration.of_seconds(60)).set_value_field("v").build())
    assert (sink.settings.marker_prefix, sink.settings.marker_ttl_s,
            sink.settings.value_field) == ("p:", 60, "v")
