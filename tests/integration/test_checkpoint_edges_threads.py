"""The edges of a checkpoint's life in the tasks (issue 29), end to end with TaskManagers
hosted as threads:

- stop-with-savepoint is synchronous: a sink without two-phase commit receives nothing the
  savepoint does not hold, so resuming from it delivers every record exactly once over both
  runs (before issue 29 the sources went on after the savepoint's barrier until the
  JobManager ended the attempt: those records came twice);
- stop with drain advances to the end of event time first: the window still open at the stop
  fires into the savepoint (before issue 29 ``advance_to_end_of_event_time`` was ignored);
- the coordinator's abort reaches an alignment in progress: while one input is stuck (its
  source blocked in user code, so its barrier never comes), each expired checkpoint releases
  the other input, which therefore keeps flowing (before issue 29 that input stayed blocked
  until the stuck one delivered its barrier).
"""

from __future__ import annotations

import os
import time

from flintlock.common import Duration, WatermarkStrategy
from flintlock.common.job_status import JobStatus
from flintlock.common.watermark_strategy import TimestampAssigner
from flintlock.datastream import MapFunction
from flintlock.datastream.connectors.number_seq import NumberSequenceSource
from flintlock.datastream.window import TumblingEventTimeWindows
from flintlock.testing.environments import local_environment
from flintlock.testing.gates import FileGate, HoldAt
from flintlock.testing.recording import CollectingSink, Recording
from flintlock.testing.waiting import wait_until

WAIT_S = 60.0
N = 50_000

FIRST = Recording("edges.first")
SECOND = Recording("edges.second")
SEEN = Recording("edges.seen")
WINDOWS = Recording("edges.windows")
FAST = Recording("edges.fast")


class Paced(MapFunction):
    """Passes numbers on, ``seconds`` each: keeps the job mid-stream when the stop comes."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def map(self, value):
        if self.seconds:
            time.sleep(self.seconds)  # pacing, not synchronisation
        return value


class Note(MapFunction):
    def __init__(self, recording: Recording) -> None:
        self.recording = recording

    def map(self, value):
        self.recording.append(value)
        return value


def _numbers(env, seconds: float, sink: Recording) -> None:
    """Numbers 0..N-1 to a sink without two-phase commit; every record flushed at once (no
    buffer timeout to hide what a stop lets through)."""
    env.set_buffer_timeout(0)
    (env.from_source(NumberSequenceSource(0, N - 1), WatermarkStrategy.no_watermarks(),
                     "numbers").uid("numbers")
        .map(Paced(seconds)).uid("paced")
        .rebalance()
        .sink_to(CollectingSink(sink)).uid("sink"))


def test_stop_with_savepoint_leaves_nothing_after_the_savepoint(executor, tmp_path):
    env = local_environment(tmp_path, 2)
    env.enable_checkpointing(60_000)
    _numbers(env, 0.0002, FIRST)
    client = env.execute_async("until the stop")
    assert FIRST.wait_for_length(1000, WAIT_S)
    path = client.stop_with_savepoint(savepoint_directory=str(tmp_path / "sp")).result(WAIT_S)
    assert client.jm.wait_for_status({JobStatus.FINISHED}, WAIT_S)
    assert os.path.exists(os.path.join(path, "_metadata"))
    assert 0 < len(FIRST) < N

    env2 = local_environment(tmp_path / "second", 2,
                             options={"execution.state-recovery.path": path})
    _numbers(env2, 0.0, SECOND)
    env2.execute("the rest")
    both = FIRST.items() + SECOND.items()
    assert len(both) == N, f"{len(both) - N} records came twice" if len(both) > N else both
    assert sorted(both) == list(range(N))


class ByValue(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return value


def _count(a, b):
    return (a[0], a[1] + b[1])


def test_stop_with_drain_fires_the_open_windows_into_the_savepoint(executor, tmp_path):
    env = local_environment(tmp_path, 1)
    env.enable_checkpointing(60_000)
    env.get_config().set_auto_watermark_interval(10)
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(ByValue())
    (env.from_source(NumberSequenceSource(0, N - 1), strategy, "numbers")
        .map(Paced(0.0002)).map(Note(SEEN))
        .map(lambda v: (v // 10_000_000, 1))
        .key_by(lambda pair: pair[0])
        .window(TumblingEventTimeWindows.of(Duration.of_millis(10_000_000)))
        .reduce(_count)
        .sink_to(CollectingSink(WINDOWS)))
    client = env.execute_async("drained")
    assert SEEN.wait_for_length(1000, WAIT_S)
    path = client.stop_with_savepoint(advance_to_end_of_event_time=True,
                                      savepoint_directory=str(tmp_path / "sp")).result(WAIT_S)
    assert client.jm.wait_for_status({JobStatus.FINISHED}, WAIT_S)
    assert os.path.exists(os.path.join(path, "_metadata"))
    assert 0 < len(SEEN) < N
    assert WINDOWS.items() == [(0, len(SEEN))]  # the one window, with every record seen


def test_an_expired_checkpoint_releases_the_input_an_alignment_blocked(executor, tmp_path):
    gate = FileGate(tmp_path / "stuck")
    env = local_environment(tmp_path, 1, options={
        "execution.checkpointing.timeout": "300 ms",
        "execution.checkpointing.tolerable-failed-checkpoints": "1000",
    })
    env.enable_checkpointing(100)
    fast_count = 3000
    stuck = (env.from_source(NumberSequenceSource(0, 99), WatermarkStrategy.no_watermarks(),
                             "stuck")
             .map(HoldAt(gate, 5, timeout_s=WAIT_S)))  # blocks its task: no barrier leaves it
    fast = (env.from_source(NumberSequenceSource(1000, 1000 + fast_count - 1),
                            WatermarkStrategy.no_watermarks(), "fast")
            .map(Paced(0.001)))
    stuck.union(fast).map(Note(FAST)).sink_to(CollectingSink(SEEN))
    client = env.execute_async("one input stuck")
    try:
        gate.wait_arrived(WAIT_S)
        wait_until(lambda: sum(1 for v in FAST.items() if v >= 1000) == fast_count, WAIT_S,
                   "the fast input stayed blocked behind the stuck one's alignment")
        assert not gate.is_open()
    finally:
        gate.open()
    assert client.jm.wait_for_status({JobStatus.FINISHED}, WAIT_S)
    assert sorted(SEEN.items()) == sorted([*range(100), *range(1000, 1000 + fast_count)])
