"""KafkaSource / KafkaSink pieces against librdkafka's mock cluster (kafka_broker.py): the
builders' errors, offset initializers, the reader's malformed-record error, and the exactly-once
writer's two-phase commit and recovery, call by call."""

import uuid

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from flintlock.common.serialization import SimpleStringSchema
from flintlock.datastream.connectors._kafka_sink import StagedBatch, WriterState
from flintlock.datastream.connectors._kafka_source import (
    KafkaPartitionReader,
    KafkaPartitionSplit,
    OffsetResolver,
    PartitionDiscovery,
    _consumer,
)
from flintlock.datastream.connectors.kafka import (
    DeliveryGuarantee,
    KafkaDeserializationError,
    KafkaOffsetResetError,
    KafkaOffsetResetStrategy,
    KafkaOffsetsInitializer,
    KafkaRecord,
    KafkaRecordDeserializationSchema,
    KafkaRecordSerializationSchema,
    KafkaSink,
    KafkaSource,
    KafkaSourceError,
    KafkaTopicPartition,
)
from flintlock.testing.waiting import poll_until

from .kafka_broker import kafka_broker, real_kafka_bootstrap


@pytest.fixture(scope="module")
def broker():
    with kafka_broker() as running:
        yield running


def _topic(broker, partitions=2):
    name = f"u-{uuid.uuid4().hex[:8]}"
    broker.create_topic(name, partitions)
    return name


def _produce(bootstrap, topic, values, partition=0, start_ts=1000):
    producer = Producer({"bootstrap.servers": bootstrap})
    for i, value in enumerate(values):
        producer.produce(topic, value, partition=partition, timestamp=start_ts + i)
    assert producer.flush(10) == 0


def _values(bootstrap, topic, partition=0):
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "check"})
    try:
        end = consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=10)[1]
        consumer.assign([TopicPartition(topic, partition, 0)])
        got, position = [], 0
        for _ in range(200):
            if position >= end:
                break
            for message in consumer.consume(100, timeout=0.1):
                got.append(message.value().decode())
            position = consumer.position([TopicPartition(topic, partition)])[0].offset
        return got
    finally:
        consumer.close()


def test_source_builder_names_what_is_missing():
    builder = KafkaSource.builder()
    with pytest.raises(ValueError, match="bootstrap servers"):
        builder.build()
    builder.set_bootstrap_servers("127.0.0.1:1")
    with pytest.raises(ValueError, match="topics"):
        builder.build()
    builder.set_topics("a")
    with pytest.raises(ValueError, match="deserializer"):
        builder.build()
    builder.set_value_only_deserializer(SimpleStringSchema())
    builder.set_starting_offsets(KafkaOffsetsInitializer.committed_offsets())
    with pytest.raises(ValueError, match="set_group_id"):
        builder.build()
    with pytest.raises(ValueError, match="regular expression"):
        builder.set_topic_pattern("(")
    with pytest.raises(TypeError, match="KafkaOffsetsInitializer"):
        builder.set_starting_offsets("earliest")
    with pytest.raises(TypeError, match="deserialize"):
        builder.set_value_only_deserializer(object())
    with pytest.raises(ValueError, match=r"partition\.discovery\.interval\.ms"):
        (builder.set_group_id("g").set_property("partition.discovery.interval.ms", "soon")
         .build())


def test_sink_builder_names_what_is_missing():
    serializer = (KafkaRecordSerializationSchema.builder().set_topic("out")
                  .set_value_serialization_schema(SimpleStringSchema()).build())
    with pytest.raises(ValueError, match="record serializer"):
        KafkaSink.builder().set_bootstrap_servers("b:1").build()
    with pytest.raises(ValueError, match="transactional_id_prefix"):
        (KafkaSink.builder().set_bootstrap_servers("b:1").set_record_serializer(serializer)
         .set_delivery_guarantee(DeliveryGuarantee.EXACTLY_ONCE).build())
    with pytest.raises(ValueError, match="value schema"):
        KafkaRecordSerializationSchema.builder().set_topic("t").build()
    with pytest.raises(TypeError, match="DeliveryGuarantee"):
        KafkaSink.builder().set_delivery_guarantee("EXACTLY_ONCE")
    with pytest.raises(ValueError, match="partition"):
        KafkaTopicPartition("t", -1)


