"""Metric reporters (Flink's ``metrics.reporter.<name>.*`` keys for the reporter named
``prom``): the Prometheus scrape endpoint of a job's metrics (docs/metrics.md)."""

from __future__ import annotations

from flintlock.common.config_option import ConfigOption, OptionType

PROMETHEUS_FACTORY = "org.apache.flink.metrics.prometheus.PrometheusReporterFactory"

PROM_FACTORY_CLASS = ConfigOption(
    "metrics.reporter.prom.factory.class", OptionType.STRING, "",
    "Set to org.apache.flink.metrics.prometheus.PrometheusReporterFactory (Flink's value) "
    "to serve the job's metrics in Prometheus' text format, without a token, on "
    "metrics.reporter.prom.host:port (GET /metrics; any path answers). Empty: no reporter "
    "(the same text is always at GET /metrics on the REST port, with the REST token).",
)
PROM_PORT = ConfigOption(
    "metrics.reporter.prom.port", OptionType.STRING, "9249",
    "Port of the Prometheus reporter, or a range such as 9250-9260: the first free one is "
    "used (several jobs on one host each take one); 0 picks any free port. Setting it turns "
    "the reporter on even without metrics.reporter.prom.factory.class.",
)
PROM_HOST = ConfigOption(
    "metrics.reporter.prom.host", OptionType.STRING, "127.0.0.1",
    "Address the Prometheus reporter binds (flintlock's addition: Flink's reporter binds all "
    "interfaces). Metrics are read-only, but name jobs and operators: bind beyond loopback "
    "only where the network is trusted.",
)
PROGRESS_LINE = ConfigOption(
    "flintlock.progress-line", OptionType.BOOLEAN, True,
    "While execute() waits for a job, rewrite one status line on standard error once a "
    "second (state, records per second from the sources, backpressure, latest checkpoint); "
    "only when standard error is a terminal. false turns it off.",
)
