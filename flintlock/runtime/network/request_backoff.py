"""The partition-request back-off of an input channel (``taskmanager.network.request-backoff.*``).

A consumer may ask for a subpartition before its producer registered the partition (the
producer's task is still starting, or its TaskManager has not deployed it yet). The channel
then asks again after ``initial`` ms, doubling the wait up to ``max`` ms; a request that found
nothing after waiting ``max`` ms is the last one, and the channel fails with
``PartitionNotFoundError``. An ``initial`` of 0 (or above ``max``) means no retry at all.

One rule for local and remote channels alike (``local_channel``, ``remote_channel``); the
waiting itself is the TaskManager's one timer service, its network I/O thread's
``call_later``. I/O-free; owned by the thread that handles the channel's request failures.
"""

from __future__ import annotations

from flintlock.common.config import Configuration
from flintlock.common.options.network import REQUEST_BACKOFF_INITIAL, REQUEST_BACKOFF_MAX


class RequestBackoff:
    """How long to wait before each further request of one channel, and when to give up."""

    __slots__ = ("_max_ms", "_next_ms")

    def __init__(self, initial_ms: int = 100, max_ms: int = 10_000) -> None:
        self._next_ms = initial_ms
        self._max_ms = max_ms

    @classmethod
    def from_config(cls, config: Configuration) -> RequestBackoff:
        return cls(config.get(REQUEST_BACKOFF_INITIAL), config.get(REQUEST_BACKOFF_MAX))

    def next_delay_ms(self) -> int | None:
        """The wait before the next request, or None: give up (no retry is left)."""
        delay_ms = self._next_ms
        if delay_ms <= 0 or delay_ms > self._max_ms:
            return None
        grown = min(delay_ms * 2, self._max_ms)
        self._next_ms = grown if grown > delay_ms else self._max_ms + 1
        return delay_ms
