"""Kafka jobs end to end (DataStream API, JobManager with the split enumerator, thread
TaskManagers) against a Kafka-protocol broker: librdkafka's mock cluster in a helper process
(tests/unit/connectors/kafka_broker.py). The mock does not enforce transactions, so the
exactly-once sink's end-to-end check with ``read_committed`` readers also runs against a real
broker when ``FLINTLOCK_KAFKA_BOOTSTRAP`` names one (docs/connectors.md)."""

import glob
import time
import uuid

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from flintlock.common import WatermarkStrategy
from flintlock.common.job_status import JobStatus
from flintlock.common.serialization import Encoder, SimpleStringSchema
from flintlock.datastream import CheckpointingMode
from flintlock.datastream.connectors.file_system import (
    BucketAssigner,
    FileSink,
    OutputFileConfig,
)
from flintlock.datastream.connectors.kafka import (
    DeliveryGuarantee,
    KafkaOffsetsInitializer,
    KafkaRecordSerializationSchema,
    KafkaSink,
    KafkaSource,
)
from flintlock.datastream.functions import ProcessFunction
from flintlock.testing.environments import local_environment
from flintlock.testing.faults import RaiseOnceAfter
from flintlock.testing.files import committed_lines
from flintlock.testing.gates import FileGate, GatedSource, open_when
from flintlock.testing.recording import Recording
from flintlock.testing.waiting import poll_until
from tests.unit.connectors.kafka_broker import kafka_broker, real_kafka_bootstrap

KEYS = 12
PER_KEY = 400
FIRED = Recording("kafka.fired")  # per window result: whether the gate was open then


@pytest.fixture(scope="module")
def broker():
    with kafka_broker() as running:
        yield running


def _env(tmp_path, parallelism=2, **conf):
    return local_environment(tmp_path, parallelism, restart_attempts=3, options=conf)


def _topic(broker, partitions=4, prefix="t"):
    name = f"{prefix}-{uuid.uuid4().hex[:8]}"
    broker.create_topic(name, partitions)
    return name


def _produce_sequences(bootstrap, topic, keys=KEYS, per_key=PER_KEY, first=1):
    """Per key k the values 'k<k>,<i>' for i = first..per_key, keyed so each key stays in one
    partition (and in order); timestamps 1_000_000 + i."""
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for i in range(first, per_key + 1):
        for k in range(keys):
            producer.produce(topic, f"k{k},{i}".encode(), f"k{k}".encode(),
                             timestamp=1_000_000 + i)
        producer.poll(0)
    assert producer.flush(30) == 0


def _read_all(bootstrap, topic, isolation="read_uncommitted", partitions=4):
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"check-{uuid.uuid4()}",
                         "isolation.level": isolation, "enable.auto.commit": False})
    try:
        ends = {}
        for p in range(partitions):
            ends[p] = consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1]
        consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
        values, deadline = [], time.monotonic() + 30
        positions = dict.fromkeys(range(partitions), 0)
        while time.monotonic() < deadline and any(positions[p] < ends[p] for p in ends):
            for message in consumer.consume(500, timeout=0.2):
                assert message.error() is None, message.error()
                values.append(message.value().decode())
            positions = {tp.partition: tp.offset for tp in consumer.position(
                [TopicPartition(topic, p) for p in range(partitions)])}
        return values
    finally:
        consumer.close()


def _source(bootstrap, topic, **props):
    builder = (KafkaSource.builder().set_bootstrap_servers(bootstrap).set_topics(topic)
               .set_starting_offsets(KafkaOffsetsInitializer.earliest())
               .set_bounded(KafkaOffsetsInitializer.latest())
               .set_value_only_deserializer(SimpleStringSchema()))
    return builder.set_properties(props).build()


def _sink(bootstrap, topic, guarantee, prefix=None):
    serializer = (KafkaRecordSerializationSchema.builder().set_topic(topic)
                  .set_value_serialization_schema(SimpleStringSchema()).build())
    builder = (KafkaSink.builder().set_bootstrap_servers(bootstrap)
               .set_record_serializer(serializer).set_delivery_guarantee(guarantee))
    if prefix is not None:
        builder.set_transactional_id_prefix(prefix)
    return builder.build()


