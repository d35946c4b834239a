"""Input gates: a subtask's input for one job edge, read as one stream of (channel, buffer).

A ``SingleInputGate`` has one ``InputChannel`` per consumed subpartition (``input_channel``;
local or remote). Channels tell the gate when they have data (``notify_channel_non_empty``,
from any thread); the gate keeps a FIFO of such channels (each at most once) and serves them
round robin on the consuming task's thread: ``get_next`` returns ``(channel index, buffer)``,
events included — end of partition too, after which the channel is finished; once every
channel has finished and its end of partition was returned, ``get_next`` returns None.

* A channel that received a priority event (an unaligned barrier) goes to the head of the
  queue, so the barrier overtakes the data of other channels too, not only its own.
* A channel that queues received buffers itself (remote) lets a priority event overtake them
  too; ``InputChannel.take_overtaken`` then returns copies of what it overtook (the in-flight
  data of an unaligned checkpoint on the receiver side).
* A blocked channel (barrier alignment) keeps its data; the gate remembers it had some and
  serves it again after ``resume_channel``.
* A channel error (``set_error``) is raised on the consuming thread at its next read, as an
  ``InputChannelError`` whose ``__cause__`` is the original error, even if the channel is
  blocked.
* ``close`` releases every channel and the gate's pool: no buffer stays outstanding.

A ``UnionInputGate`` reads several gates as one (a task with more than one input edge), with
global channel indices: the gate's offset plus the local index.

The channel errors, ``LocalInputChannel`` and the retry ``Scheduler`` are defined in
``input_channel`` and ``local_channel``.

Threads: the gate's queue and flags are guarded by ``_cond``; ``get_next``/``poll_next``,
``block_channel``/``resume_channel`` run on the consuming task thread only; channels'
``get_next_buffer`` is called only from the task thread, outside the gate's lock.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from flintlock.common.clock import SYSTEM_CLOCK, Clock
from flintlock.common.errors import FlintlockError
from flintlock.common.ids import ChannelIndex
from flintlock.runtime.network.buffer import Buffer, LocalBufferPool
from flintlock.runtime.network.events import is_end_of_partition
from flintlock.runtime.network.input_channel import (
    InputChannel,
    InputChannelStatistics,
)

__all__ = ["InputGateClosedError", "InputGateStatistics", "SingleInputGate", "UnionInputGate"]


class InputGateClosedError(FlintlockError):
    """The gate was closed (the task is being cancelled) while a read was waiting."""


@dataclass(frozen=True, slots=True)
class InputGateStatistics:
    gate_index: int
    num_channels: int
    channels_with_data: int
    blocked_channels: tuple[int, ...]
    finished_channels: int
    idle_waits: int
    """Times a reader found no data and waited."""
    idle_ms: float
    """Total time readers spent in those waits."""
    channels: tuple[InputChannelStatistics, ...]


class SingleInputGate:
    """The channels of one job edge, read as one stream of (channel, buffer)."""

    def __init__(
        self, gate_index: int = 0, buffer_pool: LocalBufferPool | None = None,
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        self.gate_index = gate_index
        self._clock = clock
        self._idle_waits = 0  # guarded by _cond
        self._idle_ms = 0.0  # guarded by _cond
        self._buffer_pool = buffer_pool
        self._cond = threading.Condition(threading.Lock())
        self._channels: list[InputChannel] = []
        self._queue: deque[InputChannel] = deque()  # guarded by _cond
        self._enqueued: list[bool] = []  # guarded by _cond
        self._blocked: list[bool] = []  # task thread
        self._blocked_with_data: set[int] = set()  # guarded by _cond
        self._priority: set[int] = set()  # queued at the head for a priority event; _cond
        self._num_finished = 0  # task thread
        self._requested = False  # task thread
        self._closed = False
        self._availability_listener: Callable[[], None] | None = None
        self._barrier_listener: Callable[[int, object], None] | None = None

    @property
    def buffer_pool(self) -> LocalBufferPool:
        """The pool of floating buffers for remote channels."""
        if self._buffer_pool is None:
            raise FlintlockError(f"input gate {self.gate_index} has no buffer pool")
        return self._buffer_pool

    @property
    def channels(self) -> Sequence[InputChannel]:
        return self._channels

    @property
    def num_channels(self) -> int:
        return len(self._channels)

    def set_channels(self, channels: list[InputChannel]) -> None:
        for position, channel in enumerate(channels):
            if channel.channel_index != position:
                raise ValueError(f"channel {channel.channel_index} given at position {position}")
        with self._cond:
            self._channels = list(channels)
            self._enqueued = [False] * len(channels)
            self._blocked = [False] * len(channels)

    def set_availability_listener(self, callback: Callable[[], None]) -> None:
        """Called (from any thread) whenever a channel reports data; used by union gates."""
        self._availability_listener = callback

    def set_barrier_listener(self, callback: Callable[[int, object], None]) -> None:
        """Called (on a network I/O thread) with (channel index, barrier) when a remote
        channel queues an aligned checkpoint barrier: the task learns of a barrier that may
        wait behind data, so that it can convert it at its alignment timeout."""
        self._barrier_listener = callback

    def announce_barrier(self, channel: InputChannel, barrier: object) -> None:
        listener = self._barrier_listener
        if listener is not None:
            listener(channel.channel_index, barrier)

    def request_partitions(self) -> None:
        """Asks every channel to request its subpartition (once; done by the first read)."""
        if self._requested:
            return
        self._requested = True
        for channel in self._channels:
            channel.request_subpartition()

    # -- notifications (any thread) ------------------------------------------------------

    def notify_channel_non_empty(self, channel: InputChannel, priority: bool = False) -> None:
        """``channel`` has data; with ``priority`` (a priority event arrived) it is served
        before every other channel with data."""
        index = channel.channel_index
        with self._cond:
            if self._closed:
                return
            if self._enqueued[index]:
                if not priority:
                    return
                if self._queue[0] is channel:
                    self._priority.add(index)
                    return
                self._queue.remove(channel)
            self._enqueued[index] = True
            if priority:
                self._priority.add(index)
                self._queue.appendleft(channel)
            else:
                self._queue.append(channel)
            self._cond.notify()
        listener = self._availability_listener
        if listener is not None:
            listener()

    # -- reading (task thread) ------------------------------------------------------------

    def get_next(self, timeout_s: float | None = None) -> tuple[ChannelIndex, Buffer] | None:
        """The next buffer of any channel, waiting for one; None once every channel finished
        (or when ``timeout_s`` passed without data)."""
        return self._next(True, timeout_s)

    def poll_next(self) -> tuple[ChannelIndex, Buffer] | None:
        """The next buffer if one is ready now, else None."""
        return self._next(False, None)

    def poll_priority(self) -> tuple[ChannelIndex, Buffer] | None:
        """The priority event at the head of the queue, if one is there now (and its channel
        is not blocked): a task whose output is full still takes unaligned barriers."""
        with self._cond:
            if self._closed:
                raise InputGateClosedError(f"input gate {self.gate_index} is closed")
            if not self._queue:
                return None
            channel = self._queue[0]
            index = channel.channel_index
            if index not in self._priority or self._blocked[index]:
                return None
            self._queue.popleft()
            self._enqueued[index] = False
            self._priority.discard(index)
        return self._take(channel)

    def _next(self, blocking: bool, timeout_s: float | None) -> tuple[ChannelIndex, Buffer] | None:
        self.request_partitions()
        while True:
            channel = self._pop_channel(blocking, timeout_s)
            if channel is None:
                return None
            taken = self._take(channel)
            if taken is not None:
                return taken

    def _take(self, channel: InputChannel) -> tuple[ChannelIndex, Buffer] | None:
        channel.check_error()
        result = channel.get_next_buffer()
        if result is None:
            return None
        if result.more_available:
            self.notify_channel_non_empty(channel)
        if is_end_of_partition(result.buffer):
            channel.is_finished = True
            self._num_finished += 1
        return channel.channel_index, result.buffer

    def _pop_channel(self, blocking: bool, timeout_s: float | None) -> InputChannel | None:
        with self._cond:
            while True:
                if self._closed:
                    raise InputGateClosedError(f"input gate {self.gate_index} is closed")
                while self._queue:
                    channel = self._queue.popleft()
                    index = channel.channel_index
                    self._enqueued[index] = False
                    self._priority.discard(index)
                    if self._blocked[index] and not channel.has_error:
                        self._blocked_with_data.add(index)
                        continue
                    return channel
                if self._num_finished == len(self._channels) or not blocking:
                    return None
                start = self._clock.now_ms()
                woken = self._cond.wait(timeout_s)
                self._idle_waits += 1
                self._idle_ms += self._clock.now_ms() - start
                if not woken:
                    return None

    def block_channel(self, index: int) -> None:
        """Stop returning this channel's data (it stays queued in the channel)."""
        self._blocked[index] = True

    def resume_channel(self, index: int) -> None:
        self._blocked[index] = False
        with self._cond:
            had_data = index in self._blocked_with_data
            self._blocked_with_data.discard(index)
        self._channels[index].resume_consumption()
        if had_data:
            self.notify_channel_non_empty(self._channels[index])

    def is_blocked(self, index: int) -> bool:
        return self._blocked[index]

    @property
    def is_finished(self) -> bool:
        return self._num_finished == len(self._channels)

    def close(self) -> None:
        """Releases every channel and the pool; wakes a waiting reader to fail."""
        with self._cond:
            if self._closed:
                return
            self._closed = True
            self._queue.clear()
            self._cond.notify_all()
        for channel in self._channels:
            channel.release()
        if self._buffer_pool is not None:
            self._buffer_pool.destroy()

    def statistics(self) -> InputGateStatistics:
        with self._cond:
            with_data = len(self._queue) + len(self._blocked_with_data)
            idle_waits, idle_ms = self._idle_waits, self._idle_ms
        blocked = tuple(i for i, flag in enumerate(self._blocked) if flag)
        return InputGateStatistics(
            self.gate_index, len(self._channels), with_data, blocked, self._num_finished,
            idle_waits, idle_ms, tuple(channel.statistics() for channel in self._channels),
        )


