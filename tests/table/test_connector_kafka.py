"""The ``kafka`` table connector against librdkafka's mock cluster (tests/unit/connectors/
kafka_broker.py), jobs on TaskManager threads: reading JSON / CSV / Avro message values (and
keys) into rows, writing rows as messages, the options Flink checks."""

import json
import time
import uuid

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from flintlock.table import EnvironmentSettings, TableEnvironment
from flintlock.table.errors import TableError, ValidationError
from flintlock.testing.executor import use_thread_executor
from tests.unit.connectors.kafka_broker import kafka_broker


@pytest.fixture(scope="module")
def broker():
    with kafka_broker() as running:
        yield running


@pytest.fixture
def t_env(monkeypatch):
    use_thread_executor(monkeypatch)
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.get_config().set("parallelism.default", "2")
    return env


def _topic(broker, partitions=2):
    name = f"t-{uuid.uuid4().hex[:8]}"
    broker.create_topic(name, partitions)
    return name


def _produce(bootstrap, topic, values, keys=None):
    producer = Producer({"bootstrap.servers": bootstrap})
    for index, value in enumerate(values):
        key = None if keys is None else keys[index]
        producer.produce(topic, value, key, partition=index % 2)
    assert producer.flush(30) == 0


def _consume(bootstrap, topic, partitions=2):
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"c-{uuid.uuid4()}",
                         "enable.auto.commit": False})
    try:
        ends = {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1]
                for p in range(partitions)}
        consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
        messages, deadline = [], time.monotonic() + 30
        while time.monotonic() < deadline and len(messages) < sum(ends.values()):
            for message in consumer.consume(100, timeout=0.2):
                assert message.error() is None, message.error()
                messages.append((message.key(), message.value()))
        return messages
    finally:
        consumer.close()


def _table(name, columns, topic, bootstrap, **options):
    settings = {"connector": "kafka", "topic": topic,
                "properties.bootstrap.servers": bootstrap,
                "scan.startup.mode": "earliest-offset", "scan.bounded.mode": "latest-offset",
                **options}
    with_clause = ", ".join(f"'{k}' = '{v}'" for k, v in settings.items())
    return f"CREATE TABLE {name} ({columns}) WITH ({with_clause})"


def _rows(t_env, query):
    with t_env.execute_sql(query).collect() as results:
        return sorted(tuple(row) for row in results)


def test_json_values_are_read_as_rows(broker, t_env):
    topic = _topic(broker)
    _produce(broker.bootstrap, topic, [
        b'{"id": 1, "name": "a", "ts": "2023-01-01 10:00:00"}',
        b'{"id": 2, "name": null}', b'{"id": 3, "extra": true}'])
    t_env.execute_sql(_table("src", "id INT, name STRING, ts TIMESTAMP(3)", topic,
                             broker.bootstrap, format="json"))
    import datetime
    assert _rows(t_env, "SELECT * FROM src") == [
        (1, "a", datetime.datetime(2023, 1, 1, 10)), (2, None, None), (3, None, None)]


def test_csv_value_with_key_fields(broker, t_env):
    topic = _topic(broker)
    _produce(broker.bootstrap, topic, [b"10,x", b"20,y"], keys=[b"k1", b"k2"])
    t_env.execute_sql(_table(
        "src", "k STRING, v INT, s STRING", topic, broker.bootstrap,
        **{"key.format": "raw", "key.fields": "k", "value.format": "csv",
           "value.fields-include": "EXCEPT_KEY"}))
    assert _rows(t_env, "SELECT * FROM src") == [("k1", 10, "x"), ("k2", 20, "y")]


def test_rows_are_written_as_json_messages(broker, t_env):
    topic = _topic(broker)
    t_env.execute_sql(_table("out", "id BIGINT, name STRING", topic, broker.bootstrap,
                             format="json"))
    t_env.execute_sql("INSERT INTO out VALUES (1, 'a'), (2, CAST(NULL AS STRING))").wait()
    values = sorted(value for _, value in _consume(broker.bootstrap, topic))
    assert values == [b'{"id":1,"name":"a"}', b'{"id":2,"name":null}']


