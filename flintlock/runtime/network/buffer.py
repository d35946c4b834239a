"""Network memory: fixed-size segments, buffers over them, and the pools that hand them out.

A TaskManager owns one ``NetworkBufferPool``: ``taskmanager.memory.network.max`` bytes cut into
segments of ``taskmanager.memory.segment-size`` bytes, each created when first taken (a
TaskManager that never uses its whole network memory never allocates it: zeroing 64 MB of
segments up front cost about 50 ms of its start) and never freed. Result
partitions and input gates draw segments through their own ``LocalBufferPool``; remote input
channels take their exclusive segments directly (``request_exclusive_segments``).

Design note (how segments are shared without a redistribution protocol):

* A local pool *reserves* its ``min_buffers`` when created; creation fails with
  ``InsufficientNetworkBuffersError`` if the unreserved free segments cannot cover it. The
  global pool keeps the invariant ``free >= outstanding reservations``, so a pool holding fewer
  than its minimum always gets a segment at once.
* Beyond its minimum a pool *borrows* lazily, up to ``max_buffers``, and only from segments no
  reservation needs. A recycled segment stays in the pool if someone waits for one or if the
  pool holds no more than its minimum; otherwise it goes back to the global pool for others.
* A pool that holds at least its minimum and has none free has every one of its segments in
  flight, so a waiter is always woken by a recycle: waiting cannot deadlock on the pool itself.
  That wait is backpressure.
* ``max_per_channel`` caps how many buffers one subpartition may hold at a time, so a single
  slow consumer cannot take the whole pool (data skew). The pool remembers the channel of each
  segment it lent for a channel.
* Availability (Flink's ``LocalBufferPool.isAvailable``): a request for *any* channel would be
  served now, counting the overdraft out as debt: more free (or borrowable) segments than
  overdraft buffers out, and no subpartition at its cap. A task starts a step (a batch) only
  when its output pools are available; availability listeners are called when that holds.
* Overdraft (Flink's FLIP-227): a pool whose producer checks availability between steps
  (``enable_overdraft``, the stream task) lends a blocking request that finds nothing an
  overdraft buffer instead of waiting: a segment of the heap, outside the network memory,
  dropped when recycled. So a step that needs more buffers than the check guaranteed — a batch
  fans out to several channels, a record spans buffers — completes, and the task is back in
  its mailbox, where a checkpoint trigger is waiting. As in Flink, any recycled buffer pays
  the debt back (not only the overdraft buffers, which are queued last), so the buffers lent,
  overdraft included, are below ``max_buffers`` whenever a step starts: overdraft is bounded
  by what one step emits.

Threads: every pool method may be called from task threads and the network I/O thread; each
pool has one lock (the global pool its own), and the two are only ever taken global-inside-
local, never the other way. Availability listeners are called outside every lock.
"""

from __future__ import annotations

import enum
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from flintlock.common.errors import FlintlockError
from flintlock.runtime.network.segments import FreeSegments

UNBOUNDED = 2**31 - 1
"""``max_buffers`` of a pool that may grow as long as the global pool has free segments."""


class DataType(enum.IntEnum):
    """What a buffer holds. Events need no credit; a priority event overtakes queued data."""

    DATA_BUFFER = 0
    EVENT_BUFFER = 1
    PRIORITY_EVENT_BUFFER = 2


class IllegalBufferStateError(FlintlockError):
    """A buffer was used after it was recycled, or recycled twice."""


class InsufficientNetworkBuffersError(FlintlockError):
    """Not enough free network segments to create a pool or hand out exclusive segments."""

    def __init__(self, needed: int, available: int, what: str = "a buffer pool") -> None:
        super().__init__(needed, available, what)
        self.needed = needed
        self.available = available
        self.what = what

    def __str__(self) -> str:
        return (
            f"insufficient network buffers for {self.what}: {self.needed} needed, "
            f"{self.available} available; raise 'taskmanager.memory.network.max' or lower "
            "'taskmanager.network.memory.buffers-per-channel' / "
            "'taskmanager.network.memory.floating-buffers-per-gate'"
        )


class BufferPoolDestroyedError(FlintlockError):
    """A buffer was requested from a pool that has been destroyed (its task is going away)."""


class BufferRequestTimeoutError(FlintlockError, TimeoutError):
    """``request_buffer_blocking`` waited its whole timeout: the consumers are not reading."""

    def __init__(self, timeout_s: float) -> None:
        super().__init__(timeout_s)
        self.timeout_s = timeout_s

    def __str__(self) -> str:
        return f"no network buffer became available within {self.timeout_s:g} s (backpressure)"


