"""End-to-end jobs through the DataStream API, the JobManager and real TaskManagers (RPC and
TCP between them), with the TaskManagers hosted as threads instead of Spark tasks."""

import collections
import os
import threading
import time

import pytest

from flintlock.common import WatermarkStrategy
from flintlock.common.job_status import JobStatus
from flintlock.datastream import CheckpointingMode
from flintlock.datastream.connectors.number_seq import NumberSequenceSource
from flintlock.datastream.functions import CoMapFunction
from flintlock.testing.environments import local_environment
from flintlock.testing.faults import RaiseOnce
from flintlock.testing.gates import FileGate, gated_numbers
from flintlock.testing.waiting import poll_until

# Module-level, so user functions refer to them by reference (TaskManagers are threads here).

WORDS = ["to be or not to be", "that is the question", "be quick or be dead"] * 40


def _env(tmp_path, parallelism=2, **conf):
    return local_environment(tmp_path, parallelism, restart_attempts=3, options={
        key.replace("_", "."): value for key, value in conf.items()})


def _word_counts(env):
    return (env.from_collection(WORDS)
            .flat_map(lambda line: line.split())
            .map(lambda word: (word, 1))
            .key_by(lambda pair: pair[0])
            .reduce(lambda a, b: (a[0], a[1] + b[1])))


def _final(results):
    final = {}
    for word, count in results:
        final[word] = max(count, final.get(word, 0))
    return final


def test_keyed_running_count_at_parallelism_two(executor, tmp_path):
    results = list(_word_counts(_env(tmp_path)).execute_and_collect())
    expected = collections.Counter(w for line in WORDS for w in line.split())
    assert _final(results) == dict(expected)
    assert len(results) == sum(expected.values())


