"""``JobStatus``: the states of a job as PyFlink reports them through ``JobClient``.

Globally terminal states (FINISHED, CANCELED, FAILED) end the job for good; SUSPENDED is only
locally terminal (the job may be resumed by another JobManager). The JobManager owns the
transitions; this module only names the states.
"""

from __future__ import annotations

import enum


class JobStatus(enum.Enum):
    INITIALIZING = 0
    CREATED = 1
    RUNNING = 2
    FAILING = 3
    FAILED = 4
    CANCELLING = 5
    CANCELED = 6
    FINISHED = 7
    RESTARTING = 8
    SUSPENDED = 9
    RECONCILING = 10

    def is_globally_terminal_state(self) -> bool:
        return self in _GLOBALLY_TERMINAL

    def is_terminal_state(self) -> bool:
        return self in _GLOBALLY_TERMINAL or self is JobStatus.SUSPENDED


_GLOBALLY_TERMINAL = frozenset({JobStatus.FINISHED, JobStatus.CANCELED, JobStatus.FAILED})