def test_offsets_initializers_resolve_against_the_broker(broker):
    topic = _topic(broker)
    _produce(broker.bootstrap, topic, [b"a", b"b", b"c", b"d"], start_ts=1000)
    consumer = _consumer({"bootstrap.servers": broker.bootstrap, "group.id": "resolver"})
    try:
        resolver = OffsetResolver(consumer, "resolver")
        tps = [(topic, 0), (topic, 1)]
        assert resolver.resolve(KafkaOffsetsInitializer.earliest().spec, tps) == [0, 0]
        assert resolver.resolve(KafkaOffsetsInitializer.latest().spec, tps) == [4, 0]
        # The mock answers every lookup by time with "no such record" (-1), so only the
        # fallback shows here: no record at or after the time starts at the end.
        assert resolver.resolve(KafkaOffsetsInitializer.timestamp(1002).spec, tps) == [4, 0]
        chosen = KafkaOffsetsInitializer.offsets({KafkaTopicPartition(topic, 0): 3},
                                                 KafkaOffsetResetStrategy.LATEST)
        assert resolver.resolve(chosen.spec, tps) == [3, 0]
        committed = KafkaOffsetsInitializer.committed_offsets(KafkaOffsetResetStrategy.EARLIEST)
        assert resolver.resolve(committed.spec, tps) == [0, 0]
        consumer.commit(offsets=[TopicPartition(topic, 0, 2)], asynchronous=False)
        assert resolver.resolve(committed.spec, tps) == [2, 0]
        with pytest.raises(KafkaOffsetResetError, match=f"{topic}-1 has no committed offset"):
            resolver.resolve(KafkaOffsetsInitializer.committed_offsets().spec, tps)
    finally:
        consumer.close()


def test_discovery_makes_each_partition_a_split_once(broker):
    topic = _topic(broker, partitions=3)
    _produce(broker.bootstrap, topic, [b"x"] * 5, partition=1)
    discovery = PartitionDiscovery({"bootstrap.servers": broker.bootstrap}, (topic,), None,
                                   KafkaOffsetsInitializer.latest().spec,
                                   KafkaOffsetsInitializer.latest().spec)
    splits = discovery.initial()
    assert splits == [KafkaPartitionSplit(topic, 0, 0, 0), KafkaPartitionSplit(topic, 1, 5, 5),
                      KafkaPartitionSplit(topic, 2, 0, 0)]
    assert discovery.discover() == []
    restored = PartitionDiscovery({"bootstrap.servers": broker.bootstrap}, (topic,), None,
                                  KafkaOffsetsInitializer.earliest().spec, None,
                                  discovery.snapshot())
    assert restored.discover() == []


def _poll_all(reader, timeout_s=20.0):
    """Polls until the reader says it is finished (or the time is up): the (value, timestamp)
    pairs read, and whether it finished."""
    got = []

    def finished():
        records, done = reader.poll(100)
        got.extend(zip(records, records.timestamps, strict=True))
        return done

    return got, poll_until(finished, timeout_s)


def _poll_values(reader, count, timeout_s=20.0):
    """Polls until ``count`` values were read (or the time is up): the values read."""
    got = []
    poll_until(lambda: got.extend(reader.poll(100)[0]) or len(got) >= count, timeout_s)
    return got


def test_reader_resumes_at_the_split_offset_and_stops_at_the_stop_offset(broker):
    topic = _topic(broker)
    _produce(broker.bootstrap, topic, [f"v{i}".encode() for i in range(10)], start_ts=5000)
    reader = KafkaPartitionReader({"bootstrap.servers": broker.bootstrap},
                                  SimpleStringSchema(), commit_on_checkpoint=False)
    reader.restore([KafkaPartitionSplit(topic, 0, 4, 8)])
    reader.notify_no_more_splits()
    try:
        got, finished = _poll_all(reader)
    finally:
        reader.close()
    assert finished
    assert got == [(f"v{i}", 5000 + i) for i in range(4, 8)]
    assert reader.snapshot_state(1) == []


