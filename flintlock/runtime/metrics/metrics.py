"""The metric types a function registers (PyFlink's ``pyflink.metrics`` names): ``Counter``,
``Meter``, ``Distribution``, and gauges (a callable).

Hot path: an update is one method call that changes an ``int`` or ``float`` field of a
slotted object — no lock, no allocation, no clock read, nothing sent. ``Counter.inc`` is a
method of a C type where the optional accelerator was built (``common/_speedups.c``): it
then costs less than a Python attribute increment; ``PythonCounter`` is its twin. The values
leave the task only when the TaskManager's heartbeat thread reads them (``report.SubtaskMetrics``),
once per heartbeat, however many records passed.

Thread ownership: the task thread updates; the heartbeat thread reads. A read of an ``int``
or ``float`` attribute is atomic under the GIL, so the reader sees a value the task thread
wrote, possibly one update old. A ``Distribution``'s four fields are read one by one, so a
report may pair a count with a sum one update apart; that is the price of no lock. A
``Meter``'s rate is computed by the reader (``MeterView.sample``), never by the task thread.
"""

from __future__ import annotations

import abc
import enum
import math
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from flintlock.common.speedups import accelerator


class MetricKind(enum.Enum):
    COUNTER = "counter"
    GAUGE = "gauge"
    METER = "meter"
    DISTRIBUTION = "distribution"


class Metric(abc.ABC):  # an ABC: the C accelerator's Counter is registered as one
    """Base of every metric (PyFlink's ``pyflink.metrics.Metric``)."""

    __slots__ = ()
    kind: MetricKind


class PythonCounter(Metric):
    """A count that goes up and down (``inc``, ``dec``, ``get_count``), in Python: the
    ``Counter`` where the C accelerator was not built. Unbounded, where the C type holds a
    64-bit count (Flink's ``long``) and raises ``OverflowError`` past it."""

    __slots__ = ("_count",)
    kind = MetricKind.COUNTER

    def __init__(self) -> None:
        self._count = 0

    def inc(self, n: int = 1) -> None:
        self._count += n

    def dec(self, n: int = 1) -> None:
        self._count -= n

    def get_count(self) -> int:
        return self._count


def _compiled_counter() -> type[PythonCounter]:
    """The accelerator's ``Counter``, made a ``Metric`` of kind COUNTER. Not subclassed: CPython
    calls a C method fast only on an instance of the method's own type, so a Python subclass
    would cost as much as an attribute increment again."""
    assert accelerator is not None
    counter: Any = accelerator.Counter
    counter.kind = MetricKind.COUNTER
    Metric.register(counter)
    return counter  # type: ignore[no-any-return]


if TYPE_CHECKING:
    Counter = PythonCounter
else:
    Counter = PythonCounter if accelerator is None else _compiled_counter()
"""A count that goes up and down (``inc``, ``dec``, ``get_count``): where the accelerator was
built, a 64-bit count in a C type whose ``inc()`` costs less than an attribute increment."""


class Meter(Metric):
    """Events and their rate per second over the last ``time_span_in_seconds``.

    ``mark_event`` only adds to a count; the rate is what the TaskManager's reporter
    computes from the counts it samples (``get_rate`` returns the latest, 0.0 before the
    first two samples)."""

    __slots__ = ("_count", "_rate", "time_span_in_seconds", "view")
    kind = MetricKind.METER

    def __init__(self, time_span_in_seconds: int = 60) -> None:
        if time_span_in_seconds <= 0:
            raise ValueError(f"a meter's time span must be positive, got {time_span_in_seconds}")
        self._count = 0
        self._rate = 0.0
        self.time_span_in_seconds = time_span_in_seconds
        self.view = MeterView(time_span_in_seconds)

    def mark_event(self, value: int = 1) -> None:
        self._count += value

    def get_count(self) -> int:
        return self._count

    def get_rate(self) -> float:
        return self._rate

    def sample(self, now_s: float, since_s: float | None = None) -> float:
        """Reporter thread: records the count at ``now_s`` and returns the new rate; a first
        sample counts from ``since_s`` (when the meter cannot have been made earlier)."""
        if since_s is not None:
            self.view.seed(since_s)
        self._rate = self.view.sample(self._count, now_s)
        return self._rate


@dataclass(frozen=True, slots=True)
class DistributionValue:
    """What a ``Distribution`` has seen: count, sum, min, max (min/max NaN while empty)."""

    count: int
    sum: float
    min: float
    max: float

    @property
    def mean(self) -> float:
        return self.sum / self.count if self.count else math.nan

    def __str__(self) -> str:
        return (f"count={self.count} sum={self.sum:g} min={self.min:g} max={self.max:g} "
                f"mean={self.mean:g}")


class Distribution(Metric):
    """Statistics of a stream of values (``update``): count, sum, min and max, as PyFlink's
    ``Distribution`` (a Beam distribution) reports them."""

    __slots__ = ("_count", "_max", "_min", "_sum")
    kind = MetricKind.DISTRIBUTION

    def __init__(self) -> None:
        self._count = 0
        self._sum = 0.0
        self._min = math.inf
        self._max = -math.inf

    def update(self, value: float) -> None:
        self._count += 1
        self._sum += value
        if value < self._min:
            self._min = value
        if value > self._max:
            self._max = value

    def get_value(self) -> DistributionValue:
        count = self._count
        if not count:
            return DistributionValue(0, 0.0, math.nan, math.nan)
        return DistributionValue(count, self._sum, self._min, self._max)


class MeterView:
    """A rate over a sliding time span from sampled totals (Flink's ``MeterView``): the
    samples of the last ``span_s`` seconds are kept; the rate is the difference between the
    newest and the oldest kept, per second. I/O-free; owned by the sampling thread."""

    __slots__ = ("_samples", "span_s")

    def __init__(self, span_s: float) -> None:
        self.span_s = span_s
        self._samples: deque[tuple[float, float]] = deque()

    def seed(self, at_s: float, total: float = 0.0) -> None:
        """A first sample, if there is none yet: the total when counting began."""
        if not self._samples:
            self._samples.append((at_s, total))

    def sample(self, total: float, now_s: float) -> float:
        samples = self._samples
        samples.append((now_s, total))
        while len(samples) > 2 and now_s - samples[1][0] >= self.span_s:
            samples.popleft()
        first_s, first_total = samples[0]
        elapsed = now_s - first_s
        return (total - first_total) / elapsed if elapsed > 0 else 0.0
