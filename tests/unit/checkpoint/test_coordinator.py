"""CheckpointCoordinator scenarios: facts in, exact actions out (ManualClock, tmp_path storage)."""

from __future__ import annotations

import pickle
import random
from pathlib import Path

import pytest

from flintlock.common.ids import CheckpointId, JobVertexId, SubtaskIndex
from flintlock.runtime.checkpoint.completed import CompletedCheckpoint, JobTerminalStatus
from flintlock.runtime.checkpoint.coordinator import CheckpointCoordinator
from flintlock.runtime.checkpoint.coordinator_actions import (
    CompleteCheckpointRequest,
    CompleteSavepointRequest,
    CoordinatorAction,
    FailCheckpointRequest,
    FailJob,
    FailSavepointRequest,
    NotifyCheckpointAborted,
    NotifyCheckpointComplete,
    ScheduleNextTrigger,
    ScheduleTimeout,
    TriggerCheckpointOnTask,
)
from flintlock.runtime.checkpoint.coordinator_settings import CheckpointTaskSets
from flintlock.runtime.checkpoint.failure import CheckpointFailureReason as R
from flintlock.runtime.checkpoint.failure_manager import TooManyCheckpointFailuresError
from flintlock.runtime.checkpoint.metadata import resolve_savepoint
from flintlock.runtime.checkpoint.pending import TaskId
from flintlock.runtime.checkpoint.stats import SubtaskCheckpointMetrics
from flintlock.runtime.checkpoint.storage import CheckpointStorage, CheckpointStorageLocation
from flintlock.runtime.checkpoint.store import CompletedCheckpointStore
from flintlock.runtime.network.barriers import AlignmentType, CheckpointOptions, CheckpointType
from flintlock.runtime.state.handles import CorruptStateError
from tests.unit.checkpoint.coordinator_harness import (
    ALL,
    JOB,
    OPTS,
    SINK,
    SOURCES,
    SP_OPTS,
    SRC0,
    SRC1,
    START,
    TIMEOUT,
    Harness,
)
from tests.unit.checkpoint.file_states import exists


class FailingStore(CompletedCheckpointStore):
    def add(self, checkpoint: CompletedCheckpoint) -> list[CompletedCheckpoint]:
        raise OSError("disk full")


def triggered(checkpoint_id: int, at: float, options: CheckpointOptions = OPTS,
              location: str = "", timestamp: int | None = None) -> list[CoordinatorAction]:
    ts = int(at) if timestamp is None else timestamp
    return [ScheduleTimeout(CheckpointId(checkpoint_id), at + TIMEOUT)] + [
        TriggerCheckpointOnTask(task, CheckpointId(checkpoint_id), ts, options, location)
        for task in SOURCES
    ]


def completed(checkpoint_id: int) -> list[CoordinatorAction]:
    return [NotifyCheckpointComplete(task, CheckpointId(checkpoint_id)) for task in ALL]


def aborted(checkpoint_id: int, reason: R) -> list[CoordinatorAction]:
    return [NotifyCheckpointAborted(task, CheckpointId(checkpoint_id), reason) for task in ALL]


@pytest.fixture
def h(tmp_path: Path) -> Harness:
    harness = Harness(tmp_path, tolerable_failed_checkpoints=5)
    harness.all_running()
    return harness


# -- trigger, ack, complete ------------------------------------------------------------------


def test_trigger_ack_complete(h: Harness) -> None:
    assert h.coordinator.trigger_checkpoint() == triggered(1, START, location=h.location(1))
    assert Path(h.location(1)).is_dir()
    assert h.ack(1, SRC0) == []
    assert h.ack(1, SINK) == []
    assert h.ack(1, SRC1) == completed(1)
    latest = h.store.latest()
    assert latest is not None and latest.checkpoint_id == 1
    assert set(latest.task_states) == set(ALL)
    assert h.coordinator.pending_checkpoints == {}


def test_notify_complete_only_after_the_metadata_is_durable(h: Harness) -> None:
    h.coordinator.trigger_checkpoint()
    actions = h.ack_all(1)
    assert actions == completed(1)
    assert resolve_savepoint(h.location(1)).checkpoint_id == 1