class BufferRecycler(Protocol):
    """Takes a segment back once the buffer over it is no longer needed."""

    def recycle(self, segment: bytearray) -> None: ...


class _FreeingRecycler:
    """For unpooled buffers (events, blocking-partition reads): the segment is just dropped."""

    __slots__ = ()

    def recycle(self, segment: bytearray) -> None:
        return None


FREEING_RECYCLER: BufferRecycler = _FreeingRecycler()


class Buffer:
    """``size`` bytes of content at the start of ``segment``; recycled exactly once.

    Owned by one thread at a time: the producer while filling it, then whoever holds it in a
    queue, then the consumer, who recycles it.
    """

    __slots__ = ("_recycled", "data_type", "recycler", "segment", "size")

    def __init__(
        self,
        segment: bytearray,
        recycler: BufferRecycler,
        size: int = 0,
        data_type: DataType = DataType.DATA_BUFFER,
    ) -> None:
        self.segment = segment
        self.recycler = recycler
        self.size = size
        self.data_type = data_type
        self._recycled = False

    @property
    def is_event(self) -> bool:
        return self.data_type is not DataType.DATA_BUFFER

    @property
    def is_recycled(self) -> bool:
        return self._recycled

    @property
    def capacity(self) -> int:
        return len(self.segment)

    def view(self) -> memoryview:
        """The content (no copy). Must not be used after ``recycle``."""
        if self._recycled:
            raise IllegalBufferStateError("buffer read after it was recycled")
        return memoryview(self.segment)[: self.size]

    def recycle(self) -> None:
        if self._recycled:
            raise IllegalBufferStateError("buffer recycled twice")
        self._recycled = True
        self.recycler.recycle(self.segment)

    def __repr__(self) -> str:
        return f"Buffer({self.data_type.name}, size={self.size}/{len(self.segment)})"


def unpooled_buffer(data: bytes | bytearray, data_type: DataType) -> Buffer:
    """A buffer over its own memory (not from any pool), e.g. for an event."""
    segment = data if isinstance(data, bytearray) else bytearray(data)
    return Buffer(segment, FREEING_RECYCLER, len(segment), data_type)


@dataclass(frozen=True, slots=True)
class NetworkBufferPoolStatistics:
    total_segments: int
    free_segments: int
    reserved_segments: int
    exclusive_segments: int
    num_pools: int


@dataclass(frozen=True, slots=True)
class LocalBufferPoolStatistics:
    min_buffers: int
    max_buffers: int
    held: int
    available: int
    in_use: int
    waiters: int
    per_channel_in_use: tuple[int, ...]
    overdraft: int = 0
    """Overdraft buffers lent and not yet recycled (beyond ``max_buffers``, off the heap)."""


