"""JSON views of a vertex's metrics, shaped like Flink's REST API, built from the latest
``SubtaskMetricsReport`` of each of its subtasks (``TaskDescription.metrics``):

- ``GET /jobs/:jobid/vertices/:vertexid/metrics``: without ``get``, the available ids
  (``[{"id": "0.numRecordsIn"}, ...]``: subtask index, then the metric's id within the subtask,
  ``0.Map.my_counter`` for a user metric); with ``get=id,id``, their values as strings, as
  Flink gives them (unknown ids are left out).
- ``GET /jobs/:jobid/vertices/:vertexid/subtasks/metrics``: ids without the subtask index;
  with ``get``, ``min``/``max``/``avg``/``sum`` over the subtasks (``agg=`` picks some,
  ``subtasks=0,2-3`` restricts them); only numeric metrics aggregate.
- ``GET /jobs/:jobid/vertices/:vertexid/backpressure``: Flink's levels from each subtask's
  ``backPressuredTimeMsPerSecond``: ratio = ms / 1000; ``ok`` up to 0.10, ``low`` up to 0.5,
  ``high`` above; the vertex has its worst subtask's level. ``status`` is ``deprecated`` (no
  level) until a subtask reported.
- ``GET /jobs/:jobid/vertices/:vertexid/watermarks``: each subtask's
  ``currentInputWatermark`` as ``{"id": "0.currentInputWatermark", "value": "..."}``.

Pure functions of immutable reports; safe on any thread. Bad query parameters are a
``ValueError`` naming the parameter (the API makes it a 400).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from flintlock.runtime.jobmanager import JobDescription, TaskDescription
from flintlock.runtime.jobmanager.description import TaskManagerDescription
from flintlock.runtime.metrics import DistributionValue, NetworkMemory, SubtaskMetricsReport
from flintlock.runtime.metrics.report import (
    BACKPRESSURED,
    BUSY,
    IDLE,
    INPUT_WATERMARK,
    NUM_BYTES_IN,
    NUM_BYTES_OUT,
    NUM_RECORDS_IN,
    NUM_RECORDS_OUT,
    PER_SECOND,
)

Json = dict[str, Any]
AGGREGATES = ("min", "max", "avg", "sum")
LOW_THRESHOLD = 0.10
HIGH_THRESHOLD = 0.50


class BackPressureLevel(enum.Enum):
    OK = "ok"
    LOW = "low"
    HIGH = "high"

    @classmethod
    def of(cls, ratio: float) -> BackPressureLevel:
        """Flink's level of a backpressured-time ratio (0..1)."""
        if ratio <= LOW_THRESHOLD:
            return cls.OK
        return cls.LOW if ratio <= HIGH_THRESHOLD else cls.HIGH


def _reports(tasks: Sequence[TaskDescription]) -> list[tuple[int, SubtaskMetricsReport]]:
    return sorted(((t.subtask, t.metrics) for t in tasks if t.metrics is not None),
                  key=lambda item: item[0])


def _as_text(value: float | DistributionValue) -> str:
    return str(value)


def vertex_metrics(tasks: Sequence[TaskDescription], get: Sequence[str] | None) -> list[Json]:
    """``GET .../vertices/:vertexid/metrics``."""
    values = {f"{subtask}.{point.identifier}": point.value
              for subtask, report in _reports(tasks) for point in report.points}
    if get is None:
        return [{"id": metric_id} for metric_id in values]
    return [{"id": metric_id, "value": _as_text(values[metric_id])}
            for metric_id in get if metric_id in values]


def subtasks_metrics(tasks: Sequence[TaskDescription], get: Sequence[str] | None,
                     agg: Sequence[str] | None = None, subtasks: str | None = None
                     ) -> list[Json]:
    """``GET .../vertices/:vertexid/subtasks/metrics``."""
    wanted = _subtask_set(subtasks)
    reports = [r for subtask, r in _reports(tasks) if wanted is None or subtask in wanted]
    by_id: dict[str, list[float]] = {}
    for report in reports:
        for point in report.points:
            numbers = by_id.setdefault(point.identifier, [])
            if not isinstance(point.value, DistributionValue):
                numbers.append(point.value)
    if get is None:
        return [{"id": metric_id} for metric_id in by_id]
    kinds = _aggregates(agg)
    return [{"id": metric_id, **_aggregate(by_id[metric_id], kinds)}
            for metric_id in get if by_id.get(metric_id)]


def _aggregate(numbers: list[float], kinds: Iterable[str]) -> Json:
    computed = {"min": min(numbers), "max": max(numbers), "sum": sum(numbers),
                "avg": sum(numbers) / len(numbers)}
    return {kind: computed[kind] for kind in kinds}


def _aggregates(agg: Sequence[str] | None) -> tuple[str, ...]:
    if not agg:
        return AGGREGATES
    unknown = [kind for kind in agg if kind not in AGGREGATES]
    if unknown:
        raise ValueError(f"parameter 'agg': unknown {unknown} (allowed: {', '.join(AGGREGATES)})")
    return tuple(agg)


