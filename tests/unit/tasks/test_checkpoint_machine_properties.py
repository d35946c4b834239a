"""Laws of a subtask's checkpoint machine under any order of input events, aborts and
completions (hypothesis; issue 29): a checkpoint is taken at most once and never after its
abort; its asynchronous part is submitted at most once and never after it was cancelled;
channels are blocked and resumed in turn, and none stays blocked for a checkpoint that was
aborted or taken."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from flintlock.common.checkpointing import CheckpointingMode
from flintlock.common.ids import ChannelIndex, CheckpointId
from flintlock.runtime.network.barriers import (
    AlignmentType,
    CancelCheckpointMarker,
    CheckpointBarrier,
    CheckpointOptions,
)
from flintlock.runtime.tasks.checkpointing import commands as cmd
from flintlock.runtime.tasks.checkpointing import events as ev
from flintlock.runtime.tasks.checkpointing.actions import BlockChannel, ResumeChannel
from flintlock.runtime.tasks.checkpointing.handlers import create_barrier_handler
from flintlock.runtime.tasks.checkpointing.machine import MachineSettings, SubtaskCheckpointMachine
from flintlock.testing.clock import ManualClock

CHANNELS = 3
STEPS = st.lists(st.tuples(
    st.sampled_from(["barrier", "barrier", "barrier", "buffer", "marker", "abort", "complete",
                     "end"]),
    st.integers(0, CHANNELS - 1),
    st.integers(0, 2)), max_size=60)


def _events(steps, unaligned: bool):
    """Well-formed input: per channel, barrier ids rise and nothing follows its end."""
    next_id = [1] * CHANNELS
    ended: set[int] = set()
    options = CheckpointOptions(alignment=AlignmentType.UNALIGNED) if unaligned else None
    for kind, channel, skip in steps:
        newest = max(next_id)
        if kind == "abort":
            yield ev.CheckpointAborted(CheckpointId(max(1, newest - skip)))
        elif kind == "complete":
            yield ev.CheckpointCompleted(CheckpointId(max(1, newest - 1 - skip)))
        elif channel in ended:
            continue
        elif kind == "end":
            ended.add(channel)
            yield ev.EndOfPartitionReceived(ChannelIndex(channel))
        elif kind == "buffer":
            yield ev.BufferReceived(ChannelIndex(channel), b"x")
        else:
            checkpoint_id = CheckpointId(next_id[channel] + skip)
            next_id[channel] = checkpoint_id + 1
            if kind == "marker":
                yield ev.CancellationMarkerReceived(ChannelIndex(channel),
                                                    CancelCheckpointMarker(checkpoint_id))
            else:
                yield ev.BarrierReceived(ChannelIndex(channel), CheckpointBarrier(
                    checkpoint_id, 0, options or CheckpointOptions()))


def _check(steps, unaligned: bool, mode: CheckpointingMode) -> None:
    clock = ManualClock(0)
    handler = create_barrier_handler(CHANNELS, mode, unaligned=unaligned, clock=clock)
    machine = SubtaskCheckpointMachine(MachineSettings(unaligned=unaligned), handler, clock)
    taken: set[int] = set()
    submitted: set[int] = set()
    cancelled: set[int] = set()
    aborted: set[int] = set()
    blocked: set[int] = set()
    for event in _events(steps, unaligned):
        if isinstance(event, ev.CheckpointAborted):
            aborted.add(event.checkpoint_id)
        for command in machine.handle(event):
            if isinstance(command, cmd.SnapshotChain):
                checkpoint_id = command.barrier.checkpoint_id
                assert checkpoint_id not in taken, "taken twice"
                assert checkpoint_id not in aborted, "taken after its abort"
                taken.add(checkpoint_id)
            elif isinstance(command, cmd.SubmitAsyncPart):
                assert command.checkpoint_id in taken
                assert command.checkpoint_id not in submitted | cancelled
                submitted.add(command.checkpoint_id)
            elif isinstance(command, cmd.CancelAsyncPart):
                assert command.checkpoint_id in taken
                cancelled.add(command.checkpoint_id)
            elif isinstance(command, BlockChannel):
                assert command.channel not in blocked
                blocked.add(command.channel)
            elif isinstance(command, ResumeChannel):
                assert command.channel in blocked
                blocked.discard(command.channel)
        if isinstance(event, ev.CheckpointAborted):
            stats = handler.statistics()
            assert event.checkpoint_id not in stats.in_progress
    assert set(handler.statistics().blocked_channels) == blocked


@settings(max_examples=300, deadline=None)
@given(STEPS)
def test_aligned_laws(steps) -> None:
    _check(steps, unaligned=False, mode=CheckpointingMode.EXACTLY_ONCE)


@settings(max_examples=300, deadline=None)
@given(STEPS)
def test_unaligned_laws(steps) -> None:
    _check(steps, unaligned=True, mode=CheckpointingMode.EXACTLY_ONCE)


@settings(max_examples=200, deadline=None)
@given(STEPS)
def test_at_least_once_laws(steps) -> None:
    _check(steps, unaligned=False, mode=CheckpointingMode.AT_LEAST_ONCE)
