"""Repeated failures at varied points of a job, on TaskManager threads: after each restore the
job runs on to the next completed checkpoint and fails again, several times, and the output
seen by the caller must equal the failure-free run exactly (exactly-once), in aligned and
unaligned mode. The job mixes the shapes that found restore bugs before: a bounded source that
finishes early (finished tasks and final checkpoints across a restore), a keyed exchange with
state, and sources kept busy so that checkpoints complete all along the run."""

import collections
import random
import time

import pytest

from flintlock.common import Types, WatermarkStrategy
from flintlock.datastream import CheckpointingMode
from flintlock.datastream.connectors.number_seq import NumberSequenceSource
from flintlock.datastream.functions import MapFunction
from flintlock.datastream.state import ValueStateDescriptor
from flintlock.testing.environments import local_environment
from flintlock.testing.faults import RaiseRepeatedly

N = 12000
FAILURES = 3


def _running_counts(values):
    counts = collections.Counter()
    out = []
    for value in values:
        key = value % 7
        counts[key] += 1
        out.append((key, counts[key]))
    return sorted(out)


def _slowly(value):
    time.sleep(0.0002)
    return value


class _Count(MapFunction):
    """Running count per key in keyed state, failing where ``fail`` says."""

    def __init__(self, fail):
        self.fail = fail

    def open(self, runtime_context):
        self.count = runtime_context.get_state(ValueStateDescriptor("count", Types.INT()))

    def map(self, value):
        self.fail(value)
        count = (self.count.value() or 0) + 1
        self.count.update(count)
        return value % 7, count


@pytest.mark.slow
@pytest.mark.parametrize("unaligned", [False, True], ids=["aligned", "unaligned"])
@pytest.mark.parametrize("seed", [1, 2])
def test_repeated_failures_leave_the_output_exactly_once(executor, tmp_path, seed, unaligned):
    rng = random.Random(seed)
    env = local_environment(tmp_path, 2, restart_attempts=FAILURES + 1, restart_delay="10 ms",
                            options={"execution.checkpointing.unaligned.enabled": unaligned})
    env.enable_checkpointing(rng.choice([20, 40, 60]), CheckpointingMode.EXACTLY_ONCE)
    fail = RaiseRepeatedly(tmp_path / "failure", tmp_path / "chk", FAILURES,
                           every=rng.choice([7, 31, 97]), delay_s=0.001)
    early = env.from_collection([-1, -2, -3])  # finishes long before the others
    numbers = env.from_source(NumberSequenceSource(0, N - 1), WatermarkStrategy.no_watermarks(),
                              "numbers").map(_slowly)  # the sources stay busy: checkpoints flow
    counts = (numbers.union(early).map(lambda v: v if v >= 0 else -v * 1000)
              .key_by(lambda v: v % 7)
              .map(_Count(fail)))
    out = list(counts.execute_and_collect())
    assert fail.failures() == FAILURES, "not every failure was injected"
    expected = _running_counts([*range(N), 1000, 2000, 3000])
    surplus = collections.Counter(out) - collections.Counter(expected)
    missing = collections.Counter(expected) - collections.Counter(out)
    assert not surplus and not missing, (sorted(surplus.items()), sorted(missing.items()))
    # Each failure needs a checkpoint newer than the previous one's, so the failures spread
    # over the attempts (two can share one only if a checkpoint completes during a failover).
    assert len(executor.launchers[-1].attempts) >= FAILURES


@pytest.mark.slow
def test_a_source_restored_as_finished_is_not_rerun_after_a_second_restore(executor, tmp_path):
    """The bounded source has surely finished by checkpoint 5, so the first restore deploys it
    as finished. A checkpoint completed in that attempt must record it as finished too (not
    its operators' fresh, never-restored state), or the second restore would emit its records
    again."""
    env = local_environment(tmp_path, 2, restart_attempts=3, restart_delay="10 ms")
    env.enable_checkpointing(20, CheckpointingMode.EXACTLY_ONCE)
    fail = RaiseRepeatedly(tmp_path / "failure", tmp_path / "chk", 2, every=13,
                           delay_s=0.001, first_after=5)
    early = env.from_collection([-1, -2, -3])
    numbers = env.from_source(NumberSequenceSource(0, N - 1), WatermarkStrategy.no_watermarks(),
                              "numbers").map(_slowly)
    counts = (numbers.union(early).map(lambda v: v if v >= 0 else -v * 1000)
              .key_by(lambda v: v % 7).map(_Count(fail)))
    out = list(counts.execute_and_collect())
    assert fail.failures() == 2
    expected = _running_counts([*range(N), 1000, 2000, 3000])
    assert sorted(out) == expected


class _SlowCount(_Count):
    """``_Count`` taking 0.5 ms a record, so buffers queue in the keyed task's input."""

    def map(self, value):
        time.sleep(0.0005)
        return super().map(value)


@pytest.mark.slow
def test_one_input_channel_unaligned_restore_keeps_the_overtaken_data(executor, tmp_path):
    """Each keyed subtask reads one channel (a source at parallelism 1), slower than the source
    writes, so an unaligned barrier overtakes data queued in that channel and triggers the
    checkpoint at once. That data is in-flight state of the checkpoint and must come back on
    restore (it was dropped when the capture finished inside the trigger)."""
    env = local_environment(tmp_path, 2, restart_attempts=3, restart_delay="10 ms",
                            options={"execution.checkpointing.unaligned.enabled": True,
                                     "taskmanager.memory.segment-size": "4 kb"})
    env.enable_checkpointing(20, CheckpointingMode.EXACTLY_ONCE)
    fail = RaiseRepeatedly(tmp_path / "failure", tmp_path / "chk", 2, every=17)
    numbers = env.from_source(NumberSequenceSource(0, 5999), WatermarkStrategy.no_watermarks(),
                              "numbers").set_parallelism(1).map(_slowly).set_parallelism(1)
    out = list(numbers.key_by(lambda v: v % 7).map(_SlowCount(fail)).execute_and_collect())
    assert fail.failures() == 2
    assert sorted(out) == _running_counts(range(6000))
