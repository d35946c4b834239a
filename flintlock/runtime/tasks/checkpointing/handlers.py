"""Which barrier handler a subtask's input gate gets, as Flink picks it (DESIGN.md §5).

=================================  ==========================================================
mode / flags                        handler
=================================  ==========================================================
AT_LEAST_ONCE                       ``BarrierTracker`` (never blocks)
EXACTLY_ONCE                        ``BarrierAligner`` with ``AlignmentPolicy.ALIGNED``
EXACTLY_ONCE, unaligned             ``BarrierAligner`` with ``AlignmentPolicy.UNALIGNED``
EXACTLY_ONCE, unaligned, timeout>0  ``BarrierAligner`` with ``AlignmentPolicy.ALTERNATING``
=================================  ==========================================================

Savepoints are aligned under every exactly-once policy. The handler is the input half of the
subtask's checkpoint machine (``machine``); ``flintlock.runtime.checkpoint.alignment`` re-exports
this factory for callers of the handlers alone.
"""

from __future__ import annotations

from flintlock.common.checkpointing import CheckpointingMode
from flintlock.common.clock import SYSTEM_CLOCK, Clock
from flintlock.common.errors import InvalidConfigValueError
from flintlock.runtime.tasks.checkpointing.aligner import AlignmentPolicy, BarrierAligner
from flintlock.runtime.tasks.checkpointing.tracker import BarrierTracker

_UNALIGNED_KEY = "execution.checkpointing.unaligned.enabled"
_TIMEOUT_KEY = "execution.checkpointing.aligned-checkpoint-timeout"


def create_barrier_handler(
    num_channels: int,
    mode: CheckpointingMode,
    *,
    unaligned: bool = False,
    aligned_timeout_ms: float | None = None,
    clock: Clock | None = None,
) -> BarrierTracker | BarrierAligner:
    """The handler for a gate of ``num_channels`` channels under ``mode``.

    ``aligned_timeout_ms`` only matters with ``unaligned``: None or 0 means unaligned from
    the first barrier, a positive value means aligned first, unaligned after that long.
    """
    clock = clock or SYSTEM_CLOCK
    if aligned_timeout_ms is not None and aligned_timeout_ms < 0:
        raise InvalidConfigValueError(_TIMEOUT_KEY, aligned_timeout_ms, "a duration >= 0")
    if mode is CheckpointingMode.AT_LEAST_ONCE:
        if unaligned:
            raise InvalidConfigValueError(
                _UNALIGNED_KEY, True, "false: unaligned checkpoints need EXACTLY_ONCE mode"
            )
        return BarrierTracker(num_channels, clock)
    if not unaligned:
        return BarrierAligner(num_channels, AlignmentPolicy.ALIGNED, clock=clock)
    if not aligned_timeout_ms:
        return BarrierAligner(num_channels, AlignmentPolicy.UNALIGNED, clock=clock)
    return BarrierAligner(
        num_channels,
        AlignmentPolicy.ALTERNATING,
        alignment_timeout_ms=aligned_timeout_ms,
        clock=clock,
    )
