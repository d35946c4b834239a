"""Typed errors of running TaskManagers on Spark (STYLE.md §5).

They cross from Spark executors to the driver and out to the user, so each keeps its
constructor arguments in ``args`` (pickling) and says, in its message, what the user needs:
the slots needed and available, or the TaskManager's own exception type, message and Python
traceback. Never the Py4J/JVM stack trace.
"""

from __future__ import annotations

from flintlock.common.errors import FlintlockError


class SparkRuntimeError(FlintlockError):
    """Base class of errors raised by ``flintlock.spark``."""


class InsufficientSlotsError(SparkRuntimeError):
    """The Spark application cannot run all TaskManagers of an attempt at once (a barrier
    stage needs every task scheduled together)."""

    def __init__(self, needed: int, available: int, master: str) -> None:
        super().__init__(needed, available, master)
        self.needed = needed
        self.available = available
        self.master = master

    def __str__(self) -> str:
        return (
            f"the job needs {self.needed} task slots but Spark master {self.master} offers "
            f"{self.available}: lower the parallelism, raise taskmanager.numberOfTaskSlots, "
            "or give the Spark application more executor cores"
        )


class BarrierModeUnsupportedError(SparkRuntimeError):
    """The Spark application is configured so that it cannot run a barrier stage, which the
    TaskManagers of an attempt are: Spark refuses barrier stages under dynamic allocation."""

    def __init__(self, setting: str, value: str) -> None:
        super().__init__(setting, value)
        self.setting = setting
        self.value = value

    def __str__(self) -> str:
        return (
            f"flintlock runs its TaskManagers as one Spark barrier stage, which Spark does not "
            f"allow with {self.setting}={self.value}: set {self.setting}=false for this "
            "application (spark-submit --conf or the SparkSession builder)"
        )


class TaskManagerFailure(SparkRuntimeError):
    """One TaskManager failed; carries its exception type, message and Python traceback."""

    def __init__(
        self, tm_index: int, attempt: int, type_name: str, message: str, traceback: str
    ) -> None:
        super().__init__(tm_index, attempt, type_name, message, traceback)
        self.tm_index = tm_index
        self.attempt = attempt
        self.type_name = type_name
        self.message = message
        self.traceback = traceback

    def __str__(self) -> str:
        text = f"TaskManager {self.tm_index} (attempt {self.attempt}) failed: "
        text += f"{self.type_name}: {self.message}"
        return text + (f"\n{self.traceback.rstrip()}" if self.traceback else "")


class JobAttemptFailed(SparkRuntimeError):
    """The Spark job running one attempt's TaskManagers failed.

    ``failures`` are the TaskManager failures known (reported over RPC or parsed from
    Spark's error), the first being the root cause; ``detail`` says what happened when no
    TaskManager failure is known (e.g. the Spark application was stopped)."""

    def __init__(
        self, attempt: int, failures: tuple[TaskManagerFailure, ...], detail: str = ""
    ) -> None:
        super().__init__(attempt, failures, detail)
        self.attempt = attempt
        self.failures = failures
        self.detail = detail

    def __str__(self) -> str:
        if not self.failures:
            return f"job attempt {self.attempt} failed: {self.detail}"
        others = len(self.failures) - 1
        more = f" (and {others} other TaskManager failure(s))" if others else ""
        return f"job attempt {self.attempt} failed{more}: {self.failures[0]}"


class JobAttemptCancelled(SparkRuntimeError):
    """The attempt's Spark job was cancelled (``LaunchHandle.cancel``)."""

    def __init__(self, attempt: int) -> None:
        super().__init__(attempt)
        self.attempt = attempt

    def __str__(self) -> str:
        return f"job attempt {self.attempt} was cancelled"


class ClusterStartError(SparkRuntimeError):
    """The standalone test cluster did not come up (``flintlock.testing.spark_cluster``)."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail

    def __str__(self) -> str:
        return f"the Spark standalone cluster did not start: {self.detail}"
