"""A windowed SQL job over a Kafka topic on embedded Spark (issue 32, item 7): a TUMBLE window
count per key, read from librdkafka's mock cluster with per-partition watermarks, written
through the exactly-once filesystem sink. A TaskManager process ends itself mid-stream, once a
checkpoint has completed; the job restores from it and the committed rows are exactly the
failure-free windows, each once."""

from __future__ import annotations

import csv
import datetime
import glob
import json
import sys
from collections import Counter

import cloudpickle
import pytest

from flintlock.common.config import Configuration
from flintlock.datastream import StreamExecutionEnvironment
from flintlock.table import DataTypes, StreamTableEnvironment
from flintlock.table.udf import udf
from flintlock.testing.faults import ExitOnceAfter
from flintlock.testing.files import committed_lines
from flintlock.testing.waiting import poll_until
from tests.unit.connectors.kafka_broker import kafka_broker

pytestmark = [pytest.mark.spark, pytest.mark.slow]
cloudpickle.register_pickle_by_value(sys.modules[__name__])

KEYS, SECONDS, PARTITIONS = 4, 400, 4
BASE = datetime.datetime(2024, 1, 1)


def _produce(bootstrap: str, seconds: range | list[int]) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for second in seconds:
        stamp = (BASE + datetime.timedelta(seconds=second)).strftime("%Y-%m-%d %H:%M:%S")
        for key in range(KEYS):
            producer.produce("clicks", json.dumps({"k": f"k{key}", "ts": stamp}).encode(),
                             partition=(second + key) % PARTITIONS)
        producer.poll(0)
    assert producer.flush(30) == 0


def test_a_window_count_over_kafka_with_a_killed_task_manager_is_exactly_once(tmp_path):
    """Half of the seconds are in the topic at the start, the rest is written once a
    checkpoint has completed, so the TaskManager that ends its process at the first row after
    that checkpoint always meets one. A last row far ahead in every partition closes every
    window."""
    out, marker = tmp_path / "out", tmp_path / "died"
    checkpoint = tmp_path / "chk" / "*" / "chk-*" / "_metadata"
    windows = KEYS * SECONDS // 10
    with kafka_broker() as broker:
        broker.create_topic("clicks", PARTITIONS)
        _produce(broker.bootstrap, range(SECONDS // 2))
        config = Configuration().set_string("execution.checkpointing.dir", str(tmp_path / "chk"))
        config.set_string("restart-strategy.type", "fixed-delay")
        config.set_string("restart-strategy.fixed-delay.delay", "100 ms")
        config.set_string("restart-strategy.fixed-delay.attempts", "2")
        env = StreamExecutionEnvironment.get_execution_environment(config)
        env.set_parallelism(2)
        env.enable_checkpointing(100)
        t_env = StreamTableEnvironment.create(env)
        exit_after = ExitOnceAfter(marker, checkpoint, every=50)

        @udf(result_type=DataTypes.STRING())
        def checked(key):
            exit_after(key)
            return key

        t_env.create_temporary_function("checked", checked)
        t_env.execute_sql(f"""
            CREATE TABLE clicks (k STRING, ts TIMESTAMP(3),
                WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
            WITH ('connector' = 'kafka', 'topic' = 'clicks',
                  'properties.bootstrap.servers' = '{broker.bootstrap}',
                  'properties.group.id' = 'sql-windows',
                  'scan.startup.mode' = 'earliest-offset', 'format' = 'json')""")
        t_env.execute_sql(f"""
            CREATE TABLE counts (k STRING, window_start TIMESTAMP(3), n BIGINT)
            WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'csv')""")
        result = t_env.execute_sql("""
            INSERT INTO counts SELECT checked(k), window_start, COUNT(*)
            FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '10' SECOND))
            GROUP BY checked(k), window_start, window_end""")
        client = result.get_job_client()
        try:
            assert poll_until(lambda: bool(glob.glob(str(checkpoint))), 120)
            _produce(broker.bootstrap, range(SECONDS // 2, SECONDS))
            _produce(broker.bootstrap, [10 * SECONDS] * PARTITIONS)
            assert poll_until(lambda: len(committed_lines(out)) >= windows, 180)
        finally:
            client.cancel()
    assert marker.exists(), "the TaskManager was never killed"
    rows = Counter(tuple(row) for row in csv.reader(committed_lines(out)))
    expected = Counter(
        (f"k{key}", (BASE + datetime.timedelta(seconds=start)).strftime("%Y-%m-%d %H:%M:%S"),
         "10") for key in range(KEYS) for start in range(0, SECONDS, 10))
    assert rows == expected