def test_a_failed_store_write_notifies_abort_not_complete(tmp_path: Path) -> None:
    h = Harness(tmp_path, store=FailingStore(1), tolerable_failed_checkpoints=0)
    h.all_running()
    h.coordinator.trigger_checkpoint(request_id="r1")
    actions = h.ack_all(1)
    assert not any(isinstance(a, NotifyCheckpointComplete) for a in actions)
    assert actions[:3] == aborted(1, R.FINALIZE_CHECKPOINT_FAILURE)
    assert isinstance(actions[3], FailCheckpointRequest)
    assert actions[3].error.reason is R.FINALIZE_CHECKPOINT_FAILURE
    assert isinstance(actions[4], FailJob)
    assert not any(exists(s) for s in h.states.values())
    assert not Path(h.location(1)).exists()


def test_manual_request_is_answered(h: Harness) -> None:
    h.coordinator.trigger_checkpoint(request_id="mine")
    assert h.ack_all(1)[-1] == CompleteCheckpointRequest("mine", CheckpointId(1), h.location(1))


def test_options_follow_the_configuration(tmp_path: Path) -> None:
    cases = [
        ({"mode": "at-least-once"}, AlignmentType.AT_LEAST_ONCE, None),
        ({"unaligned.enabled": True}, AlignmentType.UNALIGNED, None),
        ({"unaligned.enabled": True, "aligned-checkpoint-timeout": 30},
         AlignmentType.ALIGNED, 30),
    ]
    for index, (options, alignment, timeout) in enumerate(cases):
        h = Harness(tmp_path / str(index))
        h.config.add_all({f"execution.checkpointing.{k}": v for k, v in options.items()})
        h.coordinator = CheckpointCoordinator(
            JOB, h.config, CheckpointTaskSets.for_job(SOURCES, ALL), h.storage, h.store,
            h.clock, random.Random(1))
        h.all_running()
        trigger = h.coordinator.trigger_checkpoint()[1]
        assert isinstance(trigger, TriggerCheckpointOnTask)
        assert trigger.options == CheckpointOptions(CheckpointType.CHECKPOINT, alignment, timeout)
        savepoint = h.coordinator.trigger_savepoint("s")[1]
        assert isinstance(savepoint, TriggerCheckpointOnTask)
        expected = AlignmentType.AT_LEAST_ONCE if "mode" in options else AlignmentType.ALIGNED
        assert savepoint.options == CheckpointOptions(CheckpointType.SAVEPOINT, expected)


# -- pre-flight checks -----------------------------------------------------------------------


def test_tasks_not_running_refuse_without_counting(tmp_path: Path) -> None:
    h = Harness(tmp_path, tolerable_failed_checkpoints=0)
    h.coordinator.on_task_state_changed(SRC0, True)
    actions = h.coordinator.trigger_checkpoint(request_id="r")
    assert len(actions) == 1 and isinstance(actions[0], FailCheckpointRequest)
    assert actions[0].error.reason is R.NOT_ALL_REQUIRED_TASKS_RUNNING
    savepoint = h.coordinator.trigger_savepoint("s")
    assert isinstance(savepoint[0], FailSavepointRequest)
    assert h.coordinator.statistics().refused == {R.NOT_ALL_REQUIRED_TASKS_RUNNING: 2}
    assert h.coordinator.next_checkpoint_id == 1
    for task in (SRC1, SINK):
        h.coordinator.on_task_state_changed(task, True)
    assert h.coordinator.trigger_checkpoint() == triggered(1, START, location=h.location(1))


def test_max_concurrent_queues_the_next_request_until_one_completes(h: Harness) -> None:
    h.coordinator.trigger_checkpoint()
    assert h.coordinator.trigger_checkpoint(request_id="second") == []
    assert h.coordinator.queued_requests == 1
    h.clock.advance(5)
    actions = h.ack_all(1)
    assert actions == completed(1) + triggered(2, START + 5, location=h.location(2))


def test_two_concurrent_checkpoints_when_allowed(tmp_path: Path) -> None:
    h = Harness(tmp_path, max_concurrent_checkpoints=2)
    h.all_running()
    h.coordinator.trigger_checkpoint()
    assert h.coordinator.trigger_checkpoint() == triggered(2, START, location=h.location(2))
    assert h.coordinator.trigger_checkpoint() == []
    assert sorted(h.coordinator.pending_checkpoints) == [1, 2]


