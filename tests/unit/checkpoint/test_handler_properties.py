"""Laws of the barrier handlers, checked by driving them like a task does over random,
well-formed input streams (hypothesis):

- a checkpoint triggers at most once, and triggers come in increasing id order;
- the tracker never blocks; the aligner's Block/Resume actions always match ``is_blocked``,
  and after a trigger or abort that ends the checkpoint in progress nothing stays blocked;
- when every input ends, every queue drains (alignment never deadlocks);
- consistency: for each exactly-once checkpoint that completed, what was processed before the
  trigger plus what was persisted as in-flight data is exactly the data that preceded barrier
  n on each channel (all of a channel's data if it ended first); the at-least-once tracker
  has processed at least that data when it triggers.
"""

from __future__ import annotations

import random
from collections import Counter, deque
from dataclasses import dataclass, field

from hypothesis import given, settings
from hypothesis import strategies as st

from flintlock.runtime.checkpoint.alignment import (
    END_OF_PARTITION,
    AbortCheckpoint,
    Action,
    AlignmentType,
    BarrierAligner,
    BarrierTracker,
    BlockChannel,
    CancelCheckpointMarker,
    CheckpointBarrier,
    CheckpointingMode,
    CheckpointOptions,
    CheckpointType,
    PersistInflight,
    Phase,
    ResumeChannel,
    TriggerCheckpoint,
    create_barrier_handler,
)
from flintlock.testing.clock import ManualClock

OPTIONS = [
    CheckpointOptions(),
    CheckpointOptions(alignment=AlignmentType.UNALIGNED),
    CheckpointOptions(CheckpointType.SAVEPOINT, AlignmentType.FORCED_ALIGNED),
]
Item = bytes | CheckpointBarrier | CancelCheckpointMarker | object


@st.composite
def streams(draw: st.DrawFn) -> list[list[Item]]:
    """Per channel: records, then for each checkpoint id in order a barrier, a cancellation
    marker or nothing, with records in between; maybe an end of partition."""
    num_channels = draw(st.integers(1, 4))
    num_checkpoints = draw(st.integers(1, 5))
    options = [draw(st.sampled_from(OPTIONS)) for _ in range(num_checkpoints)]
    result: list[list[Item]] = []
    for channel in range(num_channels):
        items: list[Item] = []
        counter = 0
        for checkpoint_id in range(1, num_checkpoints + 1):
            for _ in range(draw(st.integers(0, 2))):
                items.append(f"{channel}:{counter}".encode())
                counter += 1
            kind = draw(st.sampled_from(["barrier", "barrier", "barrier", "marker", "skip"]))
            if kind == "barrier":
                items.append(CheckpointBarrier(checkpoint_id, 0, options[checkpoint_id - 1]))  # type: ignore[arg-type]
            elif kind == "marker":
                items.append(CancelCheckpointMarker(checkpoint_id))  # type: ignore[arg-type]
        items.append(f"{channel}:{counter}".encode())
        if draw(st.booleans()):
            items.append(END_OF_PARTITION)
        result.append(items)
    return result


@dataclass
class Run:
    """What a driver saw while feeding the streams into a handler."""

    processed: list[bytes] = field(default_factory=list)
    blocked: set[int] = field(default_factory=set)
    trigger_order: list[int] = field(default_factory=list)
    at_trigger: dict[int, set[bytes]] = field(default_factory=dict)
    persisted: dict[int, list[bytes]] = field(default_factory=dict)
    aborted: set[int] = field(default_factory=set)
    blocks: int = 0


Handler = BarrierTracker | BarrierAligner


def apply(run: Run, handler: Handler, actions: list[Action]) -> None:
    for action in actions:
        if isinstance(action, BlockChannel):
            assert action.channel not in run.blocked
            run.blocked.add(action.channel)
            run.blocks += 1
        elif isinstance(action, ResumeChannel):
            assert action.channel in run.blocked
            run.blocked.discard(action.channel)
        elif isinstance(action, TriggerCheckpoint):
            run.trigger_order.append(action.checkpoint_id)
            run.at_trigger[action.checkpoint_id] = set(run.processed)
        elif isinstance(action, PersistInflight):
            assert action.checkpoint_id in run.at_trigger
            assert action.checkpoint_id not in run.aborted
            run.persisted.setdefault(action.checkpoint_id, []).append(action.buffer)  # type: ignore[arg-type]
        elif isinstance(action, AbortCheckpoint):
            run.aborted.add(action.checkpoint_id)
    for channel in range(handler._channels.num_channels):
        assert handler.is_blocked(channel) == (channel in run.blocked)  # type: ignore[arg-type]
    if isinstance(handler, BarrierAligner) and handler.phase is not Phase.ALIGNING:
        assert not run.blocked


