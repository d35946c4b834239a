"""How the CLI reaches a running job: find its job file (by id or unique id prefix) and call
its REST endpoint with the job's bearer token.

Every failure becomes a ``CliError`` with a hint; an endpoint that refuses connections
becomes ``EndpointGoneError`` — on a per-job endpoint that means the job has just ended,
which ``cancel`` and ``stop`` treat as success rather than failure.

Requests never go through an HTTP proxy (the endpoint is local, and a proxy would see the
token). An endpoint that serves HTTPS (``security.ssl.rest.enabled``) is trusted by its
certificate recorded in the job file and by nothing else (a pin: no system CA, no host name);
with REST client authentication the CLI presents the certificate and key files the job file
names. A TLS failure is a ``TlsRefusedError``. Owned by the CLI's one thread.
"""

from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.request
from typing import Any

from flintlock.cli.errors import CliError
from flintlock.runtime.rest.jobfiles import JobFile, jobs_dir, read_job_files
from flintlock.runtime.tls.contexts import rest_client_context

Json = dict[str, Any]

LIST_HINT = "`flintlock list` shows running jobs"


class EndpointGoneError(CliError):
    """The job's REST endpoint refuses connections: the job has ended (or its driver died)."""


class TlsRefusedError(CliError):
    """The TLS handshake with the job's REST endpoint failed: its certificate is not the one
    the job file records, or it refused ours (REST client authentication)."""


class RestCallError(CliError):
    """The endpoint answered with an HTTP error; ``status`` is its code."""

    def __init__(self, message: str, hint: str = "", status: int = 0) -> None:
        super().__init__(message, hint)
        self.status = status
        self.args = (message, hint, status)


def resolve_job(job_id: str, jobs: list[JobFile] | None = None) -> JobFile:
    """The running job whose id is ``job_id`` or starts with it (the prefix must be unique)."""
    jobs = read_job_files() if jobs is None else jobs
    wanted = job_id.strip().lower()
    exact = [job for job in jobs if job.job_id == wanted]
    if exact:
        return exact[0]
    matches = [job for job in jobs if wanted and job.job_id.startswith(wanted)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise CliError(f"no running job with id {job_id!r} (looked in {jobs_dir()})", LIST_HINT)
    names = ", ".join(job.job_id for job in matches)
    raise CliError(f"job id prefix {job_id!r} is ambiguous: it matches {names}",
                   "give more characters of the job id")


class RestClient:
    """Calls one job's REST endpoint."""

    def __init__(self, job: JobFile, timeout_s: float = 10.0) -> None:
        self.job = job
        self._timeout_s = timeout_s
        handlers: list[urllib.request.BaseHandler] = [urllib.request.ProxyHandler({})]
        if job.tls_cert:
            handlers.append(urllib.request.HTTPSHandler(context=_tls_context(job)))
        self._opener = urllib.request.build_opener(*handlers)

    def get(self, path: str) -> Json:
        return self._call("GET", path)

    def post(self, path: str, body: Json) -> Json:
        return self._call("POST", path, body)

    def patch(self, path: str) -> Json:
        return self._call("PATCH", path)

    def _call(self, method: str, path: str, body: Json | None = None) -> Json:
        data = None if body is None else json.dumps(body).encode("utf-8")
        request = urllib.request.Request(
            self.job.url + path, data=data, method=method,
            headers={"Authorization": f"Bearer {self.job.token}",
                     "Content-Type": "application/json", "Accept": "application/json"})
        try:
            with self._opener.open(request, timeout=self._timeout_s) as response:
                return _decode(response.read())
        except urllib.error.HTTPError as error:
            raise self._http_error(method, path, error) from error
        except (urllib.error.URLError, OSError) as error:
            raise self._unreachable(error) from error

    def _http_error(self, method: str, path: str, error: urllib.error.HTTPError) -> CliError:
        try:
            messages = _decode(error.read()).get("errors") or [error.reason]
        except CliError:
            messages = [str(error.reason)]
        hint = ("the job file's token does not match; the job file may belong to another job"
                if error.code == 401 else LIST_HINT)
        detail = "; ".join(map(str, messages))
        if error.code == 503:
            return RestCallError(f"job {self.job.job_id}'s REST endpoint is busy: {detail}",
                                 "retry in a moment (too many connections are waiting to "
                                 "authenticate)", error.code)
        return RestCallError(f"{method} {path} failed ({error.code}): {detail}", hint, error.code)

    def _unreachable(self, error: BaseException) -> CliError:
        if isinstance(error, ssl.SSLError):  # raised while reading: TLS 1.3 refuses late
            return _tls_refused(self.job, error)
        reason = getattr(error, "reason", error)
        if isinstance(reason, ssl.SSLError):
            return _tls_refused(self.job, reason)
        if isinstance(reason, ConnectionRefusedError):
            return EndpointGoneError(
                f"job {self.job.job_id} does not answer at {self.job.url}: it has ended", LIST_HINT)
        return CliError(f"cannot reach job {self.job.job_id} at {self.job.url}: {reason}",
                        "is the job's driver process still running? " + LIST_HINT)


def _tls_context(job: JobFile) -> ssl.SSLContext:
    try:
        return rest_client_context(job.tls_cert, job.client_cert or None, job.client_key or None)
    except (OSError, ssl.SSLError) as error:
        raise CliError(
            f"cannot use the REST client certificate {job.client_cert} with key "
            f"{job.client_key} of job {job.job_id}: {error}",
            "the job's security.ssl.rest.cert and .key must be readable by this user") from error


def _tls_refused(job: JobFile, error: ssl.SSLError) -> CliError:
    if isinstance(error, ssl.SSLCertVerificationError):
        return TlsRefusedError(
            f"job {job.job_id} at {job.url} presented a certificate other than the one its job "
            f"file records ({error.verify_message})",
            "another program may be listening on the job's port; " + LIST_HINT)
    return TlsRefusedError(
        f"TLS with job {job.job_id} at {job.url} failed: {error.reason or error}",
        "with security.ssl.rest.authentication-enabled the endpoint requires a client "
        "certificate from security.ssl.rest.trusted-certs")


def _decode(raw: bytes) -> Json:
    try:
        value = json.loads(raw.decode("utf-8")) if raw.strip() else {}
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CliError(f"the REST endpoint answered with something that is not JSON: {exc}",
                       "is another program listening on the job's port?") from exc
    if not isinstance(value, dict):
        raise CliError("the REST endpoint answered with JSON that is not an object",
                       "is another program listening on the job's port?")
    return value
