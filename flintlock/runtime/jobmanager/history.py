"""The job's history of notable events: attempt failures and checkpoint fallbacks.

What the REST endpoint shows under ``/jobs/:jobid/exceptions`` (Flink's exception history)
and what an operator needs to see after the fact: why an attempt failed, and when a restore
skipped a damaged checkpoint for an older one. Bounded: the newest ``HISTORY_SIZE`` entries
are kept (Flink's ``web.exception-history-size`` default).

Thread ownership: ``record`` on the JobManager thread (or while the JobManager is being
built); ``entries`` from any thread (it copies a tuple under the GIL).
"""

from __future__ import annotations

import enum
from collections import deque
from dataclasses import dataclass

HISTORY_SIZE = 16


class JobEventKind(enum.Enum):
    ATTEMPT_FAILED = "attempt-failed"
    """An attempt of the job failed; the restart strategy decided what followed."""
    CHECKPOINT_FALLBACK = "checkpoint-fallback"
    """A damaged completed checkpoint was skipped and an older one restored instead."""
    JOB_RECOVERED = "job-recovered"
    """A new JobManager (driver) took the job over from high-availability storage."""
    REGION_RESTARTED = "region-restarted"
    """A subtask of a BATCH job failed and only its pipelined region (with the started
    regions reading it) restarted; the restart strategy allowed it."""


@dataclass(frozen=True, slots=True)
class JobEvent:
    timestamp_ms: int
    """Wall-clock time, epoch milliseconds."""
    attempt: int
    kind: JobEventKind
    name: str
    """The error's type name, or the event's short name."""
    message: str
    stacktrace: str = ""
    """The failure's traceback (the TaskManager's, for a task's failure); empty if none."""


class JobHistory:
    def __init__(self, size: int = HISTORY_SIZE) -> None:
        self._events: deque[JobEvent] = deque(maxlen=size)
        self.truncated = False

    def record(self, event: JobEvent) -> None:
        if self._events.maxlen is not None and len(self._events) == self._events.maxlen:
            self.truncated = True
        self._events.append(event)

    def entries(self) -> tuple[JobEvent, ...]:
        """Oldest first."""
        return tuple(self._events)
