"""A second reproduction of the restore stall of docs/known-issues.md, found while writing the
broadcast-state tests: a fast source that finishes at once, a slow source failing once after a
checkpoint, two-input tasks after them. On the parent commit of the event-time branch
(d90869f) the restored attempt hung in 3 of 5 runs: both sources wait for their final
checkpoint, every other task waits for input. No broadcast state or event time is involved
(the fast source goes through the plain ``broadcast()`` partitioner into a CoProcessFunction).
Marked like the first reproduction; it passes once the stall is fixed.
"""

import glob
import os
import time

import pytest

from flintlock.common.config import Configuration
from flintlock.datastream import (
    CheckpointingMode,
    CoProcessFunction,
    MapFunction,
    StreamExecutionEnvironment,
)
from flintlock.testing.executor import use_thread_executor


@pytest.fixture
def executor(monkeypatch):
    return use_thread_executor(monkeypatch)


class SlowCrashOnce(MapFunction):
    def __init__(self, marker, pattern):
        self.marker = str(marker)
        self.pattern = str(pattern)

    def map(self, value):
        if not os.path.exists(self.marker):
            time.sleep(0.001)
            if glob.glob(self.pattern):
                open(self.marker, "w").close()
                raise RuntimeError("injected failure")
        return value


class FirstInputOnly(CoProcessFunction):
    def process_element1(self, value, ctx):
        yield value

    def process_element2(self, value, ctx):
        return None


def test_a_job_with_an_early_finished_source_recovers(executor, tmp_path):
    config = Configuration().set_string("execution.checkpointing.dir", str(tmp_path / "chk"))
    config.set_string("restart-strategy.type", "fixed-delay")
    config.set_string("restart-strategy.fixed-delay.delay", "20 ms")
    config.set_string("restart-strategy.fixed-delay.attempts", "3")
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(2)
    env.enable_checkpointing(30, CheckpointingMode.EXACTLY_ONCE)
    marker = tmp_path / "crashed"
    crash = SlowCrashOnce(marker, tmp_path / "chk" / "*" / "chk-*" / "_metadata")
    fast = env.from_collection([("rule", 1), ("rule", 2)]).broadcast()
    slow = env.from_collection([(f"k{i % 7}", i) for i in range(1500)]) \
        .map(crash).set_parallelism(1)
    out = list(slow.key_by(lambda e: e[0]).connect(fast).process(FirstInputOnly())
               .execute_and_collect())
    assert marker.exists(), "the failure was never injected"
    assert sorted(out) == sorted((f"k{i % 7}", i) for i in range(1500))
