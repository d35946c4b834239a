"""The REST/JSON API of one job, without the HTTP server: request in, response out.

``RestApi.handle`` checks the bearer token first — a request without the job's token gets
401 and nothing else happens: no routing, no body read, no JobManager call. Then it routes
Flink's paths to the JobManager's public API:

=======  ==============================================  ==================================
GET      /jobs                                           ids and statuses
GET      /jobs/overview                                  name, state, start time, task counts
GET      /jobs/:jobid                                    status, attempt, vertices with
                                                         subtask states and I/O metrics
PATCH    /jobs/:jobid?mode=cancel                        cancel (202)
GET      /jobs/:jobid/checkpoints                        counts, summary, latest, history
GET      /jobs/:jobid/checkpoints/details/:checkpointid  one checkpoint, per vertex
GET      /jobs/:jobid/checkpoints/details/:checkpointid/subtasks/:vertexid
                                                         each subtask's ack, size, alignment
GET      /jobs/:jobid/metrics-history                    per-vertex series from the start
GET      /jobs/:jobid/taskmanagers                       the job's TaskManagers
GET      /jobs/:jobid/taskmanagers/:tmid/log             a TaskManager's log tail (also
GET      /jobs/:jobid/taskmanagers/:tmid/stdout          /taskmanagers/:tmid/...), its stdout
GET      /jobs/:jobid/exceptions                         attempt failures, checkpoint fallbacks
GET      /jobs/:jobid/plan                               vertices, parallelism, their inputs
GET      /jobs/:jobid/config                             execution config, keys set (redacted)
POST     /jobs/:jobid/savepoints                         {"target-directory", "cancel-job"}
                                                         → request-id
GET      /jobs/:jobid/savepoints/:triggerid              IN_PROGRESS / COMPLETED with
                                                         location or cause
POST     /jobs/:jobid/stop                               {"targetDirectory"} → request-id
GET      /jobs/:jobid/vertices/:vertexid                 subtask table: state, records,
                                                         busy/backpressured/idle, watermark,
                                                         state size
GET      /jobs/:jobid/vertices/:vertexid/metrics         ?get=0.numRecordsIn,... (values)
GET      /jobs/:jobid/vertices/:vertexid/subtasks/metrics  ?get=...&agg=min,max,avg,sum
GET      /jobs/:jobid/vertices/:vertexid/backpressure    ok / low / high per subtask
GET      /jobs/:jobid/vertices/:vertexid/watermarks      each subtask's input watermark
GET      /taskmanagers                                   subtasks, memory, network buffers
                                                         and cores per TM
GET      /metrics                                        Prometheus text exposition
=======  ==============================================  ==================================

The table is data (``ROUTES``, a ``routes.RouteTable``): one entry per endpoint. Before the
token is checked, ``GET /`` and ``GET /web/<file>`` answer with the web dashboard's static
files (``dashboard``), which hold no data. The metric
views are in ``metrics_views``, the Prometheus families in ``runtime.metrics.prometheus``.

Errors use Flink's shape ``{"errors": ["..."]}``: 401 bad token, 404 unknown path, job,
vertex or trigger, 405 wrong method, 400 a body that is not the JSON the path expects or a
bad query parameter (naming the problem), 413 a body over 64 KiB, 409 a savepoint on a job
that has ended.

Thread ownership: ``handle`` runs on the HTTP server's workers, concurrently, and on its loop
thread for a request without the token (which gets its 401 from ``authorized`` alone). It
keeps one mutable field, ``_last_description`` (a reference swap, atomic under the GIL), the
fallback when the JobManager thread is busy (deploying, or ending an attempt) — the
last description with the current status, or before the first one, the job's id, name and
status with no tasks yet; everything else is the JobManager's own
thread-safe API and the synchronised ``SavepointTriggers``.
"""

from __future__ import annotations

import dataclasses
import hmac
import json
import time
import traceback
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from pathlib import Path
from typing import Any, Protocol

from flintlock.common.job_status import JobStatus
from flintlock.runtime.jobmanager import JobDescription, TaskDescription
from flintlock.runtime.metrics.prometheus import JobFigures, Scrape
from flintlock.runtime.rest import dashboard, detail_views, metrics_views, views
from flintlock.runtime.rest.archive import ArchivedView, archive_job
from flintlock.runtime.rest.http_types import HttpError, RestRequest, RestResponse
from flintlock.runtime.rest.metric_history import HistorySampler
from flintlock.runtime.rest.routes import Route, RouteTable
from flintlock.runtime.rest.triggers import (
    DuplicateTriggerError,
    SavepointTriggers,
    TriggerState,
    UnknownTriggerError,
)

