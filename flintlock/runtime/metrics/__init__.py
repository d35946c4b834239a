"""Metrics: the user's counters, meters, distributions and gauges, and each subtask's report.

- ``metrics``: the metric types (``Counter``, ``Meter``, ``Distribution``; updates are an
  attribute change, nothing else) and ``MeterView`` (a rate from sampled totals);
- ``groups``: ``MetricGroup`` (PyFlink's API), scoped per operator subtask as Flink scopes
  it, registering into one ``MetricRegistry`` per subtask;
- ``report``: ``SubtaskMetrics.sample`` → ``SubtaskMetricsReport``, the user's metrics and
  Flink's task metrics (``numRecordsIn`` ...) that travel to the JobManager with heartbeats;
- ``prometheus``: those reports as Prometheus metric families (prometheus-client);
- ``output_tail``: bounded tails of a TaskManager process's log and stdout, which also travel
  with heartbeats, and the JobManager's per-TaskManager tails of them.

A leaf: imports only ``flintlock.common`` (and prometheus-client, lazily), so the tasks, the
TaskManager, the JobManager and the REST endpoint may all import it. The user-facing names
are re-exported by ``flintlock.metrics`` (as ``pyflink.metrics`` exports them).
"""

from flintlock.runtime.metrics.groups import (
    TASK_SCOPE,
    Gauge,
    MetricGroup,
    MetricNameClashError,
    MetricRegistry,
    MetricScope,
    SubtaskMetricGroups,
    operator_group,
)
from flintlock.runtime.metrics.metrics import (
    Counter,
    Distribution,
    DistributionValue,
    Meter,
    MeterView,
    Metric,
    MetricKind,
)
from flintlock.runtime.metrics.report import (
    SYSTEM_METRICS,
    MetricPoint,
    NetworkMemory,
    ProcessStats,
    SubtaskMetrics,
    SubtaskMetricsReport,
    TaskIOCounters,
    TaskTimeSplit,
)

__all__ = [
    "SYSTEM_METRICS", "TASK_SCOPE", "Counter", "Distribution", "DistributionValue", "Gauge",
    "Meter", "MeterView", "Metric", "MetricGroup", "MetricKind", "MetricNameClashError",
    "MetricPoint", "MetricRegistry", "MetricScope", "NetworkMemory", "ProcessStats",
    "SubtaskMetricGroups",
    "SubtaskMetrics", "SubtaskMetricsReport", "TaskIOCounters", "TaskTimeSplit",
    "operator_group",
]