def test_min_pause_delays_the_next_checkpoint(tmp_path: Path) -> None:
    h = Harness(tmp_path, min_pause=500)
    h.all_running()
    h.coordinator.trigger_checkpoint()
    h.clock.advance(100)
    h.ack_all(1)
    h.clock.advance(200)
    assert h.coordinator.trigger_checkpoint() == [ScheduleNextTrigger(START + 600)]
    h.clock.advance(299)
    assert h.coordinator.on_periodic_tick() == [ScheduleNextTrigger(START + 600)]
    h.clock.advance(1)
    assert h.coordinator.on_periodic_tick() == triggered(2, START + 600, location=h.location(2))


def test_stop_with_savepoint_stops_checkpoints_until_the_savepoint_fails(h: Harness) -> None:
    """A checkpoint triggered after a stop-savepoint could complete before the job ends and
    commit output the savepoint does not hold: none is triggered while the stop is under way."""
    actions = h.coordinator.trigger_savepoint("stop", stop=True)
    assert any(isinstance(a, TriggerCheckpointOnTask) for a in actions)
    refused = h.coordinator.trigger_checkpoint(request_id="r")
    assert isinstance(refused[0], FailCheckpointRequest)
    assert refused[0].error.reason is R.PERIODIC_SCHEDULER_SHUTDOWN
    h.clock.advance(10_000)
    assert not any(isinstance(a, TriggerCheckpointOnTask)
                   for a in h.coordinator.on_periodic_tick())
    h.coordinator.resume_periodic()
    assert any(isinstance(a, TriggerCheckpointOnTask)
               for a in h.coordinator.trigger_checkpoint())


def test_savepoints_ignore_max_concurrent_and_min_pause(tmp_path: Path) -> None:
    h = Harness(tmp_path, min_pause=10_000)
    h.all_running()
    h.coordinator.trigger_checkpoint()
    h.ack_all(1)
    h.coordinator.trigger_checkpoint()
    assert h.coordinator.queued_requests == 1
    actions = h.coordinator.trigger_savepoint("sp")
    assert actions[0] == ScheduleTimeout(CheckpointId(2), START + TIMEOUT)
    trigger = actions[1]
    assert isinstance(trigger, TriggerCheckpointOnTask) and trigger.options == SP_OPTS
    assert Path(trigger.location).parent == h.tmp_path / "sp"


def test_periodic_triggering(tmp_path: Path) -> None:
    h = Harness(tmp_path, interval=1000)
    h.all_running()
    start = h.coordinator.start()
    assert len(start) == 1 and isinstance(start[0], ScheduleNextTrigger)
    first_due = start[0].at_ms
    assert START <= first_due <= START + 1000
    assert h.coordinator.on_periodic_tick() == [ScheduleNextTrigger(first_due)]
    h.clock.advance(first_due - START)
    now = first_due
    assert h.coordinator.on_periodic_tick() == [
        *triggered(1, now, location=h.location(1)), ScheduleNextTrigger(now + 1000)]
    h.clock.advance(1000)
    assert h.coordinator.on_periodic_tick() == []  # checkpoint 1 still pending
    h.clock.advance(10)
    assert h.ack_all(1) == completed(1) + triggered(2, now + 1010, location=h.location(2)) + [
        ScheduleNextTrigger(now + 2010)]


def test_request_queue_overflow(tmp_path: Path) -> None:
    h = Harness(tmp_path, max_queued=2)
    h.all_running()
    h.coordinator.trigger_checkpoint()
    assert h.coordinator.trigger_checkpoint(request_id="a") == []
    assert h.coordinator.trigger_checkpoint(request_id="b") == []
    overflow = h.coordinator.trigger_checkpoint(request_id="c")
    assert len(overflow) == 1 and isinstance(overflow[0], FailCheckpointRequest)
    assert overflow[0].request_id == "c"
    assert overflow[0].error.reason is R.TOO_MANY_CHECKPOINT_REQUESTS
    assert h.coordinator.statistics().refused == {R.TOO_MANY_CHECKPOINT_REQUESTS: 1}


class BrokenStorage(CheckpointStorage):
    def init_checkpoint(self, checkpoint_id: CheckpointId) -> CheckpointStorageLocation:
        raise OSError("read-only file system")


