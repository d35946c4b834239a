"""How a job or one of its attempts ends other than by finishing. Stateless: exception types
and a formatter."""

from __future__ import annotations

from flintlock.common.errors import FlintlockError


class JobFailedError(FlintlockError):
    """The job failed for good; ``__cause__`` is the failure that ended its last attempt."""

    def __init__(self, job_name: str, detail: str) -> None:
        super().__init__(job_name, detail)
        self.job_name = job_name
        self.detail = detail

    def __str__(self) -> str:
        return f"job {self.job_name!r} failed: {self.detail}"


class JobNotPicklableError(FlintlockError):
    """The job graph could not be pickled for the TaskManagers (with its own modules)."""

    def __init__(self, job_name: str, detail: str) -> None:
        super().__init__(job_name, detail)
        self.job_name = job_name
        self.detail = detail

    def __str__(self) -> str:
        return (f"job {self.job_name!r} cannot be shipped to the TaskManagers: {self.detail}; "
                "hint: create unpicklable resources (locks, connections, files) in a function's "
                "open(), or set classloader.resolve-order: parent-first and install the job's "
                "modules on the cluster")


class AttemptFailedError(FlintlockError):
    """One attempt of the job failed (a task, a TaskManager, or the Spark job)."""


class TaskManagerLostError(AttemptFailedError):
    """A TaskManager of the attempt sent no heartbeat for ``heartbeat.timeout``."""

    def __init__(self, tm_index: int, timeout_ms: float) -> None:
        super().__init__(tm_index, timeout_ms)
        self.tm_index = tm_index
        self.timeout_ms = timeout_ms

    def __str__(self) -> str:
        return (f"TaskManager {self.tm_index} sent no heartbeat for {self.timeout_ms:g} ms "
                "(heartbeat.timeout)")


class JobCancelledError(FlintlockError):
    """The job was cancelled before it finished."""


def describe(error: BaseException) -> str:
    """``Type: message``, for logs and ``JobFailedError``."""
    return f"{type(error).__name__}: {error}"
