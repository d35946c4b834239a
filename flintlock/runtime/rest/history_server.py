"""The history server: the dashboard of jobs that have ended, served read-only from their
archives (``archive``: what ``jobmanager.archive.fs.dir`` collects), as Flink's
HistoryServer serves its archive directory (issue 30). ``flintlock history --dir DIR``
starts it.

``HistoryApi`` answers the same paths as a job's live endpoint, from the archives' entries:
``/jobs/overview`` and ``/jobs`` list every archived job (newest first), every other path is
the answer its job gave when it ended, and the dashboard's files are served with
``dashboard.HISTORY_MODE``, which tells the page to offer no job control. Anything but GET is
a 405: nothing here changes anything.

The archives are read again when the directory changes (a file added, replaced or removed:
the listing and each file's modification time are checked at most once per
``REFRESH_S``), so jobs that end while the server runs appear on the next page load. A file
that is not an archive is skipped with one warning.

Authentication: as on a live endpoint, a bearer token made when the server starts, printed
by the command with the dashboard's link (``#token=``, which no browser sends to a server);
the archives hold the jobs' configuration and TaskManager output. The server binds
127.0.0.1 by default.

Threads: the HTTP server's loop and workers call ``handle`` concurrently; the index is swapped
under a lock.
"""

from __future__ import annotations

import hmac
import logging
import secrets
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from flintlock.runtime.rest import dashboard
from flintlock.runtime.rest.archive import ArchivedView, ArchiveError, read_archive
from flintlock.runtime.rest.http_types import RestRequest, RestResponse
from flintlock.runtime.rest.httpd import HttpServer

log = logging.getLogger(__name__)

REFRESH_S = 2.0


class _Index:
    """Every archived view by path, and the overview entries of the jobs."""

    def __init__(self, archives: dict[Path, dict[str, ArchivedView]]) -> None:
        self.views: dict[str, ArchivedView] = {}
        self.jobs: list[dict[str, Any]] = []
        self.ids: list[dict[str, Any]] = []
        for views in archives.values():
            overview = views.get("/jobs/overview")
            listed = views.get("/jobs")
            if overview is None or not isinstance(overview.body, dict):
                continue
            self.jobs.extend(overview.body.get("jobs", []))
            if listed is not None and isinstance(listed.body, dict):
                self.ids.extend(listed.body.get("jobs", []))
            self.views.update({path: view for path, view in views.items()
                               if path not in ("/jobs/overview", "/jobs")})
        self.jobs.sort(key=lambda job: -int(job.get("start-time", 0)))
        self.ids.sort(key=lambda job: -int(job.get("start-time", 0)))


class HistoryApi:
    """The read-only API over an archive directory (see the module docstring)."""

    def __init__(self, directory: Path, token: str,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self.directory = directory
        self._token = token.encode()
        self._monotonic = monotonic
        self._lock = threading.Lock()
        self._stamp: tuple[tuple[str, int], ...] | None = None
        self._checked = float("-inf")
        self._index = _Index({})
        self._warned: set[Path] = set()

    def authorized(self, header: str | None) -> bool:
        scheme, _, credentials = (header or "").strip().partition(" ")
        given = credentials.strip().encode("utf-8", "surrogateescape")
        return scheme.lower() == "bearer" and hmac.compare_digest(given, self._token)

    def handle(self, request: RestRequest) -> RestResponse:
        static = dashboard.static_file(request.method, request.path, dashboard.HISTORY_MODE)
        if static is not None:
            body, content_type, headers = static
            return RestResponse(200, body, headers, content_type)
        if not self.authorized(request.authorization):
            return _error(401, "missing or wrong bearer token (Authorization: Bearer <token>)",
                          (("WWW-Authenticate", 'Bearer realm="flintlock"'),))
        if request.method != "GET":
            return _error(405, "the history server is read-only", (("Allow", "GET"),))
        index = self.index()
        path = "/" + "/".join(part for part in request.path.split("/") if part)
        if path == "/jobs/overview":
            return RestResponse(200, {"jobs": index.jobs})
        if path == "/jobs":
            return RestResponse(200, {"jobs": index.ids})
        view = index.views.get(path)
        if view is None:
            return _error(404, f"not found in the archives: {path}")
        if view.text:
            return RestResponse(200, str(view.body).encode("utf-8"),
                                content_type="text/plain; charset=utf-8")
        return RestResponse(200, view.body)

    def index(self) -> _Index:
        """The archives' index, read again if the directory changed (at most every
        ``REFRESH_S``)."""
        with self._lock:
            now = self._monotonic()
            if now - self._checked < REFRESH_S:
                return self._index
            self._checked = now
            files = sorted(self.directory.glob("*.json")) if self.directory.is_dir() else []
            stamp = tuple((str(f), _mtime(f)) for f in files)
            if stamp != self._stamp:
                self._stamp = stamp
                self._index = _Index(self._read(files))
            return self._index

    def _read(self, files: list[Path]) -> dict[Path, dict[str, ArchivedView]]:
        archives = {}
        for path in files:
            try:
                archives[path] = read_archive(path)
            except ArchiveError as error:
                if path not in self._warned:
                    self._warned.add(path)
                    log.warning("history server: skipping %s", error)
        return archives


def _mtime(path: Path) -> int:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return -1


def _error(status: int, message: str, headers: tuple[tuple[str, str], ...] = ()
           ) -> RestResponse:
    return RestResponse(status, {"errors": [message]}, headers)


class HistoryServer:
    """``HistoryApi`` served over HTTP on ``host:port`` (0: a free port) until ``close``."""

    def __init__(self, directory: Path, host: str = "127.0.0.1", port: int = 8082,
                 token: str | None = None) -> None:
        self.token = token or secrets.token_urlsafe(32)
        self.api = HistoryApi(directory, self.token)
        self._server = HttpServer(host, port)
        self._server.start(self.api, "flintlock-history-server")

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://[{host}]:{port}" if ":" in str(host) else f"http://{host}:{port}"

    def close(self) -> None:
        self._server.close()
