"""How many records a stream task hands its chain at once (``StreamTask`` and its input
processor; task thread only)."""

from __future__ import annotations

MAX_BATCH = 4096
BATCH_TARGET_S = 0.02
"""A batch should take about this long, so mail (checkpoints, timers, cancel) waits little."""


class AdaptiveBatch:
    """How many records to hand the chain at once: doubles while a full batch takes less than
    ``BATCH_TARGET_S``; one that took more than twice that scales the size down in
    proportion (a batch stalled by backpressure shrinks at once, so mail and checkpoint
    triggers wait for about one target time; task thread only). A batch shorter than the size
    (a short input buffer) may shrink it but never grows it: quick short batches say nothing
    about how long a full one takes."""

    __slots__ = ("size",)

    def __init__(self) -> None:
        self.size = 64

    def observe(self, seconds: float, records: int | None = None) -> None:
        """A batch of ``records`` (default: the size) took ``seconds``."""
        count = self.size if records is None else records
        if seconds < BATCH_TARGET_S:
            if count >= self.size and self.size < MAX_BATCH:
                self.size *= 2
        elif seconds > 2 * BATCH_TARGET_S and self.size > 1:
            self.size = max(1, min(self.size, int(count * BATCH_TARGET_S / seconds)))
