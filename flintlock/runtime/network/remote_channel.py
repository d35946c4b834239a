"""``RemoteInputChannel``: an input channel fed over a data connection from another TaskManager.

The channel owns ``buffers-per-channel`` exclusive segments (taken from the NetworkBufferPool
when it first requests its subpartition) and may hold floating buffers borrowed from its gate's
``buffer_pool``. What it may hold and announce is decided by its ``ReceiverCreditLedger``
(credit.py); this class only carries the ledger's actions out: it keeps the empty buffers the
ledger counts, asks the pool for floating ones, returns surplus ones and asks the client
handler to send ``AddCredit``.

Invariants:

- The ledger's counts equal the lengths of ``_exclusive`` / ``_floating`` (empty buffers);
  both change together under ``_lock``.
- Buffers arrive with consecutive sequence numbers from 0; a gap or reorder fails the channel
  (``BufferReorderingError``).
- A priority event (unaligned barrier) is queued after the priority events already at the
  head of ``_received``, overtaking every buffer received before it; the number of data
  buffers it overtook is recorded at arrival (under ``_lock``, on the I/O thread). When the
  task takes it, exactly those buffers — the first that many data buffers queued, since
  nothing behind a priority head is consumed before it — are copied for ``take_overtaken``
  (task thread). Buffers arriving after the barrier are never counted. The overtaken buffers
  stay queued and are consumed as usual after the barrier.
- PARTITION_NOT_FOUND is retried after ``request-backoff.initial``, doubling up to ``.max``;
  then the channel fails with ``PartitionNotFoundError``. A failed producer fails the channel
  with ``ProducerFailedError`` whose ``__cause__`` is the producer's error.
- ``release`` returns every segment: queued buffers are recycled, empty exclusive segments go
  back to the NetworkBufferPool (and any recycled later, too), floating ones to the gate pool.

Threads: ``request_subpartition``/``get_next_buffer`` run on the consuming task thread;
``take_target``/``on_buffer``/``on_error``/``on_partition_not_found`` on the network I/O
thread; the exclusive recycler on whichever thread recycles a buffer; pool listeners on the
recycling thread. Shared state is guarded by ``_lock``, never held while calling out.
"""

from __future__ import annotations

import itertools
import threading
from collections import deque
from collections.abc import Callable
from functools import partial
from typing import Protocol

from flintlock.common.errors import FlintlockError
from flintlock.common.ids import ChannelIndex, ResultPartitionId
from flintlock.runtime.network.barriers import CheckpointBarrier
from flintlock.runtime.network.buffer import (
    FREEING_RECYCLER,
    Buffer,
    BufferPoolDestroyedError,
    DataType,
    LocalBufferPool,
    NetworkBufferPool,
)
from flintlock.runtime.network.client import ClientHandler
from flintlock.runtime.network.credit import (
    AnnounceCredit,
    AwaitFloatingBuffer,
    BacklogAnnounced,
    BufferKind,
    ChannelReleased,
    CreditAction,
    CreditEvent,
    CreditStatistics,
    FloatingBufferAvailable,
    FloatingBuffersGranted,
    ReceiverCreditLedger,
    RequestFloatingBuffers,
    ReturnExclusiveBuffers,
    ReturnFloatingBuffers,
)
from flintlock.runtime.network.events import (
    barrier_id,
    decode_event,
    encode_event,
    is_end_of_partition,
)
from flintlock.runtime.network.gate import SingleInputGate
from flintlock.runtime.network.input_channel import (
    BufferAndAvailability,
    InputChannel,
    ProducerFailedError,
)
from flintlock.runtime.network.io_thread import IOThread
from flintlock.runtime.network.partition import PartitionNotFoundError
from flintlock.runtime.network.protocol import (
    MalformedFrameError,
    PartitionRequest,
    PayloadTarget,
)
from flintlock.runtime.network.request_backoff import RequestBackoff

DataAddress = tuple[str, int]
_receiver_ids = itertools.count(1)


def next_receiver_id() -> int:
    """Receiver ids are unique within this process, so unique on each of its connections."""
    return next(_receiver_ids)


class BufferReorderingError(FlintlockError):
    """A buffer arrived out of sequence: lost, duplicated or reordered on the connection."""

    def __init__(self, expected: int, actual: int) -> None:
        super().__init__(expected, actual)
        self.expected = expected
        self.actual = actual

    def __str__(self) -> str:
        return f"buffer out of sequence: expected number {self.expected}, got {self.actual}"


