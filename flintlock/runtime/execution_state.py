"""The states of a subtask (Flink's ``ExecutionState``), as the task reports them and the
JobManager tracks them: both sides of the control plane use this one enum."""

from __future__ import annotations

import enum


class ExecutionState(enum.Enum):
    CREATED = "CREATED"
    DEPLOYING = "DEPLOYING"
    INITIALIZING = "INITIALIZING"
    RUNNING = "RUNNING"
    FINISHED = "FINISHED"
    CANCELING = "CANCELING"
    CANCELED = "CANCELED"
    FAILED = "FAILED"

    @property
    def is_terminal(self) -> bool:
        return self in (ExecutionState.FINISHED, ExecutionState.CANCELED, ExecutionState.FAILED)

    @property
    def has_started(self) -> bool:
        """The subtask reached RUNNING at some point (a bounded source may already have
        FINISHED before its consumers opened)."""
        return self in (ExecutionState.RUNNING, ExecutionState.FINISHED)