class NoteFired:
    """Passes window results on, recording for each whether ``gate`` was open."""

    def __init__(self, gate):
        self.gate = gate

    def __call__(self, value):
        FIRED.append(self.gate.is_open())
        return value


class StampOf(ProcessFunction):
    def process_element(self, value, ctx):
        yield (value, ctx.timestamp())


def test_bounded_source_reads_every_partition_with_kafka_timestamps(executor, tmp_path,
                                                                    broker):
    topic = _topic(broker)
    _produce_sequences(broker.bootstrap, topic, keys=5, per_key=60)
    env = _env(tmp_path, 3)
    records = env.from_source(_source(broker.bootstrap, topic),
                              WatermarkStrategy.no_watermarks(), "kafka")
    got = list(records.process(StampOf()).execute_and_collect())
    expected = [(f"k{k},{i}", 1_000_000 + i) for k in range(5) for i in range(1, 61)]
    assert sorted(got) == sorted(expected)


def _split(line):
    key, count = line.split(",")
    return key, int(count)


def _running_counts(env, source):
    records = env.from_source(source, WatermarkStrategy.for_monotonous_timestamps(), "kafka")
    return (records.map(lambda line: (line.split(",")[0], 1))
            .key_by(lambda pair: pair[0])
            .reduce(lambda a, b: (a[0], a[1] + b[1]))
            .map(lambda pair: f"{pair[0]},{pair[1]}"))


def _assert_every_count_once(lines, keys=KEYS, per_key=PER_KEY):
    """The per-key sequence check: key k's running counts are exactly 1..per_key."""
    by_key = {}
    for key, count in map(_split, lines):
        by_key.setdefault(key, []).append(count)
    assert sorted(by_key) == sorted(f"k{k}" for k in range(keys))
    for key, counts in by_key.items():
        assert sorted(counts) == list(range(1, per_key + 1)), key


def _file_sink(path):
    return (FileSink.for_row_format(str(path), Encoder.simple_string_encoder())
            .with_bucket_assigner(BucketAssigner.base_path_bucket_assigner())
            .with_output_file_config(OutputFileConfig.builder().with_part_suffix(".txt")
                                     .build())
            .build())


def _unbounded_source(bootstrap, topic, **props):
    return (KafkaSource.builder().set_bootstrap_servers(bootstrap).set_topics(topic)
            .set_starting_offsets(KafkaOffsetsInitializer.earliest())
            .set_value_only_deserializer(SimpleStringSchema()).set_properties(props).build())


def _crash_midway(job, trigger, write_the_rest, done):
    """Runs a job started with ``execute_async`` until ``done()``. The test wrote the first
    half of the input; the second half is written once the failure's trigger (a committed
    part file, a completed checkpoint) exists, so records still to come meet the failure
    whatever the job's pace. Then the job is cancelled."""
    try:
        assert poll_until(lambda: bool(glob.glob(str(trigger))), 60), "no trigger appeared"
        write_the_rest()
        assert poll_until(done, 60)
    finally:
        job.cancel()
        job.join(30)


EVERY_VALUE = {f"k{k},{i}" for k in range(KEYS) for i in range(1, PER_KEY + 1)}


def test_kafka_keyed_count_to_files_with_a_crash_is_exactly_once(executor, tmp_path, broker):
    topic, out, half = _topic(broker), tmp_path / "out", PER_KEY // 2
    _produce_sequences(broker.bootstrap, topic, per_key=half)
    env = _env(tmp_path)
    env.enable_checkpointing(30, CheckpointingMode.EXACTLY_ONCE)
    marker = tmp_path / "crashed"
    crash = RaiseOnceAfter(marker, out / "part-*", every=50)
    counts = _running_counts(env, _unbounded_source(broker.bootstrap, topic,
                                                    **{"group.id": "counts"}))
    counts.map(crash).sink_to(_file_sink(out))
    _crash_midway(env.execute_async("kafka keyed count with a crash"), out / "part-*",
                  lambda: _produce_sequences(broker.bootstrap, topic, first=half + 1),
                  lambda: len(committed_lines(out)) >= KEYS * PER_KEY)
    assert marker.exists(), "the failure was never injected"
    assert len(executor.launchers[-1].attempts) >= 2
    _assert_every_count_once(committed_lines(out))


