"""``JobExecutionResult``: what ``env.execute()`` returns once a job has finished.

Built by the executor (``flintlock.spark``) on the driver; immutable afterwards.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any


@dataclass(frozen=True)
class JobExecutionResult:
    """The job id, the net run time in milliseconds and the final accumulator values."""

    job_id: str
    net_runtime_ms: int
    accumulators: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "accumulators", MappingProxyType(dict(self.accumulators)))

    def get_job_id(self) -> str:
        return self.job_id

    def get_net_runtime(self) -> int:
        """Milliseconds from the job's start to its end."""
        return self.net_runtime_ms

    def get_accumulator_result(self, accumulator_name: str) -> Any:
        return self.accumulators.get(accumulator_name)

    def get_all_accumulator_results(self) -> dict[str, Any]:
        return dict(self.accumulators)

    def is_job_execution_result(self) -> bool:
        return True

    def get_job_execution_result(self) -> JobExecutionResult:
        return self

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (JobExecutionResult, (self.job_id, self.net_runtime_ms, dict(self.accumulators)))

    def __str__(self) -> str:
        return (f"JobExecutionResult(job_id={self.job_id}, "
                f"net_runtime={self.net_runtime_ms} ms)")