class Strict:
    def deserialize(self, data):
        if data == b"bad":
            raise ValueError("not a number")
        return int(data)


def test_a_malformed_record_names_topic_partition_and_offset(broker):
    topic = _topic(broker)
    _produce(broker.bootstrap, topic, [b"1", b"2", b"bad", b"4"])
    reader = KafkaPartitionReader({"bootstrap.servers": broker.bootstrap}, Strict(), False)
    reader.add_splits([KafkaPartitionSplit(topic, 0, 0, 4)])
    try:
        with pytest.raises(KafkaDeserializationError) as failed:
            _poll_all(reader)
    finally:
        reader.close()
    assert (failed.value.topic, failed.value.partition, failed.value.offset) == (topic, 0, 2)
    assert f"{topic}-0 offset 2" in str(failed.value)


def _eo_sink(bootstrap, topic, prefix):
    serializer = (KafkaRecordSerializationSchema.builder().set_topic(topic)
                  .set_value_serialization_schema(SimpleStringSchema()).build())
    return (KafkaSink.builder().set_bootstrap_servers(bootstrap)
            .set_record_serializer(serializer)
            .set_delivery_guarantee(DeliveryGuarantee.EXACTLY_ONCE)
            .set_transactional_id_prefix(prefix).build())


def test_exactly_once_writer_writes_only_on_commit(broker):
    topic = _topic(broker, partitions=1)
    writer = _eo_sink(broker.bootstrap, topic, f"p{uuid.uuid4().hex[:6]}").create_writer(0, 1)
    writer.set_checkpointing(True)
    writer.restore([])
    writer.write(["a", "b"])
    state = writer.snapshot_state(1)
    writer.write(["c"])
    assert _values(broker.bootstrap, topic) == []
    assert state == [WriterState(writer.transactional_id,
                                 (StagedBatch(1, ((topic, None, b"a", None),
                                                  (topic, None, b"b", None))),), topic)]
    writer.commit(1)
    assert _values(broker.bootstrap, topic) == ["a", "b"]
    writer.snapshot_state(2)
    writer.commit(2)
    writer.end_input()  # checkpointing on: the final checkpoint publishes the tail
    writer.close()
    assert _values(broker.bootstrap, topic) == ["a", "b", "c"]


def test_a_restore_writes_what_was_not_committed(broker):
    topic = _topic(broker, partitions=1)
    sink = _eo_sink(broker.bootstrap, topic, f"p{uuid.uuid4().hex[:6]}")
    first = sink.create_writer(0, 2)
    first.restore([])
    first.write(["one"])
    first.snapshot_state(5)
    first.commit(5)
    first.write(["two"])
    state_6 = first.snapshot_state(6)  # checkpoint 6 completes, its commit never runs
    first.close()
    assert _values(broker.bootstrap, topic) == ["one"]
    other = sink.create_writer(1, 2)
    other.restore([])
    other.write(["three"])
    state_7 = other.snapshot_state(7)
    other.close()

    # Restored at parallelism 1: one writer gets both entries and commits what they staged,
    # each in a transaction of the entry's own (fenced) id; its own id is a new one.
    restored = sink.create_writer(0, 1)
    restored.restore(state_6 + state_7)
    assert restored.transactional_id not in {state_6[0].transactional_id,
                                             state_7[0].transactional_id}
    assert _values(broker.bootstrap, topic) == ["one", "two", "three"]
    assert restored.snapshot_state(8) == [WriterState(restored.transactional_id, (), None)]
    restored.commit(8)
    restored.close()
    assert _values(broker.bootstrap, topic) == ["one", "two", "three"]


@pytest.mark.skipif(real_kafka_bootstrap() is None,
                    reason="the mock cluster ignores offsets committed in transactions (the "
                           "commit marker): set FLINTLOCK_KAFKA_BOOTSTRAP to a real broker")