@pytest.mark.parametrize("guarantee", [DeliveryGuarantee.AT_LEAST_ONCE,
                                       DeliveryGuarantee.EXACTLY_ONCE])
def test_kafka_to_kafka_with_a_crash(executor, tmp_path, broker, guarantee):
    source_topic, sink_topic, half = _topic(broker), _topic(broker), PER_KEY // 2
    _produce_sequences(broker.bootstrap, source_topic, per_key=half)
    env = _env(tmp_path)
    env.enable_checkpointing(30, CheckpointingMode.EXACTLY_ONCE)
    marker = tmp_path / "crashed"
    checkpoint = tmp_path / "chk" / "*" / "chk-*" / "_metadata"
    crash = RaiseOnceAfter(marker, checkpoint, every=50)
    counts = _running_counts(env, _unbounded_source(broker.bootstrap, source_topic))
    counts.map(crash).sink_to(_sink(broker.bootstrap, sink_topic, guarantee,
                                    prefix=f"eo-{uuid.uuid4().hex[:6]}"))
    _crash_midway(env.execute_async("kafka to kafka with a crash"), checkpoint,
                  lambda: _produce_sequences(broker.bootstrap, source_topic, first=half + 1),
                  lambda: set(_read_all(broker.bootstrap, sink_topic)) >= EVERY_VALUE)
    assert marker.exists(), "the failure was never injected"
    # No loss under either guarantee. That nothing is written twice by EXACTLY_ONCE is only
    # checked against a real broker (below): the mock ignores the commit marker, so a restore
    # there rewrites a batch whose transaction had committed just before the failure.
    assert set(_read_all(broker.bootstrap, sink_topic)) == EVERY_VALUE


@pytest.mark.skipif(real_kafka_bootstrap() is None,
                    reason="needs a real Kafka broker: set FLINTLOCK_KAFKA_BOOTSTRAP")
def test_exactly_once_sink_against_a_real_broker_read_committed(executor, tmp_path):
    from confluent_kafka.admin import AdminClient, NewTopic

    bootstrap = real_kafka_bootstrap()
    source_topic, sink_topic = (f"flintlock-{uuid.uuid4().hex[:8]}" for _ in range(2))
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(source_topic, 4, 1),
                                       NewTopic(sink_topic, 4, 1)]).values():
        future.result(30)
    half = PER_KEY // 2
    _produce_sequences(bootstrap, source_topic, per_key=half)
    env = _env(tmp_path)
    env.enable_checkpointing(30, CheckpointingMode.EXACTLY_ONCE)
    marker = tmp_path / "crashed"
    checkpoint = tmp_path / "chk" / "*" / "chk-*" / "_metadata"
    crash = RaiseOnceAfter(marker, checkpoint, every=50)
    counts = _running_counts(env, _unbounded_source(bootstrap, source_topic))
    counts.map(crash).sink_to(_sink(bootstrap, sink_topic, DeliveryGuarantee.EXACTLY_ONCE,
                                    prefix=f"eo-{uuid.uuid4().hex[:6]}"))
    _crash_midway(env.execute_async("kafka to kafka exactly once on a real broker"),
                  checkpoint, lambda: _produce_sequences(bootstrap, source_topic,
                                                         first=half + 1),
                  lambda: len(_read_all(bootstrap, sink_topic, "read_committed"))
                  >= KEYS * PER_KEY)
    assert marker.exists(), "the failure was never injected"
    _assert_every_count_once(_read_all(bootstrap, sink_topic, "read_committed"))


