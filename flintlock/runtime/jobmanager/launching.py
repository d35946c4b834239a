"""What the JobManager needs of whatever starts its TaskManagers (a Spark barrier stage, or
threads in tests). Protocols only; a launcher and its handles are called from the JobManager
thread (``install`` once, before it starts)."""

from __future__ import annotations

from typing import Protocol

from flintlock.runtime.messages import TaskManagerPayload


class AttemptHandle(Protocol):
    """A running set of TaskManagers (one Spark job): polled by the JobManager thread."""

    def failure(self) -> BaseException | None: ...

    def done(self) -> bool: ...

    def cancel(self) -> None: ...

    def wait(self, timeout_s: float) -> bool: ...


class Launcher(Protocol):
    """Starts the TaskManagers of one attempt, all at once. A launcher may also have
    ``install(dispatcher)`` to receive messages of its own on the JobManager's endpoint,
    ``ships_code = False`` when its TaskManagers share the driver's process (nothing of the
    job's code travels), and ``ship_job_files(files)`` to hand the job's packed files
    (``usercode.job_files``) to whatever brings them to the TaskManagers' hosts."""

    def available_slots(self) -> int | None: ...

    def launch(self, payloads: list[TaskManagerPayload], description: str) -> AttemptHandle: ...