def _crashing_counts(env, marker, n=4000):
    """Running count per key: order-independent, so every key must see exactly 1..n_k."""
    return (env.from_collection(list(range(n)))
            .map(RaiseOnce(marker, n // 2))
            .map(lambda x: (x % 7, 1))
            .key_by(lambda p: p[0])
            .reduce(lambda a, b: (a[0], a[1] + b[1])))


@pytest.mark.slow
@pytest.mark.parametrize("mode", [CheckpointingMode.EXACTLY_ONCE, CheckpointingMode.AT_LEAST_ONCE])
def test_restart_after_a_crash_restores_the_latest_checkpoint(executor, tmp_path, mode):
    env = _env(tmp_path)
    env.enable_checkpointing(50, mode)
    marker = tmp_path / "crashed"
    results = list(_crashing_counts(env, marker).execute_and_collect())
    assert marker.exists(), "the failure was never injected"
    per_key = collections.Counter(x % 7 for x in range(4000))
    expected = sorted((key, i) for key, n in per_key.items() for i in range(1, n + 1))
    if mode is CheckpointingMode.EXACTLY_ONCE:
        assert sorted(results) == expected
    else:
        assert set(results) == set(expected)
    assert len(executor.launchers[-1].attempts) >= 2


def test_a_failure_without_restarts_fails_the_job_with_the_user_error(executor, tmp_path):
    env = _env(tmp_path, **{"restart-strategy.type": "none"})
    env.from_collection([1, 2, 3]).map(lambda x: 1 // (x - 2)).print()
    with pytest.raises(Exception) as info:
        env.execute("divide")
    text = str(info.value) + repr(info.value.__cause__)
    assert "ZeroDivisionError" in text


@pytest.mark.parametrize("run", range(10))
def test_the_job_fails_with_the_users_error_not_its_producers_destroyed_pool(
        executor, tmp_path, run):
    """The failing map releases its input, which destroys the busy source's output pool in
    the same TaskManager; the source's report of that may reach the JobManager first (it did
    in about one run in five), and must not become the job's cause."""
    env = _env(tmp_path, **{"restart-strategy.type": "none"})
    small = env.from_collection([-1, -2, -3])
    numbers = env.from_source(NumberSequenceSource(0, 10**6), WatermarkStrategy.no_watermarks(),
                              "numbers")
    small.union(numbers).map(RaiseOnce(tmp_path / "failed", 5000)).filter(
        lambda v: False).print()
    with pytest.raises(Exception) as info:
        env.execute("fails")
    assert "InjectedFailure" in str(info.value), str(info.value)


def test_connect_with_co_map_and_union(executor, tmp_path):
    env = _env(tmp_path)
    numbers = env.from_collection([1, 2, 3])
    letters = env.from_collection(["a", "b"])

    class Tag(CoMapFunction):
        def map1(self, value):
            return ("n", value)

        def map2(self, value):
            return ("s", value)

    tagged = numbers.connect(letters).map(Tag())
    merged = tagged.union(env.from_collection([("u", 0)]))
    assert sorted(merged.execute_and_collect()) == [
        ("n", 1), ("n", 2), ("n", 3), ("s", "a"), ("s", "b"), ("u", 0)]


def test_cancel_ends_the_job_and_leaves_no_threads(executor, tmp_path):
    before = {t.name for t in threading.enumerate()}
    env = _env(tmp_path)
    gate = FileGate(tmp_path / "gate")
    gated_numbers(env, gate, 100_000).print()
    client = env.execute_async("held job")
    gate.wait_arrived(30)
    client.cancel()
    assert client.jm.wait_for_status({JobStatus.CANCELED}, 30)
    assert client.join(30)
    for launcher in executor.launchers:
        for attempt in launcher.attempts:
            assert attempt.wait(30)
    leftover = {t.name for t in threading.enumerate()} - before
    assert not {name for name in leftover if name.startswith("flintlock")}, leftover


def _counts_per_key(env, gate, n):
    """Keyed counts of 0..n-1 modulo 5; each source reader holds after n // 4 numbers until
    ``gate`` opens."""
    return (gated_numbers(env, gate, n, before_gate=n // 4)
            .key_by(lambda x: x % 5).map(lambda x: (x % 5, 1))
            .key_by(lambda p: p[0]).reduce(lambda a, b: (a[0], a[1] + b[1])))


@pytest.mark.slow
def test_stop_with_savepoint_then_restore_at_another_parallelism(executor, tmp_path):
    n = 3000
    gate = FileGate(tmp_path / "gate")
    env = _env(tmp_path, parallelism=2)
    env.enable_checkpointing(1000)
    _counts_per_key(env, gate, n).print()
    client = env.execute_async("first half")
    gate.wait_arrived(60)  # half of the input is held back
    assert client.jm.wait_until_running(60)
    path = client.stop_with_savepoint(savepoint_directory=str(tmp_path / "sp")).result(60)
    assert client.jm.wait_for_status({JobStatus.FINISHED}, 60)
    assert os.path.exists(os.path.join(path, "_metadata"))

    gate.open()
    env2 = _env(tmp_path / "second", parallelism=3,
                **{"execution.state-recovery.path": path})
    final = _final(list(_counts_per_key(env2, gate, n).execute_and_collect()))
    assert final == {k: n // 5 for k in range(5)}  # the counts of both halves, each once


def _sleepy(x):
    time.sleep(0.005)  # the slow, busy map these tests are about (100 000 records: 500 s)
    return x


def test_subtasks_report_busy_backpressured_and_idle_time(executor, tmp_path):
    env = _env(tmp_path, parallelism=1, **{"heartbeat.interval": "200 ms"})
    env.from_collection(list(range(100_000))).rebalance().map(_sleepy).print()
    client = env.execute_async("time split")
    try:
        assert client.jm.wait_until_running(60)
        poll_until(lambda: (tasks := client.jm.describe().tasks)
                   and all(_time_split(t) is not None for t in tasks), 30)
        times = {t.vertex_name: _time_split(t) for t in client.jm.describe().tasks}
    finally:
        client.cancel()
        client.join(60)
    for split in times.values():
        assert split is not None
        assert abs(sum(split) - 1000.0) < 1e-6
    source = next(v for name, v in times.items() if name.startswith("Source"))
    sink_side = next(v for name, v in times.items() if not name.startswith("Source"))
    assert source is not None and sink_side is not None
    assert source[1] > 500, times  # the slow map holds the source back
    assert sink_side[0] > 500, times  # the slow map itself is busy


def _time_split(task):
    """(busy, backpressured, idle) ms per second from the subtask's latest metrics report."""
    if task.metrics is None:
        return None
    split = tuple(task.metrics.value(name) for name in (
        "busyTimeMsPerSecond", "backPressuredTimeMsPerSecond", "idleTimeMsPerSecond"))
    return None if any(value is None for value in split) else split


def test_a_savepoint_requested_between_periodic_checkpoints_completes(executor, tmp_path):
    """Two checkpoint triggers queued together must reach a source in order (they once ran
    reversed, so the savepoint's barrier came after a newer one and was ignored)."""
    env = _env(tmp_path, parallelism=1)
    env.enable_checkpointing(50)
    env.from_collection(list(range(100_000))).map(_sleepy).key_by(lambda x: x % 3).map(
        lambda x: x).print()
    client = env.execute_async("savepoints between checkpoints")
    assert client.jm.wait_until_running(60)
    for attempt in range(3):
        path = client.trigger_savepoint(str(tmp_path / f"sp{attempt}")).result(60)
        assert os.path.exists(os.path.join(path, "_metadata"))
    client.stop_with_savepoint(savepoint_directory=str(tmp_path / "final")).result(60)
    assert client.jm.wait_for_status({JobStatus.FINISHED}, 60)
    assert client.join(60)
