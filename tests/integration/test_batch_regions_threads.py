"""BATCH jobs scheduled region by region, and region failover (issue 29), on TaskManager
threads whose launcher offers fewer slots than deploying everything at once would take.

Before, the JobManager deployed every subtask at once: a BATCH job of parallelism 4 on two
slots was refused with ``InsufficientSlotsError``, and any failure restarted the whole job,
sources included.
"""

from __future__ import annotations

import glob
import os

import pytest

from flintlock.common import WatermarkStrategy
from flintlock.datastream import RuntimeExecutionMode
from flintlock.datastream.connectors.number_seq import NumberSequenceSource
from flintlock.datastream.functions import MapFunction
from flintlock.graph.errors import InsufficientSlotsError
from flintlock.testing.environments import local_environment
from flintlock.testing.executor import use_thread_executor
from flintlock.testing.faults import RaiseOnce
from flintlock.testing.recording import Recording
from flintlock.testing.waiting import poll_until

READS = Recording("batch_regions.reads")
NUMBERS = Recording("batch_regions.numbers")
SPILLED = Recording("batch_regions.spilled")
WORDS = ["a", "b", "a", "c", "b", "a", "d"] * 40
EXPECTED = sorted([("a", 120), ("b", 80), ("c", 40), ("d", 40)])


def _read(word: str) -> tuple[str, int]:
    READS.append(word)
    return word, 1


def _count(env, after=None):
    counted = (env.from_collection(WORDS)
               .map(_read)
               .key_by(lambda pair: pair[0])
               .reduce(lambda x, y: (x[0], x[1] + y[1])))
    if after is not None:
        counted = counted.map(after)
    return sorted(counted.execute_and_collect())


@pytest.fixture
def two_slots(monkeypatch):
    Recording.clear_all()
    return use_thread_executor(monkeypatch, slots=2)


def test_a_batch_job_wider_than_the_slots_finishes(two_slots, tmp_path) -> None:
    env = local_environment(tmp_path, 4)
    env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    assert _count(env) == EXPECTED
    assert len(READS) == len(WORDS)
    launcher = two_slots.launchers[-1]
    assert len(launcher.attempts[0].task_managers) == 2  # the pool: two slots, one TM each


def test_a_streaming_job_wider_than_the_slots_is_refused(two_slots, tmp_path) -> None:
    env = local_environment(tmp_path, 4)
    with pytest.raises(InsufficientSlotsError, match="needs 4 slots but only 2"):
        _count(env)


def test_a_failed_region_restarts_alone_and_rereads_finished_results(two_slots,
                                                                     tmp_path) -> None:
    env = local_environment(tmp_path, 2, restart_attempts=1, restart_delay="0 ms")
    env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    fail = RaiseOnce(tmp_path / "failed", ("c", 40))  # a reducer's final record, downstream
    assert _count(env, fail) == EXPECTED  # exact: the failed attempt's output is not repeated
    assert (tmp_path / "failed").exists()
    assert len(READS) == len(WORDS)  # the source region ran once: its results were re-read
    assert len(two_slots.launchers[-1].attempts) == 1  # no new attempt: the region restarted


def test_a_region_failure_beyond_the_restart_strategy_fails_the_job(two_slots,
                                                                    tmp_path) -> None:
    env = local_environment(tmp_path, 2)  # restart-strategy none
    env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    with pytest.raises(Exception, match="injected failure"):
        _count(env, RaiseOnce(tmp_path / "failed", ("c", 40)))


class _RecordReader(MapFunction):
    """Records (reading subtask, number) for every number its source subtask read."""

    def open(self, runtime_context) -> None:
        self.subtask = runtime_context.get_index_of_this_subtask()

    def map(self, value: int) -> int:
        NUMBERS.append((self.subtask, value))
        return value


def test_a_failed_source_region_reads_its_splits_again_and_only_them(two_slots,
                                                                    tmp_path) -> None:
    """The failure is in a source subtask's own region (its chained map): that reader's splits
    go back to the enumerator and are read again by its restarted reader; the other source
    subtask's region ran once."""
    env = local_environment(tmp_path, 2, restart_attempts=1, restart_delay="0 ms")
    env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    numbers = env.from_source(NumberSequenceSource(1, 400), WatermarkStrategy.no_watermarks(),
                              "numbers")
    fail = RaiseOnce(tmp_path / "failed", 150)
    sums = sorted(numbers.map(_RecordReader()).map(fail)
                  .key_by(lambda n: n % 3).reduce(lambda a, b: a + b)
                  .execute_and_collect())
    assert sums == sorted(sum(n for n in range(1, 401) if n % 3 == k) for k in range(3))
    assert (tmp_path / "failed").exists()
    failed = next(subtask for subtask, value in NUMBERS if value == 150)
    counts: dict[tuple[int, int], int] = {}
    for entry in NUMBERS:
        counts[entry] = counts.get(entry, 0) + 1
    assert {value for (subtask, value) in counts if subtask != failed}  # the other reader ran
    assert all(count == 1 for (subtask, _), count in counts.items() if subtask != failed)
    assert counts[failed, 150] == 2  # read again by the restarted reader
    assert {value for _, value in counts} == set(range(1, 401))
    assert len(two_slots.launchers[-1].attempts) == 1


class _CountSpillFiles(MapFunction):
    """At its first record, records how many spill files of BLOCKING results exist in
    ``directory`` (waiting, bounded, until ``expected`` do: a release travels on its own)."""

    def __init__(self, directory: str, expected: int) -> None:
        self.directory = directory
        self.expected = expected

    def map(self, value):
        if not SPILLED:
            pattern = os.path.join(self.directory, "flintlock-partition-*.spill")
            poll_until(lambda: len(glob.glob(pattern)) == self.expected, timeout_s=10)
            SPILLED.append(len(glob.glob(pattern)))
        return value


def test_results_no_region_reads_any_more_are_released_while_the_job_runs(two_slots,
                                                                          tmp_path) -> None:
    """source(2) -> reduce(2) -> map(1): when the map's region runs, every reducer finished, so
    the sources' two spilled results are deleted; the reducers' two are being read."""
    spill = tmp_path / "spill"
    spill.mkdir()
    env = local_environment(tmp_path, 2, options={"io.tmp.dirs": str(spill)})
    env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    numbers = env.from_source(NumberSequenceSource(1, 90), WatermarkStrategy.no_watermarks(),
                              "numbers")
    sums = sorted(numbers.key_by(lambda n: n % 3).reduce(lambda a, b: a + b)
                  .rebalance().map(_CountSpillFiles(str(spill), 2)).set_parallelism(1)
                  .execute_and_collect())
    assert sums == sorted(sum(n for n in range(1, 91) if n % 3 == k) for k in range(3))
    assert list(SPILLED) == [2]  # 4 if the sources' results were kept to the end
