"""PyFlink's ``pyflink.metrics.metricbase``: the metric group and metric types (the same
classes as ``flintlock.metrics``)."""

from flintlock.metrics import Counter, Distribution, Meter, Metric, MetricGroup

__all__ = ["Counter", "Distribution", "Meter", "Metric", "MetricGroup"]
