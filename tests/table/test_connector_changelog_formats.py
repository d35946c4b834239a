"""Changelog sources: the ``debezium-json`` and ``canal-json`` formats read as Flink reads them
(row kinds, the before image of an update, skipped DDL, Flink's errors), through the
``filesystem`` connector and through Kafka; the ``upsert-kafka`` connector (a PRIMARY KEY, key
and value formats, tombstones both ways, the normalized changelog of its source) against
librdkafka's mock cluster (tests/unit/connectors/kafka_broker.py). Jobs on TaskManager
threads."""

import json
import uuid
from decimal import Decimal

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from flintlock.common.types import RowKind
from flintlock.table import DataTypes, EnvironmentSettings, TableEnvironment
from flintlock.table.connectors._options import Options
from flintlock.table.errors import ValidationError
from flintlock.table.formats import FormatParseError, lookup
from flintlock.table.plan.nodes import Field
from flintlock.testing.executor import use_thread_executor
from tests.unit.connectors.kafka_broker import kafka_broker

FIELDS = [Field("id", DataTypes.INT()), Field("name", DataTypes.STRING()),
          Field("weight", DataTypes.DECIMAL(10, 2))]
KIND = {RowKind.INSERT: "+I", RowKind.UPDATE_BEFORE: "-U", RowKind.UPDATE_AFTER: "+U",
        RowKind.DELETE: "-D"}


def _changes(name, line, **options):
    read = lookup(name).changelog_reader(
        FIELDS, Options({f"{name}.{k.replace('_', '-')}": v for k, v in options.items()}), name)
    return [(KIND[row.get_row_kind()], *row) for row in read(line)]


def _debezium(op, before=None, after=None):
    return json.dumps({"before": before, "after": after, "op": op, "source": {}})


A = {"id": 1, "name": "a", "weight": 1.5}
B = {"id": 1, "name": "a", "weight": "2.25"}


def test_debezium_events_become_row_kinds():
    assert _changes("debezium-json", _debezium("r", after=A)) == [("+I", 1, "a", Decimal("1.5"))]
    assert _changes("debezium-json", _debezium("c", after=A))[0][0] == "+I"
    assert _changes("debezium-json", _debezium("u", before=A, after=B)) == [
        ("-U", 1, "a", Decimal("1.5")), ("+U", 1, "a", Decimal("2.25"))]
    assert _changes("debezium-json", _debezium("d", before=B)) == [
        ("-D", 1, "a", Decimal("2.25"))]
    assert _changes("debezium-json", "") == []


def test_debezium_with_the_schema_included():
    line = json.dumps({"schema": {"type": "struct"}, "payload": {"op": "c", "after": A}})
    assert _changes("debezium-json", line, schema_include="true") == [
        ("+I", 1, "a", Decimal("1.5"))]


def test_debezium_errors_are_flinks_and_can_be_ignored():
    with pytest.raises(FormatParseError, match=r"Corrupt Debezium JSON message 'nope'\."):
        _changes("debezium-json", "nope")
    with pytest.raises(FormatParseError, match='Unknown "op" value "x"'):
        _changes("debezium-json", _debezium("x", after=A))
    with pytest.raises(FormatParseError, match="REPLICA IDENTITY to FULL"):
        _changes("debezium-json", _debezium("u", after=A))
    assert _changes("debezium-json", "nope", ignore_parse_errors="true") == []


def test_canal_events_become_row_kinds():
    insert = {"data": [{"id": "1", "name": "a", "weight": "1.5"}, {"id": "2", "name": "b"}],
              "type": "INSERT", "database": "d", "table": "t"}
    assert _changes("canal-json", json.dumps(insert)) == [
        ("+I", 1, "a", Decimal("1.5")), ("+I", 2, "b", None)]
    update = {"data": [{"id": "1", "name": "a", "weight": "2"}], "old": [{"weight": "1.5"}],
              "type": "UPDATE"}
    assert _changes("canal-json", json.dumps(update)) == [
        ("-U", 1, "a", Decimal("1.5")), ("+U", 1, "a", Decimal("2"))]
    delete = {"data": [{"id": "2", "name": "b"}], "type": "DELETE"}
    assert _changes("canal-json", json.dumps(delete)) == [("-D", 2, "b", None)]
    assert _changes("canal-json", json.dumps({"type": "CREATE", "data": None})) == []