def drive(
    handler: Handler,
    items: list[list[Item]],
    rng: random.Random,
    clock: ManualClock | None = None,
    announce: bool = False,
) -> Run:
    run = Run()
    queues = [deque(channel_items) for channel_items in items]
    announced: set[tuple[int, int]] = set()
    for _ in range(10 * sum(len(q) for q in queues) + 10):
        ready = [ch for ch, queue in enumerate(queues) if queue and ch not in run.blocked]
        if not ready:
            break
        channel = rng.choice(ready)
        if clock is not None and rng.random() < 0.3:
            clock.advance(rng.choice([1, 4, 20]))
        if announce and rng.random() < 0.3:
            upcoming = next((i for i in queues[channel] if isinstance(i, CheckpointBarrier)), None)
            if upcoming is not None and (channel, upcoming.checkpoint_id) not in announced:
                announced.add((channel, upcoming.checkpoint_id))
                assert isinstance(handler, BarrierAligner)
                apply(run, handler, handler.on_barrier_announced(channel, upcoming))  # type: ignore[arg-type]
                continue
        item = queues[channel].popleft()
        apply(run, handler, deliver(handler, channel, item))
        if isinstance(item, bytes):
            run.processed.append(item)  # processed after the actions were carried out
    if clock is not None:
        clock.advance(1000)
        apply(run, handler, handler.on_timer())
    if all(channel_items[-1] is END_OF_PARTITION for channel_items in items):
        assert all(not queue for queue in queues), "an input was left blocked"
    return run


def deliver(handler: Handler, channel: int, item: Item) -> list[Action]:
    ch = channel  # a ChannelIndex at run time
    if isinstance(item, bytes):
        return handler.on_buffer(ch, item)  # type: ignore[arg-type]
    if isinstance(item, CheckpointBarrier):
        return handler.on_barrier(ch, item)  # type: ignore[arg-type]
    if isinstance(item, CancelCheckpointMarker):
        return handler.on_cancellation_marker(ch, item)  # type: ignore[arg-type]
    return handler.on_end_of_partition(ch)  # type: ignore[arg-type]


def prefix(channel_items: list[Item], checkpoint_id: int) -> set[bytes] | None:
    """The channel's data before barrier ``checkpoint_id``; all of it if the channel ended
    with nothing of that checkpoint or later; None if the checkpoint cannot complete."""
    records: set[bytes] = set()
    for item in channel_items:
        if isinstance(item, bytes):
            records.add(item)
        elif isinstance(item, CheckpointBarrier | CancelCheckpointMarker):
            if item.checkpoint_id == checkpoint_id and isinstance(item, CheckpointBarrier):
                return records
            if item.checkpoint_id >= checkpoint_id:
                return None
    return records if channel_items[-1] is END_OF_PARTITION else None


def common_laws(run: Run) -> None:
    assert max(Counter(run.trigger_order).values(), default=0) <= 1
    assert run.trigger_order == sorted(run.trigger_order)


def exactly_once_law(run: Run, handler: BarrierAligner, items: list[list[Item]]) -> None:
    for checkpoint_id, before in run.at_trigger.items():
        if checkpoint_id in run.aborted or handler.is_capturing(checkpoint_id):  # type: ignore[arg-type]
            continue
        prefixes = [prefix(channel_items, checkpoint_id) for channel_items in items]
        assert all(p is not None for p in prefixes), f"checkpoint {checkpoint_id} completed"
        expected = set().union(*(p for p in prefixes if p is not None))
        persisted = run.persisted.get(checkpoint_id, [])
        assert len(persisted) == len(set(persisted))
        assert not before & set(persisted)
        assert before | set(persisted) == expected


SETTINGS = settings(max_examples=100, deadline=None)


@SETTINGS
@given(streams(), st.randoms(use_true_random=False))
def test_tracker_laws(items: list[list[Item]], rng: random.Random) -> None:
    handler = create_barrier_handler(
        len(items), CheckpointingMode.AT_LEAST_ONCE, clock=ManualClock(0)
    )
    run = drive(handler, items, rng)
    common_laws(run)
    assert run.blocks == 0 and not run.blocked
    for checkpoint_id, before in run.at_trigger.items():
        prefixes = [prefix(channel_items, checkpoint_id) for channel_items in items]
        for channel_prefix in prefixes:
            assert channel_prefix is None or channel_prefix <= before


@SETTINGS
@given(streams(), st.randoms(use_true_random=False))
def test_aligner_laws(items: list[list[Item]], rng: random.Random) -> None:
    handler = create_barrier_handler(
        len(items), CheckpointingMode.EXACTLY_ONCE, clock=ManualClock(0)
    )
    assert isinstance(handler, BarrierAligner)
    run = drive(handler, items, rng)
    common_laws(run)
    assert not run.persisted
    exactly_once_law(run, handler, items)


@SETTINGS
@given(streams(), st.randoms(use_true_random=False))
def test_unaligned_laws(items: list[list[Item]], rng: random.Random) -> None:
    handler = create_barrier_handler(
        len(items), CheckpointingMode.EXACTLY_ONCE, unaligned=True, clock=ManualClock(0)
    )
    assert isinstance(handler, BarrierAligner)
    run = drive(handler, items, rng, announce=True)
    common_laws(run)
    exactly_once_law(run, handler, items)


@SETTINGS
@given(streams(), st.randoms(use_true_random=False))
def test_alternating_laws(items: list[list[Item]], rng: random.Random) -> None:
    clock = ManualClock(0)
    handler = create_barrier_handler(
        len(items),
        CheckpointingMode.EXACTLY_ONCE,
        unaligned=True,
        aligned_timeout_ms=10,
        clock=clock,
    )
    assert isinstance(handler, BarrierAligner)
    run = drive(handler, items, rng, clock=clock)
    common_laws(run)
    exactly_once_law(run, handler, items)
