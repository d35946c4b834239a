"""Shared vocabulary of every layer: configuration, ids, errors, types and rows, time values,
job results, operator descriptions.

May import only the standard library and third-party packages; never another flintlock package
outside ``flintlock.common``. Re-exports PyFlink's ``pyflink.common`` names, so user programs
can write ``from flintlock.common import Types, Row, Duration, WatermarkStrategy``.
"""

from flintlock.common.checkpointing import CheckpointingMode
from flintlock.common.config import Configuration
from flintlock.common.config_option import ConfigOption
from flintlock.common.execution_config import ExecutionConfig
from flintlock.common.input_dependency_constraint import InputDependencyConstraint
from flintlock.common.job_client import CloseableIterator, CompletableFuture, JobClient
from flintlock.common.job_execution_result import JobExecutionResult
from flintlock.common.job_status import JobStatus
from flintlock.common.restart_strategy import RestartStrategies, RestartStrategyConfiguration
from flintlock.common.serialization import (
    ByteArraySchema,
    DeserializationSchema,
    Encoder,
    SerializationSchema,
    SimpleStringSchema,
)
from flintlock.common.time import Duration, Instant, Time
from flintlock.common.type_serializer import TypeSerializer
from flintlock.common.typeinfo import TypeInformation, Types
from flintlock.common.types import Row, RowKind
from flintlock.common.watermark_strategy import TimestampAssigner, WatermarkStrategy

__all__ = [
    "ByteArraySchema",
    "CheckpointingMode",
    "CloseableIterator",
    "CompletableFuture",
    "ConfigOption",
    "Configuration",
    "DeserializationSchema",
    "Duration",
    "Encoder",
    "ExecutionConfig",
    "InputDependencyConstraint",
    "Instant",
    "JobClient",
    "JobExecutionResult",
    "JobStatus",
    "RestartStrategies",
    "RestartStrategyConfiguration",
    "Row",
    "RowKind",
    "SerializationSchema",
    "SimpleStringSchema",
    "Time",
    "TimestampAssigner",
    "TypeInformation",
    "TypeSerializer",
    "Types",
    "WatermarkStrategy",
]