def test_canal_include_filters_and_errors():
    event = json.dumps({"data": [{"id": "1"}], "type": "INSERT", "database": "shop",
                        "table": "orders"})
    assert _changes("canal-json", event, **{"table.include": "ord.*"}) != []
    assert _changes("canal-json", event, **{"database.include": "other"}) == []
    with pytest.raises(FormatParseError, match='Unknown "type" value "ALTER"'):
        _changes("canal-json", json.dumps({"type": "ALTER", "data": []}))
    with pytest.raises(FormatParseError, match="Corrupt Canal JSON message"):
        _changes("canal-json", "[1]")


def test_the_other_formats_read_one_insert_row_per_line():
    read = lookup("csv").changelog_reader(FIELDS, Options({}), "csv")
    assert [(KIND[r.get_row_kind()], *r) for r in read("1,a,2.5")] == [
        ("+I", 1, "a", Decimal("2.5"))]


# -- jobs ------------------------------------------------------------------------------------

@pytest.fixture
def t_env(monkeypatch):
    use_thread_executor(monkeypatch)
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.get_config().set("parallelism.default", "1")
    return env


def _collect(t_env, query):
    with t_env.execute_sql(query).collect() as results:
        return [(KIND[row.get_row_kind()], *row) for row in results]


def test_a_debezium_file_is_a_changelog_source(t_env, tmp_path):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "events.json").write_text("\n".join([
        _debezium("r", after=A), _debezium("u", before=A, after=B),
        _debezium("c", after={"id": 2, "name": "b", "weight": 1}),
        _debezium("d", before={"id": 2, "name": "b", "weight": 1})]) + "\n")
    t_env.execute_sql(f"CREATE TABLE p (id INT, name STRING, weight DECIMAL(10, 2)) WITH ("
                      f"'connector' = 'filesystem', 'path' = '{tmp_path / 'in'}', "
                      "'format' = 'debezium-json')")
    assert _collect(t_env, "SELECT * FROM p") == [
        ("+I", 1, "a", Decimal("1.50")), ("-U", 1, "a", Decimal("1.50")),
        ("+U", 1, "a", Decimal("2.25")), ("+I", 2, "b", Decimal("1.00")),
        ("-D", 2, "b", Decimal("1.00"))]
    assert _collect(t_env, "SELECT SUM(weight) FROM p")[-1] == ("+U", Decimal("2.25"))


@pytest.fixture(scope="module")
def broker():
    with kafka_broker() as running:
        yield running


def _topic(broker):
    name = f"t-{uuid.uuid4().hex[:8]}"
    broker.create_topic(name, 1)
    return name


def _produce(broker, topic, messages):
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    for key, value in messages:
        producer.produce(topic, value, key)
    assert producer.flush(30) == 0


def _consume(broker, topic):
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": f"c-{uuid.uuid4()}",
                         "enable.auto.commit": False})
    try:
        end = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)[1]
        consumer.assign([TopicPartition(topic, 0, 0)])
        messages = []
        for _ in range(300):
            if len(messages) >= end:
                break
            for message in consumer.consume(100, timeout=0.1):
                assert message.error() is None, message.error()
                messages.append((message.key(), message.value()))
        return messages
    finally:
        consumer.close()


def _upsert_table(name, columns, topic, broker, **options):
    settings = {"connector": "upsert-kafka", "topic": topic,
                "properties.bootstrap.servers": broker.bootstrap, "key.format": "json",
                "value.format": "json", "scan.bounded.mode": "latest-offset", **options}
    rendered = ", ".join(f"'{k}' = '{v}'" for k, v in settings.items())
    return f"CREATE TABLE {name} ({columns}) WITH ({rendered})"