def _subtask_set(spec: str | None) -> set[int] | None:
    """``0,2-4`` → {0, 2, 3, 4}; None: all."""
    if not spec:
        return None
    chosen: set[int] = set()
    try:
        for part in spec.split(","):
            first, _, last = part.strip().partition("-")
            chosen.update(range(int(first), int(last or first) + 1))
    except ValueError:
        raise ValueError(f"parameter 'subtasks': {spec!r} is not like 0,2-4") from None
    return chosen


def backpressure(tasks: Sequence[TaskDescription], now_ms: int) -> Json:
    """``GET .../vertices/:vertexid/backpressure``."""
    subtasks: list[Json] = []
    for subtask, report in _reports(tasks):
        backpressured = report.value(BACKPRESSURED)
        if backpressured is None or isinstance(backpressured, DistributionValue):
            continue
        ratio = min(1.0, max(0.0, backpressured / 1000.0))
        subtasks.append({
            "subtask": subtask, "attempt-number": int(dict(report.variables).get(
                "task_attempt_num", "0")),
            "backpressureLevel": BackPressureLevel.of(ratio).value, "ratio": ratio,
            "idleRatio": _ratio(report, IDLE), "busyRatio": _ratio(report, BUSY),
        })
    if not subtasks:
        return {"status": "deprecated"}
    worst = max(float(entry["ratio"]) for entry in subtasks)
    return {"status": "ok", "backpressureLevel": BackPressureLevel.of(worst).value,
            "end-timestamp": now_ms, "subtasks": subtasks}


def _ratio(report: SubtaskMetricsReport, name: str) -> float:
    value = report.value(name)
    if value is None or isinstance(value, DistributionValue):
        return 0.0
    return min(1.0, max(0.0, value / 1000.0))


def watermarks(tasks: Sequence[TaskDescription]) -> list[Json]:
    """``GET .../vertices/:vertexid/watermarks``."""
    found = []
    for subtask, report in _reports(tasks):
        value = report.value(INPUT_WATERMARK)
        if value is not None:
            found.append({"id": f"{subtask}.{INPUT_WATERMARK}", "value": _as_text(value)})
    return found


def vertex_io(tasks: Sequence[TaskDescription]) -> Json:
    """The ``metrics`` of a vertex in ``GET /jobs/:jobid`` (Flink's keys: totals over its
    subtasks' latest reports; ``*-complete`` false while any subtask runs; flintlock's:
    records per second in and out summed over its subtasks, the busiest and the most
    backpressured subtask's ms per second, and where its sources report a backlog,
    ``pending-records`` / ``pending-bytes``: the sums of their ``pendingRecords`` /
    ``pendingBytes``)."""
    totals = dict.fromkeys((NUM_BYTES_IN, NUM_BYTES_OUT, NUM_RECORDS_IN, NUM_RECORDS_OUT,
                            NUM_RECORDS_IN + PER_SECOND, NUM_RECORDS_OUT + PER_SECOND), 0.0)
    busy = backpressured = 0.0
    for _, report in _reports(tasks):
        for name in totals:
            totals[name] += _number(report, name)
        busy = max(busy, _number(report, BUSY))
        backpressured = max(backpressured, _number(report, BACKPRESSURED))
    done = all(t.state == "FINISHED" for t in tasks)
    return {
        "read-bytes": int(totals[NUM_BYTES_IN]), "read-bytes-complete": done,
        "write-bytes": int(totals[NUM_BYTES_OUT]), "write-bytes-complete": done,
        "read-records": int(totals[NUM_RECORDS_IN]), "read-records-complete": done,
        "write-records": int(totals[NUM_RECORDS_OUT]), "write-records-complete": done,
        "records-in-per-second": totals[NUM_RECORDS_IN + PER_SECOND],
        "records-out-per-second": totals[NUM_RECORDS_OUT + PER_SECOND],
        "max-busy-time-ms-per-second": busy,
        "max-backpressured-time-ms-per-second": backpressured,
        **_backlog(tasks),
    }


def _backlog(tasks: Sequence[TaskDescription]) -> Json:
    """The sums of the vertex's source backlog gauges, by the keys that have any."""
    sums: dict[str, int] = {}
    for _, report in _reports(tasks):
        for point in report.points:
            key = _BACKLOG_KEYS.get(point.name)
            if key is not None and point.scope.components \
                    and isinstance(point.value, (int, float)):
                sums[key] = sums.get(key, 0) + int(point.value)
    return sums


_BACKLOG_KEYS = {"pendingRecords": "pending-records", "pendingBytes": "pending-bytes"}


def _number(report: SubtaskMetricsReport, name: str) -> float:
    value = report.value(name)
    return 0.0 if value is None or isinstance(value, DistributionValue) else float(value)


def query_list(query: Mapping[str, list[str]], name: str) -> list[str] | None:
    """A comma-separated query parameter (repeatable), or None when absent."""
    if name not in query:
        return None
    return [item for raw in query[name] for item in raw.split(",") if item]


