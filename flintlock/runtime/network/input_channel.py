"""Input channels: one consumed subpartition, as the consuming gate sees it.

``InputChannel`` is what every channel does for its gate, whether it reads a subpartition of
the same TaskManager (``local_channel.LocalInputChannel``) or one of another TaskManager over
TCP (``remote_channel.RemoteInputChannel``): request the subpartition, return its next buffer
with whether more follow (``BufferAndAvailability``), tell the gate when it has data, record
an error that the gate raises on the consuming thread at its next read, release.

* An error set from any thread (``set_error``, the first one wins) is raised by
  ``check_error`` as an ``InputChannelError`` whose ``__cause__`` is the original error
  (``ProducerFailedError`` when the producing subtask failed).
* Only a channel with a queue of its own (remote) can convert a queued aligned barrier into a
  priority event or report the buffers a priority event overtook; the defaults say it cannot.

``Scheduler`` runs the channels' retries later (a partition not registered yet is requested
again after a back-off, ``request_backoff``): in a TaskManager it is the one timer service of
its data plane, the network I/O thread's ``IOThread.call_later``; tests pass a manual one.

Threads: ``get_next_buffer`` and the counters belong to the consuming task thread;
``notify_channel_non_empty`` and ``set_error`` may be called from any thread.
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from flintlock.common.errors import FlintlockError
from flintlock.common.ids import ChannelIndex, ResultPartitionId
from flintlock.runtime.network.barriers import CheckpointBarrier
from flintlock.runtime.network.buffer import Buffer, DataType, LocalBufferPool


class InputChannelError(FlintlockError):
    """Reading a channel failed; ``__cause__`` holds the original error."""

    def __init__(self, channel_index: int, message: str) -> None:
        super().__init__(channel_index, message)
        self.channel_index = channel_index
        self.message = message

    def __str__(self) -> str:
        return f"input channel {self.channel_index}: {self.message}"


class ProducerFailedError(InputChannelError):
    """The producing subtask failed; ``__cause__`` is its error."""


@dataclass(frozen=True, slots=True)
class BufferAndAvailability:
    buffer: Buffer
    more_available: bool
    next_data_type: DataType | None
    sequence_number: int


@dataclass(frozen=True, slots=True)
class InputChannelStatistics:
    channel_index: int
    buffers_received: int
    bytes_received: int
    queued_buffers: int
    is_finished: bool
    is_released: bool


class Cancellable(Protocol):
    def cancel(self) -> None: ...


Scheduler = Callable[[float, Callable[[], None]], Cancellable]
"""Runs a callback after a delay in seconds (on some other thread); returns a handle."""


class ChannelOwner(Protocol):
    """The gate as its channels see it (``gate.SingleInputGate`` is the one implementation)."""

    @property
    def buffer_pool(self) -> LocalBufferPool:
        """The gate's floating buffers (remote channels borrow them)."""

    def notify_channel_non_empty(self, channel: InputChannel, priority: bool = False) -> None:
        """``channel`` has data (any thread); with ``priority``, serve it before the others."""

    def announce_barrier(self, channel: InputChannel, barrier: object) -> None:
        """``channel`` queued an aligned barrier behind data (network I/O thread)."""


class InputChannel(abc.ABC):
    """One consumed subpartition, as seen by the consuming gate."""

    def __init__(
        self, gate: ChannelOwner, channel_index: ChannelIndex,
        partition_id: ResultPartitionId, subpartition_index: int,
    ) -> None:
        self.gate = gate
        self.channel_index = channel_index
        self.partition_id = partition_id
        self.subpartition_index = subpartition_index
        self._error: BaseException | None = None  # set from any thread, read by the task
        self.buffers_received = 0  # task thread
        self.bytes_received = 0  # task thread
        self.is_finished = False  # end of partition returned; task thread

    @abc.abstractmethod
    def request_subpartition(self) -> None: ...

    @abc.abstractmethod
    def get_next_buffer(self) -> BufferAndAvailability | None: ...

    @abc.abstractmethod
    def resume_consumption(self) -> None: ...

    @abc.abstractmethod
    def release(self) -> None: ...

    @property
    @abc.abstractmethod
    def is_released(self) -> bool: ...

    def notify_channel_non_empty(self) -> None:
        self.gate.notify_channel_non_empty(self)

    def set_error(self, cause: BaseException) -> None:
        """Records ``cause`` (the first one wins); the gate raises it at the next read."""
        if self._error is None:
            self._error = cause
        self.notify_channel_non_empty()

    @property
    def has_error(self) -> bool:
        return self._error is not None

    def check_error(self) -> None:
        error = self._error
        if error is None:
            return
        if isinstance(error, InputChannelError):
            raise error
        raise InputChannelError(self.channel_index, f"{type(error).__name__}: {error}") from error

    def queued_buffers(self) -> int:
        return 0

    def convert_barrier_to_priority(self, barrier: CheckpointBarrier) -> bool:
        """If this channel's own queue still holds the aligned barrier of
        ``barrier.checkpoint_id``, replace it by ``barrier`` (its unaligned form) queued as a
        priority event; True if it did. Only a remote channel has such a queue: a local
        channel reads its producer's subpartition, where the producer converts."""
        return False

    def take_overtaken(self) -> tuple[bytes, ...]:
        """Copies of the data buffers the priority event just returned by
        ``get_next_buffer`` overtook in this channel's own queue (task thread). A local
        channel has no queue of its own: its producer's subpartition did the overtaking."""
        return ()

    def statistics(self) -> InputChannelStatistics:
        return InputChannelStatistics(
            self.channel_index, self.buffers_received, self.bytes_received,
            self.queued_buffers(), self.is_finished, self.is_released,
        )
