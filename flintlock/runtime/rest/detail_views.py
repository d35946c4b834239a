"""JSON views of one vertex's subtasks and of one checkpoint's acknowledgements, shaped like
Flink's REST API, for the dashboard's subtask table and checkpoint details (issue 30):

- ``GET /jobs/:jobid/vertices/:vertexid``: Flink's vertex details, ``subtasks`` with each
  subtask's ``status`` (as ``views.subtask_state`` shows it), ``attempt``, ``host``,
  ``taskmanager-id``, Flink's ``metrics`` (records and bytes read and written), and
  flintlock's ``busyRatio``, ``backPressuredRatio``, ``idleRatio`` (0..1, the last heartbeat
  interval), ``watermark`` (its input watermark; null before one) and ``state-size`` (bytes
  it acknowledged in the latest completed checkpoint; -1 before one).
- ``GET /jobs/:jobid/checkpoints/details/:checkpointid``: the checkpoint's entry of the
  history plus ``tasks``: per vertex its acknowledged subtasks, state size, longest
  alignment and latest ack.
- ``GET /jobs/:jobid/checkpoints/details/:checkpointid/subtasks/:vertexid``: each subtask of
  the vertex, ``completed`` with its ack time, state size, alignment duration, start delay,
  in-flight data persisted and whether it was unaligned, or ``pending_or_failed``.

Pure functions of immutable snapshots; safe on any thread.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flintlock.runtime.checkpoint.stats import (
    CheckpointStatistics,
    CheckpointStats,
    SubtaskAckStats,
)
from flintlock.runtime.jobmanager import JobDescription, TaskDescription
from flintlock.runtime.metrics import DistributionValue
from flintlock.runtime.metrics.report import (
    BACKPRESSURED,
    BUSY,
    IDLE,
    INPUT_WATERMARK,
    NUM_BYTES_IN,
    NUM_BYTES_OUT,
    NUM_RECORDS_IN,
    NUM_RECORDS_OUT,
)
from flintlock.runtime.rest.metric_history import NO_WATERMARK
from flintlock.runtime.rest.views import checkpoint_entry, shown_tasks

Json = dict[str, Any]


def vertex_details(job: JobDescription, vertex_id: str, now_ms: int) -> Json | None:
    """``GET /jobs/:jobid/vertices/:vertexid``; None when the vertex has no subtask."""
    tasks = sorted((t for t in shown_tasks(job) if t.vertex_id == vertex_id),
                   key=lambda t: t.subtask)
    if not tasks:
        return None
    acks = _latest_acks(job.checkpoints, vertex_id)
    return {"id": vertex_id, "name": tasks[0].vertex_name, "parallelism": len(tasks),
            "now": now_ms, "attempt": job.attempt,
            "subtasks": [_subtask(task, job, acks.get(task.subtask)) for task in tasks]}


def _subtask(task: TaskDescription, job: JobDescription, ack: SubtaskAckStats | None) -> Json:
    report = task.metrics
    variables = dict(report.variables) if report is not None else {}
    watermark = _value(task, INPUT_WATERMARK)
    return {
        "subtask": task.subtask, "status": task.state, "attempt": job.attempt,
        "host": variables.get("host", ""), "taskmanager-id": variables.get("tm_id", ""),
        "start-time": job.start_time_ms,
        "last-report": report.timestamp_ms if report is not None else -1,
        "metrics": {
            "read-records": int(_value(task, NUM_RECORDS_IN) or 0),
            "write-records": int(_value(task, NUM_RECORDS_OUT) or 0),
            "read-bytes": int(_value(task, NUM_BYTES_IN) or 0),
            "write-bytes": int(_value(task, NUM_BYTES_OUT) or 0),
        },
        "busyRatio": _ratio(task, BUSY), "backPressuredRatio": _ratio(task, BACKPRESSURED),
        "idleRatio": _ratio(task, IDLE),
        "watermark": (int(watermark) if watermark is not None and watermark > NO_WATERMARK
                      else None),
        "state-size": ack.state_size if ack is not None else -1,
    }


def _value(task: TaskDescription, name: str) -> float | None:
    if task.metrics is None:
        return None
    value = task.metrics.value(name)
    return None if value is None or isinstance(value, DistributionValue) else float(value)


def _ratio(task: TaskDescription, name: str) -> float | None:
    value = _value(task, name)
    return None if value is None else round(min(1.0, max(0.0, value / 1000.0)), 4)


def _latest_acks(stats: CheckpointStatistics | None, vertex_id: str) -> dict[int, SubtaskAckStats]:
    latest = stats.latest_completed if stats is not None else None
    if latest is None:
        return {}
    return {int(ack.task.subtask): ack for ack in latest.subtask_acks
            if str(ack.task.vertex) == vertex_id}


def find_checkpoint(stats: CheckpointStatistics | None, checkpoint_id: int
                    ) -> CheckpointStats | None:
    """The checkpoint of the bounded history (or the latest completed/failed) with this id."""
    if stats is None:
        return None
    candidates = [*stats.history, stats.latest_completed, stats.latest_failed]
    return next((c for c in candidates if c is not None and int(c.checkpoint_id) == checkpoint_id),
                None)


def _parallelism(job: JobDescription) -> dict[str, int]:
    counts: dict[str, int] = {}
    for task in job.tasks:
        counts[task.vertex_id] = counts.get(task.vertex_id, 0) + 1
    return counts


def checkpoint_details(job: JobDescription, checkpoint: CheckpointStats) -> Json:
    """``GET /jobs/:jobid/checkpoints/details/:checkpointid``."""
    by_vertex: dict[str, list[SubtaskAckStats]] = {}
    for ack in checkpoint.subtask_acks:
        by_vertex.setdefault(str(ack.task.vertex), []).append(ack)
    tasks: dict[str, Json] = {}
    for vertex, parallelism in _parallelism(job).items():
        acks = by_vertex.get(vertex, [])
        tasks[vertex] = {
            "id": vertex, "status": checkpoint.status.name,
            "latest_ack_timestamp": _ack_time(checkpoint, max((a.ack_ms for a in acks),
                                                              default=None)),
            "state_size": sum(a.state_size for a in acks),
            "end_to_end_duration": round(max((a.ack_ms for a in acks), default=0.0)),
            "alignment_duration": round(max((a.metrics.alignment_duration_ms for a in acks),
                                            default=0.0)),
            "persisted_data": sum(a.metrics.bytes_persisted_during_alignment for a in acks),
            "num_subtasks": parallelism, "num_acknowledged_subtasks": len(acks),
        }
    return {**checkpoint_entry(checkpoint), "tasks": tasks}


def checkpoint_subtasks(job: JobDescription, checkpoint: CheckpointStats, vertex_id: str
                        ) -> Json | None:
    """``GET /jobs/:jobid/checkpoints/details/:checkpointid/subtasks/:vertexid``; None when
    the job has no such vertex."""
    parallelism = _parallelism(job).get(vertex_id)
    if parallelism is None:
        return None
    acks = {int(a.task.subtask): a for a in checkpoint.subtask_acks
            if str(a.task.vertex) == vertex_id}
    return {"id": int(checkpoint.checkpoint_id), "vertex": vertex_id,
            "status": checkpoint.status.name,
            "subtasks": [_subtask_ack(index, acks.get(index), checkpoint)
                         for index in range(parallelism)]}


def _subtask_ack(index: int, ack: SubtaskAckStats | None, checkpoint: CheckpointStats) -> Json:
    if ack is None:
        return {"index": index, "status": "pending_or_failed"}
    metrics = ack.metrics
    return {
        "index": index, "status": "completed",
        "ack_timestamp": _ack_time(checkpoint, ack.ack_ms),
        "end_to_end_duration": round(ack.ack_ms), "state_size": ack.state_size,
        "checkpointed_size": ack.state_size if ack.checkpointed_size is None
        else ack.checkpointed_size,
        "alignment": {"duration": round(metrics.alignment_duration_ms),
                      "persisted": metrics.bytes_persisted_during_alignment},
        "start_delay": round(metrics.start_delay_ms),
        "unaligned_checkpoint": metrics.unaligned,
    }


def _ack_time(checkpoint: CheckpointStats, ack_ms: float | None) -> int:
    return -1 if ack_ms is None else checkpoint.trigger_timestamp + round(ack_ms)


def checkpoint_ids(stats: CheckpointStatistics | None) -> Sequence[int]:
    """The ids of the checkpoints whose details can be asked for (the archive writes each)."""
    if stats is None:
        return ()
    return sorted({int(c.checkpoint_id) for c in (*stats.history, stats.latest_completed,
                                                  stats.latest_failed) if c is not None})