def test_offsets_are_committed_to_the_group_on_checkpoint_completion(executor, tmp_path,
                                                                     broker):
    topic = _topic(broker, partitions=2)
    _produce_sequences(broker.bootstrap, topic, keys=4, per_key=50)
    echo = _topic(broker, partitions=1)
    env = _env(tmp_path, 1)
    env.enable_checkpointing(30)
    source = (KafkaSource.builder().set_bootstrap_servers(broker.bootstrap).set_topics(topic)
              .set_group_id("monitor").set_value_only_deserializer(SimpleStringSchema())
              .build())
    env.from_source(source, WatermarkStrategy.no_watermarks(), "kafka").sink_to(
        _sink(broker.bootstrap, echo, DeliveryGuarantee.AT_LEAST_ONCE))
    job = env.execute_async("unbounded with offset commits")
    checker = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "monitor"})
    ends = [checker.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1]
            for p in range(2)]

    def committed():
        found = checker.committed([TopicPartition(topic, p) for p in range(2)], timeout=10)
        return [tp.offset for tp in found]

    try:
        assert poll_until(lambda: committed() == ends, 30), (committed(), ends)
        assert job.jm.wait_until_running(30)
    finally:
        job.cancel()
        job.join(30)
        checker.close()
    assert len(_read_all(broker.bootstrap, echo, partitions=1)) == 200


def test_a_topic_matching_the_pattern_is_discovered_while_running(executor, tmp_path, broker):
    prefix = f"disc{uuid.uuid4().hex[:6]}"
    first = _topic(broker, partitions=1, prefix=prefix)
    echo = _topic(broker, partitions=1)
    _produce_sequences(broker.bootstrap, first, keys=1, per_key=3)
    env = _env(tmp_path, 2)
    env.enable_checkpointing(30)
    source = (KafkaSource.builder().set_bootstrap_servers(broker.bootstrap)
              .set_topic_pattern(prefix + "-.*")
              .set_property("partition.discovery.interval.ms", "100")
              .set_value_only_deserializer(SimpleStringSchema()).build())
    env.from_source(source, WatermarkStrategy.no_watermarks(), "kafka").sink_to(
        _sink(broker.bootstrap, echo, DeliveryGuarantee.AT_LEAST_ONCE))
    job = env.execute_async("discovery")
    try:
        assert poll_until(lambda: len(_read_all(broker.bootstrap, echo, partitions=1)) == 3, 30)
        second = _topic(broker, partitions=3, prefix=prefix)
        _produce_sequences(broker.bootstrap, second, keys=3, per_key=2)
        assert poll_until(lambda: len(_read_all(broker.bootstrap, echo, partitions=1)) == 9, 30)
    finally:
        job.cancel()
        job.join(30)
    assert sorted(_read_all(broker.bootstrap, echo, partitions=1)) == sorted(
        ["k0,1", "k0,2", "k0,3", "k0,1", "k0,2", "k1,1", "k1,2", "k2,1", "k2,2"])