def test_a_location_that_cannot_be_created_is_a_counted_failure(tmp_path: Path) -> None:
    h = Harness(tmp_path, tolerable_failed_checkpoints=0)
    h.storage = BrokenStorage(str(tmp_path / "ro"), JOB)
    h.coordinator = CheckpointCoordinator(
        JOB, h.config, CheckpointTaskSets.for_job(SOURCES, ALL), h.storage, h.store, h.clock,
        random.Random(1))
    h.all_running()
    actions = h.coordinator.trigger_checkpoint(request_id="r")
    assert isinstance(actions[0], FailCheckpointRequest)
    assert actions[0].error.reason is R.IO_EXCEPTION and "read-only" in str(actions[0].error)
    assert isinstance(actions[1], FailJob) and len(actions) == 2
    assert h.coordinator.next_checkpoint_id == 2  # the id was used up, never reused


def test_a_savepoint_without_a_directory_fails_only_the_request(tmp_path: Path) -> None:
    h = Harness(tmp_path, tolerable_failed_checkpoints=0)
    h.storage = CheckpointStorage(str(tmp_path / "chk"), JOB)
    h.coordinator = CheckpointCoordinator(
        JOB, h.config, CheckpointTaskSets.for_job(SOURCES, ALL), h.storage, h.store, h.clock,
        random.Random(1))
    h.all_running()
    actions = h.coordinator.trigger_savepoint("sp")
    assert len(actions) == 1 and isinstance(actions[0], FailSavepointRequest)
    assert "savepoint-dir" in str(actions[0].error)


def test_task_sets() -> None:
    sets = CheckpointTaskSets.for_job(SOURCES, ALL)
    assert sets.to_trigger == frozenset(SOURCES)
    assert sets.to_ack == sets.to_commit == frozenset(ALL)
    with pytest.raises(ValueError):
        CheckpointTaskSets.for_job((), ALL)


# -- acks ------------------------------------------------------------------------------------


def test_duplicate_unknown_and_late_acks(h: Harness) -> None:
    h.coordinator.trigger_checkpoint()
    first = h.state(1, SRC0)
    assert h.coordinator.receive_acknowledge(SRC0, CheckpointId(1), first) == []
    duplicate = h.state(1, SRC0)
    assert h.coordinator.receive_acknowledge(SRC0, CheckpointId(1), duplicate) == []
    assert exists(first) and exists(duplicate)
    stranger = TaskId(JobVertexId("other"), SubtaskIndex(0))
    unknown = h.state(1, stranger)
    assert h.coordinator.receive_acknowledge(stranger, CheckpointId(1), unknown) == []
    assert not exists(unknown)
    never = h.state(99, SINK)
    assert h.coordinator.receive_acknowledge(SINK, CheckpointId(99), never) == []
    assert not exists(never)
    h.coordinator.on_timeout(CheckpointId(1))
    late = h.state(1, SINK, location=str(h.tmp_path / "late"))
    assert h.coordinator.receive_acknowledge(SINK, CheckpointId(1), late) == []
    assert not exists(late)


def test_the_ack_of_a_task_that_finished_first_is_discarded(h: Harness) -> None:
    """A source finishes (its FINISHED counts as its ack) before the asynchronous part of
    its last snapshot reports: that late real ack's files are discarded, not leaked."""
    h.coordinator.trigger_checkpoint()
    h.coordinator.on_task_finished(SRC0)
    late = h.state(1, SRC0)
    assert h.coordinator.receive_acknowledge(SRC0, CheckpointId(1), late) == []
    assert not exists(late)


def test_an_ack_for_a_completed_checkpoint_keeps_its_state(h: Harness) -> None:
    h.coordinator.trigger_checkpoint()
    h.ack_all(1)
    again = h.state(1, SRC0)
    assert h.coordinator.receive_acknowledge(SRC0, CheckpointId(1), again) == []
    assert exists(again)


# -- aborts ----------------------------------------------------------------------------------


def test_timeout_aborts_and_discards(h: Harness) -> None:
    h.coordinator.trigger_checkpoint()
    h.ack(1, SRC0)
    h.clock.advance(TIMEOUT)
    assert h.coordinator.on_timeout(CheckpointId(1)) == aborted(1, R.CHECKPOINT_EXPIRED)
    assert not any(exists(s) for s in h.states.values())
    assert not Path(h.location(1)).exists()
    assert h.coordinator.on_timeout(CheckpointId(1)) == []
    failed = h.coordinator.statistics().latest_failed
    assert failed is not None and failed.failure_reason is R.CHECKPOINT_EXPIRED


