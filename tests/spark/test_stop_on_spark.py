"""Stop-with-savepoint on embedded Spark (issue 29): synchronous, so a sink without two-phase
commit, in Spark's Python workers, receives nothing the savepoint does not hold; resuming from
the savepoint on Spark delivers every other record, each once over both runs."""

from __future__ import annotations

import os
import sys
import threading
import time

import cloudpickle
import pytest

from flintlock.common import WatermarkStrategy
from flintlock.common.config import Configuration
from flintlock.common.job_status import JobStatus
from flintlock.datastream import StreamExecutionEnvironment
from flintlock.datastream.connectors.number_seq import NumberSequenceSource
from flintlock.testing.waiting import wait_until

pytestmark = [pytest.mark.spark, pytest.mark.slow]
cloudpickle.register_pickle_by_value(sys.modules[__name__])

N = 20_000


class AppendTo:
    """A sink without two-phase commit: each record appended to a file of its worker thread,
    after ``seconds`` (pacing, so the stop comes mid-stream)."""

    def __init__(self, directory: str, seconds: float) -> None:
        self.directory = directory
        self.seconds = seconds

    def __call__(self, value: int) -> int:
        if self.seconds:
            time.sleep(self.seconds)  # pacing, not synchronisation
        name = os.path.join(self.directory, f"{os.getpid()}-{threading.get_ident()}")
        with open(name, "a") as out:
            out.write(f"{value}\n")
        return value


def _written(directory) -> list[int]:
    return [int(line) for name in os.listdir(directory)
            for line in open(os.path.join(directory, name)).read().split()]


def _job(tmp_path, out, seconds: float, **conf) -> StreamExecutionEnvironment:
    out.mkdir(exist_ok=True)
    config = Configuration().set_string("execution.checkpointing.dir", str(tmp_path / "chk"))
    for key, value in conf.items():
        config.set_string(key, value)
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(2)
    env.set_buffer_timeout(0)
    (env.from_source(NumberSequenceSource(0, N - 1), WatermarkStrategy.no_watermarks(),
                     "numbers").uid("numbers")
        .rebalance()
        .map(AppendTo(str(out), seconds)).uid("sink")
        .filter(lambda x: False).print())
    return env


def test_stop_with_savepoint_on_spark_leaves_nothing_after_the_savepoint(tmp_path):
    first, second = tmp_path / "first", tmp_path / "second"
    client = _job(tmp_path, first, 0.001).execute_async("until the stop")
    wait_until(lambda: len(_written(first)) >= 200, 120, "nothing written")
    path = client.stop_with_savepoint(savepoint_directory=str(tmp_path / "sp")).result(120)
    assert client.jm.wait_for_status({JobStatus.FINISHED}, 120)
    assert 0 < len(_written(first)) < N

    _job(tmp_path / "again", second, 0.0,
         **{"execution.state-recovery.path": path}).execute("the rest")
    both = _written(first) + _written(second)
    assert len(both) == N, f"{len(both) - N} records came twice" if len(both) > N else both
    assert sorted(both) == list(range(N))
