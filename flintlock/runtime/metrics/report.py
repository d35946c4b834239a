"""One subtask's metrics as a report: what a TaskManager sends with each heartbeat.

``SubtaskMetrics`` belongs to one subtask: its ``MetricRegistry`` (the user's metrics) and
the rate views of its system counters. ``sample(io, time, now_s)`` turns the counters the
task already keeps (``TaskIOCounters``: records and bytes in and out, pool usage;
read by the TaskManager, never counted here) and its busy / backpressured / idle split (the
``TaskTimeMeter`` sample the heartbeat takes anyway) into a ``SubtaskMetricsReport``: a frozen
tuple of ``MetricPoint``s, Flink's names, picklable, the same numbers REST and Prometheus show.
After them come the metrics registered in the subtask's registry: task-level ones that task
components register where they keep the value (the operator chain's
``currentInputWatermark`` / ``currentOutputWatermark``), operator-level ones (each operator's
``numRecordsIn`` / ``numRecordsOut``, followed here by their ``…PerSecond``), then the user's.

Rates (``numRecordsInPerSecond`` ...) and user meters are rates over the last 60 s (a meter's
own time span) of the totals sampled at each report, as Flink's ``MeterView`` computes them.

I/O-free: the clock is an argument. Owned by the TaskManager's heartbeat thread; the registry
is appended to by the task thread (see ``groups``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

from flintlock.runtime.metrics.groups import (
    TASK_SCOPE,
    Gauge,
    MetricRegistry,
    MetricScope,
)
from flintlock.runtime.metrics.metrics import (
    Counter,
    Distribution,
    DistributionValue,
    Meter,
    MeterView,
    MetricKind,
)

RATE_SPAN_S: Final = 60.0

NUM_RECORDS_IN: Final = "numRecordsIn"
NUM_RECORDS_OUT: Final = "numRecordsOut"
NUM_BYTES_IN: Final = "numBytesIn"
NUM_BYTES_OUT: Final = "numBytesOut"
BUSY: Final = "busyTimeMsPerSecond"
BACKPRESSURED: Final = "backPressuredTimeMsPerSecond"
IDLE: Final = "idleTimeMsPerSecond"
IN_POOL_USAGE: Final = "inPoolUsage"
OUT_POOL_USAGE: Final = "outPoolUsage"
INPUT_WATERMARK: Final = "currentInputWatermark"
OUTPUT_WATERMARK: Final = "currentOutputWatermark"
PER_SECOND: Final = "PerSecond"

SYSTEM_METRICS: Final = (
    NUM_RECORDS_IN, NUM_RECORDS_IN + PER_SECOND, NUM_RECORDS_OUT, NUM_RECORDS_OUT + PER_SECOND,
    NUM_BYTES_IN, NUM_BYTES_IN + PER_SECOND, NUM_BYTES_OUT, NUM_BYTES_OUT + PER_SECOND,
    BUSY, BACKPRESSURED, IDLE, IN_POOL_USAGE, OUT_POOL_USAGE, INPUT_WATERMARK, OUTPUT_WATERMARK,
)
"""The task-level metrics every subtask reports, in report order."""

_SAMPLED: Final = frozenset(SYSTEM_METRICS) - {INPUT_WATERMARK, OUTPUT_WATERMARK}
"""The system metrics ``SubtaskMetrics`` computes itself (the watermarks are registered)."""

_OPERATOR_COUNTS: Final = frozenset({NUM_RECORDS_IN, NUM_RECORDS_OUT})
"""Operator-scope gauges (``tasks.operator_io``) whose rate is reported next to them."""


@dataclass(frozen=True, slots=True)
class TaskIOCounters:
    """The subtask's own counters at one moment (totals since the subtask started)."""

    records_in: int
    records_out: int
    bytes_in: int
    bytes_out: int
    in_pool_usage: float
    out_pool_usage: float


@dataclass(frozen=True, slots=True)
class TaskTimeSplit:
    """Busy / backpressured / idle milliseconds per second (``TaskTimeStatistics``)."""

    busy_ms_per_s: float
    backpressured_ms_per_s: float
    idle_ms_per_s: float


@dataclass(frozen=True, slots=True)
class MetricPoint:
    scope: MetricScope
    name: str
    kind: MetricKind
    value: float | DistributionValue

    @property
    def identifier(self) -> str:
        return self.scope.identifier(self.name)


@dataclass(frozen=True, slots=True)
class NetworkMemory:
    """The TaskManager's network buffer pool (Flink's ``Shuffle.Netty`` memory segments)."""

    segment_size: int
    total_segments: int
    available_segments: int

    @property
    def used_segments(self) -> int:
        return self.total_segments - self.available_segments


