"""PyFlink's ``pyflink.metrics`` for flintlock jobs: what ``RuntimeContext.get_metrics_group()``
returns and the metrics it registers. A job ported from PyFlink changes only the import.

``get_metrics_group()`` gives the ``MetricGroup`` of the function's operator in its subtask;
``counter(name)``, ``gauge(name, callable)``, ``meter(name, time_span_in_seconds=60)``,
``distribution(name)`` register metrics in it, ``add_group(name[, value])`` nests groups.
Their values reach the JobManager with the TaskManagers' heartbeats and are served by the
REST endpoint and the Prometheus reporter (docs/metrics.md).
"""

from flintlock.runtime.metrics.groups import MetricGroup
from flintlock.runtime.metrics.metrics import Counter, Distribution, Meter, Metric

__all__ = ["Counter", "Distribution", "Meter", "Metric", "MetricGroup"]