def test_a_restore_drops_a_batch_whose_transaction_was_committed():
    from confluent_kafka.admin import AdminClient, NewTopic

    bootstrap = real_kafka_bootstrap()
    topic = f"flintlock-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})  # alive until the topic exists
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    sink = _eo_sink(bootstrap, topic, f"p{uuid.uuid4().hex[:6]}")
    first = sink.create_writer(0, 1)
    first.restore([])
    first.write(["one"])
    state_5 = first.snapshot_state(5)
    first.commit(5)  # committed, then the job fails and restores checkpoint 5
    first.close()
    restored = sink.create_writer(0, 1)
    restored.restore(state_5)  # its marker says checkpoint 5 is in: nothing written again
    restored.close()
    assert _values(bootstrap, topic) == ["one"]


class KeyAndPlace(KafkaRecordDeserializationSchema):
    def deserialize(self, record):
        if record.value == b"skip":
            return None
        return (record.topic, record.partition, record.offset, record.key, record.value,
                record.timestamp, record.headers)


def test_a_record_deserializer_sees_key_place_time_and_headers(broker):
    topic = _topic(broker)
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    producer.produce(topic, b"v0", b"k0", partition=1, timestamp=7000, headers=[("h", b"x")])
    producer.produce(topic, b"skip", b"k1", partition=1, timestamp=7001)
    producer.produce(topic, b"v2", None, partition=1, timestamp=7002)
    assert producer.flush(10) == 0
    source = (KafkaSource.builder().set_bootstrap_servers(broker.bootstrap).set_topics(topic)
              .set_deserializer(KeyAndPlace()).build())
    reader = source.create_reader(0, 1)
    reader.add_splits([KafkaPartitionSplit(topic, 1, 0, 3)])
    reader.notify_no_more_splits()
    try:
        got, finished = _poll_all(reader)
    finally:
        reader.close()
    assert finished
    assert [value for value, _ in got] == [
        (topic, 1, 0, b"k0", b"v0", 7000, (("h", b"x"),)),
        (topic, 1, 2, None, b"v2", 7002, ())]
    value_only = KafkaRecordDeserializationSchema.value_only(SimpleStringSchema())
    with pytest.raises(TypeError, match="set_value_only_deserializer"):
        KafkaSource.builder().set_deserializer(SimpleStringSchema())
    assert value_only.deserialize(KafkaRecord(topic, 0, 0, None, None, b"abc", ())) == "abc"


def test_set_partitions_reads_exactly_those_and_excludes_other_subscriptions(broker):
    topic = _topic(broker, partitions=3)
    source = (KafkaSource.builder().set_bootstrap_servers(broker.bootstrap)
              .set_partitions({KafkaTopicPartition(topic, 2), KafkaTopicPartition(topic, 0),
                               KafkaTopicPartition(topic, 9)})
              .set_value_only_deserializer(SimpleStringSchema()).build())
    enumerator = source.create_enumerator(1, None)
    assigned = []

    class Context:
        parallelism = 1

        def assign_splits(self, subtask, splits):
            assigned.extend(splits)

        def signal_no_more_splits(self, subtask):
            pass

        def call_periodically(self, interval_ms, callback):
            pass

    enumerator.start(Context())
    enumerator.add_reader(0)
    assert [(s.topic, s.partition) for s in assigned] == [(topic, 0), (topic, 2)]
    with pytest.raises(ValueError, match="already reads topics"):
        KafkaSource.builder().set_topics("a").set_topic_pattern("b.*")
    with pytest.raises(ValueError, match="already reads partitions"):
        KafkaSource.builder().set_partitions({KafkaTopicPartition("a", 0)}).set_topics("a")


