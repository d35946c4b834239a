"""``ExecutionConfig``: the subset of PyFlink's job-wide execution settings flintlock honours.

It is a view over the environment's ``Configuration`` (parallelism, max parallelism), so a
setting made here and one made through ``env.set_parallelism`` are the same value. Settings
that have no effect in flintlock are recorded as they are in PyFlink but documented as
ineffective (object reuse: records are never copied between chained operators anyway);
PyFlink methods for features flintlock lacks raise ``NotImplementedError``.

Owned by the user's thread while the job is built.
"""

from __future__ import annotations

from typing import Any

from flintlock.common.config import Configuration
from flintlock.common.options import execution


class ExecutionConfig:
    """Job-wide execution settings, backed by the environment's configuration."""

    def __init__(self, configuration: Configuration) -> None:
        self._configuration = configuration
        self._object_reuse = False

    def get_parallelism(self) -> int:
        return self._configuration.get(execution.PARALLELISM)

    def set_parallelism(self, parallelism: int) -> ExecutionConfig:
        self._configuration.set(execution.PARALLELISM, parallelism)
        return self

    def get_max_parallelism(self) -> int:
        return self._configuration.get(execution.MAX_PARALLELISM)

    def set_max_parallelism(self, max_parallelism: int) -> ExecutionConfig:
        self._configuration.set(execution.MAX_PARALLELISM, max_parallelism)
        return self

    def enable_object_reuse(self) -> ExecutionConfig:
        """Recorded only: flintlock never copies records between chained operators."""
        self._object_reuse = True
        return self

    def disable_object_reuse(self) -> ExecutionConfig:
        self._object_reuse = False
        return self

    def is_object_reuse_enabled(self) -> bool:
        return self._object_reuse

    def set_global_job_parameters(self, global_job_parameters_dict: dict[str, str]
                                  ) -> ExecutionConfig:
        """Parameters every function reads with ``RuntimeContext.get_job_parameter``."""
        self._configuration.set(execution.GLOBAL_JOB_PARAMETERS,
                                {str(k): str(v) for k, v in global_job_parameters_dict.items()})
        return self

    def get_global_job_parameters(self) -> dict[str, str]:
        parameters: dict[str, str] = self._configuration.get(execution.GLOBAL_JOB_PARAMETERS)
        return dict(parameters)

    def set_auto_watermark_interval(self, interval: int) -> ExecutionConfig:
        """How often (ms) periodic watermarks are emitted; 0 turns periodic emission off."""
        self._configuration.set(execution.AUTO_WATERMARK_INTERVAL, interval)
        return self

    def get_auto_watermark_interval(self) -> int:
        return self._configuration.get(execution.AUTO_WATERMARK_INTERVAL)

    def __getattr__(self, name: str) -> Any:
        if name in _UNSUPPORTED:
            raise NotImplementedError(f"ExecutionConfig.{name}: {_UNSUPPORTED[name]} is not "
                                      "supported yet (issue #5)")
        raise AttributeError(name)


_UNSUPPORTED = {
    "set_latency_tracking_interval": "latency tracking",
    "get_latency_tracking_interval": "latency tracking",
    "set_task_cancellation_interval": "task cancellation settings",
    "get_task_cancellation_interval": "task cancellation settings",
    "set_task_cancellation_timeout": "task cancellation settings",
    "get_task_cancellation_timeout": "task cancellation settings",
    "set_restart_strategy": "restart strategies in code (use restart-strategy.* keys)",
    "get_restart_strategy": "restart strategies in code (use restart-strategy.* keys)",
    "set_execution_mode": "the DataSet execution mode",
    "get_execution_mode": "the DataSet execution mode",
    "enable_force_kryo": "Kryo serialization",
    "disable_force_kryo": "Kryo serialization",
    "is_force_kryo_enabled": "Kryo serialization",
    "enable_generic_types": "generic-type control",
    "disable_generic_types": "generic-type control",
    "has_generic_types_disabled": "generic-type control",
    "enable_auto_generated_uids": "auto-generated uid control",
    "disable_auto_generated_uids": "auto-generated uid control",
    "has_auto_generated_uids_enabled": "auto-generated uid control",
    "enable_force_avro": "Avro serialization",
    "disable_force_avro": "Avro serialization",
    "is_force_avro_enabled": "Avro serialization",
    "add_default_kryo_serializer": "Kryo serialization",
    "register_type_with_kryo_serializer": "Kryo serialization",
    "register_pojo_type": "POJO types",
    "register_kryo_type": "Kryo serialization",
    "get_registered_types_with_kryo_serializer_classes": "Kryo serialization",
    "get_default_kryo_serializer_classes": "Kryo serialization",
    "get_registered_kryo_types": "Kryo serialization",
    "get_registered_pojo_types": "POJO types",
    "is_auto_type_registration_disabled": "type registration",
    "disable_auto_type_registration": "type registration",
    "is_use_snapshot_compression": "snapshot compression",
    "set_use_snapshot_compression": "snapshot compression",
}
