"""What sinks promise after a failure: PyFlink's ``DeliveryGuarantee`` (defined in
``connectors.base``, where PyFlink defines it, and re-exported here for the sink writers)
and the end-of-input rule of flintlock's two-phase sink writers (``EndOfInputRule``, owned by
one writer, on its task thread).
"""

from __future__ import annotations

from flintlock.datastream.connectors.base import DeliveryGuarantee

__all__ = ["DeliveryGuarantee", "EndOfInputRule"]


class EndOfInputRule:
    """Whether a two-phase sink writer publishes, at ``end_input``, what no checkpoint covers.

    With checkpointing on, the final checkpoint after the end of the input publishes the tail
    (publishing it at ``end_input`` would duplicate it if the job failed before that checkpoint
    completed); with checkpointing off, ``end_input`` is the only chance. The runtime says
    which through ``set_checkpointing``; a runtime that does not is guessed from whether the
    writer has seen a checkpoint (restored state or a snapshot) — wrong only for a job whose
    input ends before its first checkpoint, see docs/connectors.md.
    """

    __slots__ = ("_enabled", "_seen_checkpoint")

    def __init__(self) -> None:
        self._enabled: bool | None = None
        self._seen_checkpoint = False

    def set_checkpointing(self, enabled: bool) -> None:
        self._enabled = bool(enabled)

    def saw_checkpoint(self) -> None:
        self._seen_checkpoint = True

    def publish_at_end(self) -> bool:
        if self._enabled is not None:
            return not self._enabled
        return not self._seen_checkpoint
