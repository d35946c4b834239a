"""The exactly-once ``KafkaSink`` writer's transactional calls against a recording fake of
``confluent_kafka`` whose broker enforces transactions (fake_kafka.py), in Flink's order:

* the writer's producer is initialized (``init_transactions``) when the writer starts, after
  the restored ids were recovered, and before its own id can be in any checkpoint, as Flink's
  ``KafkaWriter`` initializes its first transactional producer;
* at a restore, each restored id is fenced first: ``init_transactions`` aborts the failed
  attempt's lingering transaction of that id before anything is written under it (Flink's
  ``TransactionAborter``), then the restored batches above its commit marker are committed
  (Flink's committer commits the restored committables at start-up);
* nothing is sent at the pre-commit (``snapshot_state``); on notify-checkpoint-complete each
  staged batch up to that checkpoint is one transaction: ``begin_transaction``, ``produce``,
  ``send_offsets_to_transaction`` (the commit marker), ``commit_transaction``;
* a writer of the failed attempt that lives on (a zombie) is fenced: its late commit fails.

And, with a crash injected before every single call in turn (and before every pair of them),
what a ``read_committed`` reader sees is every record exactly once and no transaction is left
open. The fake shows the order against Kafka's rules as the fake encodes them; that a real
broker keeps them is shown only by the real-broker tests (docs/connectors.md, "Tests, and what
they prove").
"""

from __future__ import annotations

import itertools

import pytest

from flintlock.common.serialization import SimpleStringSchema
from flintlock.datastream.connectors import _kafka_sink
from flintlock.datastream.connectors._kafka_sink import KafkaSinkError, WriterState
from flintlock.datastream.connectors.kafka import (
    DeliveryGuarantee,
    KafkaRecordSerializationSchema,
    KafkaSink,
)

from .fake_kafka import Crash, FakeKafka

TOPIC = "totals"
ONE_TRANSACTION = ["begin_transaction", "produce", "send_offsets_to_transaction",
                   "commit_transaction"]


@pytest.fixture
def kafka(monkeypatch):
    fake = FakeKafka()
    monkeypatch.setattr(_kafka_sink, "_kafka", fake.module)
    return fake


def _writer(subtask=0, parallelism=1):
    serializer = (KafkaRecordSerializationSchema.builder().set_topic(TOPIC)
                  .set_value_serialization_schema(SimpleStringSchema()).build())
    sink = (KafkaSink.builder().set_bootstrap_servers("fake:9092")
            .set_record_serializer(serializer)
            .set_delivery_guarantee(DeliveryGuarantee.EXACTLY_ONCE)
            .set_transactional_id_prefix("totals").build())
    writer = sink.create_writer(subtask, parallelism)
    writer.set_checkpointing(True)
    return writer


def _values(kafka):
    return [value.decode() for _, _, value in kafka.committed]


def _calls(kafka, who):
    return [call for caller, call in kafka.calls if caller == who]


def test_the_producer_is_initialized_at_the_start_and_each_notify_commits_one_transaction(
        kafka):
    writer = _writer()
    writer.restore([])
    own = writer.transactional_id
    assert kafka.calls == [(own, "init_transactions")]  # at the start, before any checkpoint
    kafka.calls.clear()
    writer.write(["a", "b"])
    state = writer.snapshot_state(1)
    writer.write(["c"])
    assert kafka.calls == []  # the pre-commit stages the batch in the state: nothing sent
    assert state == [WriterState(own, state[0].batches, TOPIC)]

    writer.commit(1)  # notify-checkpoint-complete of 1: its batch, in one transaction
    assert kafka.calls == [(own, "begin_transaction"), (own, "produce"), (own, "produce"),
                           (own, "send_offsets_to_transaction"), (own, "commit_transaction")]
    assert _values(kafka) == ["a", "b"]
    assert kafka.offsets == {(f"{own}.commits", TOPIC, 0): 1}  # the marker, atomically

    kafka.calls.clear()
    writer.snapshot_state(2)
    writer.snapshot_state(3)  # nothing new: no batch for 3
    writer.commit(3)  # the notify of 2 was lost: 3's commits everything up to 3
    assert kafka.calls == [(own, call) for call in ONE_TRANSACTION]
    assert kafka.offsets[f"{own}.commits", TOPIC, 0] == 2
    writer.close()
    assert _values(kafka) == ["a", "b", "c"]
    assert kafka.lingering() == []