@dataclass(frozen=True, slots=True)
class ProcessStats:
    """The TaskManager process a subtask runs in (Flink's TaskManager-scope figures):
    resident memory now and at its peak, cores, the machine's memory, and the network buffer
    pool (None for a subtask without network inputs or outputs, which cannot see it)."""

    pid: int
    rss_bytes: int
    cpu_cores: int
    physical_memory_bytes: int
    peak_rss_bytes: int = 0
    network: NetworkMemory | None = None


@dataclass(frozen=True, slots=True)
class SubtaskMetricsReport:
    """A subtask's metrics at ``timestamp_ms`` (wall clock); ``variables``: the task-level
    scope variables (host, tm_id, job_id, job_name, task_id, task_name, subtask_index,
    task_attempt_num) that every point shares; ``process``: its TaskManager process."""

    timestamp_ms: int
    variables: tuple[tuple[str, str], ...]
    points: tuple[MetricPoint, ...]
    process: ProcessStats | None = None

    def value(self, identifier: str) -> float | DistributionValue | None:
        """The value of the point with that id (``numRecordsIn``, ``Map.my_counter``)."""
        for point in self.points:
            if point.identifier == identifier:
                return point.value
        return None


class SubtaskMetrics:
    """The metrics of one subtask (see the module doc)."""

    def __init__(self, registry: MetricRegistry, variables: tuple[tuple[str, str], ...],
                 start_s: float) -> None:
        """``start_s``: when the subtask's counters began (at 0), on the sampling clock."""
        self.registry = registry
        self.variables = variables
        self._rates = {name: MeterView(RATE_SPAN_S) for name in (
            NUM_RECORDS_IN, NUM_RECORDS_OUT, NUM_BYTES_IN, NUM_BYTES_OUT)}
        for view in self._rates.values():
            view.seed(start_s)
        self._last_s = start_s  # a meter first seen now was made after the previous sample
        self._start_s = start_s
        self._operator_rates: dict[str, MeterView] = {}  # operator-level records per second

    def sample(self, io: TaskIOCounters, time: TaskTimeSplit | None, now_s: float,
               wall_ms: int, process: ProcessStats | None = None) -> SubtaskMetricsReport:
        points = [*self._system(io, time, now_s), *self._user(now_s)]
        self._last_s = now_s
        return SubtaskMetricsReport(wall_ms, self.variables, tuple(points), process)

    def _system(self, io: TaskIOCounters, time: TaskTimeSplit | None, now_s: float
                ) -> Iterator[MetricPoint]:
        totals = {NUM_RECORDS_IN: io.records_in, NUM_RECORDS_OUT: io.records_out,
                  NUM_BYTES_IN: io.bytes_in, NUM_BYTES_OUT: io.bytes_out}
        for name, total in totals.items():
            yield _point(name, MetricKind.COUNTER, total)
            yield _point(name + PER_SECOND, MetricKind.METER,
                         self._rates[name].sample(total, now_s))
        if time is not None:
            yield _point(BUSY, MetricKind.GAUGE, time.busy_ms_per_s)
            yield _point(BACKPRESSURED, MetricKind.GAUGE, time.backpressured_ms_per_s)
            yield _point(IDLE, MetricKind.GAUGE, time.idle_ms_per_s)
        yield _point(IN_POOL_USAGE, MetricKind.GAUGE, io.in_pool_usage)
        yield _point(OUT_POOL_USAGE, MetricKind.GAUGE, io.out_pool_usage)

    def _user(self, now_s: float) -> Iterator[MetricPoint]:
        for registered in self.registry.registered():
            metric, scope, name = registered.metric, registered.scope, registered.name
            if scope is TASK_SCOPE and name in _SAMPLED:
                continue  # a counter behind a system metric (numRecordsIn): reported above
            value: float | DistributionValue | None
            if isinstance(metric, Counter):
                value = metric.get_count()
            elif isinstance(metric, Meter):
                value = metric.sample(now_s, self._last_s)
            elif isinstance(metric, Distribution):
                value = metric.get_value()
            elif isinstance(metric, Gauge):
                value = metric.get_value()
            else:
                continue
            if value is not None:
                yield MetricPoint(scope, name, metric.kind, value)
                if name in _OPERATOR_COUNTS and isinstance(value, (int, float)):
                    yield self._operator_rate(scope, name, value, now_s)

    def _operator_rate(self, scope: MetricScope, name: str, total: float, now_s: float
                       ) -> MetricPoint:
        """``…PerSecond`` of an operator's ``numRecordsIn``/``Out`` (operator_io's gauges)."""
        identifier = scope.identifier(name)
        view = self._operator_rates.get(identifier)
        if view is None:
            view = self._operator_rates[identifier] = MeterView(RATE_SPAN_S)
            view.seed(self._start_s)
        return MetricPoint(scope, name + PER_SECOND, MetricKind.METER, view.sample(total, now_s))


def _point(name: str, kind: MetricKind, value: float) -> MetricPoint:
    return MetricPoint(TASK_SCOPE, name, kind, value)