@pytest.mark.parametrize("starting, expected", [
    (KafkaOffsetsInitializer.earliest(), ["a", "b", "c"]),
    (KafkaOffsetsInitializer.committed_offsets(), KafkaSourceError),
])
def test_an_offset_the_broker_no_longer_has_resets_as_the_starting_offsets_say(
        broker, starting, expected):
    topic = _topic(broker, partitions=1)
    _produce(broker.bootstrap, topic, [b"a", b"b", b"c"])
    source = (KafkaSource.builder().set_bootstrap_servers(broker.bootstrap).set_topics(topic)
              .set_group_id("resets").set_starting_offsets(starting)
              .set_value_only_deserializer(SimpleStringSchema()).build())
    reader = source.create_reader(0, 1)
    reader.add_splits([KafkaPartitionSplit(topic, 0, 100)])  # past the log's end
    try:
        if expected is KafkaSourceError:
            with pytest.raises(KafkaSourceError, match=f"{topic}-0"):
                _poll_values(reader, 1)  # raises before any value comes
        else:
            assert _poll_values(reader, 3) == expected
    finally:
        reader.close()


def test_exactly_once_with_a_topic_selector_marks_commits_on_the_first_topic(broker):
    evens, odds = _topic(broker, partitions=1), _topic(broker, partitions=1)
    serializer = (KafkaRecordSerializationSchema.builder()
                  .set_topic_selector(lambda n: odds if n % 2 else evens)
                  .set_value_serialization_schema(_Text()).build())
    sink = (KafkaSink.builder().set_bootstrap_servers(broker.bootstrap)
            .set_record_serializer(serializer)
            .set_delivery_guarantee(DeliveryGuarantee.EXACTLY_ONCE)
            .set_transactional_id_prefix(f"sel{uuid.uuid4().hex[:6]}").build())
    writer = sink.create_writer(0, 1)
    writer.restore([])
    writer.write([3, 4, 5])
    (state,) = writer.snapshot_state(1)
    assert state.marker_topic == odds
    writer.commit(1)
    writer.close()
    assert (_values(broker.bootstrap, evens), _values(broker.bootstrap, odds)) == (
        ["4"], ["3", "5"])


class _Text:
    def serialize(self, value):
        return str(value).encode()


def test_client_ids_carry_the_prefix():
    def source(**props):
        builder = (KafkaSource.builder().set_bootstrap_servers("127.0.0.1:1").set_topics("t")
                   .set_value_only_deserializer(SimpleStringSchema()))
        for key, value in props.items():
            builder = builder.set_client_id_prefix(value) if key == "prefix" else \
                builder.set_property(key, value)
        return builder.build()

    def reader_id(built, subtask):
        return built.create_reader(subtask, 3)._config["client.id"]

    def enumerator_id(built):
        return built.create_enumerator(1, None)._discovery._config["client.id"]

    named = source(prefix="orders-job")
    assert (reader_id(named, 2), enumerator_id(named)) == ("orders-job-2",
                                                            "orders-job-enumerator")
    assert reader_id(source(), 0) == "flintlock-kafka-source-0"
    assert reader_id(source(**{"client.id.prefix": "by-property"}), 1) == "by-property-1"
    assert "client.id.prefix" not in named.create_reader(0, 1)._config  # not librdkafka's
    with pytest.raises(ValueError, match="client id prefix"):
        KafkaSource.builder().set_client_id_prefix("")


class _TimesConsumer:
    """Answers lookups by time as a broker does (the mock cluster cannot: it answers every
    one with -1, "no record at or after that time")."""

    def __init__(self, found, end):
        self.found, self.end, self.asked = found, end, []

    def offsets_for_times(self, partitions, timeout):
        self.asked.extend((tp.topic, tp.partition, tp.offset) for tp in partitions)
        return [TopicPartition(tp.topic, tp.partition, self.found[tp.partition])
                for tp in partitions]

    def get_watermark_offsets(self, partition, timeout, cached):
        return 0, self.end


def test_timestamp_offsets_are_the_brokers_answer_or_the_end_where_there_is_none():
    consumer = _TimesConsumer({0: 7, 1: -1}, end=42)
    resolver = OffsetResolver(consumer, None)
    spec = KafkaOffsetsInitializer.timestamp(1_700_000_000_000).spec
    assert resolver.resolve(spec, [("t", 0), ("t", 1)]) == [7, 42]
    assert consumer.asked == [("t", 0, 1_700_000_000_000), ("t", 1, 1_700_000_000_000)]
    with pytest.raises(ValueError, match="epoch milliseconds"):
        KafkaOffsetsInitializer.timestamp(-1)


