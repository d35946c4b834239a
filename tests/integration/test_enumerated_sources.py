"""Sources whose splits are enumerated in the JobManager: splits reach the readers over RPC,
the enumerator's state is part of every checkpoint, and a restart neither loses nor repeats
a split."""

import collections

import pytest

from flintlock.common import WatermarkStrategy
from flintlock.datastream.connectors import Source
from flintlock.testing.environments import local_environment
from flintlock.testing.faults import RaiseOnce


class RangeSplits(Source):
    """Numbers 0..n-1 in ``splits`` ranges; the enumerator hands out one split per tick."""

    def __init__(self, n, splits, tick_ms=5):
        self.n, self.splits, self.tick_ms = n, splits, tick_ms

    def is_bounded(self):
        return True

    def create_enumerator(self, parallelism, restored_state):
        step = self.n // self.splits
        ranges = [(i * step, (i + 1) * step if i < self.splits - 1 else self.n)
                  for i in range(self.splits)]
        return _Enumerator(ranges if restored_state is None else restored_state, self.tick_ms)

    def create_reader(self, subtask_index, parallelism):
        return _Reader()


class _Enumerator:
    def __init__(self, pending, tick_ms):
        self.pending = list(pending)
        self.tick_ms = tick_ms
        self.readers = []
        self.next_reader = 0

    def start(self, context):
        self.context = context
        context.call_periodically(self.tick_ms, self._tick)

    def add_reader(self, subtask):
        if subtask not in self.readers:
            self.readers.append(subtask)

    def _tick(self):
        if not self.readers:
            return
        if self.pending:
            reader = self.readers[self.next_reader % len(self.readers)]
            self.next_reader += 1
            self.context.assign_splits(reader, [self.pending.pop(0)])
        elif len(self.readers) == self.context.parallelism:
            for reader in self.readers:
                self.context.signal_no_more_splits(reader)
            self.readers = []

    def snapshot_state(self, checkpoint_id):
        return list(self.pending)


class _Reader:
    def __init__(self):
        self.splits = []  # [start, end] ranges still to read, first is current
        self.no_more = False

    def restore(self, state):
        self.splits = [list(split) for split in state]

    def add_splits(self, splits):
        self.splits.extend(list(split) for split in splits)

    def notify_no_more_splits(self):
        self.no_more = True

    def poll(self, max_records):
        if not self.splits:
            return [], self.no_more
        split = self.splits[0]
        end = min(split[1], split[0] + max_records)
        records = list(range(split[0], end))
        split[0] = end
        if split[0] >= split[1]:
            self.splits.pop(0)
        return records, False

    def snapshot_state(self, checkpoint_id):
        return [tuple(split) for split in self.splits]


def _env(tmp_path):
    return local_environment(tmp_path, 2, restart_attempts=1)


def test_splits_from_the_job_manager_reach_every_reader(executor, tmp_path):
    env = _env(tmp_path)
    numbers = env.from_source(RangeSplits(1000, 10), WatermarkStrategy.no_watermarks(), "ranges")
    assert sorted(numbers.execute_and_collect()) == list(range(1000))


@pytest.mark.slow
def test_enumerator_and_readers_restore_consistently_after_a_crash(executor, tmp_path):
    n = 3000
    env = _env(tmp_path)
    env.enable_checkpointing(30)
    marker = tmp_path / "crashed"
    counts = (env.from_source(RangeSplits(n, 30, tick_ms=20), WatermarkStrategy.no_watermarks(),
                               "ranges")
              .map(RaiseOnce(marker, n // 2))
              .map(lambda x: (x % 3, 1)).key_by(lambda p: p[0])
              .reduce(lambda a, b: (a[0], a[1] + b[1])))
    results = list(counts.execute_and_collect())
    assert marker.exists()
    per_key = collections.Counter(x % 3 for x in range(n))
    assert sorted(results) == sorted(
        (key, i) for key, count in per_key.items() for i in range(1, count + 1))
