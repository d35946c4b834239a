"""Job discovery: one small JSON file per running job, so the ``flintlock`` command finds the
REST endpoint (address, port, token) of every job started on this machine.

Layout: ``<dir>/<job-id>.json`` where ``<dir>`` is ``$FLINTLOCK_HOME/jobs``, by default
``~/.flintlock/jobs``. The directory is created with mode 0700 and each file with mode 0600,
because the file holds the job's REST token: whoever can read it can cancel the job. With
``security.ssl.rest.enabled`` it also records the endpoint's certificate (the CLI trusts that
and nothing else) and, with REST client authentication, the paths of the certificate and key
files the CLI presents (never the key itself).

Invariants:

- A file is written atomically (a temporary file in the same directory, then ``os.replace``),
  so a reader never sees half a file.
- The endpoint writes its file when it starts and removes it when the job ends. A file whose
  process is gone (the driver was killed) is *stale*: ``read_job_files`` skips it, and
  ``remove_stale_job_files`` (called by ``flintlock list``) deletes it.
- Files that do not parse are skipped, never fatal: one corrupt file must not hide the others.

Who calls it: ``flintlock.runtime.rest.server.RestEndpoint`` (write, remove) and the CLI
(read, clean). No shared mutable state; every call works on the file system directly.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from flintlock.common.errors import FlintlockError

log = logging.getLogger(__name__)

HOME_ENV = "FLINTLOCK_HOME"
DEFAULT_HOME = "~/.flintlock"
JOB_FILE_SUFFIX = ".json"


class JobFileError(FlintlockError):
    """A job file could not be written or read."""

    def __init__(self, path: str, detail: str) -> None:
        super().__init__(path, detail)
        self.path = path
        self.detail = detail

    def __str__(self) -> str:
        return f"job file {self.path}: {self.detail}"


@dataclass(frozen=True, slots=True)
class JobFile:
    """What a job file holds: how to reach one job's REST endpoint."""

    job_id: str
    name: str
    address: str
    port: int
    token: str
    pid: int
    start_time_ms: int
    tls_cert: str = ""  # the endpoint's certificate (PEM) when it serves HTTPS: the CLI pins it
    client_cert: str = ""  # with REST client authentication: the files the CLI presents
    client_key: str = ""

    @property
    def url(self) -> str:
        host = f"[{self.address}]" if ":" in self.address else self.address
        scheme = "https" if self.tls_cert else "http"
        return f"{scheme}://{host}:{self.port}"

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> JobFile:
        data: Any = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError("expected a JSON object")
        return cls(
            job_id=str(data["job_id"]), name=str(data["name"]), address=str(data["address"]),
            port=int(data["port"]), token=str(data["token"]), pid=int(data["pid"]),
            start_time_ms=int(data["start_time_ms"]),
            tls_cert=str(data.get("tls_cert", "")), client_cert=str(data.get("client_cert", "")),
            client_key=str(data.get("client_key", "")),
        )


def jobs_dir() -> Path:
    """``$FLINTLOCK_HOME/jobs`` (default ``~/.flintlock/jobs``)."""
    home = os.environ.get(HOME_ENV) or DEFAULT_HOME
    return Path(home).expanduser() / "jobs"


def job_file_path(job_id: str, directory: Path | None = None) -> Path:
    return (directory or jobs_dir()) / f"{job_id}{JOB_FILE_SUFFIX}"


def write_job_file(job: JobFile, directory: Path | None = None) -> Path:
    """Writes ``<dir>/<job-id>.json`` atomically with mode 0600; returns its path."""
    directory = directory or jobs_dir()
    path = job_file_path(job.job_id, directory)
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(prefix=".job-", suffix=".tmp", dir=directory)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(job.to_json())
            os.chmod(temporary, 0o600)
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise JobFileError(str(path), exc.strerror or str(exc)) from exc
    return path


def remove_job_file(job_id: str, directory: Path | None = None) -> None:
    job_file_path(job_id, directory).unlink(missing_ok=True)


def process_alive(pid: int) -> bool:
    """Whether a process with this id runs (one of another user counts; a zombie — ended,
    not yet reaped by its parent — does not)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return not _is_zombie(pid)


def _is_zombie(pid: int) -> bool:
    """Linux only (``/proc``); elsewhere a zombie counts as alive until it is reaped."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[:1] == ["Z"]


def _parse(path: Path) -> JobFile | None:
    try:
        return JobFile.from_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        log.debug("skipping unreadable job file %s: %s", path, exc)
        return None


def _scan(directory: Path) -> list[tuple[Path, JobFile | None]]:
    if not directory.is_dir():
        return []
    return [(path, _parse(path)) for path in sorted(directory.glob(f"*{JOB_FILE_SUFFIX}"))]


def read_job_files(directory: Path | None = None) -> list[JobFile]:
    """The job files of live processes, oldest job first; stale and corrupt files skipped."""
    jobs = [job for _, job in _scan(directory or jobs_dir())
            if job is not None and process_alive(job.pid)]
    return sorted(jobs, key=lambda job: (job.start_time_ms, job.job_id))


def remove_stale_job_files(directory: Path | None = None) -> list[Path]:
    """Deletes the files of jobs whose process is gone; returns the paths removed."""
    removed = []
    for path, job in _scan(directory or jobs_dir()):
        if job is not None and not process_alive(job.pid):
            path.unlink(missing_ok=True)
            removed.append(path)
    return removed