@pytest.mark.skipif(real_kafka_bootstrap() is None,
                    reason="the mock cluster answers every offsets-for-times lookup with -1 "
                           "(no record), so only a real broker shows timestamp() finding a "
                           "record: set FLINTLOCK_KAFKA_BOOTSTRAP")
def test_timestamp_offsets_against_a_real_broker():
    from confluent_kafka.admin import AdminClient, NewTopic

    bootstrap = real_kafka_bootstrap()
    topic = f"flintlock-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})  # alive until the topic exists
    admin.create_topics([NewTopic(topic, 2, 1)])[topic].result(30)
    _produce(bootstrap, topic, [b"a", b"b", b"c", b"d"], start_ts=1000)
    consumer = _consumer({"bootstrap.servers": bootstrap})
    try:
        resolver = OffsetResolver(consumer, None)
        tps = [(topic, 0), (topic, 1)]
        assert resolver.resolve(KafkaOffsetsInitializer.timestamp(1002).spec, tps) == [2, 0]
        assert resolver.resolve(KafkaOffsetsInitializer.timestamp(5000).spec, tps) == [4, 0]
    finally:
        consumer.close()


def test_ignored_parse_errors_are_skipped_counted_and_read_past(broker):
    import json

    from flintlock.common.typeinfo import Types
    from flintlock.datastream.formats.json import JsonRowDeserializationSchema

    row = Types.ROW_NAMED(["customer", "amount"], [Types.STRING(), Types.LONG()])
    topic = _topic(broker, partitions=1)
    _produce(broker.bootstrap, topic, [json.dumps({"customer": "a", "amount": 1}).encode(),
                                       b'{"customer": "b", "amount": "lots"}', b"not json",
                                       json.dumps({"customer": "c", "amount": 3}).encode()])
    lenient = (JsonRowDeserializationSchema.builder().type_info(row).ignore_parse_errors()
               .build())
    reader = KafkaPartitionReader({"bootstrap.servers": broker.bootstrap}, lenient, False)
    reader.add_splits([KafkaPartitionSplit(topic, 0, 0)])  # unbounded: stays in the state
    try:
        got = _poll_values(reader, 2)
        assert [(r["customer"], r["amount"]) for r in got] == [("a", 1), ("c", 3)]
        assert lenient.skipped_records == 2
        assert reader.snapshot_state(1) == [KafkaPartitionSplit(topic, 0, 4)]
    finally:
        reader.close()
    strict = JsonRowDeserializationSchema.builder().type_info(row).build()
    reader = KafkaPartitionReader({"bootstrap.servers": broker.bootstrap}, strict, False)
    reader.add_splits([KafkaPartitionSplit(topic, 0, 0, 4)])
    try:
        with pytest.raises(KafkaDeserializationError,
                           match=f"{topic}-0 offset 1: FormatParseError: field 'amount'"):
            _poll_all(reader)
    finally:
        reader.close()


class _RecordingProducer:
    """A real producer (to the mock cluster) that logs each transactional call with its
    transactional id; stands in for confluent_kafka.Producer in one test."""

    calls = []
    real = Producer

    def __init__(self, config):
        self._producer = self.real(config)
        self._id = config.get("transactional.id")

    def _log(self, name, *args):
        self.calls.append((self._id, name))
        return getattr(self._producer, name)(*args)

    def init_transactions(self, *args):
        return self._log("init_transactions", *args)

    def begin_transaction(self, *args):
        return self._log("begin_transaction", *args)

    def send_offsets_to_transaction(self, *args):
        return self._log("send_offsets_to_transaction", *args)

    def commit_transaction(self, *args):
        return self._log("commit_transaction", *args)

    def abort_transaction(self, *args):
        return self._log("abort_transaction", *args)

    def produce(self, *args, **kwargs):
        self.calls.append((self._id, "produce"))
        return self._producer.produce(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._producer, name)