def test_savepoint_restore_at_another_parallelism_resumes_at_the_right_offsets(
        executor, tmp_path, broker):
    """The first half of every key's records is in the 4-partition topic when the job starts
    at parallelism 2; once all their counts are committed, the job stops with a savepoint (the
    end of the data holds it mid-stream: no slowdown). The second half is written, then the
    job restored from the savepoint at parallelism 3 counts on: every count exactly once (from
    the earliest offset it would count the first half again; from the latest it would miss
    the second half)."""
    topic, out, half = _topic(broker), tmp_path / "out", PER_KEY // 2
    _produce_sequences(broker.bootstrap, topic, per_key=half)
    source = (KafkaSource.builder().set_bootstrap_servers(broker.bootstrap).set_topics(topic)
              .set_starting_offsets(KafkaOffsetsInitializer.earliest())
              .set_value_only_deserializer(SimpleStringSchema()).build())
    env = _env(tmp_path / "first", parallelism=2)
    env.enable_checkpointing(30)
    _running_counts(env, source).sink_to(_file_sink(out))
    job = env.execute_async("first half")
    try:
        assert poll_until(lambda: len(committed_lines(out)) == KEYS * half, 60)
        path = job.stop_with_savepoint(savepoint_directory=str(tmp_path / "sp")).result(60)
        assert job.jm.wait_for_status({JobStatus.FINISHED}, 60)
    finally:
        job.cancel()
        job.join(30)
    _assert_every_count_once(committed_lines(out), per_key=half)

    _produce_sequences(broker.bootstrap, topic, first=half + 1)
    env2 = _env(tmp_path / "second", parallelism=3,
                **{"execution.state-recovery.path": path})
    env2.enable_checkpointing(30)
    _running_counts(env2, source).sink_to(_file_sink(out))
    job2 = env2.execute_async("second half")
    try:
        assert poll_until(lambda: len(committed_lines(out)) >= KEYS * PER_KEY, 60)
    finally:
        job2.cancel()
        job2.join(30)
    _assert_every_count_once(committed_lines(out))


def test_the_ported_kafka_example_totals_every_customer(executor, tmp_path, broker):
    import json

    from flintlock.examples import kafka_orders

    orders, totals = _topic(broker), _topic(broker)
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    expected = {}
    for i in range(300):
        customer, amount = f"c{i % 7}", i
        expected.setdefault(customer, []).append(sum(expected.get(customer, [0])[-1:]) + amount)
        producer.produce(orders, json.dumps({"customer": customer, "amount": amount}).encode(),
                         customer.encode())
    assert producer.flush(30) == 0
    env = _env(tmp_path)
    env.enable_checkpointing(30)
    kafka_orders.build(env, broker.bootstrap, orders, totals, bounded=True)
    env.execute("order totals")
    written = [json.loads(v) for v in _read_all(broker.bootstrap, totals)]
    got = {}
    for row in written:
        got.setdefault(row["customer"], []).append(row["total"])
    assert {c: sorted(t) for c, t in got.items()} == expected


def test_event_time_windows_on_kafka_timestamps_with_per_partition_watermarks(
        executor, tmp_path, broker):
    """Two partitions written out of step (partition 1 far behind partition 0): with
    watermarks per partition, no record of the slow partition is late, so every one-second
    window counts all of its records. The reader holds after 4500 records (at least 1500 of
    each partition, whatever their interleaving) until a window fired: watermarks surely
    came while the rest of the slow partition was still to be read."""
    from flintlock.common import Duration
    from flintlock.datastream.window import TumblingEventTimeWindows

    topic = _topic(broker, partitions=2)
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    for i in range(3000):
        producer.produce(topic, b"fast", partition=0, timestamp=1_000_000 + 100 * i)
    for i in range(3000):
        producer.produce(topic, b"slow", partition=1, timestamp=1_000_000 + i)
    assert producer.flush(30) == 0
    env = _env(tmp_path, 1)
    env.get_config().set_auto_watermark_interval(1)
    gate = FileGate(tmp_path / "gate")
    opener = open_when(gate, lambda: FIRED)
    records = env.from_source(GatedSource(_source(broker.bootstrap, topic), gate, 4500),
                              WatermarkStrategy.for_monotonous_timestamps(), "kafka")
    windows = (records.map(lambda v: (v, 1)).key_by(lambda p: p[0])
               .window(TumblingEventTimeWindows.of(Duration.of_seconds(1)))
               .reduce(lambda a, b: (a[0], a[1] + b[1])).map(NoteFired(gate)))
    counts = {}
    for key, count in windows.execute_and_collect():
        counts[key] = counts.get(key, 0) + count
    opener.join(60)
    assert counts == {"fast": 3000, "slow": 3000}
    assert not FIRED.items()[0], "no window fired while the rest of the input was held"


