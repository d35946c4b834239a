"""The commands that operate on running jobs: ``list``, ``cancel``, ``savepoint``, ``stop``
(``info`` is in ``info``; ``list`` shows its one-line health of each job).

Each finds the job by its job file (``flintlock.runtime.rest.jobfiles``) and talks to the
job's REST endpoint (``client.RestClient``). Savepoints are asynchronous in Flink's API: the
command triggers one, then polls the trigger id every ``POLL_INTERVAL_S`` until it completes
or ``--timeout`` passes.

Output goes to the ``out`` stream given (stdout by default); failures raise ``CliError``.
Owned by the CLI's one thread.
"""

from __future__ import annotations

import argparse
import datetime
import os
import time
from typing import TextIO

from flintlock.cli.client import EndpointGoneError, RestClient, resolve_job
from flintlock.cli.errors import CliError
from flintlock.cli.info import summary
from flintlock.runtime.rest.jobfiles import JobFile, read_job_files, remove_stale_job_files

POLL_INTERVAL_S = 0.2
TERMINAL_STATES = frozenset({"FINISHED", "CANCELED", "FAILED"})


def list_jobs(args: argparse.Namespace, out: TextIO) -> int:
    """``flintlock list``: the running jobs of this machine, oldest first."""
    remove_stale_job_files()
    jobs = read_job_files()
    if not jobs:
        print("No running jobs.", file=out)
        return 0
    rows = [("JOB ID", "NAME", "STATUS", "START TIME", "REST", "HEALTH")]
    rows += [(job.job_id, job.name, _status_of(job), _format_time(job.start_time_ms), job.url,
              _health_of(job)) for job in jobs]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    for row in rows:
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
        print("  ".join([*cells, row[-1]]), file=out)
    return 0


def _status_of(job: JobFile) -> str:
    """The job's state; ``(recovered)`` after it when a new driver took it over (HA)."""
    try:
        details = RestClient(job, timeout_s=5.0).get(f"/jobs/{job.job_id}")
        state = str(details.get("state", "?"))
        return f"{state} (recovered)" if details.get("recovered") else state
    except EndpointGoneError:
        return "ENDED"
    except CliError:
        return "UNREACHABLE"


def _health_of(job: JobFile) -> str:
    """Throughput, backpressure, latest checkpoint (``info.summary``); blank if unreachable."""
    try:
        return summary(job)
    except CliError:
        return ""


def _format_time(epoch_ms: int) -> str:
    moment = datetime.datetime.fromtimestamp(epoch_ms / 1000).astimezone()
    return moment.strftime("%Y-%m-%d %H:%M:%S %Z")


def cancel_job(args: argparse.Namespace, out: TextIO) -> int:
    """``flintlock cancel JOB_ID``: cancels, then waits until the job has ended."""
    job = resolve_job(args.job_id)
    client = RestClient(job)
    client.patch(f"/jobs/{job.job_id}?mode=cancel")
    state = _wait_until_ended(client, args.timeout)
    if state not in (None, "CANCELED"):
        raise CliError(f"job {job.job_id} ended as {state}, not CANCELED",
                       "it finished or failed before the cancellation took effect")
    print(f"Cancelled job {job.job_id}.", file=out)
    return 0


def _wait_until_ended(client: RestClient, timeout_s: float) -> str | None:
    """The terminal state, or None when the endpoint closed (the job ended)."""
    path = f"/jobs/{client.job.job_id}"
    state = "?"
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            state = str(client.get(path).get("state"))
        except EndpointGoneError:
            return None
        if state in TERMINAL_STATES:
            return state
        time.sleep(POLL_INTERVAL_S)
    raise CliError(f"job {client.job.job_id} is still {state} after {timeout_s:g} s",
                   "wait longer with --timeout, or check with `flintlock list`")


def trigger_savepoint(args: argparse.Namespace, out: TextIO) -> int:
    """``flintlock savepoint JOB_ID [DIR]``: takes a savepoint and prints its path."""
    job = resolve_job(args.job_id)
    client = RestClient(job)
    body: dict[str, object] = {"target-directory": absolute(args.directory),
                               "cancel-job": False}
    trigger = client.post(f"/jobs/{job.job_id}/savepoints", body)
    path = _await_savepoint(client, str(trigger["request-id"]), args.timeout)
    print(f"Savepoint completed. Path: {path}", file=out)
    print(f"Resume the job from it with: flintlock run --from-savepoint {path} <job.py>",
          file=out)
    return 0


def stop_job(args: argparse.Namespace, out: TextIO) -> int:
    """``flintlock stop JOB_ID --savepoint [DIR] [--drain]``: a final, synchronous savepoint
    (nothing is processed after it), then the job ends."""
    job = resolve_job(args.job_id)
    client = RestClient(job)
    directory = absolute(args.savepoint or None)
    body: dict[str, object] = {"targetDirectory": directory}
    if getattr(args, "drain", False):
        body["drain"] = True
    trigger = client.post(f"/jobs/{job.job_id}/stop", body)
    path = _await_savepoint(client, str(trigger["request-id"]), args.timeout)
    print(f"Savepoint completed. Path: {path}", file=out)
    print(f"Stopped job {job.job_id}.", file=out)
    return 0


def absolute(path: str | None) -> str | None:
    """A local path made absolute here: the job's driver may run in another directory.
    URLs (``s3://...``, ``file:///...``) are left alone."""
    if path is None or "://" in path:
        return path
    return os.path.abspath(os.path.expanduser(path))


def _await_savepoint(client: RestClient, trigger_id: str, timeout_s: float) -> str:
    path = f"/jobs/{client.job.job_id}/savepoints/{trigger_id}"
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        answer = client.get(path)
        status = answer.get("status")
        if isinstance(status, dict) and status.get("id") == "COMPLETED":
            return _location(client.job, answer)
        time.sleep(POLL_INTERVAL_S)
    raise CliError(f"the savepoint of job {client.job.job_id} did not complete within "
                   f"{timeout_s:g} s (trigger id {trigger_id})",
                   "wait longer with --timeout; the job's log says what holds it up")


def _location(job: JobFile, answer: dict[str, object]) -> str:
    operation = answer.get("operation")
    if isinstance(operation, dict) and operation.get("location"):
        return str(operation["location"])
    cause = operation.get("failure-cause") if isinstance(operation, dict) else None
    detail = cause.get("message") or cause.get("class") if isinstance(cause, dict) else None
    hint = ("set execution.checkpointing.savepoint-dir or give a directory"
            if "savepoint dir" in str(detail) or "directory" in str(detail)
            else "the job's log has the details")
    raise CliError(f"the savepoint of job {job.job_id} failed: {detail or 'unknown cause'}", hint)
