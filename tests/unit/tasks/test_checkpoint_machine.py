"""A subtask's checkpoint machine, driven with lists of events and checked against the exact
commands it returns (issue 29): no sockets, threads or sleeps."""

from __future__ import annotations

from flintlock.common.checkpointing import CheckpointingMode
from flintlock.common.ids import ChannelIndex, CheckpointId
from flintlock.runtime.checkpoint.failure import CheckpointFailureReason
from flintlock.runtime.network.barriers import (
    AlignmentType,
    CancelCheckpointMarker,
    CheckpointBarrier,
    CheckpointOptions,
    CheckpointType,
)
from flintlock.runtime.tasks.checkpointing import commands as cmd
from flintlock.runtime.tasks.checkpointing import events as ev
from flintlock.runtime.tasks.checkpointing.actions import (
    BlockChannel,
    PersistInflight,
    ResumeChannel,
)
from flintlock.runtime.tasks.checkpointing.handlers import create_barrier_handler
from flintlock.runtime.tasks.checkpointing.machine import MachineSettings, SubtaskCheckpointMachine
from flintlock.testing.clock import ManualClock

C1, C2, C3 = CheckpointId(1), CheckpointId(2), CheckpointId(3)
CH0, CH1 = ChannelIndex(0), ChannelIndex(1)
UNALIGNED = CheckpointOptions(alignment=AlignmentType.UNALIGNED)
SUBSUMED = CheckpointFailureReason.CHECKPOINT_DECLINED_SUBSUMED
CANCELLED = CheckpointFailureReason.CHECKPOINT_DECLINED_ON_CANCELLATION_BARRIER
ALIGNED_METRICS = {"alignment_duration_ms": 0.0, "start_delay_ms": 0.0,
                   "bytes_processed_during_alignment": 0.0}


def barrier(checkpoint_id: CheckpointId, options: CheckpointOptions | None = None,
            timestamp: int = 0) -> CheckpointBarrier:
    return CheckpointBarrier(checkpoint_id, timestamp, options or CheckpointOptions())


def source(**settings: bool) -> SubtaskCheckpointMachine:
    return SubtaskCheckpointMachine(MachineSettings(**settings), None, ManualClock(0))


def task(channels: int = 2, mode: CheckpointingMode = CheckpointingMode.EXACTLY_ONCE,
         unaligned: bool = False, timeout_ms: float | None = None,
         clock: ManualClock | None = None, **settings: bool) -> SubtaskCheckpointMachine:
    clock = clock or ManualClock(0)
    handler = create_barrier_handler(channels, mode, unaligned=unaligned,
                                     aligned_timeout_ms=timeout_ms, clock=clock)
    return SubtaskCheckpointMachine(MachineSettings(unaligned=unaligned, **settings), handler,
                                    clock)


def run(machine: SubtaskCheckpointMachine, *events: ev.Event) -> list[cmd.Command]:
    return [command for event in events for command in machine.handle(event)]


def took(b: CheckpointBarrier, metrics: dict[str, float] | None = None) -> list[cmd.Command]:
    """An aligned checkpoint taken: snapshot, barrier out, asynchronous part submitted."""
    return [cmd.SnapshotChain(b), cmd.ForwardBarrier(b),
            cmd.SubmitAsyncPart(b.checkpoint_id, metrics if metrics is not None else {}, False,
                                b.options.is_savepoint)]


# -- sources -------------------------------------------------------------------------------


def test_a_source_trigger_takes_an_aligned_checkpoint() -> None:
    assert run(source(), ev.TriggerReceived(barrier(C1))) == took(barrier(C1))


def test_a_trigger_not_newer_than_the_last_barrier_is_declined_at_once() -> None:
    machine = source()
    run(machine, ev.TriggerReceived(barrier(C2)))
    assert run(machine, ev.TriggerReceived(barrier(C1))) == [cmd.Decline(C1, SUBSUMED)]


def test_a_source_restored_as_finished_acknowledges_as_finished() -> None:
    commands = run(source(finished_on_restore=True), ev.TriggerReceived(barrier(C1)))
    assert commands == [cmd.ForwardBarrier(barrier(C1)), cmd.AcknowledgeFinished(C1, {})]


def test_the_final_checkpoint_is_the_first_after_the_input_ended() -> None:
    machine = source()
    run(machine, ev.TriggerReceived(barrier(C1)), ev.TriggerReceived(barrier(C2), True))
    run(machine, ev.CheckpointCompleted(C1))
    assert not machine.final_checkpoint_done and machine.completed_up_to == 1
    run(machine, ev.CheckpointCompleted(C2, in_flight_data=True))
    assert not machine.final_checkpoint_done  # its in-flight data is processed after it
    run(machine, ev.TriggerReceived(barrier(C3), True), ev.CheckpointCompleted(C3))
    assert machine.final_checkpoint_done


def test_completion_is_passed_to_the_chain_once() -> None:
    machine = source()
    assert run(machine, ev.CheckpointCompleted(C2), ev.CheckpointCompleted(C1),
               ev.CheckpointCompleted(C2)) == [cmd.NotifyChain(C2, True)]


