"""Async I/O on embedded Spark: PyFlink's remote-model-inference pattern (an ``AsyncFunction``
calling a service) against a stub service on 127.0.0.1 in the driver process, with a
TaskManager process killed mid-stream after a checkpoint: the requests in flight at that
checkpoint are re-issued by the restarted job and the output is exactly once."""

from __future__ import annotations

import sys
import time

import cloudpickle
import pytest

from flintlock.common import Time, Types
from flintlock.common.config import Configuration
from flintlock.datastream import (
    AsyncDataStream,
    AsyncFunction,
    CheckpointingMode,
    MapFunction,
    StreamExecutionEnvironment,
)
from flintlock.testing.faults import ExitOnceAfter
from flintlock.testing.files import completed_checkpoints
from flintlock.testing.gates import FileGate, gated_records, open_when
from flintlock.testing.slow_service import SlowService, query_async

pytestmark = [pytest.mark.spark, pytest.mark.slow]
cloudpickle.register_pickle_by_value(sys.modules[__name__])

N = 1500


class Inference(AsyncFunction):
    def __init__(self, address):
        self.address = address

    async def async_invoke(self, value):
        return [await query_async(self.address, str(value))]


class Paced(MapFunction):
    """Keeps the source from filling every network buffer at once, so checkpoint barriers
    do not wait behind the whole input (pacing only: the gate decides that the crash comes
    before the end)."""

    def map(self, value):
        time.sleep(0.002)
        return value


def _env(tmp_path):
    config = Configuration().set_string("execution.checkpointing.dir", str(tmp_path / "chk"))
    config.set_string("restart-strategy.type", "fixed-delay")
    config.set_string("restart-strategy.fixed-delay.delay", "100 ms")
    config.set_string("restart-strategy.fixed-delay.attempts", "2")
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(2)
    env.enable_checkpointing(100, CheckpointingMode.EXACTLY_ONCE)
    return env


def test_a_task_manager_killed_with_requests_in_flight_gives_exactly_once_output(tmp_path):
    env = _env(tmp_path)
    marker = tmp_path / "died"
    crash = ExitOnceAfter(marker, tmp_path / "chk" / "*" / "chk-*" / "_metadata", every=50)
    # the last 300 records wait until a checkpoint completed: the crash meets them at the
    # latest, however slow the checkpoints
    gate = FileGate(tmp_path / "gate")
    opener = open_when(gate, lambda: completed_checkpoints(tmp_path / "chk"))
    with SlowService(latency_s=0.02) as service:
        held = gated_records(env, gate, list(range(N)), before_gate=N - 300)
        stream = held.map(Paced()).set_parallelism(1).map(crash)
        results = list(AsyncDataStream.unordered_wait(
            stream, Inference(service.address), Time.seconds(60), 8, Types.STRING())
            .execute_and_collect())
    opener.join(60)
    assert marker.exists(), "the TaskManager was never killed"
    assert sorted(results, key=lambda s: int(s.split(":")[0])) == [f"{v}:ok" for v in range(N)]
