"""``LocalInputChannel``: reads a subpartition of the same TaskManager straight from its view.

The producer's buffer is handed over without a copy and the consumer recycles it into the
producer's pool, which is what makes a slow local consumer stall its producer: there is no
credit, the pool is the bound. A partition not registered yet (the producer has not started)
is requested again after ``taskmanager.network.request-backoff.initial``, doubling up to
``.max``, then the channel fails with ``PartitionNotFoundError`` (``request_backoff``, the
rule remote channels follow too; the retry waits on the given ``Scheduler``, the
TaskManager's network I/O thread). A priority event (an
unaligned barrier) queued in the subpartition puts this channel at the head of the gate's
queue; the overtaking itself happened in the producer's subpartition.

Threads: ``get_next_buffer`` runs on the consuming task thread; the view's listener
(``notify_data_available``, ``notify_priority_event``) on the producer's thread; the view, the
pending retry and the released flag are guarded by ``_lock``; retries run on the scheduler's
thread.
"""

from __future__ import annotations

import threading

from flintlock.common.config import Configuration
from flintlock.common.ids import ChannelIndex, ResultPartitionId
from flintlock.runtime.network.buffer import DataType
from flintlock.runtime.network.events import is_end_of_partition
from flintlock.runtime.network.input_channel import (
    BufferAndAvailability,
    Cancellable,
    ChannelOwner,
    InputChannel,
    InputChannelError,
    ProducerFailedError,
    Scheduler,
)
from flintlock.runtime.network.partition import (
    PartitionNotFoundError,
    ResultPartitionManager,
    ResultSubpartitionView,
)
from flintlock.runtime.network.request_backoff import RequestBackoff


class LocalInputChannel(InputChannel):
    """Reads a subpartition of this TaskManager straight from its view (no copy, no credit)."""

    def __init__(
        self, gate: ChannelOwner, channel_index: ChannelIndex,
        partition_id: ResultPartitionId, subpartition_index: int,
        partition_manager: ResultPartitionManager, backoff: RequestBackoff, scheduler: Scheduler,
    ) -> None:
        super().__init__(gate, channel_index, partition_id, subpartition_index)
        self._manager = partition_manager
        self._backoff = backoff  # guarded by _lock
        self._scheduler = scheduler
        self._lock = threading.Lock()
        self._view: ResultSubpartitionView | None = None  # guarded by _lock
        self._retry: Cancellable | None = None  # guarded by _lock
        self._released = False  # guarded by _lock

    @classmethod
    def from_config(
        cls, gate: ChannelOwner, channel_index: ChannelIndex, partition_id: ResultPartitionId,
        subpartition_index: int, partition_manager: ResultPartitionManager, config: Configuration,
        scheduler: Scheduler,
    ) -> LocalInputChannel:
        """A channel with the back-off of ``taskmanager.network.request-backoff.*``."""
        return cls(gate, channel_index, partition_id, subpartition_index, partition_manager,
                   RequestBackoff.from_config(config), scheduler)

    def request_subpartition(self) -> None:
        """Creates the view, or schedules a retry while the partition is not registered."""
        with self._lock:
            if self._released or self._view is not None:
                return
            self._retry = None
        try:
            view = self._manager.create_subpartition_view(
                self.partition_id, self.subpartition_index, self
            )
        except PartitionNotFoundError as exc:
            self._retry_or_fail(exc)
            return
        with self._lock:
            released = self._released
            if not released:
                self._view = view
        if released:
            view.release()
            return
        # The view may have told the gate of data before ``_view`` was set (at creation, if
        # the producer was ahead, or from the producer's thread since): a read in between
        # found no view and dropped the channel from the gate's queue, and the subpartition
        # will not notify again while its queue stays non-empty. Announce the channel once
        # more; a read that finds nothing is harmless.
        self.notify_channel_non_empty()

    def _retry_or_fail(self, cause: PartitionNotFoundError) -> None:
        with self._lock:
            if self._released:
                return
            delay_ms = self._backoff.next_delay_ms()
            if delay_ms is not None:
                self._retry = self._scheduler(delay_ms / 1000.0, self.request_subpartition)
        if delay_ms is None:
            self.set_error(cause)

    def notify_data_available(self) -> None:
        """The view's listener (producer's thread): tell the gate."""
        self.notify_channel_non_empty()

    def notify_priority_event(self) -> None:
        """A priority event (unaligned barrier) was queued: the gate serves this channel first."""
        self.gate.notify_channel_non_empty(self, priority=True)

    def get_next_buffer(self) -> BufferAndAvailability | None:
        view = self._view
        if view is None:
            return None
        polled = view.poll_next()
        if polled is None:
            if view.is_released and not self.is_finished:
                self._raise_released(view)
            return None
        buffer = polled.buffer
        self.buffers_received += 1
        self.bytes_received += buffer.size
        if buffer.data_type is not DataType.DATA_BUFFER and is_end_of_partition(buffer):
            view.release()
        return BufferAndAvailability(
            buffer, polled.next_data_type is not None, polled.next_data_type,
            polled.sequence_number,
        )

    def _raise_released(self, view: ResultSubpartitionView) -> None:
        cause = view.failure_cause
        if cause is not None:
            raise ProducerFailedError(
                self.channel_index, f"producer of {self.partition_id} failed: {cause!r}"
            ) from cause
        raise InputChannelError(
            self.channel_index, f"{self.partition_id} was released before its end"
        )

    def resume_consumption(self) -> None:
        """Nothing to do locally: a blocked local channel only stops being read."""

    def release(self) -> None:
        with self._lock:
            if self._released:
                return
            self._released = True
            view, self._view = self._view, None
            retry, self._retry = self._retry, None
        if retry is not None:
            retry.cancel()
        if view is not None:
            view.release()

    @property
    def is_released(self) -> bool:
        return self._released

    def queued_buffers(self) -> int:
        view = self._view
        return 0 if view is None else view.get_backlog()