def test_pyflinks_kafka_json_example_ported_by_its_imports(executor, tmp_path, broker):
    """PyFlink's examples/datastream/connectors/kafka_json_format.py, written again with
    flintlock imports: ``Types.ROW`` rows through JsonRow*Schema.Builder() to Kafka and back
    (its env.add_jars line is dropped: there is no connector JAR). The reading half is bounded
    here so that the test ends."""
    from flintlock.common import Types
    from flintlock.datastream.formats.json import (
        JsonRowDeserializationSchema,
        JsonRowSerializationSchema,
    )

    topic = _topic(broker, partitions=1)
    type_info = Types.ROW([Types.INT(), Types.STRING()])
    pairs = [(1, "hi"), (2, "hello"), (3, "hi"), (4, "hello"), (5, "hi"), (6, "hello"),
             (6, "hello")]
    env = _env(tmp_path / "write", 1)
    ds = env.from_collection(pairs, type_info=type_info)
    serializer = JsonRowSerializationSchema.Builder().with_type_info(type_info).build()
    record_serializer = (KafkaRecordSerializationSchema.builder().set_topic(topic)
                         .set_value_serialization_schema(serializer).build())
    ds.sink_to(KafkaSink.builder().set_record_serializer(record_serializer)
               .set_bootstrap_servers(broker.bootstrap).set_property("group.id", "test_group")
               .build())
    env.execute()
    assert _read_all(broker.bootstrap, topic, partitions=1)[0] == '{"f0":1,"f1":"hi"}'

    env = _env(tmp_path / "read", 1)
    deserializer = (JsonRowDeserializationSchema.Builder()
                    .type_info(Types.ROW([Types.INT(), Types.STRING()])).build())
    source = (KafkaSource.builder().set_topics(topic)
              .set_value_only_deserializer(deserializer)
              .set_properties({"bootstrap.servers": broker.bootstrap, "group.id": "test_group_1"})
              .set_starting_offsets(KafkaOffsetsInitializer.earliest())
              .set_bounded(KafkaOffsetsInitializer.latest())
              .build())
    ds = env.from_source(source, watermark_strategy=WatermarkStrategy.no_watermarks(),
                         source_name="kafka source")
    assert [tuple(row) for row in ds.execute_and_collect()] == pairs


@pytest.mark.parametrize("guarantee", [DeliveryGuarantee.AT_LEAST_ONCE,
                                       DeliveryGuarantee.EXACTLY_ONCE])
def test_records_keep_their_kafka_timestamps_through_the_sink(executor, tmp_path, broker,
                                                              guarantee):
    source_topic, sink_topic = _topic(broker, partitions=1), _topic(broker, partitions=1)
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    for i in range(50):
        producer.produce(source_topic, f"v{i}".encode(), timestamp=5_000_000 + 3 * i)
    assert producer.flush(30) == 0
    env = _env(tmp_path, 1)
    env.enable_checkpointing(30)
    (env.from_source(_source(broker.bootstrap, source_topic),
                     WatermarkStrategy.no_watermarks(), "kafka")
     .map(str.upper)
     .sink_to(_sink(broker.bootstrap, sink_topic, guarantee, prefix=f"ts-{uuid.uuid4().hex}")))
    env.execute("timestamps through")
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "ts-check"})
    consumer.assign([TopicPartition(sink_topic, 0, 0)])
    got, deadline = [], time.monotonic() + 30
    while len(got) < 50 and time.monotonic() < deadline:
        got.extend((m.value().decode(), m.timestamp()[1])
                   for m in consumer.consume(100, timeout=0.2) if m.error() is None)
    consumer.close()
    assert got == [(f"V{i}", 5_000_000 + 3 * i) for i in range(50)]


