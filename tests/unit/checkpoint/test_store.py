"""CompletedCheckpointStore: retention, atomic adds, recovery after a driver restart."""

from __future__ import annotations

import logging
import pickle
from pathlib import Path

import pytest

from flintlock.common.checkpointing import ExternalizedCheckpointRetention as Retention
from flintlock.common.ids import CheckpointId
from flintlock.runtime.checkpoint import storage as storage_module
from flintlock.runtime.checkpoint.completed import (
    CheckpointProperties,
    CompletedCheckpoint,
    JobTerminalStatus,
    SavepointOwnedByUserError,
)
from flintlock.runtime.checkpoint.metadata import resolve_savepoint
from flintlock.runtime.checkpoint.storage import read_state
from flintlock.runtime.checkpoint.store import CompletedCheckpointStore
from tests.unit.checkpoint.file_states import (
    JOB,
    TASK,
    handle_of,
    make_checkpoint,
    make_storage,
)


class Crash(BaseException):
    """Stands for the driver dying at a chosen point."""


def test_keeps_num_retained_and_discards_the_oldest(tmp_path: Path) -> None:
    storage = make_storage(tmp_path)
    store = CompletedCheckpointStore(2, storage.job_dir)
    first = make_checkpoint(storage, 1)
    assert store.add(first) == []
    assert store.add(make_checkpoint(storage, 2)) == []
    assert store.add(make_checkpoint(storage, 3)) == [first]
    assert [c.checkpoint_id for c in store.checkpoints] == [2, 3]
    assert not Path(first.location).exists()
    assert Path(store.checkpoints[0].metadata_path).exists()
    latest = store.latest()
    assert latest is not None and latest.checkpoint_id == 3


def test_ids_must_grow(tmp_path: Path) -> None:
    storage = make_storage(tmp_path)
    store = CompletedCheckpointStore(1)
    store.add(make_checkpoint(storage, 2))
    with pytest.raises(ValueError, match="not newer"):
        store.add(make_checkpoint(storage, 1))


def test_a_savepoints_files_are_never_deleted(tmp_path: Path) -> None:
    storage = make_storage(tmp_path)
    store = CompletedCheckpointStore(1, storage.job_dir)
    savepoint = make_checkpoint(storage, 1, CheckpointProperties.for_savepoint())
    store.add(savepoint)
    store.add(make_checkpoint(storage, 2))
    assert Path(savepoint.metadata_path).exists()
    assert read_state(handle_of(savepoint.task_states[TASK]))
    with pytest.raises(SavepointOwnedByUserError, match="belongs to the user"):
        savepoint.discard()
    error = pickle.loads(pickle.dumps(SavepointOwnedByUserError("/sp/x")))
    assert error.location == "/sp/x"


def test_a_failed_write_changes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    storage = make_storage(tmp_path)
    store = CompletedCheckpointStore(1, storage.job_dir)
    previous = make_checkpoint(storage, 1)
    store.add(previous)
    broken = make_checkpoint(storage, 2)

    def crash(fd: int) -> None:
        raise Crash()

    monkeypatch.setattr(storage_module.os, "fsync", crash)
    with pytest.raises(Crash):
        store.add(broken)
    monkeypatch.undo()
    assert store.latest() is previous
    assert not Path(broken.metadata_path).exists()
    recovered = CompletedCheckpointStore.recover(storage.job_dir)
    latest = recovered.latest()
    assert latest is not None and latest.checkpoint_id == 1
    assert recovered.highest_checkpoint_id == 2
    assert read_state(handle_of(latest.task_states[TASK])) == b"state of 1"


def test_recover_skips_an_incomplete_newest_checkpoint(tmp_path: Path) -> None:
    storage = make_storage(tmp_path)
    store = CompletedCheckpointStore(1, storage.job_dir)
    store.add(make_checkpoint(storage, 1))
    store.add(make_checkpoint(storage, 2))
    crashed = storage.init_checkpoint(CheckpointId(3))
    crashed.write_state("map-0", b"half")
    Path(crashed.uri, "_metadata.inprogress-dead").write_bytes(b"FLKCKPT\0\x00")
    recovered = CompletedCheckpointStore.recover(storage.job_dir, num_retained=1)
    assert [c.checkpoint_id for c in recovered.checkpoints] == [2]
    assert recovered.highest_checkpoint_id == 3


def test_recover_skips_a_corrupt_newest_checkpoint_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    storage = make_storage(tmp_path)
    store = CompletedCheckpointStore(2, storage.job_dir)
    store.add(make_checkpoint(storage, 4))
    newest = make_checkpoint(storage, 5)
    store.add(newest)
    data = Path(newest.metadata_path).read_bytes()
    Path(newest.metadata_path).write_bytes(data[:-10])
    with caplog.at_level(logging.WARNING, logger="flintlock.runtime.checkpoint.store"):
        recovered = CompletedCheckpointStore.recover(storage.job_dir, num_retained=2)
    assert [c.checkpoint_id for c in recovered.checkpoints] == [4]
    assert recovered.highest_checkpoint_id == 5
    assert any("damaged checkpoint 5" in r.getMessage() and newest.metadata_path in r.getMessage()
               for r in caplog.records)


