"""The REST/JSON endpoint of a job (Flink's paths and JSON) and job discovery for the CLI.

``server.RestEndpoint`` is started with each job by ``flintlock.runtime.executor`` and serves
``api.RestApi`` (authenticated with a per-job bearer token) built from ``views``, over
``httpd.HttpServer`` (one selector loop and a few workers: no client holds a thread or the
close) reading requests with ``wire``; the job's ``jobfiles.JobFile`` tells the ``flintlock``
command where to find it. ``triggers`` keeps the savepoint operations started over REST.
The dashboard's views beyond Flink's job-level ones are ``detail_views`` (a vertex's subtasks,
a checkpoint's subtasks) and ``metric_history`` (kept from the job's start); ``dashboard``
serves the page's files. When the job ends, ``archive`` writes the views to
``jobmanager.archive.fs.dir``, and ``history_server`` serves them read-only.

May import ``flintlock.common`` and ``flintlock.runtime`` (the JobManager's public API); is
imported by ``flintlock.runtime.executor`` and ``flintlock.cli``.
"""

from flintlock.runtime.rest.api import JobControl, RestApi
from flintlock.runtime.rest.http_types import HttpError, RestRequest, RestResponse
from flintlock.runtime.rest.jobfiles import JobFile, jobs_dir, read_job_files
from flintlock.runtime.rest.server import RestEndpoint, RestEndpointError

__all__ = [
    "HttpError",
    "JobControl",
    "JobFile",
    "RestApi",
    "RestEndpoint",
    "RestEndpointError",
    "RestRequest",
    "RestResponse",
    "jobs_dir",
    "read_job_files",
]
