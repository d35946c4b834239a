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

Receiver side (``ReceivedBarriers``). An aligned barrier can also have left its producer
before the deadline and wait in a remote input channel's own queue, behind buffers the slow
task has not read yet; the sender can no longer convert it there. The remote channel announces
every barrier it queues (on the network I/O thread, a local stand-in for Flink's barrier
announcement events); for a timeoutable one the task arms a timer at the same deadline, and
then every remote channel still queueing that barrier replaces it by its unaligned form at the
priority head. The buffers it overtakes are counted by the channel and captured as in-flight
input by the task, exactly as for a barrier that arrived unaligned.

Threads: everything runs on the task thread; the scheduler's timer threads and the network
I/O threads only put mail.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, MutableMapping, Sequence

from flintlock.common.clock import Clock
from flintlock.common.ids import CheckpointId
from flintlock.runtime.network.barriers import AlignmentType, CheckpointBarrier
from flintlock.runtime.network.input_channel import InputChannel
from flintlock.runtime.network.partition import ResultPartition
from flintlock.runtime.tasks.channel_state_io import ChannelStateCapture

log = logging.getLogger(__name__)

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


class ReceivedBarriers:
    """Converts timed-out aligned barriers still queued in remote input channels (see the
    module docstring). ``post`` puts an action in the task's mailbox (any thread)."""

    def __init__(self, channels: Sequence[InputChannel], clock: Clock, schedule: Schedule,
                 post: Callable[[Callable[[], None]], object]) -> None:
        self._channels = channels
        self._clock = clock
        self._schedule = schedule
        self._post = post
        self._armed_up_to = 0  # task thread: the newest checkpoint with a conversion timer
        self.converted = 0  # task thread: barriers converted so far (statistics, tests)

    def on_announced(self, channel_index: int, barrier: object) -> None:
        """A remote channel queued ``barrier`` (network I/O thread)."""
        if isinstance(barrier, CheckpointBarrier) and is_timeoutable(barrier):
            self._post(lambda: self._arm(barrier))

    def _arm(self, barrier: CheckpointBarrier) -> None:
        if barrier.checkpoint_id <= self._armed_up_to:
            return
        self._armed_up_to = barrier.checkpoint_id
        timeout = barrier.options.alignment_timeout_ms
        assert timeout is not None
        delay_ms = max(0.0, barrier.timestamp + timeout - self._clock.wall_ms())
        self._schedule(delay_ms / 1000.0, lambda: self._convert(barrier))

    def _convert(self, barrier: CheckpointBarrier) -> None:
        unaligned = barrier.with_options(barrier.options.to_unaligned())
        for channel in self._channels:
            if channel.convert_barrier_to_priority(unaligned):
                self.converted += 1
                log.debug("checkpoint %d: aligned barrier converted in input channel %d",
                          barrier.checkpoint_id, channel.channel_index)
