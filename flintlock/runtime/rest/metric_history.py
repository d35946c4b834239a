"""The job's metric history, kept on the server so that the dashboard can draw each vertex's
throughput, backpressure, busy time and watermark from the job's start, whenever the page
is opened (issue 30), in bounded memory.

``MetricHistory.record(now_ms, description)`` takes one sample of every vertex from a
``JobDescription`` (the latest metrics report of each subtask): records in and out per second
(from the change of the vertex's totals between its subtasks' newest reports, the first
point from the job's start; after a restart, whose counters start again at 0, from 0), the
worst subtask's backpressured and busy ratio (0..1), and the vertex's input watermark (the
smallest of its subtasks'; None before any). ``series()`` gives them column by column, as
``GET /jobs/:jobid/metrics-history`` serves them.

Bounded memory, design note: at most ``capacity`` points are kept. When a sample would pass
that, the older half of the series is downsampled: each two neighbours there are merged into
one point (rates and ratios averaged, the later timestamp and watermark kept). Recent points
keep their full resolution, old ones grow coarser the older they get, and the series always
reaches back to the job's first sample: after n samples the oldest points stand for about
``n / capacity`` samples each. Merging never creates a point with a timestamp that was not
sampled, and timestamps stay strictly increasing.

I/O-free: the caller passes the time. Not synchronised on its own: ``HistorySampler`` (the
thread that feeds it) and the REST workers that read it share it under the sampler's lock.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from flintlock.runtime.jobmanager import JobDescription, TaskDescription
from flintlock.runtime.metrics import DistributionValue
from flintlock.runtime.metrics.report import (
    BACKPRESSURED,
    BUSY,
    INPUT_WATERMARK,
    NUM_RECORDS_IN,
    NUM_RECORDS_OUT,
)

log = logging.getLogger(__name__)

DEFAULT_CAPACITY = 720
"""Points kept per vertex: twelve minutes at one a second before the oldest are merged."""

NO_WATERMARK = -(2**63)
"""Flink's ``Long.MIN_VALUE``: a watermark gauge's value before any watermark arrived."""


@dataclass(frozen=True, slots=True)
class VertexPoint:
    """One vertex at one moment (or several merged samples)."""

    records_in_per_s: float
    records_out_per_s: float
    backpressured: float
    busy: float
    watermark: int | None


@dataclass(frozen=True, slots=True)
class Sample:
    time_ms: int
    vertices: Mapping[str, VertexPoint]
    weight: int = 1
    """How many samples this point stands for (merging adds them)."""


def _merge(a: Sample, b: Sample) -> Sample:
    weight = a.weight + b.weight
    merged: dict[str, VertexPoint] = {}
    for vertex in {**a.vertices, **b.vertices}:
        p = a.vertices.get(vertex)
        q = b.vertices.get(vertex)
        if p is None or q is None:
            merged[vertex] = q or p  # type: ignore[assignment]
            continue

        def mean(x: float, y: float) -> float:
            return (x * a.weight + y * b.weight) / weight

        merged[vertex] = VertexPoint(
            mean(p.records_in_per_s, q.records_in_per_s),
            mean(p.records_out_per_s, q.records_out_per_s),
            mean(p.backpressured, q.backpressured), mean(p.busy, q.busy),
            q.watermark if q.watermark is not None else p.watermark)
    return Sample(b.time_ms, merged, weight)


class MetricHistory:
    """Bounded per-vertex series of one job (see the module's design note)."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        if capacity < 4:
            raise ValueError(f"a metric history needs a capacity of at least 4, not {capacity}")
        self.capacity = capacity
        self.samples: list[Sample] = []
        self.names: dict[str, str] = {}
        self._totals: dict[str, tuple[int, float, float, float, float]] = {}
        """vertex -> (newest report's time ms, records in, records out, rate in, rate out)
        at the previous sample."""

    def record(self, now_ms: int, job: JobDescription) -> None:
        by_vertex: dict[str, list[TaskDescription]] = {}
        for task in job.tasks:
            by_vertex.setdefault(task.vertex_id, []).append(task)
            self.names.setdefault(task.vertex_id, task.vertex_name)
        if self.samples and now_ms <= self.samples[-1].time_ms:
            return  # one point per moment; a clock that stepped back adds nothing
        points = {vertex: self._point(vertex, job.start_time_ms, now_ms, tasks)
                  for vertex, tasks in by_vertex.items()}
        self.add(Sample(now_ms, points))

    def add(self, sample: Sample) -> None:
        self.samples.append(sample)
        if len(self.samples) > self.capacity:
            self._downsample()

    def _downsample(self) -> None:
        half = len(self.samples) // 2
        old = self.samples[:half]
        merged = [_merge(old[i], old[i + 1]) for i in range(0, len(old) - 1, 2)]
        if len(old) % 2:
            merged.append(old[-1])
        self.samples = merged + self.samples[half:]

    def _point(self, vertex: str, start_ms: int, now_ms: int, tasks: Sequence[TaskDescription]
               ) -> VertexPoint:
        stamps = [t.metrics.timestamp_ms for t in tasks if t.metrics is not None]
        stamp = max(stamps, default=now_ms)
        records_in = sum(_number(t, NUM_RECORDS_IN) for t in tasks)
        records_out = sum(_number(t, NUM_RECORDS_OUT) for t in tasks)
        previous = self._totals.get(vertex) or (start_ms, 0.0, 0.0, 0.0, 0.0)
        rate_in = rate_out = 0.0
        if stamp == previous[0]:  # no new report: the same rates
            rate_in, rate_out = previous[3], previous[4]
        elif stamp > previous[0]:
            seconds = (stamp - previous[0]) / 1000.0
            rate_in = _growth(records_in, previous[1]) / seconds
            rate_out = _growth(records_out, previous[2]) / seconds
        self._totals[vertex] = (stamp, records_in, records_out, rate_in, rate_out)
        watermarks = [int(_number(t, INPUT_WATERMARK)) for t in tasks
                      if t.metrics is not None and t.metrics.value(INPUT_WATERMARK) is not None]
        return VertexPoint(
            rate_in, rate_out,
            max((_number(t, BACKPRESSURED) for t in tasks), default=0.0) / 1000.0,
            max((_number(t, BUSY) for t in tasks), default=0.0) / 1000.0,
            min(watermarks) if watermarks and min(watermarks) > NO_WATERMARK else None)

    def series(self) -> dict[str, Any]:
        """``GET /jobs/:jobid/metrics-history``: ``times`` (epoch ms, oldest first),
        ``weights`` (samples per point) and per vertex its name and one column per figure
        (``null`` where the vertex had no report at that point)."""
        vertices: dict[str, Any] = {}
        for vertex, name in self.names.items():
            column = [s.vertices.get(vertex) for s in self.samples]
            vertices[vertex] = {
                "name": name,
                "records-in-per-second": [None if p is None else round(p.records_in_per_s, 3)
                                          for p in column],
                "records-out-per-second": [None if p is None else round(p.records_out_per_s, 3)
                                           for p in column],
                "backpressured-ratio": [None if p is None else round(p.backpressured, 4)
                                        for p in column],
                "busy-ratio": [None if p is None else round(p.busy, 4) for p in column],
                "watermark": [None if p is None else p.watermark for p in column],
            }
        return {"capacity": self.capacity, "times": [s.time_ms for s in self.samples],
                "weights": [s.weight for s in self.samples], "vertices": vertices}


def _growth(total: float, previous: float) -> float:
    """Records counted since the previous sample; a total below the previous one is a
    restarted attempt, whose counters began again at 0."""
    return total - previous if total >= previous else total


def _number(task: TaskDescription, name: str) -> float:
    if task.metrics is None:
        return 0.0
    value = task.metrics.value(name)
    return 0.0 if value is None or isinstance(value, DistributionValue) else float(value)


class HistorySampler:
    """Feeds a ``MetricHistory`` from ``describe`` every ``interval_s`` on a daemon thread of
    its own (``flintlock-history-<job>``), from ``start`` until ``stop`` (which takes a last
    sample, so a finished job's history ends with its final counts). ``series`` is safe from
    any thread."""

    def __init__(self, describe: Callable[[], JobDescription], wall_ms: Callable[[], int],
                 interval_s: float = 1.0, capacity: int = DEFAULT_CAPACITY) -> None:
        self._describe = describe
        self._wall_ms = wall_ms
        self._interval_s = interval_s
        self._history = MetricHistory(capacity)
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, name: str) -> HistorySampler:
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stopped.wait(self._interval_s):
            self.sample()

    def sample(self) -> None:
        try:
            job = self._describe()
        except TimeoutError as error:  # the JobManager is busy: next time
            log.debug("metric history: no sample this time: %s", error)
            return
        except Exception:  # the history must never end the sampler (nor the job): logged
            log.warning("metric history: describing the job failed", exc_info=True)
            return
        with self._lock:
            self._history.record(self._wall_ms(), job)

    def stop(self) -> None:
        if self._stopped.is_set():
            return
        self._stopped.set()
        if self._thread is not None:
            self._thread.join()
        self.sample()

    def series(self) -> dict[str, Any]:
        with self._lock:
            return self._history.series()
