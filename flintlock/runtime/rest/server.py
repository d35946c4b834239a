"""``RestEndpoint``: one job's REST/JSON API on HTTP, and its job file.

One endpoint per job, started with the job (``flintlock.runtime.executor``) and closed when
the job ends. It binds ``rest.bind-address`` (default 127.0.0.1) on ``rest.port`` (default
8081). Several jobs may run on one machine, so when that port is taken the endpoint binds a
free port instead and logs it; the job file (``jobfiles``) tells the CLI which port it got.

With ``security.ssl.rest.enabled`` the endpoint speaks HTTPS with the configured PEM
certificate and key (``runtime.tls.contexts.rest_server_tls``; with
``security.ssl.rest.authentication-enabled``, mutual TLS), and its job file records the
certificate, which the CLI then trusts and nothing else.

Every request must carry ``Authorization: Bearer <token>``, a random secret made per job and
written only to the job's 0600 job file. The API (``api.RestApi``) checks it before anything
else.

Anyone who reaches the port may connect, token or not, so the HTTP server (``httpd``) holds
no thread for a client and gives each request an absolute deadline and each unauthenticated
connection a place under a cap (issue 14; see ``httpd`` for the design).

With ``metrics.reporter.prom.factory.class`` set, the endpoint also binds the job's
Prometheus reporter (``reporter``) and starts and closes it with itself.

Every second a sampler thread (``metric_history``) records each vertex's figures, which
``GET /jobs/:jobid/metrics-history`` serves. With ``jobmanager.archive.fs.dir`` set, closing
first writes the job's views there (``archive``) for ``flintlock history``.

Closing (the job has ended): the job file is removed first, so ``flintlock list`` stops
showing the job; savepoints still in progress are failed; then the endpoint waits — at most
``linger_s``, and only if a client with the token started a savepoint whose outcome it has
not fetched — until clients have fetched every savepoint outcome (a stop-with-savepoint ends
the job, and the client polling for the savepoint's location must still get it); then the
server stops: every connection is closed, whatever its client is doing, and the loop and its
workers are joined. No client can hold the close, and so the job's result.

Threads: the server's ``flintlock-rest-<job>`` loop thread, at most ``httpd.WORKERS``
workers, and the ``flintlock-history-<job>`` sampler. ``close`` is called from the job's thread.
"""

from __future__ import annotations

import errno
import logging
import os
import secrets
import ssl
import threading
import time
from pathlib import Path
from typing import Any

from flintlock.common.config import Configuration
from flintlock.common.errors import FlintlockError
from flintlock.common.options import cluster as cluster_options
from flintlock.common.options import security as security_options
from flintlock.runtime.jobmanager import JobManager
from flintlock.runtime.rest import views
from flintlock.runtime.rest.api import JobControl, RestApi
from flintlock.runtime.rest.archive import ArchiveError, archive_dir
from flintlock.runtime.rest.httpd import MAX_PENDING_REQUESTS, REQUEST_TIMEOUT_S, HttpServer
from flintlock.runtime.rest.jobfiles import JobFile, JobFileError, write_job_file
from flintlock.runtime.rest.reporter import PrometheusReporter
from flintlock.runtime.rest.triggers import SavepointTriggers
from flintlock.runtime.rest.wire import MAX_BODY_BYTES
from flintlock.runtime.tls.contexts import RestTls, rest_server_tls, warn_if_exposed

log = logging.getLogger(__name__)

__all__ = ["MAX_BODY_BYTES", "RestEndpoint", "RestEndpointError"]

DEFAULT_LINGER_S = 10.0


class RestEndpointError(FlintlockError):
    """The REST endpoint could not bind its address."""

    def __init__(self, address: str, port: int, detail: str) -> None:
        super().__init__(address, port, detail)
        self.address = address
        self.port = port
        self.detail = detail

    def __str__(self) -> str:
        return (f"cannot start the REST endpoint on {self.address}:{self.port}: {self.detail} "
                "(rest.bind-address, rest.port)")


