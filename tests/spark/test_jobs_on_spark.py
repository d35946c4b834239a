"""Jobs through the public API on embedded Spark: TaskManagers are barrier-stage tasks in
Spark's Python workers, the JobManager runs on this (driver) process."""

from __future__ import annotations

import collections
import os
import sys
import threading
import time

import cloudpickle
import pytest

from flintlock.common.config import Configuration
from flintlock.common.job_status import JobStatus
from flintlock.datastream import StreamExecutionEnvironment
from flintlock.spark.session import active_context, available_slots
from flintlock.testing.faults import ExitOnce, FreezeOnce
from flintlock.testing.gates import FileGate, gated_numbers
from flintlock.testing.waiting import poll_until, wait_until

pytestmark = [pytest.mark.spark, pytest.mark.slow]
cloudpickle.register_pickle_by_value(sys.modules[__name__])

LINES = ["the quick brown fox", "jumps over the lazy dog", "the dog sleeps"] * 30


def _env(tmp_path, parallelism=2, **conf):
    config = Configuration().set_string("execution.checkpointing.dir", str(tmp_path / "chk"))
    config.set_string("restart-strategy.type", "fixed-delay")
    config.set_string("restart-strategy.fixed-delay.delay", "100 ms")
    config.set_string("restart-strategy.fixed-delay.attempts", "2")
    for key, value in conf.items():
        config.set_string(key, str(value))
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(parallelism)
    return env


def _counts_per_key(env, function, n=2000):
    """Running count per key after ``function``: each key must see exactly 1..n_k."""
    return (env.from_collection(list(range(n))).map(function)
            .map(lambda x: (x % 5, 1))
            .key_by(lambda p: p[0])
            .reduce(lambda a, b: (a[0], a[1] + b[1])))


def _expected_counts(n=2000):
    per_key = collections.Counter(x % 5 for x in range(n))
    return sorted((k, i) for k, count in per_key.items() for i in range(1, count + 1))


def test_three_vertex_keyed_job_at_parallelism_two(tmp_path):
    env = _env(tmp_path)
    counts = (env.from_collection(LINES)
              .flat_map(lambda line: line.split())
              .map(lambda word: (word, 1))
              .key_by(lambda pair: pair[0])
              .reduce(lambda a, b: (a[0], a[1] + b[1])))
    final = {}
    for word, count in counts.execute_and_collect("three vertices"):
        final[word] = max(count, final.get(word, 0))
    assert final == dict(collections.Counter(w for line in LINES for w in line.split()))


def test_a_task_manager_that_dies_is_restarted_and_output_is_exactly_once(tmp_path):
    env = _env(tmp_path)
    env.enable_checkpointing(200)
    marker = tmp_path / "died"
    results = list(_counts_per_key(env, ExitOnce(marker, 1000)).execute_and_collect())
    assert marker.exists(), "the TaskManager was never killed"
    assert sorted(results) == _expected_counts()


def test_a_task_manager_that_hangs_is_detected_by_heartbeat_and_restarted(tmp_path):
    env = _env(tmp_path, **{"heartbeat.timeout": "3 s", "heartbeat.interval": "500 ms"})
    env.enable_checkpointing(200)
    marker = tmp_path / "froze"
    started = time.monotonic()
    results = list(_counts_per_key(env, FreezeOnce(marker, 1000)).execute_and_collect())
    assert marker.exists(), "the TaskManager was never frozen"
    assert sorted(results) == _expected_counts()
    assert time.monotonic() - started < 120


def test_cancel_ends_the_spark_job_and_frees_every_slot(tmp_path):
    env = _env(tmp_path)
    gate = FileGate(tmp_path / "gate")  # never opened: the job runs until cancelled
    gated_numbers(env, gate, 100_000).print()
    client = env.execute_async("to be cancelled")
    assert client.jm.wait_until_running(120)
    gate.wait_arrived(120)
    client.cancel()
    assert client.jm.wait_for_status({JobStatus.CANCELED}, 60)
    assert client.join(60)
    sc = active_context()
    assert poll_until(lambda: not sc.statusTracker().getActiveJobsIds(), 30)
    assert available_slots(sc) >= 2


class _BlockForever:
    """Writes its process id, then blocks inside user code (unreachable by cancellation)."""

    def __init__(self, pid_file):
        self.pid_file = str(pid_file)

    def __call__(self, value):
        with open(self.pid_file, "w") as out:
            out.write(str(os.getpid()))
        threading.Event().wait(600)  # bounded; the watchdog ends the process long before
        return value


def _process_gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status") as status:
            return any(line.split()[1:2] == ["Z"] for line in status
                       if line.startswith("State:"))
    except FileNotFoundError:
        return True


def test_a_task_stuck_in_user_code_ends_its_task_manager_process_after_the_timeout(tmp_path):
    pid_file = tmp_path / "pid"
    env = _env(tmp_path, **{"task.cancellation.timeout": "2 s",
                            "task.cancellation.interval": "500 ms"})
    env.from_collection([1, 2, 3]).map(_BlockForever(pid_file)).print()
    client = env.execute_async("stuck")
    wait_until(lambda: pid_file.exists() and pid_file.read_text(), 60, "no task ran user code")
    pid = int(pid_file.read_text())
    cancelled = time.monotonic()
    client.cancel()
    assert client.jm.wait_for_status({JobStatus.CANCELED}, 60)
    poll_until(lambda: _process_gone(pid), 20)
    # without the watchdog the worker lives until the JobManager cancels the Spark job, 30 s on
    assert _process_gone(pid), "the stuck TaskManager's process is still running"
    assert time.monotonic() - cancelled < 20
    assert client.join(60)
    sc = active_context()
    poll_until(lambda: not sc.statusTracker().getActiveJobsIds(), 30)
    assert available_slots(sc) >= 2


def test_a_job_that_needs_more_slots_than_spark_has_fails_fast(tmp_path):
    env = _env(tmp_path, parallelism=3, **{"flintlock.spark.master": "local[2]"})
    env.from_collection([1, 2, 3]).map(lambda x: x).print()
    started = time.monotonic()
    with pytest.raises(Exception) as info:
        env.execute("too wide")
    message = str(info.value)
    assert "3" in message and "2" in message and "slot" in message.lower()
    assert time.monotonic() - started < 60


def test_the_jobs_own_modules_travel_to_the_task_managers(tmp_path, monkeypatch):
    """child-first (the default): a helper module only the driver can import still runs in
    the TaskManagers, shipped by value inside the job graph."""
    helper = (
        "import dataclasses\n"
        "@dataclasses.dataclass\n"
        "class Shout:\n"
        "    word: str\n"
        "def shout(word):\n"
        "    return Shout(word.upper() + '!')\n"
    )
    (tmp_path / "driver_only_helpers.py").write_text(helper)
    monkeypatch.syspath_prepend(str(tmp_path))
    import driver_only_helpers

    env = _env(tmp_path)
    shouted = (env.from_collection(["a", "b", "c", "d"]).map(driver_only_helpers.shout)
               .key_by(lambda s: s.word)  # instances of Shout cross TaskManagers
               .map(lambda s: s.word))
    assert sorted(shouted.execute_and_collect("shipped")) == ["A!", "B!", "C!", "D!"]
