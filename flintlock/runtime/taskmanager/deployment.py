"""What a TaskManager builds for each subtask of a deployment: its ``TaskSpec``, with the
checkpointing settings of the job's configuration, and the process-wide GIL switch interval the
job's buffer timeouts need.

Pure functions, called on the TaskManager's main thread while it deploys.
"""

from __future__ import annotations

from typing import Any

from flintlock.common.checkpointing import CheckpointingMode
from flintlock.common.config import Configuration
from flintlock.common.ids import SubtaskIndex
from flintlock.common.options import checkpointing as cp_options
from flintlock.common.options import execution as execution_options
from flintlock.common.options import python as python_options
from flintlock.graph.job_graph import JobGraph
from flintlock.runtime import messages as msg
from flintlock.runtime.checkpoint.pending import TaskId
from flintlock.runtime.network.transport import lower_switch_interval, switch_interval_for
from flintlock.runtime.task_metrics import TaskMetrics
from flintlock.runtime.tasks.operator import CollectSend, TaskEnvironment
from flintlock.runtime.tasks.stream_task import CheckpointingSettings, TaskSpec


def task_spec(job_graph: JobGraph, subtask: Any, deployment: msg.DeployTasks,
              config: Configuration, settings: CheckpointingSettings,
              collect_send: CollectSend, metrics: TaskMetrics) -> TaskSpec:
    """The spec of ``subtask`` (an ``ExecutionVertex`` of this TaskManager's plan)."""
    task_id = TaskId(subtask.job_vertex_id, SubtaskIndex(subtask.subtask_index))
    job_parameters: dict[str, str] = config.get(execution_options.GLOBAL_JOB_PARAMETERS)
    return TaskSpec(
        vertex=job_graph.vertex(subtask.job_vertex_id),
        subtask_index=subtask.subtask_index, attempt_number=deployment.attempt,
        configuration=config, checkpointing=settings,
        restored=dict(deployment.restored.get(task_id, {})),
        finished_on_restore=task_id in deployment.finished,
        environment=TaskEnvironment(
            collect_send=collect_send, batch=job_graph.runtime_mode == "batch",
            checkpointing=settings.enabled,
            job_parameters=job_parameters,
            auto_watermark_interval_ms=config.get(execution_options.AUTO_WATERMARK_INTERVAL),
            bundle_time_ms=config.get(python_options.BUNDLE_TIME),
            bundle_size=config.get(python_options.BUNDLE_SIZE),
            metric_groups=metrics.groups),
    )


def deployed_task_ids(deployment: msg.DeployTasks, tm_index: int) -> set[TaskId]:
    """The subtasks ``deployment`` brings TaskManager ``tm_index``."""
    return {TaskId(v.job_vertex_id, SubtaskIndex(v.subtask_index))
            for v in deployment.plan.task_managers[tm_index].subtasks}


def lower_switch_interval_for(job_graph: JobGraph) -> None:
    """An operator's own ``set_buffer_timeout`` may be shorter than the job's: the GIL's
    switch interval must let the flusher meet the shortest."""
    timeouts = [out.buffer_timeout_ms for vertex in job_graph.vertices
                for op in vertex.operators for out in op.non_chained_outputs]
    if timeouts:
        shortest = min(timeouts, key=lambda t: 2**62 if t < 0 else t)
        lower_switch_interval(switch_interval_for(shortest))


def checkpointing_settings(config: Configuration) -> CheckpointingSettings:
    interval = config.get(cp_options.INTERVAL)
    timeout = config.get(cp_options.ALIGNED_TIMEOUT)
    mode = CheckpointingMode.from_config(config.get(cp_options.MODE))
    enabled = interval > 0
    # As Flink: unaligned checkpoints exist only for exactly-once checkpointing.
    unaligned = enabled and mode is CheckpointingMode.EXACTLY_ONCE and config.get(
        cp_options.UNALIGNED)
    return CheckpointingSettings(
        enabled=enabled, mode=mode, unaligned=unaligned,
        aligned_timeout_ms=timeout if timeout > 0 and unaligned else None,
    )