Json = dict[str, Any]
Params = Mapping[str, str]


class JobControl(Protocol):
    """What the API needs of a JobManager (``flintlock.runtime.jobmanager.JobManager``)."""

    job_id: str

    def describe(self, timeout_s: float = 10.0) -> JobDescription: ...

    def get_status(self) -> JobStatus: ...

    def cancel(self) -> None: ...

    def trigger_savepoint(self, target_dir: str | None = None, stop: bool = False
                          ) -> Future[str]: ...

    def stop_with_savepoint(self, target_dir: str | None = None,
                            drain: bool = False) -> Future[str]: ...


class TaskManagerOutput(Protocol):
    """Bounded tails of the TaskManagers' logs and stdout (the JobManager keeps them)."""

    def tail(self, tm_index: int, stream: str) -> tuple[str, ...] | None: ...


_SAVEPOINT_FIELDS: Mapping[str, tuple[type, ...]] = {
    "target-directory": (str, type(None)), "cancel-job": (bool,),
    "triggerId": (str, type(None)), "formatType": (str,),
}
_STOP_FIELDS: Mapping[str, tuple[type, ...]] = {
    "targetDirectory": (str, type(None)), "drain": (bool,),
    "triggerId": (str, type(None)), "formatType": (str,),
}
_TYPE_NAMES = {str: "a string", bool: "a boolean", type(None): "null"}


