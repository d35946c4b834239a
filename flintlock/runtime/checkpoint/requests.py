"""Checkpoint requests waiting to be triggered, in priority order.

Three kinds, in the order they run: savepoints, then manual checkpoints, then the periodic
checkpoint; first come, first served within a kind. The queue is bounded (1000 by default):
when it is full, a new request that does not outrank the lowest-priority queued one is
rejected; otherwise that lowest, newest queued request is evicted to make room. Both are
refused with TOO_MANY_CHECKPOINT_REQUESTS by the coordinator.

At most one periodic request waits at a time (a periodic tick while one waits adds nothing:
two identical periodic checkpoints back to back would be waste).

Thread ownership: owned by the coordinator's thread.
"""

from __future__ import annotations

import enum
import heapq
import itertools
from dataclasses import dataclass, field

from flintlock.runtime.network.barriers import CheckpointType

DEFAULT_MAX_QUEUED_REQUESTS = 1000


class RequestKind(enum.IntEnum):
    """Lower runs first."""

    SAVEPOINT = 0
    MANUAL = 1
    PERIODIC = 2


@dataclass(frozen=True, slots=True, order=True)
class CheckpointRequest:
    kind: RequestKind
    sequence: int
    request_id: str | None = field(default=None, compare=False)
    target_dir: str | None = field(default=None, compare=False)
    """Savepoints only: where to write it (None: the configured savepoint dir)."""
    savepoint_type: CheckpointType = field(default=CheckpointType.SAVEPOINT, compare=False)
    """Savepoints only: SAVEPOINT, or a stop-with-savepoint (SAVEPOINT_SUSPEND, or
    SAVEPOINT_TERMINATE with drain)."""

    @property
    def checkpoint_type(self) -> CheckpointType:
        return self.savepoint_type if self.is_savepoint else CheckpointType.CHECKPOINT

    @property
    def is_savepoint(self) -> bool:
        return self.kind is RequestKind.SAVEPOINT

    @property
    def is_periodic(self) -> bool:
        return self.kind is RequestKind.PERIODIC


def savepoint_type(stop: bool, drain: bool) -> CheckpointType:
    """A savepoint's type: SAVEPOINT, or a stop-with-savepoint's synchronous SAVEPOINT_SUSPEND
    (SAVEPOINT_TERMINATE with ``drain``)."""
    if not stop:
        return CheckpointType.SAVEPOINT
    return CheckpointType.SAVEPOINT_TERMINATE if drain else CheckpointType.SAVEPOINT_SUSPEND


class CheckpointRequestQueue:
    """A bounded priority queue of ``CheckpointRequest``s."""

    def __init__(self, max_queued: int = DEFAULT_MAX_QUEUED_REQUESTS) -> None:
        if max_queued < 1:
            raise ValueError("max_queued must be at least 1")
        self.max_queued = max_queued
        self._heap: list[CheckpointRequest] = []
        self._sequence = itertools.count()

    def __len__(self) -> int:
        return len(self._heap)

    def new_request(
        self, kind: RequestKind, request_id: str | None = None, target_dir: str | None = None,
        savepoint_type: CheckpointType = CheckpointType.SAVEPOINT,
    ) -> CheckpointRequest:
        return CheckpointRequest(kind, next(self._sequence), request_id, target_dir,
                                 savepoint_type)

    @property
    def has_periodic(self) -> bool:
        return any(r.is_periodic for r in self._heap)

    def offer(self, request: CheckpointRequest) -> CheckpointRequest | None:
        """Queue ``request``; returns the request refused for lack of room, if any."""
        if len(self._heap) < self.max_queued:
            heapq.heappush(self._heap, request)
            return None
        worst = max(self._heap)
        if request.kind >= worst.kind:
            return request
        self._heap.remove(worst)
        heapq.heapify(self._heap)
        heapq.heappush(self._heap, request)
        return worst

    def peek(self) -> CheckpointRequest | None:
        return self._heap[0] if self._heap else None

    def poll(self) -> CheckpointRequest:
        return heapq.heappop(self._heap)

    def drain(self) -> list[CheckpointRequest]:
        """Remove and return every queued request, in priority order."""
        drained = sorted(self._heap)
        self._heap.clear()
        return drained
