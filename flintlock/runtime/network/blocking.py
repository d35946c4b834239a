"""BLOCKING result partitions: spilled to a local file as the producer writes, read afterwards.

Spill format: one file per result partition (``flintlock-partition-*.spill`` in the spill
directory), the raw bytes of every buffer of every subpartition appended in the order the
producer finished them. The index — per subpartition a list of (offset, size, data type) — is
kept in memory: the file only lives as long as the TaskManager that wrote it, so it needs no
self-describing header. Each buffer is written with one ``os.write`` and recycled at once, so
the producer needs only its current buffers from the pool, never one per queued buffer.

Reading starts once the producer finished (``finish`` appends end of partition to every
subpartition and closes the write side). Any number of views, concurrently or one after
another, may read a subpartition; each has its own cursor and reads with ``os.pread`` into a
fresh unpooled buffer, which the consumer recycles (dropping it). ``release`` deletes the file.

Threads: the producer's task thread appends; consumers read from their own threads. The
index lists only grow, and only before ``finish``; readers look at them only after it.
"""

from __future__ import annotations

import os
import tempfile
import threading
from dataclasses import dataclass

from flintlock.common.errors import FlintlockError
from flintlock.runtime.network.buffer import Buffer, DataType, unpooled_buffer
from flintlock.runtime.network.subpartition import (
    BufferAndBacklog,
    BufferAvailabilityListener,
    ResultSubpartitionView,
    SubpartitionStatistics,
)


class SpillFileError(FlintlockError):
    """A blocking partition's spill file could not be written or read."""


@dataclass(frozen=True, slots=True)
class _Entry:
    offset: int
    size: int
    data_type: DataType


class SpillFile:
    """An append-only file written by one thread, read with ``pread`` by many after finish."""

    def __init__(self, directory: str | None = None) -> None:
        fd, self.path = tempfile.mkstemp(prefix="flintlock-partition-", suffix=".spill",
                                         dir=directory)
        self._write_fd: int | None = fd
        self._read_fd: int | None = None
        self._size = 0
        self._lock = threading.Lock()

    def append(self, data: memoryview) -> int:
        """Writes ``data`` at the end; returns its offset."""
        if self._write_fd is None:
            raise SpillFileError(f"{self.path}: append after the spill file was closed")
        offset = self._size
        written = 0
        while written < len(data):
            written += os.write(self._write_fd, data[written:])
        self._size += written
        return offset

    def finish(self) -> None:
        """Closes the write side and opens the shared read side."""
        with self._lock:
            if self._write_fd is not None:
                os.close(self._write_fd)
                self._write_fd = None
                self._read_fd = os.open(self.path, os.O_RDONLY)

    def read(self, offset: int, size: int) -> bytes:
        read_fd = self._read_fd
        if read_fd is None:
            raise SpillFileError(f"{self.path}: read before finish or after release")
        data = os.pread(read_fd, size, offset)
        if len(data) != size:
            raise SpillFileError(f"{self.path}: short read at {offset} ({len(data)} of {size})")
        return data

    def delete(self) -> None:
        with self._lock:
            for fd in (self._write_fd, self._read_fd):
                if fd is not None:
                    os.close(fd)
            self._write_fd = self._read_fd = None
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass

    @property
    def size(self) -> int:
        return self._size


