"""A Kafka job on embedded Spark: the split enumerator runs in the driver's JobManager, the
partition readers in Spark's Python workers, all against librdkafka's mock cluster on
127.0.0.1 (tests/unit/connectors/kafka_broker.py). A worker killed mid-job is restarted; the
keyed running counts in the committed files are exactly once."""

from __future__ import annotations

import glob
import sys

import cloudpickle
import pytest
from confluent_kafka import Producer

from flintlock.common import WatermarkStrategy
from flintlock.common.config import Configuration
from flintlock.common.serialization import Encoder, SimpleStringSchema
from flintlock.datastream import StreamExecutionEnvironment
from flintlock.datastream.connectors.file_system import BucketAssigner, FileSink
from flintlock.datastream.connectors.kafka import KafkaOffsetsInitializer, KafkaSource
from flintlock.testing.faults import ExitOnceAfter
from flintlock.testing.files import committed_lines
from flintlock.testing.waiting import poll_until
from tests.unit.connectors.kafka_broker import kafka_broker

pytestmark = [pytest.mark.spark, pytest.mark.slow]
cloudpickle.register_pickle_by_value(sys.modules[__name__])

KEYS, PER_KEY = 8, 3000


def _produce(bootstrap, counts):
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for _ in counts:
        for k in range(KEYS):
            producer.produce("events", f"k{k}".encode(), f"k{k}".encode())
        producer.poll(0)
    assert producer.flush(30) == 0


def test_kafka_keyed_count_with_a_killed_task_manager_is_exactly_once(tmp_path):
    """Half of each key's records are in the topic at the start; the other half is written
    once a checkpoint has completed, so the worker that ends its process at the first record
    after that checkpoint always meets one, whatever the job's pace."""
    half, out = PER_KEY // 2, tmp_path / "out"
    checkpoint = tmp_path / "chk" / "*" / "chk-*" / "_metadata"
    with kafka_broker() as broker:
        broker.create_topic("events", 4)
        _produce(broker.bootstrap, range(half))
        config = Configuration().set_string("execution.checkpointing.dir", str(tmp_path / "chk"))
        config.set_string("restart-strategy.type", "fixed-delay")
        config.set_string("restart-strategy.fixed-delay.delay", "100 ms")
        config.set_string("restart-strategy.fixed-delay.attempts", "2")
        env = StreamExecutionEnvironment.get_execution_environment(config)
        env.set_parallelism(2)
        env.enable_checkpointing(100)
        source = (KafkaSource.builder().set_bootstrap_servers(broker.bootstrap)
                  .set_topics("events").set_group_id("spark-count")
                  .set_starting_offsets(KafkaOffsetsInitializer.earliest())
                  .set_value_only_deserializer(SimpleStringSchema()).build())
        sink = (FileSink.for_row_format(str(out), Encoder.simple_string_encoder())
                .with_bucket_assigner(BucketAssigner.base_path_bucket_assigner()).build())
        marker = tmp_path / "died"
        exit_after = ExitOnceAfter(marker, checkpoint, every=50)
        (env.from_source(source, WatermarkStrategy.no_watermarks(), "kafka")
         .map(exit_after)
         .map(lambda key: (key, 1)).key_by(lambda pair: pair[0])
         .reduce(lambda a, b: (a[0], a[1] + b[1]))
         .map(lambda pair: f"{pair[0]},{pair[1]}")
         .sink_to(sink))
        client = env.execute_async("kafka keyed count on spark")
        try:
            assert poll_until(lambda: bool(glob.glob(str(checkpoint))), 120)
            _produce(broker.bootstrap, range(half, PER_KEY))
            assert poll_until(lambda: len(committed_lines(out)) >= KEYS * PER_KEY, 180)
        finally:
            client.cancel()
            client.join(60)
    assert marker.exists(), "the TaskManager was never killed"
    counts = {}
    for line in committed_lines(out):
        key, count = line.split(",")
        counts.setdefault(key, []).append(int(count))
    assert sorted(counts) == [f"k{k}" for k in range(KEYS)]
    for key, seen in counts.items():
        assert sorted(seen) == list(range(1, PER_KEY + 1)), key
