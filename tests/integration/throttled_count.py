"""The keyed job the fault tests of issue 16 break (full disk, network faults): the numbers
0..N-1 of a ``MeteredNumberSequenceSource``, which holds at ``N // 2`` until the test lets the
rest through (so the job is surely running when the fault comes, however slow the machine; by
position, so a restored reader holds there too), throttled to 2 ms a record until then
(pacing only: records are in flight when the fault strikes early), then a per-key running count
in keyed state, whose exactly-once output is ``expected()``. ``BackgroundRun`` runs it while
the test breaks things, collecting its output on a thread of its own."""

from __future__ import annotations

import collections
import os
import threading
import time
from typing import Any

from flintlock.common import Types, WatermarkStrategy
from flintlock.datastream.functions import MapFunction
from flintlock.datastream.state import ValueStateDescriptor
from flintlock.testing.gates import FileGate, FileLimit, MeteredNumberSequenceSource

N = 6000
KEYS = 7
WAIT_S = 60.0


class Throttle(MapFunction):
    def __init__(self, gate: FileGate) -> None:
        self.gate = gate

    def map(self, value):
        if not self.gate.is_open():
            time.sleep(0.002)  # pacing only: the hold, not this, keeps the job running
        return value


class Count(MapFunction):
    def open(self, runtime_context):
        self.count = runtime_context.get_state(ValueStateDescriptor("count", Types.INT()))

    def map(self, value):
        count = (self.count.value() or 0) + 1
        self.count.update(count)
        return value % KEYS, count


class BackgroundRun:
    """The keyed count on ``env``, its output collected on a thread of its own; the numbers
    hold at ``N // 2`` and are throttled until ``finish`` (files under ``directory``)."""

    def __init__(self, env: Any, directory: str | os.PathLike[str]) -> None:
        self.gate = FileGate(os.path.join(os.fspath(directory), "gate"))
        self.limit = FileLimit(os.path.join(os.fspath(directory), "limit"), N // 2)
        numbers = MeteredNumberSequenceSource(0, N - 1, self.limit)
        stream = (env.from_source(numbers, WatermarkStrategy.no_watermarks(), "numbers")
                  .map(Throttle(self.gate)).key_by(lambda v: v % KEYS).map(Count()))
        self.records = stream.execute_and_collect()
        self.jm = self.records.handle.jm
        self.out: list[Any] = []
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._collect, daemon=True)
        self._thread.start()

    def _collect(self) -> None:
        try:
            self.out.extend(self.records)
        except BaseException as exc:  # the test's finish() reports it
            self.error = exc

    def finish(self) -> list[Any]:
        """Lets the rest of the numbers through; the sorted output once the job ended."""
        self.gate.open()
        self.limit.set(N)
        self._thread.join(WAIT_S)
        assert not self._thread.is_alive() and self.error is None, self.error
        return sorted(self.out)


def expected(n=N, keys=KEYS):
    """The sorted (key, count) pairs of a failure-free run over ``range(n)``."""
    counts = collections.Counter()
    out = []
    for value in range(n):
        counts[value % keys] += 1
        out.append((value % keys, counts[value % keys]))
    return sorted(out)
