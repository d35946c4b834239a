"""Channel selectors: which subpartition(s) of a result partition a record goes to.

One selector per record writer (job edge), set up with the number of channels (consumer
subtasks) and called once per record on the task thread, so each is a few attribute reads and
at most one dict lookup. They hold per-writer state (the round-robin position, the key cache)
and are not shared between threads.

* forward — the one consumer with the same index (one channel).
* rebalance — round robin, starting at a random channel (from an injectable ``random.Random``)
  so that parallel producers do not all start on channel 0.
* rescale — round robin from channel 0 over this producer's own consumers (the graph gives a
  rescaling producer only its local subset of consumers as channels).
* key group — key selector → ``assign_to_key_group`` → ``operator_index_for_key_group``; the
  channel of recently seen keys is cached in a bounded dict because hashing is per record
  (the ``RecordWriter`` has an inlined fast path for this selector with its own cache).
* broadcast — every channel (``is_broadcast``; the writer then broadcasts each record).
* custom — a user partitioner ``(key, num_partitions) -> int``; an index out of range is a
  typed error naming the partitioner.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable
from typing import Any

from flintlock.common.errors import FlintlockError
from flintlock.runtime.network.key_getters import plain_key_getter
from flintlock.runtime.state.keygroups import key_group_index

KeySelector = Callable[[Any], Any]


class InvalidChannelError(FlintlockError):
    """A custom partitioner returned a channel that does not exist."""

    def __init__(self, partitioner: str, channel: object, num_channels: int) -> None:
        super().__init__(partitioner, channel, num_channels)
        self.partitioner = partitioner
        self.channel = channel
        self.num_channels = num_channels

    def __str__(self) -> str:
        return (
            f"partitioner {self.partitioner} returned {self.channel!r}, not an index in "
            f"[0, {self.num_channels})"
        )


class ChannelSelectorSetupError(FlintlockError):
    """A selector cannot serve this number of channels (e.g. forward to several)."""


class ChannelSelector:
    """Base class: ``setup`` once, then ``select_channel`` per record."""

    is_broadcast = False

    def __init__(self) -> None:
        self.num_channels = 0

    def setup(self, num_channels: int) -> None:
        if num_channels < 1:
            raise ChannelSelectorSetupError("a record writer needs at least one channel")
        self.num_channels = num_channels

    def select_channel(self, record: Any) -> int:
        raise NotImplementedError

    def __repr__(self) -> str:
        return type(self).__name__


class ForwardSelector(ChannelSelector):
    def setup(self, num_channels: int) -> None:
        if num_channels != 1:
            raise ChannelSelectorSetupError(
                f"forward needs exactly one channel (equal parallelism), got {num_channels}"
            )
        super().setup(num_channels)

    def select_channel(self, record: Any) -> int:
        return 0


class RebalanceSelector(ChannelSelector):
    def __init__(self, rng: random.Random | None = None) -> None:
        super().__init__()
        self._rng = rng or random.Random()
        self._next = 0

    def setup(self, num_channels: int) -> None:
        super().setup(num_channels)
        self._next = self._rng.randrange(num_channels) - 1

    def select_channel(self, record: Any) -> int:
        channel = self._next + 1
        if channel >= self.num_channels:
            channel = 0
        self._next = channel
        return channel


class RescaleSelector(ChannelSelector):
    def __init__(self) -> None:
        super().__init__()
        self._next = -1

    def select_channel(self, record: Any) -> int:
        channel = self._next + 1
        if channel >= self.num_channels:
            channel = 0
        self._next = channel
        return channel


class BroadcastSelector(ChannelSelector):
    is_broadcast = True

    def select_channel(self, record: Any) -> int:
        raise ChannelSelectorSetupError("a broadcast selector selects every channel")


class KeyGroupSelector(ChannelSelector):
    """Hash partitioning by key group, with a bounded key → channel cache."""

    def __init__(
        self, key_selector: KeySelector, max_parallelism: int, cache_size: int = 65_536
    ) -> None:
        super().__init__()
        self.key_selector = plain_key_getter(key_selector)  # a field getter in C if it is one
        self.max_parallelism = max_parallelism
        self._cache: dict[Hashable, int] = {}
        self.cache_size = cache_size

    def setup(self, num_channels: int) -> None:
        if num_channels > self.max_parallelism:
            raise ChannelSelectorSetupError(
                f"{num_channels} channels exceed the max parallelism {self.max_parallelism}"
            )
        super().setup(num_channels)
        self._cache.clear()

    def select_channel(self, record: Any) -> int:
        key = self.key_selector(record)
        try:
            return self._cache[key]
        except KeyError:
            pass
        except TypeError:
            return self.channel_for_key(key)
        channel = self.channel_for_key(key)
        if len(self._cache) >= self.cache_size:
            self._cache.clear()
        self._cache[key] = channel
        return channel

    def channel_for_key(self, key: Any) -> int:
        """``operator_index_for_key_group(assign_to_key_group(key))`` without its wrappers:
        every key of a job with more distinct keys per writer than the cache holds misses
        it, so this runs once per record there."""
        max_parallelism = self.max_parallelism
        return key_group_index(key, max_parallelism) * self.num_channels // max_parallelism


class CustomPartitionerSelector(ChannelSelector):
    """``partitioner(key, num_partitions) -> int`` on the selected key (PyFlink's
    ``partition_custom``)."""

    def __init__(self, partitioner: Callable[[Any, int], int], key_selector: KeySelector) -> None:
        super().__init__()
        self._partitioner = partitioner
        self._key_selector = key_selector

    def select_channel(self, record: Any) -> int:
        channel = self._partitioner(self._key_selector(record), self.num_channels)
        if not isinstance(channel, int) or not 0 <= channel < self.num_channels:
            name = getattr(self._partitioner, "__qualname__", repr(self._partitioner))
            raise InvalidChannelError(name, channel, self.num_channels)
        return channel
