"""A job longer than the heartbeat timeout, without checkpoints, runs to its end: the
JobManager's own heartbeats keep its TaskManagers from declaring it lost."""

import time

import pytest

from flintlock.common.config import Configuration
from flintlock.datastream import StreamExecutionEnvironment
from flintlock.testing.executor import use_thread_executor


def _slow(x):
    time.sleep(0.01)  # the job's length is what is tested (3 s, the timeout is 1 s)
    return x


@pytest.mark.slow
def test_a_job_outlives_the_heartbeat_timeout(monkeypatch, tmp_path):
    use_thread_executor(monkeypatch)
    config = Configuration({
        "heartbeat.timeout": "1 s", "heartbeat.interval": "100 ms",
        "restart-strategy.type": "none",
        "execution.checkpointing.dir": str(tmp_path),
    })
    env = StreamExecutionEnvironment.get_execution_environment(config)
    started = time.monotonic()
    results = list(env.from_collection(list(range(300))).map(_slow).execute_and_collect())
    assert time.monotonic() - started > 2.0, "the job must outlive the heartbeat timeout"
    assert results == list(range(300))