class RestApi:
    """Routes authenticated requests for one job to its JobManager."""

    def __init__(self, job: JobControl, token: str, triggers: SavepointTriggers, *,
                 job_name: str = "", start_time_ms: int = 0,
                 wall_ms: Callable[[], int] = lambda: int(time.time() * 1000),
                 describe_timeout_s: float = 2.0, plan: Json | None = None,
                 config: Json | None = None, output: TaskManagerOutput | None = None) -> None:
        self._job = job
        self._output = output
        self.history = HistorySampler(self.describe, wall_ms)
        self._plan = plan
        self._config = config
        self._fallback = JobDescription(job.job_id, job_name, "", -1, start_time_ms, (), None)
        self._token = token.encode()
        self._triggers = triggers
        self._wall_ms = wall_ms
        self._describe_timeout_s = describe_timeout_s
        self._last_description = self._fallback

    def handle(self, request: RestRequest) -> RestResponse:
        static = dashboard.static_file(request.method, request.path)
        if static is not None:  # the dashboard's files: no data in them, so no token
            body, content_type, headers = static
            return RestResponse(200, body, headers, content_type)
        if not self.authorized(request.authorization):
            return _error(401, "missing or wrong bearer token (Authorization: Bearer <token>)",
                          (("WWW-Authenticate", 'Bearer realm="flintlock"'),))
        try:
            return self._route(request)
        except HttpError as error:
            return _error(error.status, error.message, error.headers)

    def authorized(self, header: str | None) -> bool:
        """Whether an ``Authorization`` header carries this job's token (constant time)."""
        scheme, _, credentials = (header or "").strip().partition(" ")
        given = credentials.strip().encode("utf-8", "surrogateescape")
        return scheme.lower() == "bearer" and hmac.compare_digest(given, self._token)

    # -- routing -------------------------------------------------------------------------

    def _route(self, request: RestRequest) -> RestResponse:
        match = ROUTES.match(request.method, request.path)
        if match.handler is None:
            if match.allowed:
                raise HttpError(405, f"method {request.method} not allowed on {request.path}",
                                (("Allow", ", ".join(match.allowed)),))
            raise HttpError(404, f"not found: {request.path}")
        if "jobid" in match.params:
            self._check_job(match.params["jobid"])
        return match.handler(self, request, match.params)

    def _check_job(self, job_id: str) -> None:
        if job_id != self._job.job_id:
            raise HttpError(404, f"Job {job_id} not found")

    # -- reads ---------------------------------------------------------------------------

    def describe(self) -> JobDescription:
        """The job's description, or when the JobManager thread is busy, the last one with
        the current status (the metric history samples it too)."""
        return self._describe()

    def _describe(self) -> JobDescription:
        try:
            description = self._job.describe(self._describe_timeout_s)
        except TimeoutError:
            if self._job.get_status().is_globally_terminal_state():
                description = self._job.describe(self._describe_timeout_s)
            else:
                description = dataclasses.replace(
                    self._last_description, status=self._job.get_status().name)
        self._last_description = description
        return description

    def _jobs(self, request: RestRequest, params: Params) -> RestResponse:
        return RestResponse(200, {"jobs": [views.job_id_and_status(self._describe())]})

    def _overview(self, request: RestRequest, params: Params) -> RestResponse:
        return RestResponse(200, {"jobs": [views.job_overview(self._describe(), self._wall_ms())]})

    def _details(self, request: RestRequest, params: Params) -> RestResponse:
        return RestResponse(200, views.job_details(self._describe(), self._wall_ms(),
                                                   self._plan))

    def _vertex_details(self, request: RestRequest, params: Params) -> RestResponse:
        body = detail_views.vertex_details(self._describe(), params["vertexid"],
                                           self._wall_ms())
        if body is None:
            raise HttpError(404, f"vertex {params['vertexid']} not found in job "
                                 f"{self._job.job_id}")
        return RestResponse(200, body)

    def _checkpoint(self, params: Params) -> tuple[JobDescription, Any]:
        job = self._describe()
        raw = params["checkpointid"]
        found = detail_views.find_checkpoint(job.checkpoints, int(raw)) if raw.isdigit() \
            else None
        if found is None:
            raise HttpError(404, f"checkpoint {raw} of job {self._job.job_id} is not in its "
                                 "history")
        return job, found

    def _checkpoint_details(self, request: RestRequest, params: Params) -> RestResponse:
        job, checkpoint = self._checkpoint(params)
        return RestResponse(200, detail_views.checkpoint_details(job, checkpoint))

    def _checkpoint_subtasks(self, request: RestRequest, params: Params) -> RestResponse:
        job, checkpoint = self._checkpoint(params)
        body = detail_views.checkpoint_subtasks(job, checkpoint, params["vertexid"])
        if body is None:
            raise HttpError(404, f"vertex {params['vertexid']} not found in job "
                                 f"{self._job.job_id}")
        return RestResponse(200, body)

    def _metrics_history(self, request: RestRequest, params: Params) -> RestResponse:
        return RestResponse(200, self.history.series())

    def _tm_log(self, request: RestRequest, params: Params) -> RestResponse:
        return self._tm_output(params["tmid"], "log")

    def _tm_stdout(self, request: RestRequest, params: Params) -> RestResponse:
        return self._tm_output(params["tmid"], "stdout")

    def _tm_output(self, tm_id: str, stream: str) -> RestResponse:
        index = tm_id.removeprefix("tm-")
        lines = None
        if self._output is not None and index.isdigit():
            lines = self._output.tail(int(index), stream)
        if lines is None:
            raise HttpError(404, f"no {stream} of TaskManager {tm_id} is known here")
        text = "".join(line if line.endswith("\n") else line + "\n" for line in lines)
        return RestResponse(200, text.encode("utf-8", "replace"),
                            content_type="text/plain; charset=utf-8")

    def _checkpoints(self, request: RestRequest, params: Params) -> RestResponse:
        return RestResponse(200, views.checkpoints(self._describe().checkpoints))

    def _exceptions(self, request: RestRequest, params: Params) -> RestResponse:
        return RestResponse(200, views.exceptions(self._describe()))

    def _plan_view(self, request: RestRequest, params: Params) -> RestResponse:
        if self._plan is None:
            raise HttpError(404, f"no plan of job {self._job.job_id} is known here")
        return RestResponse(200, self._plan)

    def _config_view(self, request: RestRequest, params: Params) -> RestResponse:
        if self._config is None:
            raise HttpError(404, f"no configuration of job {self._job.job_id} is known here")
        return RestResponse(200, self._config)

    def _task_managers(self, request: RestRequest, params: Params) -> RestResponse:
        job = self._describe()
        return RestResponse(200, metrics_views.task_managers(job.tasks, job.task_managers))

    def _vertex(self, params: Params) -> list[TaskDescription]:
        tasks = [t for t in self._describe().tasks if t.vertex_id == params["vertexid"]]
        if not tasks:
            raise HttpError(404, f"vertex {params['vertexid']} not found in job "
                                 f"{self._job.job_id}")
        return tasks

    def _vertex_metrics(self, request: RestRequest, params: Params) -> RestResponse:
        get = metrics_views.query_list(request.query, "get")
        return RestResponse(200, metrics_views.vertex_metrics(self._vertex(params), get))

    def _subtasks_metrics(self, request: RestRequest, params: Params) -> RestResponse:
        query = request.query
        try:
            body = metrics_views.subtasks_metrics(
                self._vertex(params), metrics_views.query_list(query, "get"),
                metrics_views.query_list(query, "agg"), query.get("subtasks", [""])[-1])
        except ValueError as error:
            raise HttpError(400, str(error)) from None
        return RestResponse(200, body)

    def _backpressure(self, request: RestRequest, params: Params) -> RestResponse:
        return RestResponse(200, metrics_views.backpressure(self._vertex(params),
                                                            self._wall_ms()))

    def _watermarks(self, request: RestRequest, params: Params) -> RestResponse:
        return RestResponse(200, metrics_views.watermarks(self._vertex(params)))

    def _prometheus(self, request: RestRequest, params: Params) -> RestResponse:
        body, content_type = self.exposition()
        return RestResponse(200, body, content_type=content_type)

    def exposition(self) -> tuple[bytes, str]:
        """The job's metrics in Prometheus' text format (also served by the reporter port)."""
        try:
            from flintlock.runtime.metrics.prometheus import exposition
            return exposition(self._scrape)
        except ImportError as error:
            raise HttpError(501, f"the Prometheus exposition needs prometheus-client "
                                 f"(pip install 'flintlock[prometheus]'): {error}") from None

    def _scrape(self) -> Scrape:
        job = self._describe()
        figures = JobFigures(job.job_id, job.name,
                             metrics_views.job_figures(job, self._wall_ms()))
        return Scrape(tuple(t.metrics for t in job.tasks if t.metrics is not None), figures)

    # -- the archive ---------------------------------------------------------------------

    def archive(self, directory: Path) -> Path:
        """Writes the job's views to ``directory`` for the history server (the job has
        ended); ``archive.ArchiveError`` if it cannot."""
        def get(path: str) -> ArchivedView | None:
            response = self._route(RestRequest("GET", path, {}, None, lambda: b""))
            if response.content_type is None:
                return ArchivedView(path, response.body)
            return ArchivedView(path, bytes(response.body).decode("utf-8", "replace"), True)

        def get_or_none(path: str) -> ArchivedView | None:
            try:
                return get(path)
            except HttpError:
                return None

        job = self._describe()
        details = views.job_details(job, self._wall_ms(), self._plan)
        managers = metrics_views.task_managers(job.tasks, job.task_managers)
        return archive_job(directory, job.job_id, details,
                           detail_views.checkpoint_ids(job.checkpoints), managers, get_or_none)

    # -- actions -------------------------------------------------------------------------

    def _cancel(self, request: RestRequest, params: Params) -> RestResponse:
        mode = request.query.get("mode", ["cancel"])[-1]
        if mode != "cancel":
            raise HttpError(400, f"unsupported mode {mode!r} (expected 'cancel'; "
                                 "use POST /jobs/:jobid/stop to stop with a savepoint)")
        self._job.cancel()
        return RestResponse(202, {})

    def _savepoint(self, request: RestRequest, params: Params) -> RestResponse:
        body = _json_object(request, _SAVEPOINT_FIELDS)
        self._check_running()
        future = self._job.trigger_savepoint(body.get("target-directory"))
        if body.get("cancel-job", False):
            future.add_done_callback(self._cancel_after)
        return self._accepted(future, body.get("triggerId"))

    def _cancel_after(self, future: Future[str]) -> None:
        if future.exception() is None:
            self._job.cancel()

    def _stop(self, request: RestRequest, params: Params) -> RestResponse:
        body = _json_object(request, _STOP_FIELDS)
        self._check_running()
        future = self._job.stop_with_savepoint(body.get("targetDirectory"),
                                               drain=body.get("drain", False))
        return self._accepted(future, body.get("triggerId"))

    def _check_running(self) -> None:
        status = self._job.get_status()
        if status.is_globally_terminal_state() or status is JobStatus.CANCELLING:
            raise HttpError(409, f"job {self._job.job_id} is {status.name}; "
                                 "no savepoint can be taken")

    def _accepted(self, future: Future[str], trigger_id: str | None) -> RestResponse:
        try:
            trigger_id = self._triggers.add(future, trigger_id)
        except DuplicateTriggerError as error:
            raise HttpError(409, str(error)) from None
        return RestResponse(202, {"request-id": trigger_id})

    def _savepoint_status(self, request: RestRequest, params: Params) -> RestResponse:
        trigger_id = params["triggerid"]
        try:
            status = self._triggers.status(trigger_id)
        except UnknownTriggerError as error:
            raise HttpError(404, str(error)) from None
        body: Json = {"status": {"id": status.state.value}}
        if status.state is TriggerState.COMPLETED:
            body["operation"] = ({"location": status.location} if status.failure is None
                                 else {"failure-cause": _failure_cause(status.failure)})
        return RestResponse(200, body)