def test_decline_aborts(h: Harness) -> None:
    h.coordinator.trigger_savepoint("sp")
    actions = h.coordinator.receive_decline(SINK, CheckpointId(1), R.CHECKPOINT_DECLINED,
                                            OSError("no space"))
    assert actions[:3] == aborted(1, R.CHECKPOINT_DECLINED)
    assert isinstance(actions[3], FailSavepointRequest)
    assert "no space" in str(actions[3].error) and "sink[0]" in str(actions[3].error)
    assert len(actions) == 4
    assert h.coordinator.receive_decline(SINK, CheckpointId(1)) == []


def test_task_leaving_running_aborts_what_waits_for_it(h: Harness) -> None:
    h.coordinator.trigger_checkpoint()
    h.ack(1, SINK)
    assert h.coordinator.on_task_state_changed(SINK, False) == []
    assert h.coordinator.on_task_state_changed(SRC0, False) == aborted(1, R.TASK_FAILURE)


def test_tolerable_failures(tmp_path: Path) -> None:
    h = Harness(tmp_path, tolerable_failed_checkpoints=1)
    h.all_running()
    h.coordinator.trigger_checkpoint()
    assert h.coordinator.on_timeout(CheckpointId(1)) == aborted(1, R.CHECKPOINT_EXPIRED)
    h.coordinator.trigger_checkpoint()
    h.ack_all(2)  # success resets the count
    h.coordinator.trigger_checkpoint()
    assert not any(isinstance(a, FailJob) for a in h.coordinator.on_timeout(CheckpointId(3)))
    h.coordinator.trigger_checkpoint()
    actions = h.coordinator.receive_decline(SRC1, CheckpointId(4))
    assert actions[:3] == aborted(4, R.CHECKPOINT_DECLINED)
    assert isinstance(actions[3], FailJob)
    assert isinstance(actions[3].cause, TooManyCheckpointFailuresError)


def test_the_error_that_fails_the_job_says_why_the_checkpoint_failed(tmp_path: Path) -> None:
    """Issue 27: the log, the exception history and the dashboard show this error; they said
    only CHECKPOINT_ASYNC_EXCEPTION, the cause was in the REST checkpoint details alone."""
    h = Harness(tmp_path, tolerable_failed_checkpoints=0)
    h.all_running()
    h.coordinator.trigger_checkpoint()
    cause = pickle.PicklingError("Can't pickle <class '__main__.CountWithTimestamp'>: "
                                 "attribute lookup CountWithTimestamp on __main__ failed")
    actions = h.coordinator.receive_decline(SRC0, CheckpointId(1),
                                            R.CHECKPOINT_ASYNC_EXCEPTION, cause)
    (fail,) = [a for a in actions if isinstance(a, FailJob)]
    for error in (fail.cause, pickle.loads(pickle.dumps(fail.cause))):
        text = str(error)
        assert "CHECKPOINT_ASYNC_EXCEPTION" in text and str(SRC0) in text
        assert "attribute lookup CountWithTimestamp on __main__ failed" in text


def test_declines_that_do_not_count_never_fail_the_job(tmp_path: Path) -> None:
    h = Harness(tmp_path, tolerable_failed_checkpoints=0)
    h.all_running()
    for n in (1, 2, 3):
        h.coordinator.trigger_checkpoint()
        actions = h.coordinator.receive_decline(SRC0, CheckpointId(n),
                                                R.CHECKPOINT_DECLINED_TASK_NOT_READY)
        assert actions == aborted(n, R.CHECKPOINT_DECLINED_TASK_NOT_READY)


# -- subsumption and savepoints --------------------------------------------------------------


def test_completion_subsumes_older_pending_checkpoints_but_never_savepoints(
    tmp_path: Path,
) -> None:
    h = Harness(tmp_path, max_concurrent_checkpoints=3)
    h.all_running()
    h.coordinator.trigger_checkpoint()
    h.coordinator.trigger_savepoint("sp")
    h.coordinator.trigger_checkpoint()
    h.ack(1, SRC0)
    assert h.ack_all(3) == aborted(1, R.CHECKPOINT_SUBSUMED) + completed(3)
    assert not exists(h.states[(1, SRC0)])
    assert sorted(h.coordinator.pending_checkpoints) == [2]


