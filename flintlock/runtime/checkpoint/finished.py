"""The state of a task that had already finished when a checkpoint was taken (Flink's
FLIP-147, checkpoints after tasks finished).

A task finishes only after its input ended and the checkpoint of the last barrier it saw
completed, so everything it did is already reflected downstream and committed. Checkpoints
taken later record it with ``FINISHED_TASK`` instead of waiting for an ack it can never send;
a restore from such a checkpoint deploys the task *finished*: a source emits nothing and
ends, other tasks take no state and end with their (equally finished) inputs.
"""

from __future__ import annotations


class FinishedTaskState:
    """Marker state: the task had finished. Picklable, holds no files."""

    __slots__ = ()

    state_size = 0

    def discard(self) -> None:
        """Nothing to delete."""

    def __reduce__(self) -> str:
        return "FINISHED_TASK"

    def __repr__(self) -> str:
        return "FINISHED_TASK"


FINISHED_TASK = FinishedTaskState()
