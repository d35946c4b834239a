"""Repeated failures at varied points of a job, on TaskManager threads: after each restore the
job runs on to the next completed checkpoint and fails again, several times, and the output
seen by the caller must equal the failure-free run exactly (exactly-once), in aligned and
unaligned mode. The job mixes the shapes that found restore bugs before: a bounded source that
finishes early (finished tasks and final checkpoints across a restore), a keyed exchange with
state, and sources kept busy so that checkpoints complete all along the run.

The numbers come in stages (``_Staged``): while a failure is still to come, the readers stop at
a stage's end until it is due, so the job cannot end before every failure happened, however
fast or slow the machine."""

import collections
import random
import time

import pytest

from flintlock.common import Types, WatermarkStrategy
from flintlock.datastream import CheckpointingMode
from flintlock.datastream.connectors.number_seq import (
    NumberSequenceReader,
    NumberSequenceSource,
    split_range,
)
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
    time.sleep(0.0002)  # pacing only, so checkpoints complete while records flow
    return value


class _Staged(NumberSequenceSource):
    """0..N-1, each split read in ``fail.times + 1`` stages: while failure k (counted from 0)
    is still to come, a reader stops at the end of stage k until the failure is due (a newer
    checkpoint completed), then at the end of stage k + 1 until it happened. By position, so
    a restored reader holds where the failed one did."""

    def __init__(self, fail):
        super().__init__(0, N - 1)
        self.fail = fail

    def create_reader(self, subtask_index, parallelism):
        return _StagedReader(self.fail, split_range(0, N - 1, parallelism))


class _StagedReader(NumberSequenceReader):
    def __init__(self, fail, splits):
        super().__init__()
        self.fail = fail
        self.bounds = {split.split_id: (split.current, split.to + 1) for split in splits}

    def read_split(self, split, budget, out):
        allowed = min(budget, self._limit(split.split_id) - split.current)
        if allowed <= 0:
            return split, False
        return super().read_split(split, allowed, out)

    def _limit(self, split_id):
        """The first number of the split it may not read yet."""
        start, end = self.bounds[split_id]
        done = self.fail.failures()
        if done >= self.fail.times:
            return end
        stage = done + 1 if self.fail.due() else done
        return start + (end - start) * (stage + 1) // (self.fail.times + 1)


def _numbers(env, fail):
    return env.from_source(_Staged(fail), WatermarkStrategy.no_watermarks(), "numbers") \
        .map(_slowly)


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
                           every=rng.choice([7, 31, 97]))
    early = env.from_collection([-1, -2, -3])  # finishes long before the others
    numbers = _numbers(env, fail)
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
    fail = RaiseRepeatedly(tmp_path / "failure", tmp_path / "chk", 2, every=13, first_after=5)
    early = env.from_collection([-1, -2, -3])
    numbers = _numbers(env, fail)
    counts = (numbers.union(early).map(lambda v: v if v >= 0 else -v * 1000)
              .key_by(lambda v: v % 7).map(_Count(fail)))
    out = list(counts.execute_and_collect())
    assert fail.failures() == 2
    expected = _running_counts([*range(N), 1000, 2000, 3000])
    assert sorted(out) == expected


class _SlowCount(_Count):
    """``_Count`` taking 0.5 ms a record, so buffers queue in the keyed task's input."""

    def map(self, value):
        time.sleep(0.0005)  # the backpressure under test (6000 records: at least 3 s)
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
