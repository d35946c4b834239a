"""``RestEndpoint``: the HTTP server of one job's REST/JSON API, and its job file.

One endpoint per job, started with the job (``flintlock.runtime.executor``) and closed when
the job ends. It binds ``rest.bind-address`` (default 127.0.0.1) on ``rest.port`` (default
8081). Several jobs may run on one machine, so when that port is taken the endpoint binds a
free port instead and logs it; the job file (``jobfiles``) tells the CLI which port it got.

Every request must carry ``Authorization: Bearer <token>``, a random secret made per job and
written only to the job's 0600 job file. The API (``api.RestApi``) checks it before anything
else.

Closing (the job has ended): the job file is removed first, so ``flintlock list`` stops
showing the job; savepoints still in progress are failed; then the endpoint waits — at most
``linger_s`` — until clients have fetched every savepoint outcome (a stop-with-savepoint
ends the job, and the client polling for the savepoint's location must still get it); then
the server stops, its listening socket is closed and every request thread is joined.

Threads: one ``flintlock-rest-<job>`` thread runs the accept loop, one short-lived thread per
request (bounded by the socket timeout). ``close`` is called from the job's thread.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import secrets
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from flintlock.common.config import Configuration
from flintlock.common.errors import FlintlockError
from flintlock.common.options import cluster as cluster_options
from flintlock.runtime.jobmanager import JobManager
from flintlock.runtime.rest.api import HttpError, JobControl, RestApi, RestRequest, RestResponse
from flintlock.runtime.rest.jobfiles import JobFile, JobFileError, write_job_file
from flintlock.runtime.rest.triggers import SavepointTriggers

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 64 * 1024
REQUEST_TIMEOUT_S = 10.0
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


class _Server(ThreadingHTTPServer):
    daemon_threads = False  # request threads are joined by server_close()

    api: RestApi  # set by RestEndpoint.serve before the accept loop starts

    def __init__(self, address: tuple[str, int], requested_port: int) -> None:
        self.address_family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        self.requested_port = requested_port
        super().__init__(address, _Handler)


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.0"  # one request per connection: nothing lingers at close
    timeout = REQUEST_TIMEOUT_S
    server_version = "flintlock"

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def do_PATCH(self) -> None:
        self._serve()

    def do_PUT(self) -> None:
        self._serve()

    def do_DELETE(self) -> None:
        self._serve()

    def _serve(self) -> None:
        url = urlsplit(self.path)
        request = RestRequest(self.command, url.path, parse_qs(url.query),
                              self.headers.get("Authorization"), self._read_body)
        try:
            response = self.server.api.handle(request)
        except Exception:
            log.exception("REST request %s %s failed", self.command, url.path)
            response = RestResponse(500, {"errors": ["internal error; see the job's log"]})
        self._send(response)

    def _read_body(self) -> bytes:
        raw = self.headers.get("Content-Length")
        if raw is None:
            return b""
        try:
            length = int(raw)
        except ValueError:
            raise HttpError(400, f"bad Content-Length header {raw!r}") from None
        if length < 0:
            raise HttpError(400, f"bad Content-Length header {raw!r}")
        if length > MAX_BODY_BYTES:
            raise HttpError(413, f"request body of {length} bytes is over the "
                                 f"{MAX_BODY_BYTES}-byte limit")
        return self.rfile.read(length)

    def _send(self, response: RestResponse) -> None:
        payload = json.dumps(response.body).encode("utf-8")
        self.send_response(response.status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(payload)))
        for name, value in response.headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s %s", self.address_string(), format % args)


class RestEndpoint:
    """The REST endpoint of one job: bound by ``bind``, serving from ``serve`` until
    ``close``. Two steps, so that a port that cannot be bound fails before a JobManager
    (with its own RPC endpoint) exists."""

    def __init__(self, bind_address: str = "127.0.0.1", port: int = 8081, *,
                 token: str | None = None, jobs_directory: Path | None = None,
                 linger_s: float = DEFAULT_LINGER_S) -> None:
        self.token = token or secrets.token_urlsafe(32)
        self.job_id = ""
        self.job_file: JobFile | None = None
        self.job_file_path: Path | None = None
        self._linger_s = linger_s
        self._jobs_directory = jobs_directory
        self._triggers = SavepointTriggers(lambda: secrets.token_hex(16))
        self._server = _bind(bind_address, port)
        self._thread: threading.Thread | None = None
        self._closed = False
        self._close_lock = threading.Lock()

    @classmethod
    def bind(cls, configuration: Configuration, **kwargs: Any) -> RestEndpoint:
        """An endpoint bound where ``rest.bind-address`` and ``rest.port`` say."""
        return cls(configuration.get(cluster_options.REST_BIND_HOST),
                   configuration.get(cluster_options.REST_PORT), **kwargs)

    def serve(self, job: JobControl, name: str | None = None) -> RestEndpoint:
        """Starts answering requests about ``job`` and writes its job file."""
        if name is None:
            name = job.job_graph.name if isinstance(job, JobManager) else job.job_id
        self.job_id = job.job_id
        start_time_ms = int(time.time() * 1000)
        self._server.api = RestApi(job, self.token, self._triggers, job_name=name,
                                   start_time_ms=start_time_ms)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.2},
            name=f"flintlock-rest-{self.job_id[:8]}", daemon=True)
        self._thread.start()
        if self._server.requested_port not in (0, self.address[1]):
            log.warning("rest.port %d is taken; the REST endpoint of job %s uses port %d",
                        self._server.requested_port, self.job_id, self.address[1])
        self.job_file = JobFile(self.job_id, name, self.address[0], self.address[1],
                                self.token, os.getpid(), start_time_ms)
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
        return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"

    def _write_job_file(self, job_file: JobFile) -> Path | None:
        try:
            return write_job_file(job_file, self._jobs_directory)
        except JobFileError as error:
            log.warning("job %s: %s; `flintlock list` will not see this job", self.job_id, error)
            return None

    def close(self) -> None:
        """Removes the job file, lets clients fetch savepoint outcomes (bounded), then stops
        the server and joins its threads. Idempotent."""
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
        if self.job_file_path is not None:
            try:  # the path written, even if $FLINTLOCK_HOME has changed since
                self.job_file_path.unlink(missing_ok=True)
            except OSError as error:
                log.warning("job %s: cannot remove its job file %s: %s", self.job_id,
                            self.job_file_path, error)
        self._triggers.fail_in_progress(f"job {self.job_id} ended before the savepoint completed")
        if self._thread is not None:
            if not self._triggers.wait_until_fetched(self._linger_s):
                log.info("job %s: savepoint outcomes %s were never fetched over REST",
                         self.job_id, self._triggers.unfetched())
            self._server.shutdown()
            self._thread.join()
        self._server.server_close()


def _bind(host: str, port: int) -> _Server:
    try:
        return _Server((host, port), port)
    except OSError as exc:
        if port == 0 or exc.errno not in (errno.EADDRINUSE, errno.EACCES):
            raise RestEndpointError(host, port, exc.strerror or str(exc)) from exc
    try:
        return _Server((host, 0), port)
    except OSError as exc:
        raise RestEndpointError(host, 0, exc.strerror or str(exc)) from exc