class NetworkBufferPool:
    """The TaskManager-wide fixed set of segments (see the module's design note)."""

    def __init__(self, num_segments: int, segment_size: int) -> None:
        if num_segments < 1 or segment_size < 1:
            raise ValueError("a network buffer pool needs at least one segment of positive size")
        self.segment_size = segment_size
        self.total_segments = num_segments
        self._lock = threading.Lock()
        self._free = FreeSegments(num_segments, segment_size)
        self._reserved = 0  # sum over pools of max(0, min - held); guarded by _lock
        self._exclusive = 0  # guarded by _lock
        self._pools: set[LocalBufferPool] = set()  # guarded by _lock
        self._hungry: set[LocalBufferPool] = set()  # pools waiting for a borrowable segment

    @classmethod
    def from_memory(cls, network_memory_bytes: int, segment_size: int) -> NetworkBufferPool:
        """As many whole segments as fit in ``network_memory_bytes``."""
        return cls(max(1, network_memory_bytes // segment_size), segment_size)

    def create_buffer_pool(
        self, min_buffers: int, max_buffers: int, num_channels: int = 0,
        max_per_channel: int | None = None,
    ) -> LocalBufferPool:
        """A local pool guaranteed ``min_buffers`` and allowed to borrow up to ``max_buffers``."""
        if not 0 <= min_buffers <= max_buffers:
            raise ValueError(f"need 0 <= min_buffers {min_buffers} <= max_buffers {max_buffers}")
        with self._lock:
            unreserved = len(self._free) - self._reserved
            if unreserved < min_buffers:
                raise InsufficientNetworkBuffersError(min_buffers, max(0, unreserved))
            pool = LocalBufferPool(self, min_buffers, max_buffers, num_channels, max_per_channel)
            self._reserved += min_buffers
            self._pools.add(pool)
        return pool

    def request_exclusive_segments(self, n: int) -> list[bytearray]:
        """``n`` segments taken out of circulation until ``recycle_exclusive_segments``."""
        with self._lock:
            unreserved = len(self._free) - self._reserved
            if unreserved < n:
                raise InsufficientNetworkBuffersError(n, max(0, unreserved), "exclusive buffers")
            taken = [self._free.pop() for _ in range(n)]
            self._exclusive += n
        return taken

    def recycle_exclusive_segments(self, segments: list[bytearray]) -> None:
        with self._lock:
            self._exclusive -= len(segments)
        _wake_all(self._give_back(segments))

    def statistics(self) -> NetworkBufferPoolStatistics:
        with self._lock:
            return NetworkBufferPoolStatistics(
                self.total_segments, len(self._free), self._reserved, self._exclusive,
                len(self._pools),
            )

    # -- called by LocalBufferPool with its own lock held ---------------------------------

    def _take(self, pool: LocalBufferPool, below_min: bool) -> bytearray | None:
        """A segment for ``pool``, or None (then ``pool`` is woken when one is returned)."""
        with self._lock:
            if below_min:
                self._reserved -= 1
                return self._free.pop()
            if len(self._free) > self._reserved:
                return self._free.pop()
            self._hungry.add(pool)
            return None

    def _give_back(self, segments: list[bytearray]) -> list[LocalBufferPool]:
        """Returns ``segments``; the caller must ``_wake`` the returned pools after unlocking."""
        with self._lock:
            self._free.extend(segments)
            if not self._hungry or len(self._free) <= self._reserved:
                return []
            hungry = list(self._hungry)
            self._hungry.clear()
            return hungry

    def _forget(self, pool: LocalBufferPool, unused_reservation: int) -> None:
        with self._lock:
            self._pools.discard(pool)
            self._hungry.discard(pool)
            self._reserved -= unused_reservation


def _wake_all(pools: list[LocalBufferPool]) -> None:
    for pool in pools:
        pool._wake()


class LocalBufferPool:
    """The buffers of one result partition or input gate. Implements ``BufferRecycler``.

    Mutable state is guarded by ``_cond`` (one lock); see the module docstring for the rules.
    """

    def __init__(
        self, network_pool: NetworkBufferPool, min_buffers: int, max_buffers: int,
        num_channels: int = 0, max_per_channel: int | None = None,
    ) -> None:
        self._network = network_pool
        self.min_buffers = min_buffers
        self.max_buffers = max_buffers
        self.segment_size = network_pool.segment_size
        self._cond = threading.Condition(threading.Lock())
        self._available: deque[bytearray] = deque()
        self._held = 0  # segments taken from the network pool and not given back
        self._waiters = 0
        self._listeners: list[Callable[[], None]] = []
        self._destroyed = False
        self._max_per_channel = max_per_channel if num_channels > 0 else None
        self._channel_in_use = [0] * num_channels
        self._segment_channel: dict[int, int] = {}  # id(segment) -> channel it was lent for
        self._capped = 0  # channels holding max_per_channel buffers or more
        self._max_overdraft = 0
        self._overdraft: set[int] = set()  # id(segment) of overdraft buffers lent

    # -- requests ---------------------------------------------------------------------------

    @property
    def is_available(self) -> bool:
        """A step may start: a request for any channel would get a buffer now, with the
        overdraft out paid back (see the module docstring). A destroyed pool is available: a
        request fails at once, nothing to wait for."""
        with self._cond:
            return self._available_locked()

    def enable_overdraft(self, max_buffers: int = UNBOUNDED) -> None:
        """Lets a blocking request take up to ``max_buffers`` overdraft buffers instead of
        waiting. Only for a producer that starts no step while the pool is unavailable."""
        with self._cond:
            self._max_overdraft = max_buffers

    @property
    def is_destroyed(self) -> bool:
        return self._destroyed

    @property
    def network_pool(self) -> NetworkBufferPool:
        """The TaskManager's pool this one takes its segments from (for its statistics)."""
        return self._network

    def request_buffer(self, channel: int | None = None) -> Buffer | None:
        """A free buffer, or None if none is available now."""
        with self._cond:
            if self._destroyed:
                raise BufferPoolDestroyedError("buffer requested from a destroyed pool")
            segment = self._take_locked(channel)
        return None if segment is None else Buffer(segment, self)

    def request_buffer_blocking(
        self, timeout_s: float | None = None, channel: int | None = None
    ) -> Buffer:
        """A free buffer, an overdraft buffer if enabled, or else waits for one (this wait is
        backpressure)."""
        with self._cond:
            self._waiters += 1
            try:
                segment = self._take_locked(channel, overdraft=True)
                while segment is None:
                    if not self._cond.wait(timeout_s):
                        raise BufferRequestTimeoutError(timeout_s or 0.0)
                    segment = self._take_locked(channel, overdraft=True)
            finally:
                self._waiters -= 1
        return Buffer(segment, self)

    def _take_locked(self, channel: int | None, overdraft: bool = False) -> bytearray | None:
        if self._destroyed:
            raise BufferPoolDestroyedError("buffer requested from a destroyed pool")
        cap = self._max_per_channel
        counted = channel is not None and cap is not None
        segment = None
        if not counted or self._channel_in_use[channel or 0] < (cap or 0):
            segment = self._available.popleft() if self._available else self._borrow_locked()
        if segment is None and overdraft and len(self._overdraft) < self._max_overdraft:
            segment = bytearray(self.segment_size)
            self._overdraft.add(id(segment))
        if segment is not None and counted:
            self._count_locked(channel or 0, segment)
        return segment

    def _borrow_locked(self) -> bytearray | None:
        """A segment from the network pool, if this pool may grow and one is free."""
        if self._held >= self.max_buffers:
            return None
        segment = self._network._take(self, below_min=self._held < self.min_buffers)
        if segment is not None:
            self._held += 1
        return segment

    def _count_locked(self, channel: int, segment: bytearray) -> None:
        in_use = self._channel_in_use[channel] = self._channel_in_use[channel] + 1
        if in_use == self._max_per_channel:
            self._capped += 1
        self._segment_channel[id(segment)] = channel

    def _uncount_locked(self, segment: bytearray) -> None:
        channel = self._segment_channel.pop(id(segment), None)
        if channel is not None:
            if self._channel_in_use[channel] == self._max_per_channel:
                self._capped -= 1
            self._channel_in_use[channel] -= 1

    def _available_locked(self) -> bool:
        """Free buffers beyond the overdraft out (each will be dropped when recycled, so it is
        paid back by a free one: the lent buffers, overdraft included, stay below
        ``max_buffers``), borrowing them if needed; and no subpartition at its cap."""
        if self._destroyed:
            return True
        if self._capped:
            return False
        while len(self._available) <= len(self._overdraft):
            segment = self._borrow_locked()
            if segment is None:
                return False
            self._available.append(segment)
        return True

    def add_availability_listener(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` once, when the pool is available (at once if it is now); one
        equal to a callback still waiting is not added again (a task loop woken by mail
        registers its listener anew)."""
        with self._cond:
            if self._destroyed:
                raise BufferPoolDestroyedError("listener added to a destroyed pool")
            ready = self._available_locked()
            if not ready and callback not in self._listeners:
                self._listeners.append(callback)
        if ready:
            callback()

    # -- recycling --------------------------------------------------------------------------

    def recycle(self, segment: bytearray) -> None:
        """Takes back a segment lent by this pool (an overdraft one is dropped); wakes the
        waiters, and the listeners once the pool is available."""
        listeners: list[Callable[[], None]] = []
        hungry: list[LocalBufferPool] = []
        with self._cond:
            if self._segment_channel:
                self._uncount_locked(segment)
            if self._overdraft and id(segment) in self._overdraft:
                self._overdraft.discard(id(segment))
            elif not self._destroyed and (
                self._waiters or self._listeners or self._held <= self.min_buffers
            ):
                self._available.append(segment)
            else:
                self._held -= 1
                hungry = self._network._give_back([segment])
            if self._waiters:
                self._cond.notify_all()
            if self._listeners and self._available_locked():
                listeners, self._listeners = self._listeners, []
        _wake_all(hungry)
        for callback in listeners:
            callback()

    def _wake(self) -> None:
        """The global pool has a segment to lend again: retry waiters and listeners."""
        listeners: list[Callable[[], None]] = []
        with self._cond:
            self._cond.notify_all()
            if self._listeners and self._available_locked():
                listeners, self._listeners = self._listeners, []
        for callback in listeners:
            callback()

    def destroy(self) -> None:
        """Returns free segments now and in-flight ones when recycled; wakes waiters to fail."""
        with self._cond:
            if self._destroyed:
                return
            self._destroyed = True
            unused_reservation = max(0, self.min_buffers - self._held)
            free = list(self._available)
            self._available.clear()
            self._held -= len(free)
            self._listeners.clear()
            self._cond.notify_all()
            self._network._forget(self, unused_reservation)
            hungry = self._network._give_back(free)
        _wake_all(hungry)

    def statistics(self) -> LocalBufferPoolStatistics:
        with self._cond:
            return LocalBufferPoolStatistics(
                self.min_buffers, self.max_buffers, self._held, len(self._available),
                self._held - len(self._available), self._waiters, tuple(self._channel_in_use),
                len(self._overdraft),
            )