def _docs_kafka_example():
    """The ported PyFlink job printed under "## Kafka" in docs/connectors.md, as it is there."""
    import pathlib
    import re

    text = (pathlib.Path(__file__).parents[2] / "docs" / "connectors.md").read_text()
    section = text[text.index("\n## Kafka\n"):]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_the_kafka_example_in_the_docs_runs_as_printed(executor, tmp_path, broker):
    import json

    code = _docs_kafka_example()
    assert "broker:9092" in code and '"orders"' in code and '"totals"' in code
    broker.create_topic("orders", 4)
    broker.create_topic("totals", 4)
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    expected = {}
    for i in range(200):
        customer, amount = f"c{i % 5}", i + 1
        expected.setdefault(customer, []).append(
            (expected.get(customer) or [0])[-1] + amount)
        producer.produce("orders", json.dumps({"customer": customer, "amount": amount})
                         .encode(), customer.encode())
    assert producer.flush(30) == 0
    env = _env(tmp_path)
    env.enable_checkpointing(30)  # the example's sink is EXACTLY_ONCE: it commits on these
    exec(compile(code.replace("broker:9092", broker.bootstrap), "connectors.md", "exec"),
         {"env": env})
    job = env.execute_async("the docs' Kafka example")
    try:
        assert poll_until(lambda: len(_read_all(broker.bootstrap, "totals")) >= 200, 60)
    finally:
        job.cancel()
        job.join(30)
    got = {}
    for value in _read_all(broker.bootstrap, "totals"):
        row = json.loads(value)
        got.setdefault(row["customer"], []).append(row["total"])
    assert {c: sorted(t) for c, t in got.items()} == expected


def _produce_until(producer, topic, first, done, timeout_s=60):
    """One record a poll into partition 0 (``x``, 100 ms of event time apart, from the
    ``first``-th on) until ``done()`` holds or ``timeout_s`` passed; whether it held."""
    deadline, i = time.monotonic() + timeout_s, first
    while time.monotonic() < deadline:
        producer.produce(topic, b"x", partition=0, timestamp=1_000_000 + 100 * i)
        assert producer.flush(10) == 0
        if poll_until(done, 0.5):
            return True
        i += 1
    return bool(done())


def test_an_empty_partition_goes_idle_so_event_time_advances(executor, tmp_path, broker):
    """An unbounded source over two partitions, one of them empty: with ``with_idleness`` the
    empty partition stops holding the subtask's watermark back, so event-time windows of the
    other partition fire (with one watermark held at the empty partition's, none would)."""
    from flintlock.common import Duration
    from flintlock.datastream.window import TumblingEventTimeWindows

    topic, out = _topic(broker, partitions=2), _topic(broker, partitions=1)
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    for i in range(50):  # partition 0 only: five one-second windows of ten records
        producer.produce(topic, b"x", partition=0, timestamp=1_000_000 + 100 * i)
    assert producer.flush(30) == 0
    env = _env(tmp_path, 1)
    env.get_config().set_auto_watermark_interval(10)
    source = (KafkaSource.builder().set_bootstrap_servers(broker.bootstrap).set_topics(topic)
              .set_value_only_deserializer(SimpleStringSchema()).build())
    strategy = (WatermarkStrategy.for_monotonous_timestamps()
                .with_idleness(Duration.of_millis(200)))
    (env.from_source(source, strategy, "kafka")
     .map(lambda v: (v, 1)).key_by(lambda p: p[0])
     .window(TumblingEventTimeWindows.of(Duration.of_seconds(1)))
     .reduce(lambda a, b: (a[0], a[1] + b[1]))
     .map(lambda p: f"{p[0]}:{p[1]}")
     .sink_to(_sink(broker.bootstrap, out, DeliveryGuarantee.AT_LEAST_ONCE)))
    job = env.execute_async("idle partition")
    try:
        # Partition 0 goes on getting records until windows fired: had it gone idle as well
        # (its last record older than the idle timeout when the empty one went idle), every
        # output would be idle and no watermark would move, in Flink as here. Each new record
        # makes it active again beside the idle empty partition, so the watermark is its own.
        assert _produce_until(producer, topic, 50, lambda: len(
            _read_all(broker.bootstrap, out, partitions=1)) >= 4)
    finally:
        job.cancel()
        job.join(30)
    assert _read_all(broker.bootstrap, out, partitions=1)[:4] == ["x:10"] * 4
