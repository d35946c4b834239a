"""CheckpointStatsTracker: per-checkpoint numbers and the bounded history."""

from __future__ import annotations

from flintlock.common.ids import CheckpointId, JobVertexId, SubtaskIndex
from flintlock.runtime.checkpoint.failure import CheckpointFailureReason
from flintlock.runtime.checkpoint.pending import TaskId
from flintlock.runtime.checkpoint.stats import (
    CheckpointStatsTracker,
    CheckpointStatus,
    SubtaskCheckpointMetrics,
)

A = TaskId(JobVertexId("a"), SubtaskIndex(0))
B = TaskId(JobVertexId("b"), SubtaskIndex(0))


def test_completed_checkpoint_numbers() -> None:
    tracker = CheckpointStatsTracker()
    tracker.report_triggered(CheckpointId(1), False, 5000, 100.0, 2)
    tracker.report_ack(CheckpointId(1), A, 130.0, 10, SubtaskCheckpointMetrics(
        alignment_duration_ms=4, start_delay_ms=7))
    tracker.report_ack(CheckpointId(1), B, 150.0, 20, SubtaskCheckpointMetrics(
        alignment_duration_ms=9, start_delay_ms=2))
    in_progress = tracker.snapshot()
    assert in_progress.num_in_progress == 1
    assert in_progress.history[0].status is CheckpointStatus.IN_PROGRESS
    assert in_progress.history[0].end_to_end_duration_ms is None
    tracker.report_completed(CheckpointId(1), 160.0, "/cp/chk-1")
    stats = tracker.snapshot().latest_completed
    assert stats is not None
    assert stats.end_to_end_duration_ms == 60.0
    assert stats.state_size == 30
    assert stats.alignment_duration_ms == 9
    assert stats.start_delay_ms == 7
    assert [(a.task, a.ack_ms) for a in stats.subtask_acks] == [(A, 30.0), (B, 50.0)]
    assert stats.external_path == "/cp/chk-1"
    assert stats.trigger_timestamp == 5000
    assert stats.checkpointed_size == 30  # full checkpoints write their whole state


def test_incremental_acks_report_what_they_wrote() -> None:
    tracker = CheckpointStatsTracker()
    tracker.report_triggered(CheckpointId(2), False, 0, 0.0, 2)
    tracker.report_ack(CheckpointId(2), A, 1.0, 1000, SubtaskCheckpointMetrics(), 40)
    tracker.report_ack(CheckpointId(2), B, 2.0, 20, SubtaskCheckpointMetrics())
    tracker.report_completed(CheckpointId(2), 3.0, "/cp/chk-2")
    stats = tracker.snapshot().latest_completed
    assert stats is not None and (stats.state_size, stats.checkpointed_size) == (1020, 60)


def test_failures_refusals_and_bounded_history() -> None:
    tracker = CheckpointStatsTracker(history_size=2)
    for n in range(1, 5):
        tracker.report_triggered(CheckpointId(n), False, n, float(n), 1)
        tracker.report_failed(CheckpointId(n), n + 1.0, CheckpointFailureReason.CHECKPOINT_EXPIRED,
                              "late")
    tracker.report_refused(CheckpointFailureReason.NOT_ALL_REQUIRED_TASKS_RUNNING)
    tracker.report_refused(CheckpointFailureReason.NOT_ALL_REQUIRED_TASKS_RUNNING)
    tracker.report_restored(CheckpointId(3))
    snapshot = tracker.snapshot()
    assert (snapshot.num_triggered, snapshot.num_failed, snapshot.num_completed) == (4, 4, 0)
    assert [s.checkpoint_id for s in snapshot.history] == [4, 3]
    assert snapshot.latest_failed is not None
    assert snapshot.latest_failed.failure_reason is CheckpointFailureReason.CHECKPOINT_EXPIRED
    assert snapshot.refused == {CheckpointFailureReason.NOT_ALL_REQUIRED_TASKS_RUNNING: 2}
    assert snapshot.restored_checkpoint_id == 3


def test_reports_for_unknown_checkpoints_are_ignored() -> None:
    tracker = CheckpointStatsTracker()
    tracker.report_ack(CheckpointId(9), A, 1.0, 1, SubtaskCheckpointMetrics())
    tracker.report_completed(CheckpointId(9), 1.0, "x")
    assert tracker.snapshot().num_completed == 0
