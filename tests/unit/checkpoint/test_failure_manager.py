"""CheckpointFailureManager: which failures count, and when the job must fail."""

from __future__ import annotations

import pickle

from flintlock.common.ids import CheckpointId
from flintlock.runtime.checkpoint.failure import CheckpointFailureReason as R
from flintlock.runtime.checkpoint.failure_manager import (
    CheckpointFailureManager,
    TooManyCheckpointFailuresError,
)


def test_zero_tolerance_fails_on_the_first_counted_failure() -> None:
    manager = CheckpointFailureManager(0)
    error = manager.on_failure(R.CHECKPOINT_EXPIRED, CheckpointId(1))
    assert isinstance(error, TooManyCheckpointFailuresError)
    assert error.last_reason is R.CHECKPOINT_EXPIRED


def test_tolerates_n_then_fails_on_n_plus_one() -> None:
    manager = CheckpointFailureManager(2)
    assert manager.on_failure(R.CHECKPOINT_DECLINED, CheckpointId(1)) is None
    assert manager.on_failure(R.CHECKPOINT_EXPIRED, CheckpointId(2)) is None
    assert manager.consecutive_failures == 2
    assert manager.on_failure(R.CHECKPOINT_EXPIRED, CheckpointId(3)) is not None
    assert manager.consecutive_failures == 0


def test_success_resets_the_count() -> None:
    manager = CheckpointFailureManager(1)
    assert manager.on_failure(R.CHECKPOINT_EXPIRED, CheckpointId(1)) is None
    manager.on_success(CheckpointId(2))
    assert manager.on_failure(R.CHECKPOINT_EXPIRED, CheckpointId(3)) is None
    assert manager.on_failure(R.CHECKPOINT_EXPIRED, CheckpointId(4)) is not None


def test_uncounted_reasons_savepoints_and_stale_failures_do_not_count() -> None:
    manager = CheckpointFailureManager(0)
    for reason in (R.CHECKPOINT_SUBSUMED, R.NOT_ALL_REQUIRED_TASKS_RUNNING,
                   R.CHECKPOINT_COORDINATOR_SHUTDOWN, R.TASK_FAILURE):
        assert manager.on_failure(reason, CheckpointId(5)) is None
    assert manager.on_failure(R.CHECKPOINT_EXPIRED, CheckpointId(6), is_savepoint=True) is None
    manager.on_success(CheckpointId(10))
    assert manager.on_failure(R.CHECKPOINT_EXPIRED, CheckpointId(9)) is None
    assert manager.consecutive_failures == 0


def test_one_checkpoint_counts_once() -> None:
    manager = CheckpointFailureManager(1)
    assert manager.on_failure(R.CHECKPOINT_DECLINED, CheckpointId(1)) is None
    assert manager.on_failure(R.CHECKPOINT_EXPIRED, CheckpointId(1)) is None
    assert manager.consecutive_failures == 1


def test_trigger_failures_without_an_id_count() -> None:
    manager = CheckpointFailureManager(0)
    assert manager.on_failure(R.IO_EXCEPTION) is not None


def test_error_survives_pickling() -> None:
    error = TooManyCheckpointFailuresError(2, 3, R.CHECKPOINT_EXPIRED)
    copy = pickle.loads(pickle.dumps(error))
    assert str(copy) == str(error)
    assert "3 consecutive" in str(copy)
