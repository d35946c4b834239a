"""The record writer: channel selection and per-channel batching, flushed by the output
flusher (``output_flusher``).

``RecordWriter.emit(record)`` picks a channel with the edge's ``ChannelSelector`` and appends
the record to that channel's pending list — nothing else on the hot path: no lock, no wrapper
object, no syscall. With one channel, ``emit`` is a closure over that list (no attribute
lookups) and ``emit_batch`` extends it with the whole batch. When the list reaches the batch
limit (``serialization.BatchSizer``) its records are serialised, a batch limit's worth per
call, each batch written as a chunk into the channel's current buffer (``write_chunk``); full
buffers go to the result partition's subpartition. A flush serialises what is left.

When partly filled buffers leave (``execution.buffer-timeout``):

* ``0``: after every record (the batch limit is 1 and the buffer is flushed at once);
* ``-1``: only when full, or on an event, ``flush_all`` or ``close``;
* ``N`` ms: additionally every N ms, by an ``OutputFlusher`` thread calling ``flush_all``.

Threads: ``emit``/``broadcast_emit`` run on the task thread only. Serialising a batch,
writing buffers and flushing — from the task thread or the flusher thread — happen under the
writer's lock, taken once per batch or flush, never per record. The pending lists are shared
without the lock: the task thread only appends; a batch is taken as ``lst[:n]`` followed by
``del lst[:n]``, so a record appended concurrently stays in the list for the next batch and
order is kept. An error in the flusher thread is re-raised on the task thread at the next
batch or flush.

One flusher thread serves every writer of a task (pass one ``OutputFlusher`` to each); a
writer given none creates its own. ``OutputFlusher.stop`` joins the thread: none leaks.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from flintlock.common.clock import SYSTEM_CLOCK, Clock
from flintlock.common.errors import FlintlockError
from flintlock.common.key_encoding import UnstableKeyError
from flintlock.runtime.network.buffer import Buffer
from flintlock.runtime.network.channel_selector import ChannelSelector, KeyGroupSelector
from flintlock.runtime.network.event_time import StampedRun
from flintlock.runtime.network.key_routing import route_by_key
from flintlock.runtime.network.output_flusher import OutputFlusher
from flintlock.runtime.network.serialization import (
    BatchSerializer,
    BatchSizer,
    PickleBatchSerializer,
    RecordTooLargeError,
    write_chunk,
)
from flintlock.runtime.network.typed_serializer import WRONG_TYPE_ERRORS


class OutputFlushFailedError(FlintlockError):
    """The output flusher thread failed to flush; ``__cause__`` is why."""


class WriterClosedError(FlintlockError):
    """A record was emitted after the writer was closed."""


class ResultPartitionWriter(Protocol):
    """What a ``RecordWriter`` needs of a result partition."""

    @property
    def num_subpartitions(self) -> int: ...

    @property
    def segment_size(self) -> int: ...

    def request_buffer(self, subpartition: int) -> Buffer | None: ...

    def request_buffer_blocking(self, subpartition: int, timeout_s: float | None = None) -> Buffer:
        ...

    def add_buffer(self, subpartition: int, buffer: Buffer) -> object: ...

    def broadcast_event(self, event: object) -> None: ...


@dataclass(frozen=True, slots=True)
class RecordWriterStatistics:
    records_out: int
    backpressure_waits: int
    """Times the writer found no free buffer and had to wait (backpressure)."""
    backpressured_ms: float
    """Total time spent in those waits."""
    buffers_out: int
    bytes_out: int
    pending_records: tuple[int, ...]
    """Records waiting to be serialised, per channel."""
    current_buffer_bytes: tuple[int, ...]
    """Bytes in each channel's partly filled buffer."""
    bytes_per_record: float


class _Pending(list[Any]):
    """A channel's records waiting to be serialised, with the channel and its batch limit.

    Carrying both lets a full list be written knowing only the list.
    """

    __slots__ = ("channel", "limit")

    def __init__(self, channel: int) -> None:
        super().__init__()
        self.channel = channel
        self.limit = 1  # written under the writer's lock, read unlocked by the task thread