def task_managers(tasks: Sequence[TaskDescription],
                  registered: Sequence[TaskManagerDescription] = ()) -> Json:
    """``GET /taskmanagers``: each TaskManager of the current attempt — every registered one
    (``registered``: its ``dataPort`` and ``pid`` even before its subtasks report), and any other
    its subtasks' reports name. From the latest reports: Flink's ``id``, ``slotsNumber`` (the
    subtasks that reported from it: flintlock gives a TaskManager the slots its plan needs, so
    ``freeSlots`` is 0), ``timeSinceLastHeartbeat`` (as Flink fills it: the time of the latest
    report, epoch ms; -1 before one), ``hardware`` (cores, physical memory), ``metrics`` with
    Flink's network-memory names (``nettyShuffleMemorySegments…`` and ``nettyShuffleMemory…``
    in bytes; absent when no subtask of it has network inputs or outputs) and flintlock's
    ``host``, ``pid`` and ``memory`` (``rss`` and ``peakRss``: resident bytes of its process
    now and at its peak)."""
    found: dict[str, list[SubtaskMetricsReport]] = {f"tm-{tm.index}": [] for tm in registered}
    for _, report in _reports(tasks):
        found.setdefault(dict(report.variables).get("tm_id", "?"), []).append(report)
    by_id = {f"tm-{tm.index}": tm for tm in registered}
    managers = []
    for tm_id, reports in sorted(found.items()):
        entry: Json = {"id": tm_id, "slotsNumber": len(reports), "freeSlots": 0,
                       "timeSinceLastHeartbeat": -1}
        known = by_id.get(tm_id)
        if known is not None:
            entry.update({"host": known.host, "dataPort": known.data_port, "pid": known.pid})
        if reports:
            entry.update(_reported(reports))
        managers.append(entry)
    return {"taskmanagers": managers}


def _reported(reports: list[SubtaskMetricsReport]) -> Json:
    """What one TaskManager's latest subtask reports say of it."""
    latest = max(reports, key=lambda r: r.timestamp_ms)
    entry: Json = {"host": dict(latest.variables).get("host", ""),
                   "timeSinceLastHeartbeat": latest.timestamp_ms}
    process = latest.process
    if process is not None:
        entry.update({
            "pid": process.pid,
            "memory": {"rss": process.rss_bytes, "peakRss": process.peak_rss_bytes},
            "hardware": {"cpuCores": process.cpu_cores,
                         "physicalMemory": process.physical_memory_bytes,
                         "freeMemory": -1, "managedMemory": 0},
        })
        network = _newest_network(reports)
        if network is not None:
            entry["metrics"] = network_memory(network)
    return entry


def _newest_network(reports: list[SubtaskMetricsReport]) -> NetworkMemory | None:
    """The newest network pool figures among one TaskManager's reports."""
    found = [(r.timestamp_ms, r.process.network) for r in reports
             if r.process is not None and r.process.network is not None]
    return max(found, key=lambda item: item[0])[1] if found else None


def network_memory(network: NetworkMemory) -> Json:
    """A TaskManager's network buffer pool by Flink's names (segments, and bytes)."""
    size = network.segment_size
    return {
        "nettyShuffleMemorySegmentsTotal": network.total_segments,
        "nettyShuffleMemorySegmentsAvailable": network.available_segments,
        "nettyShuffleMemorySegmentsUsed": network.used_segments,
        "nettyShuffleMemoryTotal": network.total_segments * size,
        "nettyShuffleMemoryAvailable": network.available_segments * size,
        "nettyShuffleMemoryUsed": network.used_segments * size,
    }


def job_figures(job: JobDescription, now_ms: int) -> tuple[tuple[str, float], ...]:
    """The job-scope figures of the Prometheus exposition, by Flink's names: ``uptime`` (ms;
    0 once ended), ``numRestarts``, the checkpoint counters and the latest completed
    checkpoint's ``lastCheckpointDuration`` (ms), ``lastCheckpointSize`` (bytes) and
    ``lastCompletedCheckpointId``."""
    running = job.status not in ("FINISHED", "CANCELED", "FAILED")
    figures: list[tuple[str, float]] = [
        ("uptime", float(max(0, now_ms - job.start_time_ms)) if running else 0.0),
        ("numRestarts", float(max(0, job.attempt))),
    ]
    stats = job.checkpoints
    if stats is not None:
        figures += [
            ("totalNumberOfCheckpoints", float(stats.num_triggered)),
            ("numberOfInProgressCheckpoints", float(stats.num_in_progress)),
            ("numberOfCompletedCheckpoints", float(stats.num_completed)),
            ("numberOfFailedCheckpoints", float(stats.num_failed)),
        ]
        latest = stats.latest_completed
        if latest is not None:
            figures += [
                ("lastCheckpointDuration", float(latest.end_to_end_duration_ms or 0.0)),
                ("lastCheckpointSize", float(latest.state_size)),
                ("lastCompletedCheckpointId", float(latest.checkpoint_id)),
            ]
    return tuple(figures)