def test_debezium_messages_from_kafka(broker, t_env):
    topic = _topic(broker)
    _produce(broker, topic, [(None, _debezium("c", after=A).encode()), (None, None),
                             (None, _debezium("u", before=A, after=B).encode())])
    t_env.execute_sql(f"CREATE TABLE p (id INT, name STRING, weight DECIMAL(10, 2)) WITH ("
                      f"'connector' = 'kafka', 'topic' = '{topic}', 'properties.bootstrap."
                      f"servers' = '{broker.bootstrap}', 'scan.startup.mode' = "
                      "'earliest-offset', 'scan.bounded.mode' = 'latest-offset', "
                      "'format' = 'debezium-json')")
    assert [k for k, *_ in _collect(t_env, "SELECT * FROM p")] == ["+I", "-U", "+U"]


def test_upsert_kafka_source_normalizes_upserts_and_tombstones(broker, t_env):
    topic = _topic(broker)
    _produce(broker, topic, [
        (b'{"k":"a"}', b'{"k":"a","v":1}'), (b'{"k":"b"}', b'{"k":"b","v":2}'),
        (b'{"k":"a"}', b'{"k":"a","v":3}'), (b'{"k":"a"}', b'{"k":"a","v":3}'),
        (b'{"k":"b"}', None), (b'{"k":"c"}', None)])
    t_env.execute_sql(_upsert_table("u", "k STRING, v INT, PRIMARY KEY (k) NOT ENFORCED",
                                    topic, broker))
    assert _collect(t_env, "SELECT * FROM u") == [
        ("+I", "a", 1), ("+I", "b", 2), ("-U", "a", 1), ("+U", "a", 3), ("-D", "b", 2)]


def test_upsert_kafka_sink_writes_upserts_and_tombstones(broker, t_env):
    topic = _topic(broker)
    t_env.execute_sql(_upsert_table("counts", "w STRING, c BIGINT, PRIMARY KEY (w) NOT ENFORCED",
                                    topic, broker))
    t_env.execute_sql("CREATE TEMPORARY VIEW words AS SELECT * FROM (VALUES ('a'), ('b'), "
                      "('b')) AS t(w)")
    t_env.execute_sql("INSERT INTO counts SELECT w, cnt FROM (SELECT w, COUNT(*) AS cnt FROM "
                      "words GROUP BY w) WHERE cnt < 2").wait()
    assert _consume(broker, topic) == [
        (b'{"w":"a"}', b'{"w":"a","c":1}'), (b'{"w":"b"}', b'{"w":"b","c":1}'),
        (b'{"w":"b"}', None)]


def test_upsert_kafka_needs_a_primary_key_and_both_formats(broker, t_env):
    t_env.execute_sql(_upsert_table("nokey", "k STRING", "t", broker))
    with pytest.raises(ValidationError, match="require to define a PRIMARY KEY"):
        _collect(t_env, "SELECT * FROM nokey")
    t_env.execute_sql(_upsert_table("cdc", "k STRING, PRIMARY KEY (k) NOT ENFORCED", "t",
                                    broker, **{"value.format": "debezium-json"}))
    with pytest.raises(ValidationError, match="not in insert-only mode"):
        _collect(t_env, "SELECT * FROM cdc")


def test_debezium_json_writes_rows_as_flink_does():
    from flintlock.common.types import row_of

    write = lookup("debezium-json").writer(FIELDS, Options({}), "debezium-json")
    assert write(row_of([1, "a", Decimal("1.50")], RowKind.UPDATE_AFTER)) == (
        '{"before":null,"after":{"id":1,"name":"a","weight":1.5},"op":"c"}')
    assert write(row_of([1, "a", None], RowKind.UPDATE_BEFORE)) == (
        '{"before":{"id":1,"name":"a","weight":null},"after":null,"op":"d"}')