class RecordWriter:
    """Writes records of one output (job edge) into a result partition."""

    def __init__(
        self, partition: ResultPartitionWriter, selector: ChannelSelector,
        serializer: BatchSerializer | None = None, buffer_timeout_ms: int = 100,
        flusher: OutputFlusher | None = None, name: str = "record writer",
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        if buffer_timeout_ms < -1:
            raise ValueError(f"buffer timeout must be -1, 0 or positive, got {buffer_timeout_ms}")
        self._partition = partition
        self.num_channels = partition.num_subpartitions
        self._selector = selector
        selector.setup(self.num_channels)
        self._select = selector.select_channel
        self._serializer: BatchSerializer = serializer or PickleBatchSerializer()
        self._name = name
        self._lock = threading.Lock()
        self._pending = [_Pending(channel) for channel in range(self.num_channels)]
        self._current: list[Buffer | None] = [None] * self.num_channels  # guarded by _lock
        self._flush_always = buffer_timeout_ms == 0
        self._sizer = BatchSizer(partition.segment_size)  # guarded by _lock
        self._async_error: BaseException | None = None
        self._closed = False
        self._clock = clock
        self._backpressure_waits = 0  # guarded by _lock
        self._backpressured_ms = 0.0  # written under _lock; read without it (see below)
        self._blocked_since: float | None = None  # set while waiting for a buffer
        self._records_out = 0  # guarded by _lock (counted per batch)
        self._buffers_out = 0
        self._bytes_out = 0
        self._own_flusher: OutputFlusher | None = None
        self._flusher = flusher
        self._key_cache: dict[Any, int] = {}  # key -> its channel
        self._keyed = False  # key-group hashing over several channels (_specialise_emit)
        self._specialise_emit(selector)
        if buffer_timeout_ms > 0:
            self._start_flushing(buffer_timeout_ms)

    def _specialise_emit(self, selector: ChannelSelector) -> None:
        """The hot path for ``selector``: broadcast, a single channel, key-group hashing with
        a key cache, or the general ``emit`` (any other selector)."""
        if selector.is_broadcast:
            self.emit = self.broadcast_emit  # type: ignore[method-assign]
        elif self.num_channels == 1:
            emit, emit_batch = self._single_channel_emitters()
            self.emit = emit  # type: ignore[method-assign,assignment]
            self.emit_batch = emit_batch  # type: ignore[method-assign,assignment]
        elif isinstance(selector, KeyGroupSelector):
            self._keyed = True
            self._key_selector = selector.key_selector
            self._channel_for_key = selector.channel_for_key
            self._key_cache_size = selector.cache_size
            self.emit = self._emit_keyed  # type: ignore[method-assign]
            self.emit_batch = self._emit_batch_keyed  # type: ignore[method-assign]

    def _start_flushing(self, buffer_timeout_ms: int) -> None:
        """Flush every ``buffer_timeout_ms`` by the shared flusher, or by one of its own."""
        if self._flusher is None:
            self._flusher = self._own_flusher = OutputFlusher(buffer_timeout_ms, self._name)
        self._flusher.register(self)

    # -- task thread ----------------------------------------------------------------------

    def emit(self, record: Any) -> None:
        """Sends ``record`` to the channel the selector picks (hot path)."""
        pending = self._pending[self._select(record)]
        pending.append(record)
        if len(pending) >= pending.limit:
            self._write_batch(pending.channel)

    def emit_batch(self, records: list[Any]) -> None:
        """``emit`` for each record of a batch (the chain hands records on in batches)."""
        emit = self.emit
        for record in records:
            emit(record)

    def _emit_batch_keyed(self, records: Sequence[Any]) -> None:
        """Key-group hashing over a batch: each record's channel from the key cache and
        appended to that channel's pending list, in one ``route_by_key`` call (C where the
        accelerator is built: one user call per record, nothing interpreted around it). Full
        batches are written once the whole batch is sorted into channels
        (``_serialize_locked`` cuts a long pending list into batches of the channel's limit),
        not checked after every record: that check was a quarter of the Python loop's cost
        (22 of 81 ns a record, benchmarks/stage_costs.py)."""
        if type(records) is not list:
            records = list(records)
        try:
            route_by_key(records, self._key_selector, self._key_cache, self._channel_of_new_key,
                         self._pending, None, None)  # type: ignore[arg-type]
        except UnstableKeyError as error:
            raise error.at(f"the key selector of the exchange {self._name!r}") from None
        except WRONG_TYPE_ERRORS as error:
            diagnose = getattr(self._serializer, "diagnose", None)
            if diagnose is not None:  # a declared type: a record that does not fit is the cause
                diagnose(records, error)
            raise
        for pending in self._pending:
            if len(pending) >= pending.limit:
                self._write_batch(pending.channel)

    def emit_stamped_batch(self, values: Sequence[Any], timestamps: Sequence[int]) -> None:
        """Records with event timestamps (``event_time``): each channel's share, selected by
        the value as in ``emit``, is appended as one ``StampedRun`` and written at once, so a
        run always ends its chunk (the reader checks the last element only)."""
        shares: dict[int, StampedRun] = {}
        if self._selector.is_broadcast:
            run = list(values), list(timestamps)
            shares = {channel: StampedRun(*run) for channel in range(self.num_channels)}
        elif self._keyed:
            shares = self._stamped_shares_keyed(values, timestamps)
        else:
            select = self._select
            for value, timestamp in zip(values, timestamps, strict=True):
                channel = select(value)
                share = shares.get(channel)
                if share is None:
                    share = shares[channel] = StampedRun([], [])
                share.values.append(value)
                share.timestamps.append(timestamp)
        for channel, share in shares.items():
            self._pending[channel].append(share)
            self._write_batch(channel, everything=True)

    def _stamped_shares_keyed(self, values: Sequence[Any], timestamps: Sequence[int]
                              ) -> dict[int, StampedRun]:
        """Each channel's share of a timestamped batch under key-group hashing: the key
        cache of ``_emit_batch_keyed`` gives the channel, and ``route_by_key`` appends each
        value and its timestamp to that channel's lists."""
        count = self.num_channels
        shared_values: list[list[Any]] = [[] for _ in range(count)]
        shared_stamps: list[list[int]] = [[] for _ in range(count)]
        try:
            route_by_key(values if type(values) is list else list(values), self._key_selector,
                         self._key_cache, self._channel_of_new_key, shared_values,
                         timestamps if type(timestamps) is list else list(timestamps),
                         shared_stamps)
        except UnstableKeyError as error:
            raise error.at(f"the key selector of the exchange {self._name!r}") from None
        return {channel: StampedRun(shared_values[channel], shared_stamps[channel])
                for channel in range(count) if shared_values[channel]}

    def _single_channel_emitters(
        self,
    ) -> tuple[Callable[[Any], None], Callable[[list[Any]], None]]:
        """``emit`` and ``emit_batch`` when there is one channel (forward, or any selector at
        parallelism 1): closures over the channel's pending list, so a record costs one call,
        one append and one comparison — no attribute lookup on the writer."""
        pending = self._pending[0]
        append, extend, write_batch = pending.append, pending.extend, self._write_batch

        def emit(record: Any) -> None:
            append(record)
            if len(pending) >= pending.limit:
                write_batch(0)

        def emit_batch(records: list[Any]) -> None:
            extend(records)
            if len(pending) >= pending.limit:
                write_batch(0)

        if self._flush_always:  # every record is flushed by itself, so one at a time
            return emit, self._emit_each
        return emit, emit_batch

    def _emit_each(self, records: list[Any]) -> None:
        emit = self.emit
        for record in records:
            emit(record)

    def _emit_keyed(self, record: Any) -> None:
        """``emit`` for key-group hashing (the chain's hot path is ``emit_batch``)."""
        self._emit_batch_keyed((record,))

    def _channel_of_new_key(self, key: Any) -> int:
        """The channel of a key not in the key cache, which then holds it (an unhashable key
        is hashed its own way every time)."""
        channel = self._channel_for_key(key)
        cache = self._key_cache
        if len(cache) >= self._key_cache_size:
            cache.clear()
        try:
            cache[key] = channel
        except TypeError:
            pass
        return channel

    def broadcast_emit(self, record: Any) -> None:
        """Sends ``record`` to every channel."""
        for pending in self._pending:
            pending.append(record)
            if len(pending) >= pending.limit:
                self._write_batch(pending.channel)

    def broadcast_event(self, event: object) -> None:
        """Flushes everything pending (order is kept), then adds ``event`` to every channel."""
        with self._lock:
            self._check_error()
            for channel in range(self.num_channels):
                self._flush_channel_locked(channel)
            self._partition.broadcast_event(event)

    def flush_all(self) -> None:
        """Serialises every pending record and hands every partly filled buffer over."""
        with self._lock:
            self._check_error()
            for channel in range(self.num_channels):
                self._flush_channel_locked(channel)

    def flush(self, channel: int) -> None:
        with self._lock:
            self._check_error()
            self._flush_channel_locked(channel)

    def close(self, flush: bool = True) -> None:
        """Stops the flusher (if this writer owns it) and, unless failing, flushes the rest."""
        if self._closed:
            return
        self._closed = True
        if self._flusher is not None:
            self._flusher.unregister(self)
        if self._own_flusher is not None:
            self._own_flusher.stop()
        if flush:
            self.flush_all()
        else:
            self._drop_current()

    # -- under the lock -------------------------------------------------------------------

    def _write_batch(self, channel: int, everything: bool = False) -> None:
        """Serialises the channel's full batches, or with ``everything`` all that is pending,
        so that the last element appended ends its chunk (a ``StampedRun`` must: readers
        look for one at a chunk's end only)."""
        with self._lock:
            self._check_error()
            self._serialize_locked(channel, everything)
            if self._flush_always:
                self._emit_current_locked(channel)

    def _serialize_locked(self, channel: int, everything: bool = False) -> None:
        """Serialises the channel's pending records in batches of at most its batch limit:
        all of them with ``everything`` (a flush), else while a full batch is pending."""
        pending = self._pending[channel]
        remaining = len(pending)  # records appended meanwhile wait for the next batch
        while remaining and (everything or remaining >= pending.limit):
            count = min(remaining, pending.limit)
            self._serialize_batch_locked(channel, pending, count)
            remaining -= count

    def _serialize_batch_locked(self, channel: int, pending: _Pending, count: int) -> None:
        batch = pending[:count]
        del pending[:count]
        data = self._serializer.dumps(batch)
        # write_chunk may hand the current buffer on and then fail to get the next one (the
        # pool is destroyed on cancel): the writer must not hold a buffer it gave away.
        current, self._current[channel] = self._current[channel], None
        try:
            current = write_chunk(
                data, current,
                lambda: self._request_buffer_locked(channel),
                lambda full: self._emit_buffer_locked(channel, full),
            )
        except RecordTooLargeError:  # raised before any buffer was touched
            self._current[channel] = current
            raise
        self._current[channel] = current
        self._sizer.observe(count, memoryview(data).nbytes)
        self._records_out += count
        if not self._flush_always:
            free = self._sizer.segment_size - (current.size if current is not None else 0)
            pending.limit = self._sizer.limit(free)

    def _request_buffer_locked(self, channel: int) -> Buffer:
        buffer = self._partition.request_buffer(channel)
        if buffer is not None:
            return buffer
        start = self._blocked_since = self._clock.now_ms()
        try:
            return self._partition.request_buffer_blocking(channel)
        finally:
            self._blocked_since = None
            self._backpressure_waits += 1
            self._backpressured_ms += self._clock.now_ms() - start

    def backpressured_ms(self) -> float:
        """Total time spent waiting for a free buffer, including a wait in progress. Takes no
        lock (a thread blocked for a buffer holds it): for monitoring threads (heartbeats)."""
        since = self._blocked_since
        ongoing = self._clock.now_ms() - since if since is not None else 0.0
        return self._backpressured_ms + ongoing

    def io_counts(self) -> tuple[int, int]:
        """(records, bytes) written so far. Takes no lock, like ``backpressured_ms`` (two int
        reads, each atomic under the GIL): for the heartbeat's metrics (numRecordsOut,
        numBytesOut), which must not wait behind a writer blocked for a buffer."""
        return self._records_out, self._bytes_out

    def _emit_buffer_locked(self, channel: int, buffer: Buffer) -> None:
        self._buffers_out += 1
        self._bytes_out += buffer.size
        self._partition.add_buffer(channel, buffer)

    def _emit_current_locked(self, channel: int) -> None:
        current = self._current[channel]
        if current is not None:
            self._current[channel] = None
            self._emit_buffer_locked(channel, current)

    def _flush_channel_locked(self, channel: int) -> None:
        self._serialize_locked(channel, everything=True)
        self._emit_current_locked(channel)

    def _check_error(self) -> None:
        error = self._async_error
        if error is not None:
            raise OutputFlushFailedError(f"output flusher failed: {error!r}") from error

    def _drop_current(self) -> None:
        with self._lock:
            for channel in range(self.num_channels):
                current, self._current[channel] = self._current[channel], None
                self._pending[channel].clear()
                if current is not None:
                    current.recycle()

    # -- flusher thread -------------------------------------------------------------------

    def _flush_from_flusher(self) -> None:
        if self._async_error is not None or self._closed:
            return
        try:
            with self._lock:
                for channel in range(self.num_channels):
                    self._flush_channel_locked(channel)
        except Exception as exc:
            self._async_error = exc

    def statistics(self) -> RecordWriterStatistics:
        with self._lock:
            return RecordWriterStatistics(
                self._records_out, self._backpressure_waits, self._backpressured_ms,
                self._buffers_out, self._bytes_out,
                tuple(len(p) for p in self._pending),
                tuple(0 if b is None else b.size for b in self._current),
                self._sizer.bytes_per_record,
            )
