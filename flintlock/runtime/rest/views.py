"""JSON views of a job, shaped like Flink's REST API (``/jobs``, ``/jobs/:jobid``,
``/jobs/:jobid/checkpoints``) and built from the JobManager's ``JobDescription`` and the
coordinator's ``CheckpointStatistics`` — the same numbers the logs and benchmarks show.

Each vertex of ``/jobs/:jobid`` has Flink's ``metrics`` (records and bytes read and written,
``metrics_views.vertex_io``). Conventions taken from Flink: hyphenated keys for job fields
(``start-time``), snake_case for checkpoint fields (``trigger_timestamp``), times in epoch
milliseconds, durations in whole milliseconds, -1 for "not known". flintlock additions
(``attempt``, ``recovered``, per-vertex ``subtasks``, ``alignment_duration`` and ``start_delay`` per
checkpoint, ``counts.refused``) are extra keys that Flink clients ignore.

Pure functions of immutable snapshots; safe on any thread.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable
from typing import Any

from flintlock.runtime.checkpoint.stats import (
    CheckpointStatistics,
    CheckpointStats,
    CheckpointStatus,
)
from flintlock.runtime.jobmanager import JobDescription, TaskDescription
from flintlock.runtime.rest.metrics_views import vertex_io

TASK_STATES = ("CREATED", "SCHEDULED", "DEPLOYING", "INITIALIZING", "RUNNING", "FINISHED",
               "CANCELING", "CANCELED", "FAILED", "RECONCILING", "RESTARTING")
TERMINAL_JOB_STATES = frozenset({"FINISHED", "CANCELED", "FAILED"})
TERMINAL_TASK_STATES = frozenset({"FINISHED", "CANCELED", "FAILED"})

_UNFINISHED_AS = {
    "FAILING": "CANCELING", "CANCELLING": "CANCELING", "CANCELED": "CANCELED",
    "FAILED": "CANCELED", "FINISHED": "CANCELED", "SUSPENDED": "CANCELED",
}
"""What a subtask that has not reached a terminal state is shown as, by job status: its last
report is stale once the attempt is being torn down (nothing reports CANCELED for a task
whose TaskManager was stopped)."""

Json = dict[str, Any]


def job_overview(job: JobDescription, now_ms: int) -> Json:
    """One entry of ``GET /jobs/overview`` (a job that has ended gets ``end-time`` now: the
    endpoint closes, and the archive is written, as the job ends)."""
    ended = job.status in TERMINAL_JOB_STATES
    return {
        "jid": job.job_id, "name": job.name, "state": job.status,
        "start-time": job.start_time_ms, "end-time": now_ms if ended else -1,
        "duration": max(0, now_ms - job.start_time_ms), "last-modification": now_ms,
        "tasks": _state_counts(task.state for task in shown_tasks(job)),
    }


def exceptions(job: JobDescription) -> Json:
    """``GET /jobs/:jobid/exceptions``: Flink's exception history, newest first; each entry
    also says its ``kind`` (``attempt-failed``, ``checkpoint-fallback``, ``job-recovered``),
    ``attempt`` and ``message``; ``stacktrace`` is the failure's traceback where one was
    recorded (the TaskManager's, for a task's failure), else ``name: message``."""
    entries = [{"exceptionName": e.name, "stacktrace": e.stacktrace or f"{e.name}: {e.message}",
                "message": e.message, "timestamp": e.timestamp_ms, "kind": e.kind.value,
                "attempt": e.attempt} for e in reversed(job.events)]
    failures = [e for e in entries if e["kind"] == "attempt-failed"]
    root = failures[0] if failures else None
    return {"root-exception": root["message"] if root else None,
            "timestamp": root["timestamp"] if root else None,
            "exceptionHistory": {"entries": entries, "truncated": job.events_truncated}}


def job_id_and_status(job: JobDescription) -> Json:
    """One entry of ``GET /jobs`` (Flink's id and status, plus name and start time)."""
    return {"id": job.job_id, "status": job.status, "name": job.name,
            "start-time": job.start_time_ms}


def subtask_state(task_state: str, job_status: str) -> str:
    """The state a subtask is shown in: its own report while its job runs; while the job
    restarts, RESTARTING (FAILED for the subtask that failed); while it is cancelled or once
    it has ended, CANCELING / CANCELED for a subtask that had not reached an end of its own
    (so no vertex reads RUNNING while its job is not)."""
    if job_status == "RESTARTING":
        return task_state if task_state == "FAILED" else "RESTARTING"
    if task_state in TERMINAL_TASK_STATES:
        return task_state
    return _UNFINISHED_AS.get(job_status, task_state)


def shown_tasks(job: JobDescription) -> tuple[TaskDescription, ...]:
    """The job's subtasks with the states ``subtask_state`` shows."""
    return tuple(dataclasses.replace(task, state=subtask_state(task.state, job.status))
                 for task in job.tasks)


def job_details(job: JobDescription, now_ms: int, plan: Json | None = None) -> Json:
    """``GET /jobs/:jobid``; with the ``plan``, a vertex no subtask of the current attempt
    has reported yet (the attempt is starting) is listed too, CREATED."""
    vertices = [_vertex(tasks) for tasks in _by_vertex(shown_tasks(job))]
    known = {vertex["id"] for vertex in vertices}
    for node in (plan or {}).get("plan", {}).get("nodes", []):
        if node["id"] not in known:
            vertices.append(_waiting_vertex(node, job.status))
    return {
        "jid": job.job_id, "name": job.name, "state": job.status,
        "isStoppable": job.status not in TERMINAL_JOB_STATES,
        "start-time": job.start_time_ms, "end-time": -1, "now": now_ms,
        "duration": max(0, now_ms - job.start_time_ms), "attempt": job.attempt,
        "recovered": job.recovered, "vertices": vertices,
        "status-counts": _state_counts(vertex["status"] for vertex in vertices),
    }


def _waiting_vertex(node: Json, job_status: str) -> Json:
    state = subtask_state("CREATED", job_status)
    count = int(node["parallelism"])
    return {"id": node["id"], "name": node["description"], "parallelism": count,
            "status": state, "tasks": _state_counts([state] * count),
            "subtasks": [{"subtask": index, "status": state} for index in range(count)],
            "metrics": vertex_io([])}


def _by_vertex(tasks: Iterable[TaskDescription]) -> list[list[TaskDescription]]:
    groups: dict[str, list[TaskDescription]] = {}
    for task in tasks:
        groups.setdefault(task.vertex_id, []).append(task)
    return list(groups.values())


def _vertex(tasks: list[TaskDescription]) -> Json:
    states = [task.state for task in tasks]
    return {
        "id": tasks[0].vertex_id, "name": tasks[0].vertex_name, "parallelism": len(tasks),
        "status": aggregate_state(states), "tasks": _state_counts(states),
        "subtasks": [{"subtask": task.subtask, "status": task.state}
                     for task in sorted(tasks, key=lambda t: t.subtask)],
        "metrics": vertex_io(tasks),
    }


def aggregate_state(states: list[str]) -> str:
    """A vertex's state from its subtasks' (as Flink aggregates execution states)."""
    counts = Counter(states)
    if not states:
        return "CREATED"
    if len(counts) == 1:
        return states[0]
    for state in ("FAILED", "CANCELING", "CANCELED", "RUNNING", "INITIALIZING", "DEPLOYING"):
        if counts[state]:
            return state
    if counts["FINISHED"]:
        return "RUNNING"
    return counts.most_common(1)[0][0]


def _state_counts(states: Iterable[str]) -> dict[str, int]:
    counts = dict.fromkeys(TASK_STATES, 0)
    for state in states:
        counts[state] = counts.get(state, 0) + 1
    return counts


def checkpoints(stats: CheckpointStatistics | None) -> Json:
    """``GET /jobs/:jobid/checkpoints``: counts, summary, latest and history."""
    if stats is None:
        stats = CheckpointStatistics(0, 0, 0, 0)
    completed = [s for s in stats.history if s.status is CheckpointStatus.COMPLETED]
    savepoints = [s for s in completed if s.is_savepoint]
    restored = stats.restored_checkpoint_id
    return {
        "counts": {
            "restored": 0 if restored is None else 1, "total": stats.num_triggered,
            "in_progress": stats.num_in_progress, "completed": stats.num_completed,
            "failed": stats.num_failed,
            "refused": {reason.name: n for reason, n in sorted(
                stats.refused.items(), key=lambda item: item[0].name)},
        },
        "summary": {
            "state_size": _summary(s.state_size for s in completed),
            "end_to_end_duration": _summary(_ms(s.end_to_end_duration_ms) for s in completed),
            "alignment_duration": _summary(_ms(s.alignment_duration_ms) for s in completed),
            "start_delay": _summary(_ms(s.start_delay_ms) for s in completed),
        },
        "latest": {
            "completed": _optional(stats.latest_completed),
            "savepoint": _optional(savepoints[0] if savepoints else None),
            "failed": _optional(stats.latest_failed),
            "restored": None if restored is None else {"id": int(restored)},
        },
        "history": [checkpoint_entry(s) for s in stats.history],
    }


def checkpoint_entry(stats: CheckpointStats) -> Json:
    """One checkpoint of the history (Flink's ``@class`` tells the three kinds apart)."""
    latest_ack = max((ack.ack_ms for ack in stats.subtask_acks), default=None)
    duration = stats.end_to_end_duration_ms
    if duration is None:
        duration = latest_ack if latest_ack is not None else 0.0
    entry: Json = {
        "@class": stats.status.value, "id": int(stats.checkpoint_id),
        "status": stats.status.name, "is_savepoint": stats.is_savepoint,
        "checkpoint_type": "SAVEPOINT" if stats.is_savepoint else "CHECKPOINT",
        "trigger_timestamp": stats.trigger_timestamp,
        "latest_ack_timestamp": -1 if latest_ack is None else (
            stats.trigger_timestamp + _ms(latest_ack)),
        "state_size": stats.state_size,
        "checkpointed_size": (stats.state_size if stats.checkpointed_size is None
                              else stats.checkpointed_size),
        "end_to_end_duration": _ms(duration),
        "alignment_duration": _ms(stats.alignment_duration_ms),
        "start_delay": _ms(stats.start_delay_ms),
        "persisted_data": sum(a.metrics.bytes_persisted_during_alignment
                              for a in stats.subtask_acks),
        "num_subtasks": stats.num_subtasks,
        "num_acknowledged_subtasks": stats.num_acknowledged,
    }
    if stats.status is CheckpointStatus.COMPLETED:
        entry.update({"external_path": stats.external_path, "discarded": False})
    if stats.status is CheckpointStatus.FAILED:
        entry.update({
            "failure_timestamp": stats.trigger_timestamp + _ms(duration),
            "failure_message": stats.failure_message or (
                stats.failure_reason.name if stats.failure_reason else ""),
            "failure_reason": stats.failure_reason.name if stats.failure_reason else None,
        })
    return entry


def _optional(stats: CheckpointStats | None) -> Json | None:
    return None if stats is None else checkpoint_entry(stats)


def _ms(value: float | None) -> int:
    return 0 if value is None else round(value)


def _summary(values: Iterable[int]) -> dict[str, int]:
    items = list(values)
    if not items:
        return {"min": 0, "max": 0, "avg": 0}
    return {"min": min(items), "max": max(items), "avg": round(sum(items) / len(items))}


def plan(job_graph: Any) -> Json:
    """``GET /jobs/:jobid/plan``: Flink's plan of the job graph — each vertex with its
    parallelism and inputs (upstream vertex, ship strategy, exchange); from the JobManager's
    ``JobGraph`` (read by attribute: this layer does not import ``graph``)."""
    nodes = []
    for vertex in job_graph.vertices:
        inputs = [{"num": index, "id": str(edge.source_vertex),
                   "ship_strategy": edge.partitioner.kind.name,
                   "exchange": edge.partition_type.name.lower()}
                  for index, edge in enumerate(vertex.inputs)]
        nodes.append({"id": str(vertex.id), "parallelism": vertex.parallelism,
                      "operator": "", "operator_strategy": "", "description": vertex.name,
                      "inputs": inputs})
    return {"plan": {"jid": str(job_graph.job_id), "name": job_graph.name,
                     "type": job_graph.runtime_mode.upper(), "nodes": nodes}}


SENSITIVE = ("password", "secret", "token", "key", "credential", "auth", "jaas")
"""Parts of a key whose value ``job_config`` hides (as Flink's REST API redacts them)."""


def job_config(job_id: str, name: str, configuration: Any) -> Json:
    """``GET /jobs/:jobid/config``: Flink's execution config of the job, and (flintlock's
    addition) every key the job's configuration sets, with sensitive values hidden."""
    from flintlock.common.options import execution as execution_options
    from flintlock.common.options import restart as restart_options

    settings = {key: ("******" if any(part in key.lower() for part in SENSITIVE) else value)
                for key, value in sorted(configuration.to_dict().items())}
    return {
        "jid": job_id, "name": name,
        "execution-config": {
            "execution-mode": "PIPELINED",
            "restart-strategy": str(configuration.get(restart_options.TYPE) or "default"),
            "job-parallelism": configuration.get(execution_options.PARALLELISM),
            "object-reuse-mode": False,
            "user-config": dict(configuration.get(execution_options.GLOBAL_JOB_PARAMETERS)),
        },
        "configuration": settings,
    }
