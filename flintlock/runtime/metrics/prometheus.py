"""Subtask metric reports as Prometheus metric families, named and labelled like Flink's
Prometheus reporter, and their text exposition — both by prometheus-client.

Names: ``flink_taskmanager_job_task_`` then, for an operator's metric, ``operator_`` and the
user's group names and keys (not values), then the metric's name, with every character
Prometheus does not allow in a name replaced by ``_``: ``numRecordsIn`` of a subtask is
``flink_taskmanager_job_task_numRecordsIn``; ``add_group("user", "alice").counter("hits")``
in a map is ``flink_taskmanager_job_task_operator_user_hits{user="alice", ...}``.

Labels: Flink's scope variables without brackets — ``host``, ``tm_id``, ``job_id``,
``job_name``, ``task_id``, ``task_name``, ``subtask_index``, ``task_attempt_num``, and for
operator metrics ``operator_id``, ``operator_name`` and the user's keys.

Types: counters, gauges and meters (their rate) are gauges, as Flink's reporter exports them
(a counter may go down); a distribution is a summary (``_count``, ``_sum``) with gauges
``<name>_min`` and ``<name>_max``. A value that is not a finite number is left out.

HELP: Flink's description of each of its metrics (``HELP_TEXTS``, by the metric's own name); a
user metric's HELP names its group and scope. Units are Flink's: the durations Flink exports
as whole milliseconds (``uptime``, ``lastCheckpointDuration``, ``idleTimeMsPerSecond``,
``backPressuredTimeMsPerSecond``, any ``…Ms`` name; ``WHOLE_MILLISECONDS``) are rounded to
whole milliseconds; ``busyTimeMsPerSecond`` stays fractional, a double in Flink too.

The job's own figures (``JobFigures``: uptime, restarts, checkpoint counts and the latest
checkpoint's duration and size) are ``flink_jobmanager_job_<name>{job_id, job_name}``, as
Flink's JobManager scope names them. Each TaskManager's figures, from the newest report of its
subtasks, are ``flink_taskmanager_<name>{host, tm_id}`` by Flink's names: its process's
resident memory (``Status_ProcessTree_Memory_RSS``) and its network buffer pool
(``Status_Shuffle_Netty_{Total,Available,Used}MemorySegments`` and ``…Memory`` in bytes).

prometheus-client is imported when a collector is made: the rest of the package works
without it (the ``prometheus`` extra installs it).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from flintlock.runtime.metrics.metrics import DistributionValue
from flintlock.runtime.metrics.report import MetricPoint, ProcessStats, SubtaskMetricsReport

PREFIX = "flink_taskmanager_job_task"
TM_PREFIX = "flink_taskmanager"
JOB_PREFIX = "flink_jobmanager_job"
_INVALID_NAME = re.compile(r"[^a-zA-Z0-9_:]")
_INVALID_LABEL = re.compile(r"[^a-zA-Z0-9_]")

Sample = tuple[dict[str, str], float]

HELP_TEXTS: dict[str, str] = {
    "numRecordsIn": "The total number of records this operator/task has received.",
    "numRecordsOut": "The total number of records this operator/task has emitted.",
    "numRecordsInPerSecond": "The number of records this operator/task receives per second.",
    "numRecordsOutPerSecond": "The number of records this operator/task sends per second.",
    "numBytesIn": "The total number of bytes this task has read.",
    "numBytesOut": "The total number of bytes this task has emitted.",
    "numBytesInPerSecond": "The number of bytes this task reads per second.",
    "numBytesOutPerSecond": "The number of bytes this task emits per second.",
    "busyTimeMsPerSecond": "The time (in milliseconds) this task is busy (neither idle nor "
                           "back pressured) per second.",
    "idleTimeMsPerSecond": "The time (in milliseconds) this task is idle (has no data to "
                           "process) per second.",
    "backPressuredTimeMsPerSecond": "The time (in milliseconds) this task is back pressured "
                                    "per second.",
    "isBackPressured": "Whether the task is back pressured (1) or not (0).",
    "currentInputWatermark": "The last watermark this operator/task has received "
                             "(in milliseconds).",
    "currentOutputWatermark": "The last watermark this operator has emitted "
                              "(in milliseconds).",
    "numLateRecordsDropped": "The number of records this operator has dropped due to "
                             "arriving late.",
    "checkpointAlignmentTime": "The time in nanoseconds that the last barrier alignment "
                               "took to complete.",
    "checkpointStartDelayNanos": "The time in nanoseconds between the creation of the last "
                                 "checkpoint and the start of checkpointing in this task.",
    "mailboxMailsPerSecond": "The number of actions processed from the task's mailbox per "
                             "second.",
    "mailboxQueueSize": "The number of actions in the task's mailbox waiting to be "
                        "processed.",
    "mailboxLatencyMs": "The latency (in milliseconds) of the actions in the task's mailbox.",
    "pendingRecords": "The number of records that have not been fetched by the source.",
    "currentEmitEventTimeLag": "The event time lag (in milliseconds) between the records' "
                               "event time and the time the source emitted them.",
    "currentFetchEventTimeLag": "The event time lag (in milliseconds) between the records' "
                                "event time and the time the source fetched them.",
    "watermarkLag": "The lag (in milliseconds) of the source's watermark behind wall time.",
    "sourceIdleTime": "The time (in milliseconds) the source has not processed any record.",
    "uptime": "The time (in milliseconds) the job has been running without interruption; "
              "0 once it has ended.",
    "numRestarts": "The total number of restarts since this job was submitted.",
    "totalNumberOfCheckpoints": "The number of checkpoints that have been triggered.",
    "numberOfInProgressCheckpoints": "The number of checkpoints in progress.",
    "numberOfCompletedCheckpoints": "The number of successfully completed checkpoints.",
    "numberOfFailedCheckpoints": "The number of failed checkpoints.",
    "lastCheckpointDuration": "The time (in milliseconds) it took to complete the last "
                              "checkpoint.",
    "lastCheckpointSize": "The checkpointed size (in bytes) of the last checkpoint.",
    "lastCompletedCheckpointId": "The identifier of the last completed checkpoint.",
    "Status_ProcessTree_Memory_RSS": "The resident memory (in bytes) of the TaskManager's "
                                     "process.",
    "Status_Shuffle_Netty_TotalMemorySegments": "The total number of network memory "
                                                "segments.",
    "Status_Shuffle_Netty_AvailableMemorySegments": "The number of unused network memory "
                                                    "segments.",
    "Status_Shuffle_Netty_UsedMemorySegments": "The number of used network memory segments.",
    "Status_Shuffle_Netty_TotalMemory": "The network memory (in bytes) in total.",
    "Status_Shuffle_Netty_AvailableMemory": "The unused network memory (in bytes).",
    "Status_Shuffle_Netty_UsedMemory": "The used network memory (in bytes).",
}
"""Flink's descriptions of its metrics (docs/ops/metrics), by the metric's own name."""

WHOLE_MILLISECONDS = frozenset({
    "uptime", "lastCheckpointDuration", "idleTimeMsPerSecond", "backPressuredTimeMsPerSecond",
    "currentEmitEventTimeLag", "currentFetchEventTimeLag", "watermarkLag", "sourceIdleTime",
})
"""Durations Flink exports as a whole number of milliseconds (a ``long``), besides any name
ending in ``Ms``."""


def help_text(name: str, scope: str) -> str:
    """The HELP line of the metric ``name`` (its own name, without scope) at ``scope``."""
    known = HELP_TEXTS.get(name)
    if known is not None:
        return f"{known} ({scope} scope)"
    return f"{name}: a metric registered in the {scope} scope (Flink's metric name)"


def whole_milliseconds(name: str, value: float) -> float:
    """``value`` rounded to whole milliseconds if ``name`` is such a duration, else itself."""
    if name in WHOLE_MILLISECONDS or name.endswith("Ms"):
        return float(round(value))
    return value


def metric_name(point: MetricPoint, suffix: str = "") -> str:
    parts = [PREFIX, *point.scope.logical, point.name + suffix]
    return _INVALID_NAME.sub("_", "_".join(parts))


def label_name(name: str) -> str:
    cleaned = _INVALID_LABEL.sub("_", name)
    return cleaned if not cleaned[:1].isdigit() else "_" + cleaned


@dataclass(frozen=True, slots=True)
class JobFigures:
    """Job-scope figures (Flink's ``flink_jobmanager_job_<name>{job_id, job_name}``):
    uptime, restarts and the checkpoint counters, by Flink's names."""

    job_id: str
    job_name: str
    values: tuple[tuple[str, float], ...]


@dataclass(frozen=True, slots=True)
class Scrape:
    """What one scrape exposes: every subtask's latest report and the job's figures."""

    reports: tuple[SubtaskMetricsReport, ...]
    job: JobFigures | None = None


def families(scrape: Scrape) -> list[Any]:
    """The metric families of ``scrape`` (prometheus-client ``Metric`` objects)."""
    from prometheus_client.core import GaugeMetricFamily, SummaryMetricFamily

    gauges: dict[str, list[Sample]] = {}
    helps: dict[str, str] = {}
    summaries: dict[str, list[tuple[dict[str, str], DistributionValue]]] = {}
    if scrape.job is not None:
        job = scrape.job
        for name, number in job.values:
            family_name = f"{JOB_PREFIX}_{name}"
            helps.setdefault(family_name, help_text(name, "job"))
            _add(gauges, family_name, {"job_id": job.job_id, "job_name": job.job_name},
                 whole_milliseconds(name, number))
    for name, labels, number in _task_manager_figures(scrape.reports):
        helps.setdefault(f"{TM_PREFIX}_{name}", help_text(name, "TaskManager"))
        _add(gauges, f"{TM_PREFIX}_{name}", labels, number)
    _add_reports(scrape.reports, gauges, summaries, helps)
    built: list[Any] = []
    for name, samples in gauges.items():
        keys = _label_keys(labels for labels, _ in samples)
        family = GaugeMetricFamily(name, helps.get(name, name), labels=keys)
        for labels, number in samples:
            family.add_metric([labels.get(k, "") for k in keys], number)
        built.append(family)
    for name, distributions in summaries.items():
        keys = _label_keys(labels for labels, _ in distributions)
        summary = SummaryMetricFamily(name, helps.get(name, name), labels=keys)
        for labels, value in distributions:
            summary.add_metric([labels.get(k, "") for k in keys], value.count, value.sum)
        built.append(summary)
    return built


def _add_reports(reports: Iterable[SubtaskMetricsReport], gauges: dict[str, list[Sample]],
                 summaries: dict[str, list[tuple[dict[str, str], DistributionValue]]],
                 helps: dict[str, str]) -> None:
    """The subtasks' metrics into ``gauges`` and ``summaries``, their HELP into ``helps``."""
    for report in reports:
        for point in report.points:
            labels = {label_name(k): v for k, v in (*report.variables, *point.scope.variables)}
            value = point.value
            scope = ".".join(("task", *point.scope.logical))
            helps.setdefault(metric_name(point), help_text(point.name, scope))
            if isinstance(value, DistributionValue):
                summaries.setdefault(metric_name(point), []).append((labels, value))
                for suffix, number in (("_min", value.min), ("_max", value.max)):
                    helps.setdefault(metric_name(point, suffix),
                                     f"The {suffix[1:]}imum of {point.name} ({scope} scope)")
                    _add(gauges, metric_name(point, suffix), labels, number)
            else:
                _add(gauges, metric_name(point), labels,
                     whole_milliseconds(point.name, value)
                     if isinstance(value, (int, float)) else value)


def _task_manager_figures(reports: Iterable[SubtaskMetricsReport]
                          ) -> Iterator[tuple[str, dict[str, str], float]]:
    """Each TaskManager's process and network figures, from its newest report."""
    newest: dict[str, tuple[int, str, ProcessStats]] = {}
    for report in reports:
        variables = dict(report.variables)
        tm_id = variables.get("tm_id", "")
        if report.process is not None and (
                tm_id not in newest or report.timestamp_ms > newest[tm_id][0]):
            newest[tm_id] = (report.timestamp_ms, variables.get("host", ""), report.process)
    for tm_id, (_, host, process) in sorted(newest.items()):
        labels = {"host": host, "tm_id": tm_id}
        yield "Status_ProcessTree_Memory_RSS", labels, process.rss_bytes
        network = process.network
        if network is None:
            continue
        for kind, segments in (("Total", network.total_segments),
                               ("Available", network.available_segments),
                               ("Used", network.used_segments)):
            yield f"Status_Shuffle_Netty_{kind}MemorySegments", labels, segments
            yield f"Status_Shuffle_Netty_{kind}Memory", labels, segments * network.segment_size


def _add(into: dict[str, list[Sample]], name: str, labels: dict[str, str], value: float) -> None:
    if isinstance(value, (int, float)) and math.isfinite(value):
        into.setdefault(name, []).append((labels, float(value)))


def _label_keys(label_sets: Iterable[dict[str, str]]) -> list[str]:
    keys: dict[str, None] = {}
    for labels in label_sets:
        keys.update(dict.fromkeys(labels))
    return list(keys)


class ReportCollector:
    """A prometheus-client collector over whatever ``source`` returns at scrape time
    (called on the scraping thread; it must be thread-safe: a JobManager description is)."""

    def __init__(self, source: Callable[[], Scrape]) -> None:
        self._source = source

    def collect(self) -> Iterator[Any]:
        yield from families(self._source())

    def describe(self) -> list[Any]:
        return []  # unknown until scraped: the registry must not call collect to describe


def exposition(source: Callable[[], Scrape]) -> tuple[bytes, str]:
    """The text exposition of what ``source`` returns, and its content type."""
    from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

    registry = CollectorRegistry(auto_describe=False)
    registry.register(ReportCollector(source))
    return generate_latest(registry), CONTENT_TYPE_LATEST
