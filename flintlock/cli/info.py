"""A job's health at a glance: ``flintlock info JOB_ID``, and the one-line summary
``flintlock list`` shows for each job.

Read from the job's REST endpoint (``GET /jobs/:jobid``, whose vertices carry their metrics,
``/plan`` for which of them are sources, and ``/checkpoints``): per vertex its records per
second in and out, its busiest subtask's busy time and its most backpressured subtask's level
(Flink's thresholds, ``runtime.rest.metrics_views.BackPressureLevel``); the latest
checkpoint. Vertices are listed in pipeline order, sources first (``pipeline_order`` over the
plan's inputs), as Flink's dashboard draws them. Owned by the CLI's one thread; failures raise
``CliError``.
"""

from __future__ import annotations

import argparse
import time
from typing import Any, TextIO

from flintlock.cli.client import RestClient, resolve_job
from flintlock.cli.errors import CliError
from flintlock.runtime.rest.jobfiles import JobFile
from flintlock.runtime.rest.metrics_views import BackPressureLevel


def rate(value: float) -> str:
    if value >= 1e6:
        return f"{value / 1e6:.2f}M/s"
    if value >= 1e3:
        return f"{value / 1e3:.1f}k/s"
    return f"{value:.0f}/s"


def _level(vertex: dict[str, Any]) -> str:
    ratio = vertex.get("metrics", {}).get("max-backpressured-time-ms-per-second", 0.0) / 1000
    return BackPressureLevel.of(ratio).value


def _worst(levels: list[str]) -> str:
    order = [level.value for level in BackPressureLevel]
    return max(levels, key=order.index) if levels else "ok"


def _checkpoint(checkpoints: dict[str, Any], now_ms: int) -> str:
    latest = (checkpoints.get("latest") or {}).get("completed")
    counts = checkpoints.get("counts", {})
    if latest is None:
        return f"no checkpoint completed yet ({counts.get('failed', 0)} failed)"
    age_s = max(0.0, (now_ms - latest["latest_ack_timestamp"]) / 1000)
    return (f"checkpoint {latest['id']}, {age_s:.0f} s ago "
            f"({counts.get('completed', 0)} completed, {counts.get('failed', 0)} failed)")


def _latest_checkpoint(checkpoints: dict[str, Any], now_ms: int) -> str:
    latest = (checkpoints.get("latest") or {}).get("completed")
    counts = checkpoints.get("counts", {})
    failed = counts.get("failed", 0)
    if latest is None:
        return f"Latest checkpoint: none completed yet ({failed} failed)"
    age_s = max(0.0, (now_ms - latest["latest_ack_timestamp"]) / 1000)
    return (f"Latest checkpoint: #{latest['id']}, completed {age_s:.0f} s ago "
            f"({counts.get('completed', 0)} completed, {failed} failed)")


def pipeline_order(vertices: list[dict[str, Any]], nodes: list[dict[str, Any]]
                   ) -> list[dict[str, Any]]:
    """``vertices`` sources first, each after every vertex it reads from (the plan's
    ``inputs``); ties keep their given order. Vertices the plan does not name go last."""
    upstream = {str(node["id"]): {str(i["id"]) for i in node.get("inputs", [])}
                for node in nodes}
    ordered: list[dict[str, Any]] = []
    placed: set[str] = set()
    waiting = [v for v in vertices if str(v.get("id")) in upstream]
    while waiting:
        ready = [v for v in waiting if upstream[str(v["id"])] <= placed]
        if not ready:  # a cycle (iterations): keep the rest as given
            ready = waiting[:1]
        for vertex in ready:
            ordered.append(vertex)
            placed.add(str(vertex["id"]))
        waiting = [v for v in waiting if str(v["id"]) not in placed]
    return ordered + [v for v in vertices if str(v.get("id")) not in upstream]


def summary(job: JobFile, client: RestClient | None = None) -> str:
    """``12.1k/s in, backpressure high, checkpoint 7 3 s ago (...)``: the list's health."""
    client = client or RestClient(job, timeout_s=5.0)
    details = client.get(f"/jobs/{job.job_id}")
    vertices = details.get("vertices", [])
    nodes = client.get(f"/jobs/{job.job_id}/plan").get("plan", {}).get("nodes", [])
    source_ids = {node["id"] for node in nodes if not node.get("inputs")}
    sources = [v for v in vertices if v.get("id") in source_ids]
    produced = sum(v.get("metrics", {}).get("records-out-per-second", 0.0) for v in sources)
    checkpoints = client.get(f"/jobs/{job.job_id}/checkpoints")
    return (f"{rate(produced)} from sources, backpressure {_worst([_level(v) for v in vertices])}"
            f", {_checkpoint(checkpoints, int(time.time() * 1000))}")


def show_info(args: argparse.Namespace, out: TextIO) -> int:
    """``flintlock info JOB_ID``: state, dashboard address, vertices, latest checkpoint."""
    job = resolve_job(args.job_id)
    client = RestClient(job, timeout_s=args.timeout)
    details = client.get(f"/jobs/{job.job_id}")
    checkpoints = client.get(f"/jobs/{job.job_id}/checkpoints")
    if "vertices" not in details:
        raise CliError(f"job {job.job_id}'s endpoint did not describe its vertices")
    nodes = client.get(f"/jobs/{job.job_id}/plan").get("plan", {}).get("nodes", [])
    print(f"Job {job.job_id} {job.name!r}: {details.get('state')} "
          f"(attempt {details.get('attempt', 0)})", file=out)
    print(f"Dashboard: {job.url}/ (with the token of the job file)", file=out)
    rows = [("VERTEX", "PAR", "STATUS", "IN", "OUT", "BUSY", "BACKPRESSURE")]
    for vertex in pipeline_order(details["vertices"], nodes):
        metrics = vertex.get("metrics", {})
        rows.append((vertex["name"], str(vertex["parallelism"]), vertex["status"],
                     rate(metrics.get("records-in-per-second", 0.0)),
                     rate(metrics.get("records-out-per-second", 0.0)),
                     f"{metrics.get('max-busy-time-ms-per-second', 0.0) / 10:.0f}%",
                     _level(vertex)))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
              .rstrip(), file=out)
    print(_latest_checkpoint(checkpoints, int(time.time() * 1000)), file=out)
    return 0