def test_avro_round_trip_with_keys(broker, t_env):
    topic = _topic(broker)
    t_env.execute_sql(_table(
        "t", "id BIGINT, name STRING, price DECIMAL(10, 2)", topic, broker.bootstrap,
        **{"value.format": "avro", "key.format": "json", "key.fields": "id"}))
    t_env.execute_sql("INSERT INTO t VALUES (1, 'a', 1.50), (2, 'b', 20.00)").wait()
    keys = sorted(json.loads(key)["id"] for key, _ in _consume(broker.bootstrap, topic))
    assert keys == [1, 2]
    import decimal
    assert _rows(t_env, "SELECT * FROM t") == [
        (1, "a", decimal.Decimal("1.50")), (2, "b", decimal.Decimal("20.00"))]


def test_exactly_once_sink_needs_a_transactional_id_prefix(broker, t_env):
    topic = _topic(broker)
    t_env.execute_sql(_table("out", "id INT", topic, broker.bootstrap, format="json",
                             **{"sink.delivery-guarantee": "exactly-once"}))
    with pytest.raises(ValidationError, match=r"sink\.transactional-id-prefix must be specified"):
        t_env.execute_sql("INSERT INTO out VALUES (1)")


def test_an_update_stream_is_refused_by_a_json_kafka_sink(broker, t_env):
    topic = _topic(broker)
    t_env.execute_sql(_table("out", "k STRING, c BIGINT", topic, broker.bootstrap,
                             format="json"))
    with pytest.raises(TableError, match="doesn't support consuming update changes"):
        t_env.execute_sql("INSERT INTO out SELECT k, COUNT(*) FROM (VALUES ('a'), ('a')) "
                          "AS t(k) GROUP BY k")


def test_unknown_and_missing_options_are_named(broker, t_env):
    t_env.execute_sql("CREATE TABLE a (id INT) WITH ('connector' = 'kafka', 'topic' = 'x', "
                      "'format' = 'json', 'properties.bootstrap.servers' = 'h:1', "
                      "'json.bogus' = '1')")
    with pytest.raises(ValidationError, match="Unsupported options found for 'kafka'"):
        t_env.execute_sql("SELECT * FROM a").collect()
    t_env.execute_sql("CREATE TABLE b (id INT) WITH ('connector' = 'kafka', 'topic' = 'x', "
                      "'properties.bootstrap.servers' = 'h:1')")
    with pytest.raises(ValidationError, match=r"value\.format"):
        t_env.execute_sql("SELECT * FROM b").collect()


def test_group_offsets_need_a_group_id(broker, t_env):
    topic = _topic(broker)
    t_env.execute_sql(_table("src", "id INT", topic, broker.bootstrap, format="json",
                             **{"scan.startup.mode": "group-offsets"}))
    with pytest.raises(ValidationError, match=r"'properties\.group\.id' is required"):
        t_env.execute_sql("SELECT * FROM src").collect()


def test_specific_offsets_start_there(broker, t_env):
    topic = _topic(broker, partitions=1)
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    for value in range(5):
        producer.produce(topic, json.dumps({"id": value}).encode(), partition=0)
    assert producer.flush(30) == 0
    t_env.execute_sql(_table("src", "id INT", topic, broker.bootstrap, format="json", **{
        "scan.startup.mode": "specific-offsets",
        "scan.startup.specific-offsets": "partition:0,offset:3"}))
    assert _rows(t_env, "SELECT * FROM src") == [(3,), (4,)]


def test_key_fields_prefix_is_stripped_in_the_key(broker, t_env):
    topic = _topic(broker)
    t_env.execute_sql(_table(
        "t", "k_id BIGINT, name STRING", topic, broker.bootstrap,
        **{"value.format": "json", "key.format": "json", "key.fields": "k_id",
           "key.fields-prefix": "k_", "value.fields-include": "EXCEPT_KEY"}))
    t_env.execute_sql("INSERT INTO t VALUES (5, 'a')").wait()
    assert _consume(broker.bootstrap, topic) == [(b'{"id":5}', b'{"name":"a"}')]
    assert _rows(t_env, "SELECT * FROM t") == [(5, "a")]
