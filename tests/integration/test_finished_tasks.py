"""Checkpoints go on after some subtasks finished, and a restore does not re-run them."""

import collections
import time

import pytest

from flintlock.common import WatermarkStrategy
from flintlock.common.config import Configuration
from flintlock.datastream import StreamExecutionEnvironment
from flintlock.datastream.connectors import Source
from flintlock.testing.executor import use_thread_executor
from flintlock.testing.faults import RaiseOnce


class UnevenSource(Source):
    """Subtask i emits the numbers of ``ranges[i]``, a few per poll."""

    def __init__(self, ranges):
        self.ranges = ranges

    def is_bounded(self):
        return True

    def create_reader(self, subtask_index, parallelism):
        return _Reader(*self.ranges[subtask_index])


class _Reader:
    def __init__(self, start, end):
        self.position, self.end = start, end

    def restore(self, state):
        if state:
            self.position = state[0]

    def poll(self, max_records):
        if self.end > 1000:
            time.sleep(0.003)  # the long range is slow: the short one surely finished first
        stop = min(self.end, self.position + min(max_records, 20))
        records = list(range(self.position, stop))
        self.position = stop
        return records, self.position >= self.end

    def snapshot_state(self, checkpoint_id):
        return [self.position]


@pytest.fixture
def executor(monkeypatch):
    return use_thread_executor(monkeypatch)


@pytest.mark.slow
def test_uneven_sources_finish_and_a_later_crash_does_not_rerun_the_finished_one(
        executor, tmp_path):
    config = Configuration().set_string("execution.checkpointing.dir", str(tmp_path / "chk"))
    config.set_string("restart-strategy.type", "fixed-delay")
    config.set_string("restart-strategy.fixed-delay.delay", "50 ms")
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(2)
    env.enable_checkpointing(30)
    marker = tmp_path / "crashed"
    ranges = [(0, 100), (100, 4000)]
    counts = (env.from_source(UnevenSource(ranges), WatermarkStrategy.no_watermarks(), "uneven")
              .map(RaiseOnce(marker, 3500))
              .map(lambda x: (x % 3, 1)).key_by(lambda p: p[0])
              .reduce(lambda a, b: (a[0], a[1] + b[1])))
    results = list(counts.execute_and_collect())
    assert marker.exists()
    per_key = collections.Counter(x % 3 for x in range(4000))
    assert sorted(results) == sorted(
        (key, i) for key, count in per_key.items() for i in range(1, count + 1))