class BlockingSubpartition:
    """One consumer's part of a spilled partition."""

    def __init__(self, index: int, spill_file: SpillFile) -> None:
        self.index = index
        self._file = spill_file
        self._entries: list[_Entry] = []
        self._data_before: list[int] = [0]  # data buffers among the first i entries
        self._finished = False
        self._released = False
        self._failure: BaseException | None = None
        self._listeners: list[BufferAvailabilityListener] = []
        self._lock = threading.Lock()

    def add(self, buffer: Buffer) -> None:
        try:
            if self._released:
                return
            offset = self._file.append(buffer.view())
            self._entries.append(_Entry(offset, buffer.size, buffer.data_type))
            is_data = buffer.data_type is DataType.DATA_BUFFER
            self._data_before.append(self._data_before[-1] + is_data)
        finally:
            buffer.recycle()

    def mark_finished(self) -> None:
        """The producer finished and the file is readable (called by the partition)."""
        with self._lock:
            self._finished = True
            listeners = list(self._listeners)
        for listener in listeners:
            listener.notify_data_available()

    def create_view(self, listener: BufferAvailabilityListener) -> BlockingSubpartitionView:
        with self._lock:
            self._listeners.append(listener)
            ready = self._finished or self._released
        view = BlockingSubpartitionView(self, listener)
        if ready:
            listener.notify_data_available()
        return view

    def entry(self, position: int) -> tuple[Buffer, int, DataType | None] | None:
        """The buffer at ``position``, the data buffers after it, and the next entry's type."""
        if not self._finished or self._released or position >= len(self._entries):
            return None
        entry = self._entries[position]
        try:
            data = self._file.read(entry.offset, entry.size)
        except (OSError, SpillFileError):
            if self._released:  # released while this reader was at it: nothing more to read
                return None
            raise
        buffer = unpooled_buffer(data, entry.data_type)
        backlog = self._data_before[-1] - self._data_before[position + 1]
        return buffer, backlog, self.next_type(position + 1)

    def has_entry(self, position: int) -> bool:
        return self._finished and not self._released and position < len(self._entries)

    def next_type(self, position: int) -> DataType | None:
        return self._entries[position].data_type if self.has_entry(position) else None

    def backlog_from(self, position: int) -> int:
        if not self._finished:
            return 0
        return self._data_before[-1] - self._data_before[min(position, len(self._entries))]

    @property
    def backlog(self) -> int:
        return self._data_before[-1]

    @property
    def failure_cause(self) -> BaseException | None:
        return self._failure

    @property
    def is_released(self) -> bool:
        return self._released

    def release(self, cause: BaseException | None = None) -> None:
        with self._lock:
            if self._released:
                return
            self._released = True
            self._failure = cause
            listeners = list(self._listeners)
        for listener in listeners:
            listener.notify_data_available()

    def view_released(self, listener: BufferAvailabilityListener) -> None:
        with self._lock:
            if listener in self._listeners:
                self._listeners.remove(listener)

    def statistics(self) -> SubpartitionStatistics:
        return SubpartitionStatistics(
            self.index, len(self._entries), self._data_before[-1], len(self._entries),
            sum(entry.size for entry in self._entries), self._released,
        )


class BlockingSubpartitionView(ResultSubpartitionView):
    """One reader's cursor over a blocking subpartition; may be one of many."""

    def __init__(
        self, subpartition: BlockingSubpartition, listener: BufferAvailabilityListener
    ) -> None:
        self._subpartition = subpartition
        self._listener = listener
        self._position = 0  # owned by the reading thread
        self._released = False

    def poll_next(self) -> BufferAndBacklog | None:
        if self._released:
            return None
        found = self._subpartition.entry(self._position)
        if found is None:
            return None
        buffer, backlog, following = found
        sequence = self._position
        self._position += 1
        return BufferAndBacklog(buffer, backlog, following, sequence)

    def is_available(self, credit: int) -> bool:
        if self._released:
            return False
        next_type = self._subpartition.next_type(self._position)
        return next_type is not None and (credit > 0 or next_type is not DataType.DATA_BUFFER)

    def get_backlog(self) -> int:
        return self._subpartition.backlog_from(self._position)

    def release(self) -> None:
        if not self._released:
            self._released = True
            self._subpartition.view_released(self._listener)

    @property
    def failure_cause(self) -> BaseException | None:
        return self._subpartition.failure_cause

    @property
    def is_released(self) -> bool:
        return self._released or self._subpartition.is_released