def test_a_restore_aborts_the_lingering_transaction_before_it_commits_the_restored_batch(
        kafka):
    failed = _writer()
    failed.restore([])
    failed.write(["a"])
    state = failed.snapshot_state(1)
    old = failed.transactional_id
    kafka.crash_at = kafka.steps + 2  # dies in commit(1): begun, produced, never committed
    with pytest.raises(Crash):
        failed.commit(1)
    assert kafka.lingering() == [old]
    assert _values(kafka) == []
    kafka.crash_at = None
    kafka.calls.clear()

    restored = _writer()
    restored.restore(state)
    new = restored.transactional_id
    assert kafka.calls == [
        (old, "init_transactions"), (old, "aborted lingering transaction"),  # fenced first
        (f"{old}.commits", "committed"),  # the marker: checkpoint 1 is not in yet
        *[(old, call) for call in ONE_TRANSACTION],  # the restored batch, under its own id
        (new, "init_transactions"),  # then the new writer's own producer
    ]
    assert _values(kafka) == ["a"]
    assert kafka.lingering() == []


def test_a_restore_drops_a_batch_whose_transaction_committed_before_the_failure(kafka):
    failed = _writer()
    failed.restore([])
    failed.write(["a"])
    state = failed.snapshot_state(1)
    failed.commit(1)  # committed, then the job fails and restores checkpoint 1
    kafka.calls.clear()
    restored = _writer()
    restored.restore(state)
    old = failed.transactional_id
    assert _calls(kafka, old) == ["init_transactions"]  # fenced; nothing written again
    assert _values(kafka) == ["a"]


def test_a_writer_of_the_failed_attempt_that_lives_on_is_fenced(kafka):
    zombie = _writer()
    zombie.restore([])
    zombie.write(["a"])
    state = zombie.snapshot_state(1)
    restored = _writer()
    restored.restore(state)  # the new attempt commits checkpoint 1's batch
    with pytest.raises(KafkaSinkError, match="fenced"):
        zombie.commit(1)  # a late notify reaching the old attempt's writer
    assert _values(kafka) == ["a"]


INPUT = [["a", "b"], ["c"], [], ["d", "e", "f"]]  # the records before checkpoint 1, 2, ...


def _run(kafka, completed, crashes):
    """A job with one exactly-once sink subtask: restores ``completed`` (checkpoint id, state),
    replays the input after it (the source's position is in the same checkpoint), checkpoints
    after each part and commits on notify. A checkpoint completes once its state is taken
    (a crash point of its own). Returns the latest completed (id, state), or raises Crash."""
    checkpoint, state = completed
    writer = _writer()
    writer.restore(state)
    for part in range(checkpoint, len(INPUT)):
        writer.write(INPUT[part])
        snapshot = writer.snapshot_state(part + 1)
        kafka.step(None, f"checkpoint {part + 1} completes")
        completed = (part + 1, snapshot)
        crashes[0] = completed
        writer.commit(part + 1)
    writer.end_input()
    writer.close()
    return completed


def _run_until_done(kafka, crash_points):
    """Runs the job, restarting it from its latest completed checkpoint after each crash."""
    completed = (0, [])
    crashes = [completed]
    for crash_at in [*crash_points, None]:
        kafka.crash_at = None if crash_at is None else kafka.steps + crash_at
        try:
            return _run(kafka, crashes[0], crashes)
        except Crash:
            continue
    raise AssertionError("unreachable: the last run has no crash")


def _steps_of_a_run_without_failures():
    kafka = FakeKafka()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_kafka_sink, "_kafka", kafka.module)
        _run_until_done(kafka, [])
    return kafka.steps


@pytest.mark.parametrize("failures", [1, 2])
def test_a_crash_before_any_call_leaves_every_record_committed_once(failures):
    expected = [value for part in INPUT for value in part]
    steps = _steps_of_a_run_without_failures()
    for points in itertools.product(range(steps), repeat=failures):
        kafka = FakeKafka()
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(_kafka_sink, "_kafka", kafka.module)
            _run_until_done(kafka, list(points))
        assert _values(kafka) == expected, (points, kafka.calls)
        assert kafka.lingering() == [], (points, kafka.calls)