class UnionInputGate:
    """Several gates read as one; channel indices are global (gate offset + local index)."""

    def __init__(self, gates: Sequence[SingleInputGate]) -> None:
        if not gates:
            raise ValueError("a union input gate needs at least one gate")
        self.gates = list(gates)
        self._offsets: list[int] = []
        offset = 0
        for gate in self.gates:
            self._offsets.append(offset)
            offset += gate.num_channels
            gate.set_availability_listener(self._notify)
        self._cond = threading.Condition(threading.Lock())
        self._dirty = False  # a gate reported data since the last scan; guarded by _cond
        self._next_gate = 0  # round-robin start; task thread

    def _notify(self) -> None:
        with self._cond:
            self._dirty = True
            self._cond.notify()

    @property
    def channels(self) -> list[InputChannel]:
        return [channel for gate in self.gates for channel in gate.channels]

    @property
    def num_channels(self) -> int:
        return sum(gate.num_channels for gate in self.gates)

    def get_next(self, timeout_s: float | None = None) -> tuple[ChannelIndex, Buffer] | None:
        while True:
            with self._cond:
                self._dirty = False
            found = self.poll_next()
            if found is not None or self.is_finished:
                return found
            with self._cond:
                if not self._dirty and not self._cond.wait(timeout_s):
                    return None

    def poll_next(self) -> tuple[ChannelIndex, Buffer] | None:
        count = len(self.gates)
        for step in range(count):
            position = (self._next_gate + step) % count
            found = self.gates[position].poll_next()
            if found is not None:
                self._next_gate = (position + 1) % count
                return ChannelIndex(self._offsets[position] + found[0]), found[1]
        return None

    def poll_priority(self) -> tuple[ChannelIndex, Buffer] | None:
        for position, gate in enumerate(self.gates):
            found = gate.poll_priority()
            if found is not None:
                return ChannelIndex(self._offsets[position] + found[0]), found[1]
        return None

    def _locate(self, index: int) -> tuple[SingleInputGate, int]:
        for position in range(len(self.gates) - 1, -1, -1):
            if index >= self._offsets[position]:
                return self.gates[position], index - self._offsets[position]
        raise IndexError(f"no channel {index}")

    def block_channel(self, index: int) -> None:
        gate, local = self._locate(index)
        gate.block_channel(local)

    def resume_channel(self, index: int) -> None:
        gate, local = self._locate(index)
        gate.resume_channel(local)

    @property
    def is_finished(self) -> bool:
        return all(gate.is_finished for gate in self.gates)

    def close(self) -> None:
        for gate in self.gates:
            gate.close()
        with self._cond:
            self._cond.notify_all()
