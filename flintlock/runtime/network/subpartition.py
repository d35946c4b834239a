"""Result subpartitions: the per-consumer queues of a result partition, and views onto them.

A subpartition queues finished buffers for exactly one consumer subtask. Its consumer reads
through a ``ResultSubpartitionView`` (one view at a time for pipelined subpartitions): a local
input channel polls it directly, the network I/O thread polls it for a remote channel.

Invariants of a pipelined subpartition:

* Buffers leave in the order they were added, except priority events (unaligned barriers),
  which are placed after the priority events already at the head and so overtake every queued
  data buffer and ordinary event. ``add`` of a priority event returns copies of the data
  buffers it overtook, in queue order (Flink's in-flight buffers of the subpartition): the
  producing task stores them as output channel state of the barrier's checkpoint. They are
  still delivered as usual, after the barrier. Copies are taken under the lock, so a buffer
  is either overtaken (and copied) or already handed to the consumer, never both.
* An aligned barrier still queued can be converted into a priority one
  (``convert_to_priority``, alternating checkpoints whose alignment timed out): it moves to
  the head, and copies of the data buffers it then overtook are returned the same way.
* ``backlog`` counts the data buffers queued (events are not backlog: they need no credit).
* The listener is told ``notify_data_available`` when the queue goes from empty to non-empty
  and on release or failure; when a priority event arrives it is told
  ``notify_priority_event`` if it has that (optional) method, else ``notify_data_available``.
  Always outside the lock.
* After release every queued buffer has been recycled, and a buffer added later is recycled
  at once: nothing leaks when a consumer goes away.

Threads: the producer's task thread adds; the consumer (task thread or network I/O thread)
polls; both under the subpartition's lock, held for a few deque operations only.
"""

from __future__ import annotations

import abc
import threading
from collections import deque
from dataclasses import dataclass
from typing import Protocol

from flintlock.common.errors import FlintlockError
from flintlock.common.ids import CheckpointId, ResultPartitionId
from flintlock.runtime.network.buffer import Buffer, DataType
from flintlock.runtime.network.events import barrier_id


class PartitionNotFoundError(FlintlockError):
    """No result partition with this id is registered (yet, or any more)."""

    def __init__(self, partition_id: ResultPartitionId) -> None:
        super().__init__(partition_id)
        self.partition_id = partition_id

    def __str__(self) -> str:
        return f"result partition {self.partition_id} not found"


class IllegalPartitionStateError(FlintlockError):
    """A producer-side call that the partition's state does not allow (e.g. add after finish)."""


class SubpartitionAlreadyConsumedError(FlintlockError):
    """A second view was requested on a pipelined subpartition (it can be read only once)."""


class BufferAvailabilityListener(Protocol):
    """Told when a view goes from nothing-to-read to something-to-read, or is released."""

    def notify_data_available(self) -> None: ...


@dataclass(frozen=True, slots=True)
class BufferAndBacklog:
    buffer: Buffer
    backlog: int
    """Data buffers still queued after this one."""
    next_data_type: DataType | None
    """Type of the next queued buffer; None if the queue is empty."""
    sequence_number: int
    """Per view, from 0."""


@dataclass(frozen=True, slots=True)
class SubpartitionStatistics:
    index: int
    queued_buffers: int
    backlog: int
    buffers_added: int
    bytes_added: int
    is_released: bool


class ResultSubpartitionView(abc.ABC):
    """A consumer's cursor on one subpartition."""

    @abc.abstractmethod
    def poll_next(self) -> BufferAndBacklog | None: ...

    @abc.abstractmethod
    def is_available(self, credit: int) -> bool:
        """Whether the next buffer may be sent: any event, or data when ``credit > 0``."""

    @abc.abstractmethod
    def get_backlog(self) -> int: ...

    @abc.abstractmethod
    def release(self) -> None: ...

    @property
    @abc.abstractmethod
    def failure_cause(self) -> BaseException | None: ...

    @property
    @abc.abstractmethod
    def is_released(self) -> bool: ...


