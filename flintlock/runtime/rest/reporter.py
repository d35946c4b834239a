"""The Prometheus reporter of one job: its metrics in Prometheus' text format on a port of
their own, as Flink's ``PrometheusReporter`` serves them (``metrics.reporter.prom.*``).

Enabled by ``metrics.reporter.prom.factory.class`` set to Flink's factory class, or by
``metrics.reporter.prom.port`` set on its own (a user who names the reporter's port wants the
reporter: the key is only read for it; issue 30); binds
``metrics.reporter.prom.host`` (default 127.0.0.1) on ``metrics.reporter.prom.port``: one port,
a range ``9250-9260`` (the first free one, so several jobs on a host each get one) or 0. A port
that cannot be bound leaves the job without a reporter, logged, as Flink does: metrics never
fail a job. The exposition is the REST API's (``RestApi.exposition``), which reads the
JobManager's description.

No token: a scraper is configured with an address, and what it reads is read-only (no job
control is reachable here: every request gets the exposition, whatever its method or path).
With ``security.ssl.rest.enabled`` it speaks HTTPS with the REST endpoint's certificate (and,
with ``security.ssl.rest.authentication-enabled``, requires the same client certificates);
without TLS beyond loopback the metrics name the job and its operators in clear text, so a
warning is logged, like the other endpoints'.

It runs on ``httpd.HttpServer``, so a slow scraper holds no thread and every request has a
deadline. Threads: the server's loop and workers; ``close`` from the job's thread.
"""

from __future__ import annotations

import errno
import ipaddress
import logging
import ssl
from collections.abc import Callable

from flintlock.common.config import Configuration
from flintlock.common.errors import FlintlockError
from flintlock.common.options import metrics as metrics_options
from flintlock.runtime.rest.http_types import HttpError, RestRequest, RestResponse
from flintlock.runtime.rest.httpd import HttpServer

log = logging.getLogger(__name__)

Exposition = Callable[[], tuple[bytes, str]]


class ReporterConfigurationError(FlintlockError):
    """A ``metrics.reporter.prom.*`` value flintlock cannot use."""

    def __init__(self, key: str, value: str, expected: str) -> None:
        super().__init__(key, value, expected)
        self.key = key
        self.value = value
        self.expected = expected

    def __str__(self) -> str:
        return f"{self.key}: {self.value!r} is not {self.expected}"


def reporter_ports(spec: str) -> list[int]:
    """``9249`` → [9249]; ``9250-9252`` → [9250, 9251, 9252]; ``0`` → [0]."""
    first, _, last = spec.strip().partition("-")
    try:
        low, high = int(first), int(last or first)
    except ValueError:
        raise ReporterConfigurationError(
            metrics_options.PROM_PORT.key, spec, "a port or a range like 9250-9260") from None
    if not 0 <= low <= high <= 65535:
        raise ReporterConfigurationError(
            metrics_options.PROM_PORT.key, spec, "within 0-65535, low to high")
    return list(range(low, high + 1))


class _ExpositionHandler:
    """Every request gets the exposition; nothing else is reachable."""

    def __init__(self, exposition: Exposition) -> None:
        self._exposition = exposition

    def authorized(self, header: str | None) -> bool:
        return True

    def handle(self, request: RestRequest) -> RestResponse:
        try:
            body, content_type = self._exposition()
        except HttpError as error:
            return RestResponse(error.status, {"errors": [error.message]})
        return RestResponse(200, body, content_type=content_type)


class PrometheusReporter:
    """Bound by ``bind`` (None when not configured or no port was free), serving from
    ``start`` until ``close``."""

    def __init__(self, server: HttpServer, tls: bool = False) -> None:
        self._server = server
        self._started = False
        self.scheme = "https" if tls else "http"

    @classmethod
    def bind(cls, configuration: Configuration, tls: ssl.SSLContext | None = None
             ) -> PrometheusReporter | None:
        factory = configuration.get(metrics_options.PROM_FACTORY_CLASS).strip()
        if not factory and configuration.contains_key(metrics_options.PROM_PORT.key):
            factory = metrics_options.PROMETHEUS_FACTORY
        if not factory:
            return None
        if factory != metrics_options.PROMETHEUS_FACTORY:
            raise ReporterConfigurationError(metrics_options.PROM_FACTORY_CLASS.key, factory,
                                             metrics_options.PROMETHEUS_FACTORY)
        host = configuration.get(metrics_options.PROM_HOST)
        ports = reporter_ports(configuration.get(metrics_options.PROM_PORT))
        for port in ports:
            try:
                server = HttpServer(host, port, tls=tls)
            except OSError as error:
                if error.errno not in (errno.EADDRINUSE, errno.EACCES):
                    log.error("no Prometheus reporter: cannot bind %s:%d: %s", host, port, error)
                    return None
                continue
            if not _is_loopback(host) and tls is None:
                log.warning("the Prometheus reporter listens on %s: anyone who reaches it reads "
                            "the job's metrics, without a token (%s)", host,
                            metrics_options.PROM_HOST.key)
            return cls(server, tls is not None)
        log.error("no Prometheus reporter: every port of %s on %s is taken (%s)",
                  configuration.get(metrics_options.PROM_PORT), host,
                  metrics_options.PROM_PORT.key)
        return None

    @property
    def address(self) -> tuple[str, int]:
        host, port = self._server.server_address[:2]
        return str(host), int(port)

    def start(self, exposition: Exposition, job_id: str) -> None:
        self._server.start(_ExpositionHandler(exposition), f"flintlock-prom-{job_id[:8]}")
        self._started = True
        log.info("job %s: Prometheus reporter at %s://%s:%d/metrics", job_id, self.scheme,
                 *self.address)

    def close(self) -> None:
        self._server.close()


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"