def test_savepoint_completes_into_its_own_directory(h: Harness) -> None:
    trigger = h.coordinator.trigger_savepoint("sp", str(h.tmp_path / "target"))[1]
    assert isinstance(trigger, TriggerCheckpointOnTask)
    actions = h.ack_all(1, location=trigger.location)
    assert actions == [*completed(1), CompleteSavepointRequest("sp", trigger.location)]
    savepoint = resolve_savepoint(trigger.location)
    assert savepoint.is_savepoint and set(savepoint.task_states) == set(ALL)
    assert h.store.latest() is None
    h.coordinator.trigger_checkpoint()
    h.ack_all(2)
    assert Path(trigger.location, "_metadata").exists()


def test_savepoint_jumps_the_queue(h: Harness) -> None:
    h.coordinator.trigger_checkpoint()
    h.coordinator.trigger_checkpoint(request_id="waiting")
    actions = h.coordinator.trigger_savepoint("sp")
    assert [a.checkpoint_id for a in actions if isinstance(a, TriggerCheckpointOnTask)] == [2, 2]
    assert h.coordinator.queued_requests == 1


# -- retention and restart -------------------------------------------------------------------


def test_retained_count(tmp_path: Path) -> None:
    h = Harness(tmp_path, num_retained=2)
    h.all_running()
    for n in (1, 2, 3):
        h.coordinator.trigger_checkpoint()
        h.ack_all(n)
    assert [c.checkpoint_id for c in h.store.checkpoints] == [2, 3]
    assert not Path(h.location(1)).exists()
    assert Path(h.location(2), "_metadata").exists()


def test_ids_keep_growing_across_a_coordinator_restart(tmp_path: Path) -> None:
    h = Harness(tmp_path, max_concurrent_checkpoints=2)
    h.all_running()
    for n in (1, 2):
        h.coordinator.trigger_checkpoint()
        h.ack_all(n)
    h.coordinator.trigger_checkpoint()  # 3 never completes: the driver dies
    recovered = CompletedCheckpointStore.recover(h.storage.job_dir)
    restarted = Harness(tmp_path, store=recovered, max_concurrent_checkpoints=2)
    restarted.all_running()
    latest = restarted.coordinator.restore_latest_checkpoint()
    assert latest is not None and latest.checkpoint_id == 2
    assert restarted.coordinator.statistics().restored_checkpoint_id == 2
    assert restarted.coordinator.trigger_checkpoint() == triggered(
        4, START, location=restarted.location(4))
    told = Harness(tmp_path / "other", last_checkpoint_id=41)
    told.all_running()
    assert told.coordinator.trigger_checkpoint()[0] == ScheduleTimeout(CheckpointId(42),
                                                                       START + TIMEOUT)


def test_failover_aborts_pending_and_waits_for_running_tasks(h: Harness) -> None:
    h.coordinator.trigger_checkpoint()
    assert h.coordinator.on_failover() == aborted(1, R.JOB_FAILOVER_REGION)
    refused = h.coordinator.trigger_checkpoint(request_id="r")
    assert isinstance(refused[0], FailCheckpointRequest)
    h.all_running()
    assert h.coordinator.trigger_checkpoint() == triggered(2, START, location=h.location(2))


def test_requests_queued_during_a_failover_run_once_every_task_is_back(
    tmp_path: Path,
) -> None:
    h = Harness(tmp_path, min_pause=100)
    h.all_running()
    h.coordinator.trigger_checkpoint()
    h.ack_all(1)
    assert h.coordinator.trigger_checkpoint(request_id="r") == [ScheduleNextTrigger(START + 100)]
    assert h.coordinator.on_failover() == []
    h.clock.advance(100)
    assert h.coordinator.on_task_state_changed(SRC0, True) == []
    assert h.coordinator.on_task_state_changed(SRC1, True) == []
    assert h.coordinator.on_task_state_changed(SINK, True) == triggered(
        2, START + 100, location=h.location(2))


# -- shutdown --------------------------------------------------------------------------------


