"""Which input channels of a gate are still open, shared by every barrier handler.

Invariant: a channel that delivered end of partition stays finished; it counts as having
delivered every barrier, current and future, so checkpoints keep completing after some
producers finished. Owned by the task thread (the handler that holds it).
"""

from __future__ import annotations

from collections.abc import Collection

from flintlock.common.ids import ChannelIndex
from flintlock.runtime.checkpoint.failure import StreamCorruptedError
from flintlock.runtime.tasks.checkpointing.actions import UnknownChannelError


class InputChannels:
    """The open/finished status of ``num_channels`` channels, numbered from 0."""

    __slots__ = ("_finished", "num_channels")

    def __init__(self, num_channels: int) -> None:
        if num_channels < 1:
            raise ValueError(f"a barrier handler needs at least one channel, got {num_channels}")
        self.num_channels = num_channels
        self._finished: set[ChannelIndex] = set()  # task thread

    def check_open(self, channel: ChannelIndex) -> None:
        """Raise if ``channel`` does not exist or already delivered end of partition."""
        self.check_exists(channel)
        if channel in self._finished:
            raise StreamCorruptedError(f"channel {channel} delivered an event after its end")

    def check_exists(self, channel: ChannelIndex) -> None:
        if not 0 <= channel < self.num_channels:
            raise UnknownChannelError(channel, self.num_channels)

    def finish(self, channel: ChannelIndex) -> None:
        """Record end of partition on ``channel`` (raises if it already ended)."""
        self.check_open(channel)
        self._finished.add(channel)

    def is_finished(self, channel: ChannelIndex) -> bool:
        return channel in self._finished

    @property
    def finished(self) -> tuple[ChannelIndex, ...]:
        return tuple(sorted(self._finished))

    @property
    def all_finished(self) -> bool:
        return len(self._finished) == self.num_channels

    def all_delivered(self, delivered: Collection[ChannelIndex]) -> bool:
        """Every channel either delivered (is in ``delivered``) or finished."""
        missing = self.num_channels - len(self._finished)
        return sum(1 for ch in delivered if ch not in self._finished) >= missing
