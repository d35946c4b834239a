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
    summaries: dict[str, list[tuple[dict[str, str], DistributionValue]]] = {}
    if scrape.job is not None:
        job = scrape.job
        for name, number in job.values:
            _add(gauges, f"{JOB_PREFIX}_{name}", {"job_id": job.job_id,
                                                  "job_name": job.job_name}, number)
    for name, labels, number in _task_manager_figures(scrape.reports):
        _add(gauges, f"{TM_PREFIX}_{name}", labels, number)
    for report in scrape.reports:
        for point in report.points:
            labels = {label_name(k): v for k, v in (*report.variables, *point.scope.variables)}
            value = point.value
            if isinstance(value, DistributionValue):
                summaries.setdefault(metric_name(point), []).append((labels, value))
                for suffix, number in (("_min", value.min), ("_max", value.max)):
                    _add(gauges, metric_name(point, suffix), labels, number)
            else:
                _add(gauges, metric_name(point), labels, value)
    built: list[Any] = []
    for name, samples in gauges.items():
        keys = _label_keys(labels for labels, _ in samples)
        family = GaugeMetricFamily(name, f"flintlock metric {name}", labels=keys)
        for labels, number in samples:
            family.add_metric([labels.get(k, "") for k in keys], number)
        built.append(family)
    for name, distributions in summaries.items():
        keys = _label_keys(labels for labels, _ in distributions)
        summary = SummaryMetricFamily(name, f"flintlock distribution {name}", labels=keys)
        for labels, value in distributions:
            summary.add_metric([labels.get(k, "") for k in keys], value.count, value.sum)
        built.append(summary)
    return built


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
