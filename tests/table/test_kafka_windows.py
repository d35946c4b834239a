"""A windowed SQL query over a Kafka topic (librdkafka's mock cluster on 127.0.0.1): the
table's WATERMARK is pushed into the Kafka source, which makes watermarks per partition as
Flink's does, so a partition read ahead of another does not turn the other's rows late.
(Applied after the source instead, one partition's later timestamps would advance the
subtask's watermark past the windows another partition's rows still belong to.)"""

from __future__ import annotations

import datetime
import json
from collections import Counter
from typing import Any

import pytest

from tests.unit.connectors.kafka_broker import kafka_broker

pytest.importorskip("confluent_kafka")

BASE = datetime.datetime(2024, 1, 1)


def _stamp(second: int) -> str:
    return (BASE + datetime.timedelta(seconds=second)).strftime("%Y-%m-%d %H:%M:%S")


def _produce(bootstrap: str, events: list[tuple[int, str, int]]) -> None:
    """Writes the events, each to its partition; the producer is gone when this returns (it
    would log reconnection attempts once the broker has stopped)."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap})
    for partition, key, second in sorted(events, key=lambda e: (e[0], e[2])):
        producer.produce("clicks", json.dumps({"k": key, "ts": _stamp(second)}).encode(),
                         partition=partition)
    assert producer.flush(30) == 0


def _window_counts(t_env: Any, bootstrap: str, bounded: bool) -> Any:
    """The rows of a 10-second TUMBLE count per key over the topic (bounded: up to the
    offsets at the start)."""
    bound = "'scan.bounded.mode' = 'latest-offset', " if bounded else ""
    t_env.execute_sql(f"""
        CREATE TABLE clicks (k STRING, ts TIMESTAMP(3),
            WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
        WITH ('connector' = 'kafka', 'topic' = 'clicks',
              'properties.bootstrap.servers' = '{bootstrap}',
              'scan.startup.mode' = 'earliest-offset', {bound}'format' = 'json')""")
    return t_env.execute_sql("""
        SELECT k, window_start, COUNT(*) AS n
        FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '10' SECOND))
        GROUP BY k, window_start, window_end""").collect()


def test_a_tumbling_window_over_kafka_partitions_read_unevenly_drops_no_row(monkeypatch
                                                                             ) -> None:
    from flintlock.datastream import StreamExecutionEnvironment
    from flintlock.table import StreamTableEnvironment
    from flintlock.testing.executor import use_thread_executor

    use_thread_executor(monkeypatch)
    # partition 0 holds the last minute, partition 1 the first: whichever the reader takes
    # first, the other's rows come after timestamps far ahead of theirs
    events: list[tuple[int, str, int]] = []
    for second in range(120):
        events.append((0 if second >= 60 else 1, f"k{second % 3}", second))
    with kafka_broker() as broker:
        broker.create_topic("clicks", 2)
        _produce(broker.bootstrap, events)
        env = StreamExecutionEnvironment.get_execution_environment()
        env.set_parallelism(1)
        t_env = StreamTableEnvironment.create(env)
        rows = [tuple(r) for r in _window_counts(t_env, broker.bootstrap, bounded=True)]
    expected: Counter[tuple[Any, ...]] = Counter(
        (key, BASE + datetime.timedelta(seconds=second - second % 10))
        for _, key, second in events)
    assert sorted(rows) == sorted((key, start, n) for (key, start), n in expected.items())


def test_windows_over_an_unbounded_topic_fire_on_the_partitions_watermarks(monkeypatch
                                                                            ) -> None:
    """No end of input here: the windows close only because the source's per-partition
    watermarks (computed from each row's WATERMARK expression) advance — after the rows they
    were computed from, never before them (else those rows would be late)."""
    from flintlock.datastream import StreamExecutionEnvironment
    from flintlock.table import StreamTableEnvironment
    from flintlock.testing.executor import use_thread_executor

    use_thread_executor(monkeypatch)
    events = [(second % 2, f"k{second % 3}", second) for second in range(40)]
    events += [(partition, "late-marker", 3600) for partition in range(2)]
    with kafka_broker() as broker:
        broker.create_topic("clicks", 2)
        _produce(broker.bootstrap, events)
        env = StreamExecutionEnvironment.get_execution_environment()
        env.set_parallelism(2)
        t_env = StreamTableEnvironment.create(env)
        windows = _window_counts(t_env, broker.bootstrap, bounded=False)
        try:
            rows = [tuple(next(windows)) for _ in range(12)]  # 4 windows x 3 keys
        finally:
            windows.close()
    expected: Counter[tuple[Any, ...]] = Counter(
        (key, BASE + datetime.timedelta(seconds=second - second % 10))
        for _, key, second in events if second < 3600)
    assert sorted(rows) == sorted((key, start, n) for (key, start), n in expected.items())