Handler = Callable[[RestApi, RestRequest, "Params"], RestResponse]

ROUTES: RouteTable[Handler] = RouteTable([
    Route("GET", "/jobs", RestApi._jobs),
    Route("GET", "/jobs/overview", RestApi._overview),
    Route("GET", "/jobs/:jobid", RestApi._details),
    Route("PATCH", "/jobs/:jobid", RestApi._cancel),
    Route("GET", "/jobs/:jobid/checkpoints", RestApi._checkpoints),
    Route("GET", "/jobs/:jobid/checkpoints/details/:checkpointid", RestApi._checkpoint_details),
    Route("GET", "/jobs/:jobid/checkpoints/details/:checkpointid/subtasks/:vertexid",
          RestApi._checkpoint_subtasks),
    Route("GET", "/jobs/:jobid/metrics-history", RestApi._metrics_history),
    Route("GET", "/jobs/:jobid/taskmanagers", RestApi._task_managers),
    Route("GET", "/jobs/:jobid/taskmanagers/:tmid/log", RestApi._tm_log),
    Route("GET", "/jobs/:jobid/taskmanagers/:tmid/stdout", RestApi._tm_stdout),
    Route("GET", "/taskmanagers/:tmid/log", RestApi._tm_log),
    Route("GET", "/taskmanagers/:tmid/stdout", RestApi._tm_stdout),
    Route("GET", "/jobs/:jobid/vertices/:vertexid", RestApi._vertex_details),
    Route("GET", "/jobs/:jobid/exceptions", RestApi._exceptions),
    Route("GET", "/jobs/:jobid/plan", RestApi._plan_view),
    Route("GET", "/jobs/:jobid/config", RestApi._config_view),
    Route("POST", "/jobs/:jobid/savepoints", RestApi._savepoint),
    Route("GET", "/jobs/:jobid/savepoints/:triggerid", RestApi._savepoint_status),
    Route("POST", "/jobs/:jobid/stop", RestApi._stop),
    Route("GET", "/jobs/:jobid/vertices/:vertexid/metrics", RestApi._vertex_metrics),
    Route("GET", "/jobs/:jobid/vertices/:vertexid/subtasks/metrics", RestApi._subtasks_metrics),
    Route("GET", "/jobs/:jobid/vertices/:vertexid/backpressure", RestApi._backpressure),
    Route("GET", "/jobs/:jobid/vertices/:vertexid/watermarks", RestApi._watermarks),
    Route("GET", "/taskmanagers", RestApi._task_managers),
    Route("GET", "/metrics", RestApi._prometheus),
])