class ConnectionProvider(Protocol):
    """The transport, as a channel sees it."""

    io: IOThread

    def client_for(self, address: DataAddress) -> ClientHandler: ...


class RemoteInputChannel(InputChannel):
    """Reads one subpartition of another TaskManager through a shared data connection."""

    def __init__(
        self, gate: SingleInputGate, channel_index: ChannelIndex,
        partition_id: ResultPartitionId, subpartition_index: int,
        connections: ConnectionProvider, producer_address: DataAddress,
        network_pool: NetworkBufferPool, initial_credit: int,
        backoff_initial_ms: int = 100, backoff_max_ms: int = 10_000,
    ) -> None:
        super().__init__(gate, channel_index, partition_id, subpartition_index)
        self.receiver_id = next_receiver_id()
        self.producer_address = producer_address
        self._connections = connections
        self._network_pool = network_pool
        self._lock = threading.Lock()
        self._ledger = ReceiverCreditLedger(initial_credit)  # guarded by _lock
        self._exclusive: deque[bytearray] = deque()  # empty exclusive segments; _lock
        self._floating: deque[Buffer] = deque()  # empty floating buffers; _lock
        self._received: deque[Buffer] = deque()  # _lock
        self._num_priority = 0  # priority events at the head of _received; _lock
        self._overtaken_counts: deque[int] = deque()  # per queued priority event; _lock
        self._overtaken: tuple[bytes, ...] = ()  # of the priority event last taken; task
        self._expected_sequence = 0  # I/O thread
        self._consumed = 0  # task thread
        self._backoff = RequestBackoff(backoff_initial_ms, backoff_max_ms)  # I/O thread
        self._client: ClientHandler | None = None
        self._segments_taken = False
        self._released = False  # _lock
        self._end_received = False  # I/O thread
        self._recycler = _ExclusiveRecycler(self)
        self.partition_requests = 0  # requests sent so far; I/O thread
        self.retries_scheduled = 0  # PARTITION_NOT_FOUND answers that led to a retry; I/O

    # -- task thread --------------------------------------------------------------------------

    def request_subpartition(self) -> None:
        with self._lock:
            if self._released or self._client is not None:
                return
        if not self._segments_taken:
            segments = self._network_pool.request_exclusive_segments(self._ledger.initial_credit)
            self._segments_taken = True
            with self._lock:
                self._exclusive.extend(segments)
        client = self._connections.client_for(self.producer_address)
        self._client = client
        client.request(self)

    def get_next_buffer(self) -> BufferAndAvailability | None:
        with self._lock:
            if not self._received:
                return None
            buffer = self._received.popleft()
            if buffer.data_type is DataType.PRIORITY_EVENT_BUFFER:
                self._num_priority -= 1
                self._overtaken = self._copy_overtaken_locked(self._overtaken_counts.popleft())
            more = bool(self._received)
            next_type = self._received[0].data_type if more else None
        sequence = self._consumed
        self._consumed += 1
        self.buffers_received += 1
        self.bytes_received += buffer.size
        return BufferAndAvailability(buffer, more, next_type, sequence)

    def _copy_overtaken_locked(self, count: int) -> tuple[bytes, ...]:
        if count == 0:
            return ()
        copies: list[bytes] = []
        for queued in self._received:
            if queued.data_type is DataType.DATA_BUFFER:
                copies.append(bytes(queued.view()))
                if len(copies) == count:
                    break
        return tuple(copies)

    def take_overtaken(self) -> tuple[bytes, ...]:
        overtaken, self._overtaken = self._overtaken, ()
        return overtaken

    def resume_consumption(self) -> None:
        """Nothing to send: a blocked channel's data simply waits in ``_received``."""

    def release(self) -> None:
        with self._lock:
            if self._released:
                return
            self._released = True
            received = list(self._received)
            self._received.clear()
            self._num_priority = 0
            self._overtaken_counts.clear()
            effects = self._apply_locked(self._ledger.handle(ChannelReleased()))
        self._run(effects)
        for buffer in received:
            buffer.recycle()
        if self._client is not None:
            self._client.cancel(self)

    @property
    def is_released(self) -> bool:
        return self._released

    def queued_buffers(self) -> int:
        return len(self._received)

    def credit_statistics(self) -> CreditStatistics:
        with self._lock:
            return self._ledger.statistics()

    # -- network I/O thread -------------------------------------------------------------------

    def partition_request(self) -> PartitionRequest:
        self.partition_requests += 1
        return PartitionRequest(
            self.partition_id, self.subpartition_index, self.receiver_id,
            self._ledger.initial_credit,
        )

    def announce_credit(self) -> int:
        with self._lock:
            return self._ledger.announce()

    def take_target(self, data_type: DataType, size: int) -> tuple[PayloadTarget, Buffer] | None:
        """Where an arriving payload goes: a data buffer into an empty exclusive or floating
        buffer (filled in place), an event into a fresh buffer grown as its bytes arrive (its
        announced size is not allocated ahead of them)."""
        if data_type is not DataType.DATA_BUFFER:
            event = Buffer(bytearray(), FREEING_RECYCLER, 0, data_type)
            return event.segment, event
        with self._lock:
            if self._released:
                return None
            if self._ledger.take_buffer() is BufferKind.FLOATING:
                buffer = self._floating.popleft()
                buffer.data_type = DataType.DATA_BUFFER
            else:
                buffer = Buffer(self._exclusive.popleft(), self._recycler)
        if size > len(buffer.segment):
            buffer.recycle()
            raise MalformedFrameError(f"a {size}-byte buffer exceeds the segment size")
        return memoryview(buffer.segment)[:size], buffer

    def on_buffer(self, buffer: Buffer, sequence_number: int, backlog: int) -> None:
        # Read before queueing: once queued, the task may consume and recycle the buffer.
        end_of_partition = False
        announced: object | None = None
        if buffer.data_type is DataType.EVENT_BUFFER:
            end_of_partition = is_end_of_partition(buffer)
            if not end_of_partition and barrier_id(buffer) is not None:
                announced = decode_event(buffer)
        with self._lock:
            released = self._released
            in_order = sequence_number == self._expected_sequence
            priority = buffer.data_type is DataType.PRIORITY_EVENT_BUFFER
            if not released and in_order:
                self._expected_sequence += 1
                was_empty = not self._received
                if priority:
                    self._enqueue_priority_locked(buffer)
                else:
                    self._received.append(buffer)
                actions = self._ledger.backlog_announced(backlog)
                effects = self._apply_locked(actions) if actions else []
        if released or not in_order:
            buffer.recycle()
            if not in_order and not released:
                self.on_error(BufferReorderingError(self._expected_sequence, sequence_number))
            return
        if end_of_partition:
            self._end_received = True
        self._run(effects)
        if announced is not None:
            self.gate.announce_barrier(self, announced)
        if priority:
            self.gate.notify_channel_non_empty(self, priority=True)
        elif was_empty:
            self.notify_channel_non_empty()

    def convert_barrier_to_priority(self, barrier: CheckpointBarrier) -> bool:
        """Receiver-side conversion of a timed-out aligned barrier (alternating checkpoints):
        the aligned barrier of ``barrier.checkpoint_id`` still queued here behind data is
        replaced by ``barrier`` (unaligned) at the priority head. It overtakes the data
        buffers that were ahead of it, and only those (``take_overtaken``): the ones behind
        it came after the barrier and belong to the next checkpoint."""
        checkpoint_id = barrier.checkpoint_id
        with self._lock:
            if self._released:
                return False
            received = self._received
            for position in range(self._num_priority, len(received)):
                queued = received[position]
                if (queued.data_type is DataType.EVENT_BUFFER
                        and barrier_id(queued) == checkpoint_id):
                    break
            else:
                return False
            del received[position]
            self._enqueue_priority_locked(encode_event(barrier), ahead_of=position)
        queued.recycle()
        self.gate.notify_channel_non_empty(self, priority=True)
        return True

    def _enqueue_priority_locked(self, buffer: Buffer, ahead_of: int | None = None) -> None:
        """Puts a priority event ahead of everything but earlier priority events and
        records how many data buffers it overtook: those queued before position ``ahead_of``
        (all of them by default: an arriving event is behind everything queued)."""
        received = self._received
        end = len(received) if ahead_of is None else ahead_of
        overtaken = sum(1 for index in range(self._num_priority, end)
                        if received[index].data_type is DataType.DATA_BUFFER)
        self._received.insert(self._num_priority, buffer)
        self._num_priority += 1
        self._overtaken_counts.append(overtaken)

    def on_backlog(self, backlog: int) -> None:
        """The sender has ``backlog`` data buffers and no credit (BACKLOG_ANNOUNCEMENT)."""
        self._handle(BacklogAnnounced(backlog))

    def on_error(self, cause: BaseException) -> None:
        if not self._end_received and not self._released:
            self.set_error(cause)

    def on_producer_failed(self, cause: BaseException) -> None:
        error = ProducerFailedError(
            self.channel_index, f"producer of {self.partition_id} failed: {cause!r}"
        )
        error.__cause__ = cause
        self.on_error(error)

    def on_partition_not_found(self, cause: BaseException) -> None:
        if self._released:
            return
        delay_ms = self._backoff.next_delay_ms()
        if delay_ms is None:
            error = PartitionNotFoundError(self.partition_id)
            error.__cause__ = cause
            self.set_error(error)
            return
        client = self._client
        assert client is not None
        self.retries_scheduled += 1
        self._connections.io.call_later(delay_ms / 1000.0, lambda: client.request(self))

    # -- recycling and the ledger's actions -----------------------------------------------------

    def exclusive_recycled(self, segment: bytearray) -> None:
        with self._lock:
            released = self._released
            actions = self._ledger.exclusive_recycled()
            if not released:
                self._exclusive.append(segment)
            effects = self._apply_locked(actions)
        if released:  # the ledger said ReturnExclusiveBuffers(1): this segment goes home
            self._network_pool.recycle_exclusive_segments([segment])
        self._run(effects)

    def _handle(self, event: CreditEvent) -> None:
        with self._lock:
            effects = self._apply_locked(self._ledger.handle(event))
        self._run(effects)

    def _apply_locked(self, actions: list[CreditAction]) -> list[Callable[[], None]]:
        """Moves empty buffers as the ledger says; returns the calls to make unlocked."""
        effects: list[Callable[[], None]] = []
        for action in actions:
            if isinstance(action, AnnounceCredit) and self._client is not None:
                effects.append(partial(self._client.notify_credit, self))
            elif isinstance(action, RequestFloatingBuffers):
                effects.append(partial(self._request_floating, action.count))
            elif isinstance(action, AwaitFloatingBuffer):
                effects.append(self._await_floating)
            elif isinstance(action, ReturnFloatingBuffers):
                surplus = [self._floating.popleft() for _ in range(action.count)]
                effects.extend(buffer.recycle for buffer in surplus)
            elif isinstance(action, ReturnExclusiveBuffers):
                segments = list(self._exclusive)
                self._exclusive.clear()
                if segments:
                    effects.append(partial(self._network_pool.recycle_exclusive_segments, segments))
        return effects

    @staticmethod
    def _run(effects: list[Callable[[], None]]) -> None:
        for effect in effects:
            effect()

    def _floating_pool(self) -> LocalBufferPool | None:
        """The gate's pool; a gate built without one simply has no floating buffers."""
        try:
            return self.gate.buffer_pool
        except FlintlockError:
            return None

    def _request_floating(self, count: int) -> None:
        pool = self._floating_pool()
        granted: list[Buffer] = []
        try:
            while pool is not None and len(granted) < count:
                buffer = pool.request_buffer()
                if buffer is None:
                    break
                granted.append(buffer)
        except BufferPoolDestroyedError:
            pool = None
        if pool is None:  # nothing will ever become available: do not wait for it
            count = len(granted)
        with self._lock:
            self._floating.extend(granted)
            event = FloatingBuffersGranted(len(granted), len(granted) < count)
            effects = self._apply_locked(self._ledger.handle(event))
        self._run(effects)

    def _await_floating(self) -> None:
        pool = self._floating_pool()
        if pool is None:
            return
        try:
            pool.add_availability_listener(
                lambda: self._handle(FloatingBufferAvailable())
            )
        except BufferPoolDestroyedError:
            return


class _ExclusiveRecycler:
    """Gives a recycled exclusive segment back to its channel."""

    __slots__ = ("_channel",)

    def __init__(self, channel: RemoteInputChannel) -> None:
        self._channel = channel

    def recycle(self, segment: bytearray) -> None:
        self._channel.exclusive_recycled(segment)