# -- aborts reach the task (issue 29) --------------------------------------------------------


def test_an_abort_notified_before_the_trigger_makes_the_source_emit_a_marker() -> None:
    machine = source()
    assert run(machine, ev.CheckpointAborted(C1)) == [cmd.NotifyChain(C1, False)]
    assert run(machine, ev.TriggerReceived(barrier(C1))) == [cmd.ForwardCancellationMarker(C1)]
    assert run(machine, ev.TriggerReceived(barrier(C2))) == took(barrier(C2))


def test_an_abort_after_the_barrier_went_out_cancels_the_async_part_and_sends_a_marker() -> None:
    machine = source()
    run(machine, ev.TriggerReceived(barrier(C1)))
    assert run(machine, ev.CheckpointAborted(C1)) == [
        cmd.CancelAsyncPart(C1), cmd.ForwardCancellationMarker(C1), cmd.NotifyChain(C1, False)]


def test_an_abort_after_completion_cancels_nothing() -> None:
    machine = source()
    run(machine, ev.TriggerReceived(barrier(C1)), ev.CheckpointCompleted(C1))
    assert cmd.CancelAsyncPart(C1) not in run(machine, ev.CheckpointAborted(C1))


def test_an_abort_notification_releases_an_alignment_in_progress() -> None:
    machine = task()
    assert run(machine, ev.BarrierReceived(CH0, barrier(C1))) == [BlockChannel(CH0)]
    assert run(machine, ev.CheckpointAborted(C1)) == [
        ResumeChannel(CH0), cmd.ForwardCancellationMarker(C1), cmd.NotifyChain(C1, False)]
    assert run(machine, ev.BarrierReceived(CH1, barrier(C1))) == []  # late barrier: ignored
    assert run(machine, ev.BarrierReceived(CH0, barrier(C2))) == [BlockChannel(CH0)]


def test_an_abort_of_a_checkpoint_not_seen_yet_keeps_its_barriers_from_aligning() -> None:
    machine = task()
    assert run(machine, ev.CheckpointAborted(C1)) == [cmd.NotifyChain(C1, False)]
    assert run(machine, ev.BarrierReceived(CH0, barrier(C1)),
               ev.BarrierReceived(CH1, barrier(C1))) == []


def test_a_marker_downstream_aborts_declines_and_forwards_it() -> None:
    machine = task()
    run(machine, ev.BarrierReceived(CH0, barrier(C1)))
    assert run(machine, ev.CancellationMarkerReceived(CH1, CancelCheckpointMarker(C1))) == [
        cmd.ForwardCancellationMarker(C1), cmd.Decline(C1, CANCELLED), ResumeChannel(CH0)]


def test_at_least_once_abort_notification_drops_the_pending_count() -> None:
    machine = task(mode=CheckpointingMode.AT_LEAST_ONCE)
    run(machine, ev.BarrierReceived(CH0, barrier(C1)))
    assert run(machine, ev.CheckpointAborted(C1)) == [
        cmd.ForwardCancellationMarker(C1), cmd.NotifyChain(C1, False)]
    assert run(machine, ev.BarrierReceived(CH1, barrier(C1))) == []


def test_an_unaligned_checkpoint_aborted_while_capturing_releases_its_held_part() -> None:
    machine = task(unaligned=True)
    run(machine, ev.BarrierReceived(CH0, barrier(C1, UNALIGNED)))
    assert machine.waiting == [C1]
    assert run(machine, ev.CheckpointAborted(C1)) == [
        cmd.CancelAsyncPart(C1), cmd.ForwardCancellationMarker(C1), cmd.NotifyChain(C1, False)]
    assert machine.waiting == []
    assert run(machine, ev.BufferReceived(CH1, b"x")) == []  # capture is over


# -- inputs: aligned, unaligned, alternating --------------------------------------------------


def test_alignment_blocks_then_takes_and_releases() -> None:
    machine = task()
    commands = run(machine, ev.BarrierReceived(CH0, barrier(C1)),
                   ev.BarrierReceived(CH1, barrier(C1)))
    assert commands == [BlockChannel(CH0), *took(barrier(C1), ALIGNED_METRICS),
                        ResumeChannel(CH0)]
    assert machine.last_barrier == 1


def test_unaligned_capture_order_and_submission_once_every_barrier_arrived() -> None:
    machine = task(unaligned=True)
    b = barrier(C1, UNALIGNED)
    first = run(machine, ev.BarrierReceived(CH0, b))
    metrics = {**ALIGNED_METRICS, "unaligned": 1.0}
    assert first == [cmd.OpenChannelState(C1, True), cmd.CaptureOvertakenInput(C1, CH0),
                     cmd.SnapshotChain(b), cmd.ForwardBarrier(b), cmd.CaptureOutputState(C1)]
    assert run(machine, ev.BufferReceived(CH0, b"after")) == []
    assert run(machine, ev.BufferReceived(CH1, b"inflight")) == [
        PersistInflight(C1, CH1, b"inflight")]
    assert run(machine, ev.BarrierReceived(CH1, b)) == [
        cmd.CaptureOvertakenInput(C1, CH1), cmd.SubmitAsyncPart(C1, metrics, True)]