class RestEndpoint:
    """The REST endpoint of one job: bound by ``bind``, serving from ``serve`` until
    ``close``. Two steps, so that a port that cannot be bound fails before a JobManager
    (with its own RPC endpoint) exists."""

    def __init__(self, bind_address: str = "127.0.0.1", port: int = 8081, *,
                 token: str | None = None, jobs_directory: Path | None = None,
                 linger_s: float = DEFAULT_LINGER_S,
                 request_timeout_s: float = REQUEST_TIMEOUT_S,
                 max_pending_requests: int = MAX_PENDING_REQUESTS,
                 tls: RestTls | None = None,
                 reporter: PrometheusReporter | None = None,
                 archive_directory: Path | None = None) -> None:
        self.token = token or secrets.token_urlsafe(32)
        self.archive_directory = archive_directory
        self.archive_path: Path | None = None
        self.api: RestApi | None = None
        self._tls = tls
        self.job_id = ""
        self.job_file: JobFile | None = None
        self.job_file_path: Path | None = None
        self._linger_s = linger_s
        self._jobs_directory = jobs_directory
        self._triggers = SavepointTriggers(lambda: secrets.token_hex(16))
        self._requested_port = port
        self._server = _bind(bind_address, port, request_timeout_s, max_pending_requests,
                             tls.context if tls is not None else None)
        self.reporter = reporter
        self._serving = False
        self._closed = False
        self._close_lock = threading.Lock()

    @classmethod
    def bind(cls, configuration: Configuration, **kwargs: Any) -> RestEndpoint:
        """An endpoint bound where ``rest.bind-address`` and ``rest.port`` say, with the TLS
        of ``security.ssl.rest.*`` (``TlsConfigurationError`` if its files are unusable)."""
        host = configuration.get(cluster_options.REST_BIND_HOST)
        kwargs.setdefault("archive_directory", archive_dir(configuration))
        tls = rest_server_tls(configuration)
        if tls is None:
            warn_if_exposed(host, "the REST endpoint", security_options.REST_ENABLED.key)
        reporter = PrometheusReporter.bind(configuration, tls.context if tls else None)
        try:
            return cls(host, configuration.get(cluster_options.REST_PORT), tls=tls,
                       reporter=reporter, **kwargs)
        except BaseException:
            if reporter is not None:
                reporter.close()
            raise

    def serve(self, job: JobControl, name: str | None = None) -> RestEndpoint:
        """Starts answering requests about ``job`` and writes its job file."""
        if name is None:
            name = job.job_graph.name if isinstance(job, JobManager) else job.job_id
        self.job_id = job.job_id
        start_time_ms = int(time.time() * 1000)
        plan = config = None
        if isinstance(job, JobManager):
            plan = views.plan(job.job_graph)
            config = views.job_config(job.job_id, name, job.config)
        api = RestApi(job, self.token, self._triggers, job_name=name,
                      start_time_ms=start_time_ms, plan=plan, config=config,
                      output=job.output if isinstance(job, JobManager) else None)
        self._server.start(api, f"flintlock-rest-{self.job_id[:8]}")
        self._serving = True
        self.api = api
        api.history.start(f"flintlock-history-{self.job_id[:8]}")
        if self.reporter is not None:
            self.reporter.start(api.exposition, self.job_id)
        if self._requested_port not in (0, self.address[1]):
            log.warning("rest.port %d is taken; the REST endpoint of job %s uses port %d",
                        self._requested_port, self.job_id, self.address[1])
        tls = self._tls
        self.job_file = JobFile(self.job_id, name, self.address[0], self.address[1],
                                self.token, os.getpid(), start_time_ms,
                                tls.cert_pem if tls else "", tls.client_cert if tls else "",
                                tls.client_key if tls else "")
        self.job_file_path = self._write_job_file(self.job_file)
        log.info("job %s (%s): REST endpoint at %s", self.job_id, name, self.url)
        return self

    @property
    def address(self) -> tuple[str, int]:
        host, port = self._server.server_address[:2]
        return str(host), int(port)

    @property
    def url(self) -> str:
        host, port = self.address
        scheme = "https" if self._tls is not None else "http"
        return f"{scheme}://[{host}]:{port}" if ":" in host else f"{scheme}://{host}:{port}"

    def _write_job_file(self, job_file: JobFile) -> Path | None:
        try:
            return write_job_file(job_file, self._jobs_directory)
        except JobFileError as error:
            log.warning("job %s: %s; `flintlock list` will not see this job", self.job_id, error)
            return None

    def _write_archive(self, api: RestApi) -> None:
        """The job's views into ``jobmanager.archive.fs.dir`` (the job has ended); a failure
        is logged, never the job's."""
        if self.archive_directory is None:
            return
        try:
            self.archive_path = api.archive(self.archive_directory)
        except ArchiveError as error:
            log.warning("job %s: %s", self.job_id, error)
            return
        log.info("job %s: archived to %s", self.job_id, self.archive_path)

    def close(self) -> None:
        """Removes the job file, lets clients fetch savepoint outcomes (bounded), then stops
        the server (closing every connection) and joins its threads. Idempotent."""
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
        if self.api is not None:
            self.api.history.stop()
            self._write_archive(self.api)
        if self.job_file_path is not None:
            try:  # the path written, even if $FLINTLOCK_HOME has changed since
                self.job_file_path.unlink(missing_ok=True)
            except OSError as error:
                log.warning("job %s: cannot remove its job file %s: %s", self.job_id,
                            self.job_file_path, error)
        self._triggers.fail_in_progress(f"job {self.job_id} ended before the savepoint completed")
        if self._serving and not self._triggers.wait_until_fetched(self._linger_s):
            log.info("job %s: savepoint outcomes %s were never fetched over REST",
                     self.job_id, self._triggers.unfetched())
        self._server.close()
        if self.reporter is not None:
            self.reporter.close()


def _bind(host: str, port: int, request_timeout_s: float, max_pending_requests: int,
          tls: ssl.SSLContext | None) -> HttpServer:
    def bind(at_port: int) -> HttpServer:
        return HttpServer(host, at_port, request_timeout_s=request_timeout_s,
                          max_pending_requests=max_pending_requests, tls=tls)

    try:
        return bind(port)
    except OSError as exc:
        if port == 0 or exc.errno not in (errno.EADDRINUSE, errno.EACCES):
            raise RestEndpointError(host, port, exc.strerror or str(exc)) from exc
    try:
        return bind(0)
    except OSError as exc:
        raise RestEndpointError(host, 0, exc.strerror or str(exc)) from exc