def test_exactly_once_transactional_calls_per_checkpoint_and_at_a_restore(broker,
                                                                         monkeypatch):
    import confluent_kafka

    monkeypatch.setattr(confluent_kafka, "Producer", _RecordingProducer)
    calls = _RecordingProducer.calls
    calls.clear()
    topic = _topic(broker, partitions=1)
    sink = _eo_sink(broker.bootstrap, topic, f"p{uuid.uuid4().hex[:6]}")
    writer = sink.create_writer(0, 1)
    writer.restore([])
    own = writer.transactional_id
    assert calls == [(own, "init_transactions")]  # at the start, as Flink's writer
    calls.clear()
    writer.write(["a", "b"])
    writer.snapshot_state(1)
    writer.write(["c"])
    assert calls == []  # pre-commit: staged in the state, nothing sent
    one_transaction = ["begin_transaction", "produce", "produce",
                       "send_offsets_to_transaction", "commit_transaction"]
    writer.commit(1)  # notify-complete of checkpoint 1: its batch only, in one transaction
    assert calls == [(own, c) for c in one_transaction]
    calls.clear()
    state_2 = writer.snapshot_state(2)
    writer.close()  # checkpoint 2 completes but its commit never runs: the job fails
    assert calls == []

    restored = sink.create_writer(0, 1)
    restored.restore(state_2)  # fences the failed writer's id, commits batch 2 under it
    assert restored.transactional_id != own
    assert calls == [(own, "init_transactions"), (own, "begin_transaction"), (own, "produce"),
                     (own, "send_offsets_to_transaction"), (own, "commit_transaction"),
                     (restored.transactional_id, "init_transactions")]
    calls.clear()
    restored.snapshot_state(3)
    restored.commit(3)  # nothing staged: no transaction
    restored.close()
    assert calls == []
    assert _values(broker.bootstrap, topic) == ["a", "b", "c"]


def test_at_least_once_writer_sends_keys_and_keeps_a_key_on_one_partition(broker):
    topic = _topic(broker, partitions=4)
    serializer = (KafkaRecordSerializationSchema.builder().set_topic(topic)
                  .set_key_serialization_schema(_Text())
                  .set_value_serialization_schema(_Text()).build())
    sink = (KafkaSink.builder().set_bootstrap_servers(broker.bootstrap)
            .set_record_serializer(serializer)
            .set_delivery_guarantee(DeliveryGuarantee.AT_LEAST_ONCE).build())
    writer = sink.create_writer(0, 1)
    writer.restore([])
    writer.write([n % 5 for n in range(100)])
    writer.snapshot_state(1)  # at least once: returns once the broker has every record
    writer.close()
    partitions_of = {}
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "keys"})
    try:
        for p in range(4):
            end = consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1]
            consumer.assign([TopicPartition(topic, p, 0)])
            got = []
            for _ in range(200):
                if len(got) >= end:
                    break
                got.extend(consumer.consume(100, timeout=0.1))
            for message in got:
                assert message.key() == message.value()
                partitions_of.setdefault(message.key(), set()).add(p)
    finally:
        consumer.close()
    assert sorted(partitions_of) == [b"0", b"1", b"2", b"3", b"4"]
    assert all(len(places) == 1 for places in partitions_of.values())


def test_partitions_not_seen_before_become_splits_at_their_earliest_offset(broker):
    """A discovery round after partitions were added to a topic (here: a discovery restored
    from a state that knew only partition 0) makes the others splits from their first record,
    whatever the starting offsets said for the partitions of the first start."""
    topic = _topic(broker, partitions=3)
    for p in range(3):
        _produce(broker.bootstrap, topic, [b"x"] * (p + 2), partition=p)
    discovery = PartitionDiscovery({"bootstrap.servers": broker.bootstrap}, (topic,), None,
                                   KafkaOffsetsInitializer.latest().spec, None,
                                   known=frozenset({(topic, 0)}))
    assert discovery.discover() == [KafkaPartitionSplit(topic, 1, 0),
                                    KafkaPartitionSplit(topic, 2, 0)]
    assert discovery.discover() == []
    assert discovery.snapshot() == frozenset({(topic, 0), (topic, 1), (topic, 2)})