def test_end_of_partition_ends_an_unaligned_capture() -> None:
    machine = task(unaligned=True)
    run(machine, ev.BarrierReceived(CH0, barrier(C1, UNALIGNED)))
    commands = run(machine, ev.EndOfPartitionReceived(CH1))
    assert [type(c) for c in commands] == [cmd.SubmitAsyncPart]


def test_alternating_alignment_times_out_into_unaligned() -> None:
    clock = ManualClock(0)
    machine = task(unaligned=True, timeout_ms=100, clock=clock)
    b = barrier(C1, CheckpointOptions(alignment_timeout_ms=100))
    assert run(machine, ev.BarrierReceived(CH0, b)) == [
        BlockChannel(CH0), cmd.ScheduleEvent(0.1, ev.AlignmentTimerFired())]
    clock.advance(100)
    commands = run(machine, ev.AlignmentTimerFired())
    switched = b.with_options(b.options.to_unaligned())
    assert commands[:5] == [cmd.OpenChannelState(C1, True), cmd.SnapshotChain(switched),
                            cmd.ForwardBarrier(switched), cmd.CaptureOutputState(C1),
                            ResumeChannel(CH0)]
    assert machine.waiting == [C1]


def test_a_timeoutable_barrier_waits_for_its_outputs_then_submits_aligned() -> None:
    machine = source(unaligned=True, pipelined_outputs=True)
    b = barrier(C1, CheckpointOptions(alignment_timeout_ms=100))
    assert run(machine, ev.TriggerReceived(b)) == [
        cmd.OpenChannelState(C1, False), cmd.SnapshotChain(b), cmd.ForwardBarrier(b),
        cmd.PollOutputBarriers(C1, 0.0)]
    assert run(machine, ev.OutputBarriersPolled(C1, True, 50.0)) == [
        cmd.PollOutputBarriers(C1, 0.01)]
    assert run(machine, ev.OutputBarriersPolled(C1, False, 60.0)) == [
        cmd.SubmitAsyncPart(C1, {}, True)]


def test_a_timeoutable_barrier_still_queued_at_its_deadline_is_converted() -> None:
    machine = source(unaligned=True, pipelined_outputs=True)
    b = barrier(C1, CheckpointOptions(alignment_timeout_ms=20))
    run(machine, ev.TriggerReceived(b))
    assert run(machine, ev.OutputBarriersPolled(C1, True, 20.0)) == [
        cmd.ConvertQueuedBarriers(b.with_options(b.options.to_unaligned())),
        cmd.SubmitAsyncPart(C1, {"unaligned": 1.0}, True)]
    assert run(machine, ev.OutputBarriersPolled(C1, True, 30.0)) == []  # nothing left


def test_an_aborted_timeoutable_barrier_stops_polling() -> None:
    machine = source(unaligned=True, pipelined_outputs=True)
    run(machine, ev.TriggerReceived(barrier(C1, CheckpointOptions(alignment_timeout_ms=20))))
    run(machine, ev.CheckpointAborted(C1))
    assert run(machine, ev.OutputBarriersPolled(C1, True, 5.0)) == []


# -- stop with a savepoint -------------------------------------------------------------------


def stop(checkpoint_id: CheckpointId, drain: bool = False) -> CheckpointBarrier:
    kind = CheckpointType.SAVEPOINT_TERMINATE if drain else CheckpointType.SAVEPOINT_SUSPEND
    return barrier(checkpoint_id, CheckpointOptions(kind, AlignmentType.FORCED_ALIGNED))


def test_a_stop_with_savepoint_suspends_the_source_until_it_completes() -> None:
    machine = source()
    assert run(machine, ev.TriggerReceived(stop(C1))) == took(stop(C1))
    assert machine.suspended and not machine.stopped and machine.stops_without_draining
    run(machine, ev.CheckpointCompleted(C1))
    assert machine.stopped and not machine.suspended


def test_a_failed_stop_with_savepoint_resumes_the_source() -> None:
    machine = source()
    run(machine, ev.TriggerReceived(stop(C1)), ev.CheckpointAborted(C1))
    assert not machine.suspended and not machine.stopped
    assert not machine.stops_without_draining


def test_a_draining_stop_ends_the_input_before_the_barrier() -> None:
    machine = source()
    assert run(machine, ev.TriggerReceived(stop(C1, drain=True))) == [
        cmd.DrainInput(), *took(stop(C1, drain=True))]
    assert not machine.stops_without_draining
    run(machine, ev.CheckpointCompleted(C1))
    assert machine.final_checkpoint_done and machine.stopped


def test_a_task_with_inputs_stops_after_the_aligned_stop_barrier() -> None:
    machine = task()
    run(machine, ev.BarrierReceived(CH0, stop(C1)), ev.BarrierReceived(CH1, stop(C1)))
    assert machine.stops_without_draining
