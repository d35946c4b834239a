"""The checkpoint request queue: priority order and bounded size."""

from __future__ import annotations

import pytest

from flintlock.runtime.checkpoint.requests import CheckpointRequestQueue, RequestKind


def test_savepoints_then_manual_then_periodic_fifo_within_a_kind() -> None:
    queue = CheckpointRequestQueue()
    offered = [
        queue.new_request(RequestKind.PERIODIC),
        queue.new_request(RequestKind.MANUAL, "m1"),
        queue.new_request(RequestKind.SAVEPOINT, "s1", "/sp"),
        queue.new_request(RequestKind.MANUAL, "m2"),
        queue.new_request(RequestKind.SAVEPOINT, "s2"),
    ]
    for request in offered:
        assert queue.offer(request) is None
    assert queue.has_periodic
    head = queue.peek()
    assert head is not None and head.request_id == "s1" and head.target_dir == "/sp"
    order = [queue.poll().request_id for _ in range(len(queue))]
    assert order == ["s1", "s2", "m1", "m2", None]
    assert not queue.has_periodic and queue.peek() is None


def test_a_full_queue_rejects_what_does_not_outrank_its_lowest() -> None:
    queue = CheckpointRequestQueue(max_queued=2)
    queue.offer(queue.new_request(RequestKind.MANUAL, "m1"))
    queue.offer(queue.new_request(RequestKind.PERIODIC))
    periodic = queue.new_request(RequestKind.PERIODIC)
    assert queue.offer(periodic) is periodic
    evicted = queue.offer(queue.new_request(RequestKind.SAVEPOINT, "s"))
    assert evicted is not None and evicted.kind is RequestKind.PERIODIC
    manual = queue.new_request(RequestKind.MANUAL, "m2")
    assert queue.offer(manual) is manual
    assert [r.request_id for r in queue.drain()] == ["s", "m1"]
    assert len(queue) == 0


def test_bounds_are_checked() -> None:
    with pytest.raises(ValueError):
        CheckpointRequestQueue(0)
