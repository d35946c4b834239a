"""A finished job's REST views, written to ``jobmanager.archive.fs.dir`` when it ends, and
read back by the history server (``history_server``), as Flink's JobManager archives a job
for its HistoryServer (issue 30).

An archive is one JSON file per job, ``<dir>/<job id>.json``, in Flink's shape::

    {"archive": [{"path": "/jobs/overview", "json": {...}},
                 {"path": "/jobs/<id>/taskmanagers/tm-0/log", "text": "..."}, ...]}

Each entry is what ``GET <path>`` answered when the job had ended: every view the dashboard
reads (``archive_paths``), built by the job's own ``RestApi`` so the archive and the live
endpoint cannot differ. Text answers (TaskManager logs and stdout) are kept as ``text``.

The directory is created 0700 and each file 0600, written to a temporary name and renamed, so
a reader sees a whole archive or none: it holds the job's configuration (sensitive values
already hidden) and its TaskManagers' output, which may hold the job's data.

``archive_dir`` checks the configured value (a local path or a ``file://`` URL; anything else
is an ``InvalidConfigValueError`` naming the key) when the job is submitted.

I/O on the caller's thread (the JobManager's, as the job ends; the history server's workers).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flintlock.common.config import Configuration
from flintlock.common.errors import FlintlockError, InvalidConfigValueError
from flintlock.common.options import cluster as cluster_options

Json = dict[str, Any]


class ArchiveError(FlintlockError):
    """An archive file that cannot be written or read (the message names it)."""


@dataclass(frozen=True, slots=True)
class ArchivedView:
    path: str
    body: Any
    """The JSON answer, or for a text answer the text."""
    text: bool = False


def archive_dir(configuration: Configuration) -> Path | None:
    """The checked ``jobmanager.archive.fs.dir``, or None when unset."""
    raw = configuration.get(cluster_options.ARCHIVE_DIR)
    if raw is None or not str(raw).strip():
        return None
    value = str(raw).strip()
    if value.startswith("file://"):
        value = value[len("file://"):]
    elif "://" in value:
        raise InvalidConfigValueError(cluster_options.ARCHIVE_DIR.key, raw,
                                      "a local directory (a path or a file:// URL)")
    return Path(value).expanduser()


def archive_paths(job_id: str, details: Json, checkpoint_ids: Iterable[int],
                  task_managers: Json) -> Iterator[str]:
    """The GET paths a job's archive holds, given its ``/jobs/:jobid`` answer, the ids of
    its checkpoints in the history and its ``/jobs/:jobid/taskmanagers`` answer."""
    base = f"/jobs/{job_id}"
    yield from ("/jobs/overview", "/jobs", base, f"{base}/plan", f"{base}/config",
                f"{base}/checkpoints", f"{base}/exceptions", f"{base}/metrics-history",
                f"{base}/taskmanagers")
    vertices = [vertex["id"] for vertex in details.get("vertices", [])]
    for vertex in vertices:
        yield from (f"{base}/vertices/{vertex}", f"{base}/vertices/{vertex}/backpressure",
                    f"{base}/vertices/{vertex}/watermarks")
    for checkpoint in checkpoint_ids:
        yield f"{base}/checkpoints/details/{checkpoint}"
        yield from (f"{base}/checkpoints/details/{checkpoint}/subtasks/{vertex}"
                    for vertex in vertices)
    for manager in task_managers.get("taskmanagers", []):
        yield from (f"{base}/taskmanagers/{manager['id']}/log",
                    f"{base}/taskmanagers/{manager['id']}/stdout")


def write_archive(directory: Path, job_id: str, views: Iterable[ArchivedView]) -> Path:
    """Writes the archive of ``job_id`` atomically; ``ArchiveError`` if it cannot."""
    entries: list[Json] = [
        {"path": view.path, "text": view.body} if view.text else
        {"path": view.path, "json": view.body} for view in views]
    target = directory / f"{job_id}.json"
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=f".{job_id}.", dir=directory)
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:  # mkstemp: mode 0600
                json.dump({"archive": entries}, out, separators=(",", ":"))
            os.replace(temporary, target)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
    except OSError as error:
        raise ArchiveError(f"cannot write the archive of job {job_id} to {target}: "
                           f"{error}") from error
    return target


def read_archive(path: Path) -> dict[str, ArchivedView]:
    """The views of one archive file, by path; ``ArchiveError`` if it is not one."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ArchiveError(f"{path} is not a readable job archive: {error}") from error
    entries = document.get("archive") if isinstance(document, dict) else None
    if not isinstance(entries, list):
        raise ArchiveError(f"{path} is not a job archive (no 'archive' list)")
    views: dict[str, ArchivedView] = {}
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("path"), str):
            raise ArchiveError(f"{path}: an entry without a path: {str(entry)[:80]}")
        text = "text" in entry
        views[entry["path"]] = ArchivedView(entry["path"], entry["text" if text else "json"],
                                            text)
    return views


def archive_job(directory: Path, job_id: str, details: Json, checkpoint_ids: Iterable[int],
                task_managers: Json, get: Callable[[str], ArchivedView | None]) -> Path:
    """Builds each view of ``archive_paths`` with ``get`` (None: the view does not exist for
    this job, e.g. a plan that is not known, and is left out) and writes the archive."""
    views = [view for path in archive_paths(job_id, details, checkpoint_ids, task_managers)
             if (view := get(path)) is not None]
    return write_archive(directory, job_id, views)