def test_recover_an_empty_or_missing_job_dir(tmp_path: Path) -> None:
    recovered = CompletedCheckpointStore.recover(str(tmp_path / "never-written"))
    assert recovered.latest() is None
    assert recovered.highest_checkpoint_id == 0


def test_recovered_extra_checkpoints_are_trimmed_on_the_next_add(tmp_path: Path) -> None:
    storage = make_storage(tmp_path)
    store = CompletedCheckpointStore(3, storage.job_dir)
    olds = [make_checkpoint(storage, n) for n in (1, 2, 3)]
    for checkpoint in olds:
        store.add(checkpoint)
    recovered = CompletedCheckpointStore.recover(storage.job_dir, num_retained=1)
    assert len(recovered.checkpoints) == 3
    recovered.add(make_checkpoint(storage, 4))
    assert [c.checkpoint_id for c in recovered.checkpoints] == [4]
    assert not any(Path(c.location).exists() for c in olds)


@pytest.mark.parametrize(
    ("retention", "status", "kept"),
    [
        (Retention.RETAIN_ON_CANCELLATION, JobTerminalStatus.CANCELED, True),
        (Retention.DELETE_ON_CANCELLATION, JobTerminalStatus.CANCELED, False),
        (Retention.NO_EXTERNALIZED_CHECKPOINTS, JobTerminalStatus.CANCELED, False),
        (Retention.RETAIN_ON_CANCELLATION, JobTerminalStatus.FAILED, True),
        (Retention.DELETE_ON_CANCELLATION, JobTerminalStatus.FAILED, True),
        (Retention.NO_EXTERNALIZED_CHECKPOINTS, JobTerminalStatus.FAILED, False),
        (Retention.RETAIN_ON_CANCELLATION, JobTerminalStatus.FINISHED, False),
        (Retention.NO_EXTERNALIZED_CHECKPOINTS, JobTerminalStatus.SUSPENDED, True),
    ],
)
def test_shutdown_follows_the_retention_policy(
    tmp_path: Path, retention: Retention, status: JobTerminalStatus, kept: bool
) -> None:
    storage = make_storage(tmp_path)
    store = CompletedCheckpointStore(1, storage.job_dir)
    checkpoint = make_checkpoint(storage, 1, CheckpointProperties.for_checkpoint(retention))
    store.add(checkpoint)
    store.shutdown(status)
    assert Path(checkpoint.metadata_path).exists() is kept
    assert Path(storage.job_dir).exists() is kept
    if kept:
        assert resolve_savepoint(checkpoint.location).checkpoint_id == 1


def test_shutdown_keeps_a_savepoint(tmp_path: Path) -> None:
    storage = make_storage(tmp_path)
    store = CompletedCheckpointStore(1, storage.job_dir)
    savepoint = make_checkpoint(storage, 1, CheckpointProperties.for_savepoint())
    store.add(savepoint)
    store.shutdown(JobTerminalStatus.FINISHED)
    assert Path(savepoint.metadata_path).exists()


def test_the_state_layers_task_snapshot_round_trips_and_discards(tmp_path: Path) -> None:
    from flintlock.runtime.checkpoint.pending import SubtaskState
    from flintlock.runtime.state.snapshots import (
        DistributionMode,
        OperatorId,
        OperatorStateHandle,
        OperatorStateMeta,
        OperatorSubtaskState,
        TaskStateSnapshot,
    )

    storage = make_storage(tmp_path)
    location = storage.init_checkpoint(CheckpointId(1))
    handle = location.write_state("op-0", b"\x00" * 16)
    meta = OperatorStateMeta((0,), DistributionMode.UNION)
    snapshot = TaskStateSnapshot({OperatorId("op"): OperatorSubtaskState(
        managed_operator_state=(OperatorStateHandle({"offsets": meta}, handle),))})
    assert isinstance(snapshot, SubtaskState)
    checkpoint = CompletedCheckpoint(JOB, CheckpointId(1), 1, 2, {TASK: snapshot},
                                     CheckpointProperties(), location.uri, location.metadata_uri)
    store = CompletedCheckpointStore(1, storage.job_dir)
    store.add(checkpoint)
    restored = resolve_savepoint(location.uri)
    assert restored.task_states[TASK] == snapshot
    assert restored.state_size == 16
    store.add(make_checkpoint(storage, 2))
    assert not Path(handle.uri).exists()
