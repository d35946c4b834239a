"""Checkpoints go on after some subtasks finished, and a restore does not re-run them."""

import collections
import os
import threading

import pytest

from flintlock.common import WatermarkStrategy
from flintlock.common.config import Configuration
from flintlock.datastream import StreamExecutionEnvironment
from flintlock.datastream.connectors import Source
from flintlock.datastream.functions import MapFunction
from flintlock.runtime.taskmanager.task_manager import TaskManager
from flintlock.testing.faults import RaiseOnce, RaiseOnceAfter
from flintlock.testing.files import completed_checkpoints
from flintlock.testing.gates import FileGate, gated_numbers, open_when
from flintlock.testing.waiting import poll_until


def _env(tmp_path, parallelism, restart_delay, interval_ms):
    """Checkpoints every ``interval_ms`` under ``tmp_path``, fixed-delay restarts."""
    config = Configuration().set_string("execution.checkpointing.dir", str(tmp_path / "chk"))
    config.set_string("restart-strategy.type", "fixed-delay")
    config.set_string("restart-strategy.fixed-delay.delay", restart_delay)
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(parallelism)
    env.enable_checkpointing(interval_ms)
    return env


class UnevenSource(Source):
    """Subtask i emits the numbers of ``ranges[i]``, a few per poll. The first range is the
    short one: once a checkpoint completed after its reader finished (its final checkpoint),
    it opens ``gate``; the other readers emit nothing until then, so the short subtask has
    surely finished before the long ones get far."""

    def __init__(self, ranges, gate):
        self.ranges = ranges
        self.gate = gate

    def is_bounded(self):
        return True

    def create_reader(self, subtask_index, parallelism):
        return _Reader(*self.ranges[subtask_index], self.gate, opens=subtask_index == 0)


class _Reader:
    def __init__(self, start, end, gate, opens):
        self.position, self.end = start, end
        self.gate, self.opens = gate, opens

    def restore(self, state):
        if state:
            self.position = state[0]

    def poll(self, max_records):
        if not self.opens and not self.gate.is_open():
            return [], False
        stop = min(self.end, self.position + min(max_records, 20))
        records = list(range(self.position, stop))
        self.position = stop
        return records, self.position >= self.end

    def snapshot_state(self, checkpoint_id):
        return [self.position]

    def notify_checkpoint_complete(self, checkpoint_id):
        if self.opens and self.position >= self.end:
            self.gate.open()


@pytest.mark.slow
def test_uneven_sources_finish_and_a_later_crash_does_not_rerun_the_finished_one(
        executor, tmp_path):
    env = _env(tmp_path, parallelism=2, restart_delay="50 ms", interval_ms=30)
    marker = tmp_path / "crashed"
    ranges = [(0, 100), (100, 4000)]
    source = UnevenSource(ranges, FileGate(tmp_path / "gate"))
    counts = (env.from_source(source, WatermarkStrategy.no_watermarks(), "uneven")
              .map(RaiseOnce(marker, 3500))
              .map(lambda x: (x % 3, 1)).key_by(lambda p: p[0])
              .reduce(lambda a, b: (a[0], a[1] + b[1])))
    results = list(counts.execute_and_collect())
    assert marker.exists()
    per_key = collections.Counter(x % 3 for x in range(4000))
    assert sorted(results) == sorted(
        (key, i) for key, count in per_key.items() for i in range(1, count + 1))


FAILOVER_BEGAN = threading.Event()
"""Set once a TaskManager was told to cancel its tasks: the JobManager began a failover."""


class CloseAfterMarker(MapFunction):
    """A map whose ``close`` waits until ``marker`` exists and then until the JobManager has
    cancelled the failed attempt's tasks (``FAILOVER_BEGAN``; TaskManagers are threads of
    this process): a bounded source's task chained to it reports FINISHED only after the
    job's failover began."""

    def __init__(self, marker):
        self.marker = str(marker)

    def map(self, value):
        return value

    def close(self):
        poll_until(lambda: os.path.exists(self.marker), 10.0)
        FAILOVER_BEGAN.wait(10.0)


@pytest.mark.slow
def test_a_task_of_the_failed_attempt_finishing_late_does_not_count_for_the_restored_one(
        executor, tmp_path, monkeypatch):
    """Attempt 0's bounded source finishes (its final checkpoint completed) only after the
    failover began. Its FINISHED must not be taken for the restored attempt's: the
    coordinator would then never trigger the restored source, whose barriers the keyed
    task waits for, and the job would stall for good.

    The other source holds its numbers at a gate after the first 100 until a checkpoint has
    completed, and the failure comes at the first number after the hold: no pace decides
    whether the numbers end before a checkpoint does."""
    FAILOVER_BEGAN.clear()
    cancel = TaskManager._on_cancel

    def on_cancel(self, connection, message):
        cancel(self, connection, message)
        FAILOVER_BEGAN.set()

    monkeypatch.setattr(TaskManager, "_on_cancel", on_cancel)
    env = _env(tmp_path, parallelism=1, restart_delay="20 ms", interval_ms=20)
    marker = tmp_path / "crashed"
    pattern = tmp_path / "chk" / "*" / "chk-*" / "_metadata"
    gate = FileGate(tmp_path / "gate")
    opener = open_when(gate, lambda: completed_checkpoints(tmp_path / "chk"))
    elements = env.from_collection([-1, -2]).map(CloseAfterMarker(marker))
    ticks = gated_numbers(env, gate, 3000, before_gate=100).map(
        RaiseOnceAfter(marker, pattern, delay_s=0.0))
    out = list(elements.union(ticks).key_by(lambda x: x % 2).map(lambda x: x)
               .execute_and_collect())
    opener.join(10)
    assert marker.exists(), "the failure was never injected"
    assert FAILOVER_BEGAN.is_set(), "no TaskManager was told to cancel: no failover"
    assert sorted(out) == sorted([-1, -2, *range(3000)])