def test_shutdown_aborts_pending_and_refuses_queued_and_new_requests(h: Harness) -> None:
    h.coordinator.trigger_savepoint("sp")
    h.coordinator.trigger_checkpoint()
    h.coordinator.trigger_checkpoint(request_id="queued")
    h.ack(2, SRC0)
    actions = h.coordinator.shutdown()
    reason = R.CHECKPOINT_COORDINATOR_SHUTDOWN
    assert actions[:3] == aborted(1, reason)
    assert isinstance(actions[3], FailSavepointRequest)
    assert actions[4:7] == aborted(2, reason)
    assert isinstance(actions[7], FailCheckpointRequest) and actions[7].request_id == "queued"
    assert len(actions) == 8
    assert not any(isinstance(a, FailJob) for a in actions)
    assert not exists(h.states[(2, SRC0)])
    late = h.coordinator.trigger_checkpoint(request_id="late")
    assert isinstance(late[0], FailCheckpointRequest) and late[0].error.reason is reason
    assert h.coordinator.on_periodic_tick() == []
    assert h.coordinator.shutdown() == []


@pytest.mark.parametrize(("retention", "kept"), [("retain-on-cancellation", True),
                                                 ("delete-on-cancellation", False),
                                                 ("no-externalized-checkpoints", False)])
def test_cancel_applies_the_externalized_retention(
    tmp_path: Path, retention: str, kept: bool
) -> None:
    h = Harness(tmp_path, externalized_checkpoint_retention=retention)
    h.all_running()
    h.coordinator.trigger_checkpoint()
    h.ack_all(1)
    h.coordinator.shutdown(JobTerminalStatus.CANCELED)
    assert Path(h.location(1), "_metadata").exists() is kept


# -- statistics ------------------------------------------------------------------------------


def test_statistics_of_a_completed_checkpoint(h: Harness) -> None:
    h.coordinator.trigger_checkpoint()
    h.clock.advance(20)
    h.ack(1, SRC0, metrics=SubtaskCheckpointMetrics(alignment_duration_ms=3, start_delay_ms=2))
    h.clock.advance(30)
    h.ack(1, SRC1)
    h.ack(1, SINK, metrics=SubtaskCheckpointMetrics(alignment_duration_ms=8))
    stats = h.coordinator.statistics()
    assert (stats.num_triggered, stats.num_completed, stats.num_in_progress) == (1, 1, 0)
    latest = stats.latest_completed
    assert latest is not None
    assert latest.end_to_end_duration_ms == 50
    assert latest.state_size == 30
    assert latest.alignment_duration_ms == 8
    assert latest.start_delay_ms == 2
    assert [(a.task, a.ack_ms) for a in latest.subtask_acks] == [
        (SINK, 50.0), (SRC0, 20.0), (SRC1, 50.0)]
    assert latest.trigger_timestamp == int(START)
    assert latest.external_path == h.location(1)


# -- restore from a savepoint or retained checkpoint -----------------------------------------


def test_restore_from_a_retained_checkpoint_of_another_job(tmp_path: Path) -> None:
    old = Harness(tmp_path / "old", externalized_checkpoint_retention="retain-on-cancellation",
                  last_checkpoint_id=16)
    old.all_running()
    old.coordinator.trigger_checkpoint()
    old.ack_all(17)
    old.coordinator.shutdown(JobTerminalStatus.CANCELED)
    h = Harness(tmp_path / "new")
    h.all_running()
    restored = h.coordinator.restore_savepoint(old.location(17))
    assert restored.checkpoint_id == 17 and set(restored.task_states) == set(ALL)
    assert h.coordinator.statistics().restored_checkpoint_id == 17
    latest = h.coordinator.restore_latest_checkpoint()
    assert latest is not None and latest.checkpoint_id == 17
    assert h.coordinator.trigger_checkpoint()[0] == ScheduleTimeout(CheckpointId(18),
                                                                   START + TIMEOUT)
    h.ack_all(18)
    h.coordinator.shutdown(JobTerminalStatus.FINISHED)
    assert Path(old.location(17), "_metadata").exists()
    assert all(exists(s) for (n, _), s in old.states.items() if n == 17)
    assert not Path(h.location(18)).exists()


def test_restoring_a_missing_or_damaged_savepoint_fails_naming_the_file(h: Harness) -> None:
    missing = str(h.tmp_path / "nothing-here")
    with pytest.raises(CorruptStateError, match="nothing-here: no savepoint"):
        h.coordinator.restore_savepoint(missing)
    empty = h.tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(CorruptStateError, match="empty/_metadata: the file is missing"):
        h.coordinator.restore_savepoint(str(empty))
    assert h.coordinator.restore_latest_checkpoint() is None
