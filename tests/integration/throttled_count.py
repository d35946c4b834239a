"""The keyed job the fault tests of issue 16 break (full disk, network faults): the numbers of
``HeldNumbers``, which holds at ``N // 2`` until the test sets ``RELEASE`` (so the job is surely
running when the fault comes, however slow the machine), throttled to 2 ms a record until then
(pacing only: records are in flight when the fault strikes early), then a per-key running count
in keyed state, whose exactly-once output is ``expected()``. ``RELEASE`` is module state: each
test clears it first, one test at a time."""

from __future__ import annotations

import collections
import threading

from flintlock.common import Types
from flintlock.datastream.connectors.number_seq import NumberSequenceReader, NumberSequenceSource
from flintlock.datastream.functions import MapFunction
from flintlock.datastream.state import ValueStateDescriptor

N = 6000
KEYS = 7
RELEASE = threading.Event()


class _HeldReader(NumberSequenceReader):
    """Reads only numbers below ``N // 2`` until ``RELEASE`` (task thread); idle at the hold,
    so checkpoints go on. By position: a restored reader holds at the same number."""

    def read_split(self, split, budget, out):
        if not RELEASE.is_set():
            budget = min(budget, N // 2 - split.current)
            if budget <= 0:
                return split, False
        return super().read_split(split, budget, out)


class HeldNumbers(NumberSequenceSource):
    """0..N-1, held at ``N // 2`` until ``RELEASE``."""

    def __init__(self) -> None:
        super().__init__(0, N - 1)

    def create_reader(self, subtask_index, parallelism):
        return _HeldReader()


class Throttle(MapFunction):
    def map(self, value):
        RELEASE.wait(0.002)
        return value


class Count(MapFunction):
    def open(self, runtime_context):
        self.count = runtime_context.get_state(ValueStateDescriptor("count", Types.INT()))

    def map(self, value):
        count = (self.count.value() or 0) + 1
        self.count.update(count)
        return value % KEYS, count


def expected(n=N, keys=KEYS):
    """The sorted (key, count) pairs of a failure-free run over ``range(n)``."""
    counts = collections.Counter()
    out = []
    for value in range(n):
        counts[value % keys] += 1
        out.append((value % keys, counts[value % keys]))
    return sorted(out)
