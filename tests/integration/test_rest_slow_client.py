"""A client trickling bytes to a job's REST endpoint (no token needed for that) cannot hold
the job's result: ``execute()`` and ``execute_and_collect()`` return once the job has ended,
while the slow client is still connected (issue 14)."""

from __future__ import annotations

import threading

import pytest

from flintlock.common.config import Configuration
from flintlock.datastream import StreamExecutionEnvironment
from flintlock.runtime.rest import jobfiles
from flintlock.testing.executor import use_thread_executor
from flintlock.testing.gates import FileGate, HoldAt
from flintlock.testing.waiting import wait_until
from tests.bad_clients import WAIT_S, Trickler

A_REQUEST = b"GET /jobs HTTP/1.0\r\n" + b"X-Slow: " + b"z" * 200 + b"\r\n\r\n"


@pytest.fixture
def gate(tmp_path) -> FileGate:
    """The job's first record waits at it (``HoldAt``) until the slow client is connected."""
    return FileGate(tmp_path / "gate")


@pytest.fixture
def env(monkeypatch, tmp_path) -> StreamExecutionEnvironment:
    monkeypatch.setenv("FLINTLOCK_HOME", str(tmp_path / "home"))
    use_thread_executor(monkeypatch)
    config = (Configuration()
              .set_string("execution.checkpointing.dir", str(tmp_path / "chk"))
              .set_string("restart-strategy.type", "none")
              .set_string("rest.port", "0"))
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(1)
    return env


def _slow_client_of_the_running_job() -> Trickler:
    wait_until(lambda: len(jobfiles.read_job_files()) == 1, WAIT_S * 3)
    (job,) = jobfiles.read_job_files()
    slow = Trickler((job.address, job.port), A_REQUEST, period_s=1.0)
    assert slow.started_sending.wait(WAIT_S)
    return slow


def test_execute_returns_while_a_slow_client_is_connected(env, gate) -> None:
    env.from_collection([1, 2, 3]).map(HoldAt(gate, 1)).print()
    outcome: list[object] = []
    runner = threading.Thread(target=lambda: outcome.append(env.execute("held")))
    runner.start()
    slow = _slow_client_of_the_running_job()
    try:
        gate.open()
        runner.join(WAIT_S * 3)
        assert not runner.is_alive() and outcome, "execute() did not return"
        assert not slow.finished_sending.is_set()  # the slow client had not finished
    finally:
        gate.open()
        slow.close()
        runner.join(WAIT_S)


def test_execute_and_collect_ends_while_a_slow_client_is_connected(env, gate) -> None:
    records = env.from_collection([1, 2, 3]).map(HoldAt(gate, 1)).execute_and_collect()
    slow = _slow_client_of_the_running_job()
    collected: list[int] = []
    reader = threading.Thread(target=lambda: collected.extend(records))
    reader.start()
    try:
        gate.open()
        reader.join(WAIT_S * 3)
        assert not reader.is_alive(), "the collect iterator did not end"
        assert sorted(collected) == [1, 2, 3]
        assert not slow.finished_sending.is_set()
    finally:
        gate.open()
        slow.close()
        reader.join(WAIT_S)