class PipelinedSubpartition:
    """A queue of finished buffers read while it is written (PIPELINED[_BOUNDED])."""

    def __init__(self, index: int, on_view_released: ReleaseCallback | None = None) -> None:
        self.index = index
        self._lock = threading.Lock()
        self._queue: deque[Buffer] = deque()  # guarded by _lock
        self._num_priority = 0  # priority events at the head of _queue; guarded by _lock
        self._backlog = 0  # data buffers in _queue; guarded by _lock
        self._listener: BufferAvailabilityListener | None = None
        self._has_view = False
        self._released = False
        self._failure: BaseException | None = None
        self._buffers_added = 0
        self._bytes_added = 0
        self._on_view_released = on_view_released

    def add(self, buffer: Buffer) -> tuple[bytes, ...]:
        """Queues a finished buffer (producer thread); recycles it if already released.

        Returns copies of the data buffers a priority event overtook (empty otherwise)."""
        overtaken: tuple[bytes, ...] = ()
        with self._lock:
            if self._released:
                notify: BufferAvailabilityListener | None = None
                dropped = True
            else:
                dropped = False
                if buffer.data_type is DataType.PRIORITY_EVENT_BUFFER:
                    overtaken = self._overtaken_locked()
                notify = self._enqueue_locked(buffer)
        if dropped:
            buffer.recycle()
        elif notify is not None:
            if buffer.data_type is DataType.PRIORITY_EVENT_BUFFER:
                _notify_priority(notify)
            else:
                notify.notify_data_available()
        return overtaken

    def convert_to_priority(self, checkpoint_id: CheckpointId, priority: Buffer
                            ) -> tuple[bytes, ...] | None:
        """If the barrier of ``checkpoint_id`` is still queued, replace it with ``priority``
        at the head and return copies of the data buffers ahead of it; else None (it was
        sent already) and ``priority`` is recycled."""
        with self._lock:
            position = self._queued_barrier_locked(checkpoint_id)
            if position is None or self._released:
                notify = None
                overtaken = None
            else:
                ahead = list(self._queue)[self._num_priority:position]
                overtaken = tuple(
                    bytes(b.view()) for b in ahead if b.data_type is DataType.DATA_BUFFER
                )
                old = self._queue[position]
                del self._queue[position]
                self._queue.insert(self._num_priority, priority)
                self._num_priority += 1
                notify = self._listener
        if overtaken is None:
            priority.recycle()
            return None
        old.recycle()
        if notify is not None:
            _notify_priority(notify)
        return overtaken

    def _queued_barrier_locked(self, checkpoint_id: CheckpointId) -> int | None:
        for position in range(self._num_priority, len(self._queue)):
            if barrier_id(self._queue[position]) == checkpoint_id:
                return position
        return None

    def has_queued_barrier(self, checkpoint_id: CheckpointId) -> bool:
        with self._lock:
            return self._queued_barrier_locked(checkpoint_id) is not None

    def _overtaken_locked(self) -> tuple[bytes, ...]:
        """Copies of the queued data buffers behind the priority head, in order."""
        if not self._backlog:
            return ()
        return tuple(
            bytes(queued.view()) for queued in self._queue
            if queued.data_type is DataType.DATA_BUFFER
        )

    def _enqueue_locked(self, buffer: Buffer) -> BufferAvailabilityListener | None:
        was_empty = not self._queue
        if buffer.data_type is DataType.PRIORITY_EVENT_BUFFER:
            self._queue.insert(self._num_priority, buffer)
            self._num_priority += 1
            was_empty = True
        else:
            self._queue.append(buffer)
            if buffer.data_type is DataType.DATA_BUFFER:
                self._backlog += 1
        self._buffers_added += 1
        self._bytes_added += buffer.size
        return self._listener if was_empty else None

    def create_view(self, listener: BufferAvailabilityListener) -> PipelinedSubpartitionView:
        with self._lock:
            if self._has_view:
                raise SubpartitionAlreadyConsumedError(
                    f"subpartition {self.index} already has a reader"
                )
            self._has_view = True
            self._listener = listener
            notify = bool(self._queue) or self._released
        view = PipelinedSubpartitionView(self)
        if notify:
            listener.notify_data_available()
        return view

    def poll(self) -> BufferAndBacklog | None:
        with self._lock:
            if not self._queue:
                return None
            buffer = self._queue.popleft()
            if buffer.data_type is DataType.PRIORITY_EVENT_BUFFER:
                self._num_priority -= 1
            elif buffer.data_type is DataType.DATA_BUFFER:
                self._backlog -= 1
            next_type = self._queue[0].data_type if self._queue else None
            return BufferAndBacklog(buffer, self._backlog, next_type, 0)

    def is_available(self, credit: int) -> bool:
        with self._lock:
            if not self._queue:
                return False
            return credit > 0 or self._queue[0].data_type is not DataType.DATA_BUFFER

    @property
    def backlog(self) -> int:
        return self._backlog

    @property
    def failure_cause(self) -> BaseException | None:
        return self._failure

    @property
    def is_released(self) -> bool:
        return self._released

    def release(self, cause: BaseException | None = None) -> None:
        """Drops (recycles) every queued buffer; later adds are recycled at once."""
        with self._lock:
            if self._released:
                return
            self._released = True
            if cause is not None:
                self._failure = cause
            dropped = list(self._queue)
            self._queue.clear()
            self._backlog = self._num_priority = 0
            listener = self._listener
        for buffer in dropped:
            buffer.recycle()
        if listener is not None:
            listener.notify_data_available()

    def view_released(self) -> None:
        self.release()
        if self._on_view_released is not None:
            self._on_view_released(self.index)

    def statistics(self) -> SubpartitionStatistics:
        with self._lock:
            return SubpartitionStatistics(
                self.index, len(self._queue), self._backlog, self._buffers_added,
                self._bytes_added, self._released,
            )


def _notify_priority(listener: BufferAvailabilityListener) -> None:
    """Listeners may implement ``notify_priority_event`` (optional) to hear of priority events."""
    priority = getattr(listener, "notify_priority_event", None)
    if priority is not None:
        priority()
    else:
        listener.notify_data_available()


class ReleaseCallback(Protocol):
    def __call__(self, index: int) -> None: ...


class PipelinedSubpartitionView(ResultSubpartitionView):
    """The single reader of a pipelined subpartition; numbers the buffers it hands out."""

    __slots__ = ("_next_sequence", "_released", "_subpartition")

    def __init__(self, subpartition: PipelinedSubpartition) -> None:
        self._subpartition = subpartition
        self._next_sequence = 0  # owned by the reading thread
        self._released = False

    def poll_next(self) -> BufferAndBacklog | None:
        if self._released:
            return None
        polled = self._subpartition.poll()
        if polled is None:
            return None
        sequence = self._next_sequence
        self._next_sequence += 1
        return BufferAndBacklog(polled.buffer, polled.backlog, polled.next_data_type, sequence)

    def is_available(self, credit: int) -> bool:
        return not self._released and self._subpartition.is_available(credit)

    def get_backlog(self) -> int:
        return self._subpartition.backlog

    def release(self) -> None:
        if not self._released:
            self._released = True
            self._subpartition.view_released()

    @property
    def failure_cause(self) -> BaseException | None:
        return self._subpartition.failure_cause

    @property
    def is_released(self) -> bool:
        return self._released or self._subpartition.is_released