def _json_object(request: RestRequest, fields: Mapping[str, tuple[type, ...]]) -> Json:
    raw = request.read_body()
    if not raw.strip():
        return {}
    try:
        body = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise HttpError(400, f"request body is not UTF-8: {exc.reason}") from None
    except json.JSONDecodeError as exc:
        raise HttpError(400, f"request body is not valid JSON: {exc}") from None
    if not isinstance(body, dict):
        raise HttpError(400, f"request body must be a JSON object, not {type(body).__name__}")
    for key, value in body.items():
        if key not in fields:
            raise HttpError(400, f"unknown field {key!r} (expected {', '.join(fields)})")
        if not isinstance(value, fields[key]):
            expected = " or ".join(_TYPE_NAMES[t] for t in fields[key])
            raise HttpError(400, f"field {key!r} must be {expected}, not {json.dumps(value)}")
    return body


def _failure_cause(error: BaseException) -> Json:
    return {
        "class": f"{type(error).__module__}.{type(error).__qualname__}",
        "message": str(error),
        "stack-trace": "".join(traceback.format_exception_only(type(error), error)).strip(),
    }


def _error(status: int, message: str, headers: tuple[tuple[str, str], ...] = ()
           ) -> RestResponse:
    return RestResponse(status, {"errors": [message]}, headers)
