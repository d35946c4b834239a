"""Timeoutable aligned barriers on the sender side (alternating checkpoints; Flink 1.14's
``alignedBarrierTimeout``): an aligned barrier that carries an alignment timeout and is still
queued in an output subpartition when the timeout passes is converted into a priority
(unaligned) barrier there, so it overtakes the backpressured queue instead of waiting behind
it; the buffers it overtook become output channel state of the checkpoint.

Design note. After the task broadcast such a barrier it cannot tell yet whether its snapshot
will need output channel state, so the checkpoint is opened in the ``ChannelStateCapture``
and its asynchronous part held back. A watch re-checks (as mail, on the task thread) every
``CHECK_INTERVAL_MS``: once no subpartition queues the barrier any more it is released as
an aligned snapshot; at the deadline (the barrier's timestamp plus its timeout, wall clock)
the barriers still queued are converted and the snapshot released with their overtaken
buffers. Downstream, a priority barrier with unaligned options makes an alternating handler
switch (or start) unaligned. A checkpoint aborted meanwhile stops its watch.

Threads: everything runs on the task thread; the scheduler's timer threads only put mail.
"""

from __future__ import annotations

from collections.abc import Callable, MutableMapping, Sequence

from flintlock.common.clock import Clock
from flintlock.common.ids import CheckpointId
from flintlock.runtime.checkpoint.barriers import AlignmentType, CheckpointBarrier
from flintlock.runtime.network.partition import ResultPartition
from flintlock.runtime.tasks.channel_state_io import ChannelStateCapture

CHECK_INTERVAL_MS = 10.0

Schedule = Callable[[float, Callable[[], None]], None]
"""Runs a callback on the task thread after a delay in seconds."""


def is_timeoutable(barrier: CheckpointBarrier) -> bool:
    """An aligned checkpoint barrier that may turn unaligned after its timeout."""
    options = barrier.options
    return (options.alignment is AlignmentType.ALIGNED and not options.is_savepoint
            and options.alignment_timeout_ms is not None)


class TimeoutableBarriers:
    """Watches the timeoutable barriers this task sent (see the module docstring)."""

    def __init__(self, partitions: Sequence[ResultPartition], capture: ChannelStateCapture,
                 clock: Clock, schedule: Schedule) -> None:
        self._partitions = partitions
        self._capture = capture
        self._clock = clock
        self._schedule = schedule

    def watch(self, barrier: CheckpointBarrier, metrics: MutableMapping[str, float]) -> None:
        """``barrier`` was broadcast and its checkpoint deferred in the capture."""
        timeout = barrier.options.alignment_timeout_ms
        assert timeout is not None
        deadline = barrier.timestamp + timeout
        self._check(barrier, deadline, metrics)

    def _check(self, barrier: CheckpointBarrier, deadline: float,
               metrics: MutableMapping[str, float]) -> None:
        checkpoint_id = barrier.checkpoint_id
        if not self._capture.is_open(checkpoint_id):
            return
        if not any(p.has_queued_barrier(checkpoint_id) for p in self._partitions):
            self._capture.submit_now(checkpoint_id)
            return
        now = self._clock.wall_ms()
        if now >= deadline:
            self._convert(barrier, metrics)
            return
        delay_ms = min(CHECK_INTERVAL_MS, deadline - now)
        self._schedule(delay_ms / 1000.0, lambda: self._check(barrier, deadline, metrics))

    def _convert(self, barrier: CheckpointBarrier, metrics: MutableMapping[str, float]) -> None:
        unaligned = barrier.with_options(barrier.options.to_unaligned())
        checkpoint_id = CheckpointId(barrier.checkpoint_id)
        offset = 0
        converted: dict[int, tuple[bytes, ...]] = {}
        for partition in self._partitions:
            for sub, copies in partition.convert_barrier_to_priority(unaligned).items():
                converted[offset + sub] = copies
            offset += partition.num_subpartitions
        if converted:
            metrics["unaligned"] = 1.0
        self._capture.add_outputs(checkpoint_id, converted)
        self._capture.submit_now(checkpoint_id)
