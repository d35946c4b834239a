"""Shared files of incremental checkpoints: reference counts in the completed-checkpoint store
(subsumption, num-retained, shutdown, a restarted driver, restored checkpoints not owned)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from flintlock.common.ids import CheckpointId, JobId, JobVertexId, SubtaskIndex
from flintlock.runtime.checkpoint.completed import (
    CheckpointProperties,
    CompletedCheckpoint,
    JobTerminalStatus,
)
from flintlock.runtime.checkpoint.pending import TaskId
from flintlock.runtime.checkpoint.shared import SharedStateRegistry
from flintlock.runtime.checkpoint.storage import CheckpointStorage, InvalidStateNameError
from flintlock.runtime.checkpoint.store import CompletedCheckpointStore
from flintlock.runtime.state.handles import StreamStateHandle
from flintlock.runtime.state.keygroups import KeyGroupRange
from flintlock.runtime.state.snapshots import (
    IncrementalKeyedStateHandle,
    OperatorId,
    OperatorSubtaskState,
    TaskStateSnapshot,
)

JOB = JobId("job-shared")
TASK = TaskId(JobVertexId("reduce"), SubtaskIndex(0))


class Files:
    """Writes the shared and private files of incremental checkpoints of one backend, as the
    RocksDB backend does: each SST file uploaded once, referenced afterwards."""

    def __init__(self, storage: CheckpointStorage) -> None:
        self.storage = storage
        self.uploads: dict[str, StreamStateHandle] = {}

    def checkpoint(self, n: int, ssts: list[str], reuse: bool = True) -> CompletedCheckpoint:
        location = self.storage.init_checkpoint(CheckpointId(n))
        shared, uploaded = [], set()
        for sst in ssts:
            handle = self.uploads.get(sst) if reuse else None
            if handle is None:
                handle = location.write_shared_state(f"b-{n}-{sst}", f"{sst}".encode() * 10)
                self.uploads[sst] = handle
                uploaded.add(handle.uri)
            shared.append((sst, handle))
        manifest = location.write_state("MANIFEST", f"manifest {n}".encode())
        keyed = IncrementalKeyedStateHandle(
            KeyGroupRange(0, 3), 4, (("count", "VALUE"),), "b", n, tuple(shared),
            (("MANIFEST", manifest),), (("count", b"\0\0"),), frozenset(uploaded))
        state = TaskStateSnapshot({OperatorId("op"): OperatorSubtaskState((keyed,))})
        return CompletedCheckpoint(JOB, CheckpointId(n), n, n + 1, {TASK: state},
                                   CheckpointProperties(), location.uri, location.metadata_uri)


def shared_files(storage: CheckpointStorage) -> set[str]:
    directory = Path(storage.job_dir) / "shared"
    return {p.name for p in directory.iterdir()} if directory.exists() else set()


@pytest.fixture
def storage(tmp_path: Path) -> CheckpointStorage:
    return CheckpointStorage(str(tmp_path / "chk"), JOB, None, random.Random(3))


def test_registry_counts_references_and_returns_only_unreferenced_own_files(storage):
    files = Files(storage)
    registry = SharedStateRegistry(storage.job_dir + "/shared")
    first = files.checkpoint(1, ["1.sst", "2.sst"])
    second = files.checkpoint(2, ["2.sst", "3.sst"])
    registry.register(first)
    registry.register(second)
    registry.register(second)  # registering twice counts once
    two = files.uploads["2.sst"].uri
    assert registry.references(two) == 2
    assert registry.statistics().files == 3
    gone = registry.unregister(first)
    assert [h.uri for h in gone] == [files.uploads["1.sst"].uri]
    assert registry.references(two) == 1
    assert sorted(h.uri for h in registry.unregister(second)) == sorted(
        [two, files.uploads["3.sst"].uri])
    assert registry.statistics().references == 0


def test_files_outside_the_jobs_shared_directory_are_never_returned(storage, tmp_path):
    other = CheckpointStorage(str(tmp_path / "other"), JobId("other-job"))
    foreign = Files(other).checkpoint(7, ["9.sst"])
    registry = SharedStateRegistry(storage.job_dir + "/shared")
    registry.register(foreign)
    assert registry.unregister(foreign) == []


def test_subsumption_deletes_a_shared_file_only_when_no_retained_checkpoint_needs_it(storage):
    files = Files(storage)
    store = CompletedCheckpointStore(2, storage.job_dir)
    store.add(files.checkpoint(1, ["1.sst", "2.sst"]))
    store.add(files.checkpoint(2, ["1.sst", "2.sst", "3.sst"]))
    store.add(files.checkpoint(3, ["2.sst", "3.sst", "4.sst"]))  # drops 1; 2 still has 1.sst
    assert shared_files(storage) == {"b-1-1.sst", "b-1-2.sst", "b-2-3.sst", "b-3-4.sst"}
    store.add(files.checkpoint(4, ["3.sst", "4.sst", "5.sst"]))  # drops 2: 1.sst unreferenced
    assert shared_files(storage) == {"b-1-2.sst", "b-2-3.sst", "b-3-4.sst", "b-4-5.sst"}
    store.add(files.checkpoint(5, ["5.sst"]))  # drops 3: 2.sst gone; 4 keeps 3.sst, 4.sst
    assert shared_files(storage) == {"b-2-3.sst", "b-3-4.sst", "b-4-5.sst"}
    assert not Path(storage.checkpoint_location(CheckpointId(3)).uri).exists()
    for checkpoint in store.checkpoints:  # every retained checkpoint is restorable
        for handle in checkpoint.task_states[TASK].shared_handles():  # type: ignore[union-attr]
            assert Path(handle.uri).exists()


def test_num_retained_one_keeps_exactly_the_files_of_the_latest(storage):
    files = Files(storage)
    store = CompletedCheckpointStore(1, storage.job_dir)
    for n, ssts in enumerate([["1.sst"], ["1.sst", "2.sst"], ["2.sst", "3.sst"], ["4.sst"]], 1):
        store.add(files.checkpoint(n, ssts))
        latest = store.latest()
        assert latest is not None
        wanted = {Path(h.uri).name for h in latest.task_states[TASK].shared_handles()}  # type: ignore[union-attr]
        assert shared_files(storage) == wanted


def test_a_restarted_driver_knows_the_references_of_the_recovered_checkpoints(storage):
    files = Files(storage)
    store = CompletedCheckpointStore(2, storage.job_dir)
    store.add(files.checkpoint(1, ["1.sst", "2.sst"]))
    store.add(files.checkpoint(2, ["2.sst", "3.sst"]))
    recovered = CompletedCheckpointStore.recover(storage.job_dir, num_retained=2)
    two = files.uploads["2.sst"].uri
    assert recovered.shared_state.references(two) == 2
    recovered.add(files.checkpoint(3, ["3.sst", "4.sst"]))  # drops 1: only 1.sst goes
    assert shared_files(storage) == {"b-1-2.sst", "b-2-3.sst", "b-3-4.sst"}
    recovered.add(files.checkpoint(4, ["4.sst"]))  # drops 2
    assert shared_files(storage) == {"b-2-3.sst", "b-3-4.sst"}


def test_shutdown_deletes_shared_files_unless_a_retained_checkpoint_keeps_them(storage):
    files = Files(storage)
    store = CompletedCheckpointStore(2, storage.job_dir)
    store.add(files.checkpoint(1, ["1.sst"]))
    store.add(files.checkpoint(2, ["1.sst", "2.sst"]))
    store.shutdown(JobTerminalStatus.SUSPENDED)
    assert shared_files(storage) == {"b-1-1.sst", "b-2-2.sst"}
    recovered = CompletedCheckpointStore.recover(storage.job_dir, num_retained=2)
    recovered.shutdown(JobTerminalStatus.FINISHED)
    assert not Path(storage.job_dir).exists()


def test_a_checkpoint_that_never_completed_deletes_only_its_own_uploads(storage):
    files = Files(storage)
    store = CompletedCheckpointStore(1, storage.job_dir)
    store.add(files.checkpoint(1, ["1.sst"]))
    aborted = files.checkpoint(2, ["1.sst", "2.sst"])
    aborted.task_states[TASK].discard()  # type: ignore[union-attr]
    assert shared_files(storage) == {"b-1-1.sst"}


def test_a_savepoint_location_shares_nothing(storage):
    storage.savepoint_dir = str(Path(storage.checkpoint_dir).parent / "sp")
    location = storage.init_savepoint(CheckpointId(1))
    assert location.shared_uri is None
    with pytest.raises(InvalidStateNameError):
        location.write_shared_state("x.sst", b"x")


@pytest.mark.parametrize("spelling", ["relative", "file-url"])
def test_shared_files_are_recognised_however_the_checkpoint_dir_is_spelt(
        tmp_path, monkeypatch, spelling):
    monkeypatch.chdir(tmp_path)
    directory = "chk" if spelling == "relative" else f"file://{tmp_path}/chk"
    storage = CheckpointStorage(directory, JOB)
    files = Files(storage)
    store = CompletedCheckpointStore(1, storage.job_dir)
    store.add(files.checkpoint(1, ["1.sst"]))
    store.add(files.checkpoint(2, ["2.sst"]))
    assert shared_files_at(tmp_path / "chk" / JOB) == {"b-2-2.sst"}
    location = storage.checkpoint_location(CheckpointId(3))
    assert files.uploads["2.sst"].uri.startswith(str(location.shared_uri) + "/")


def shared_files_at(job_dir: Path) -> set[str]:
    return {p.name for p in (job_dir / "shared").iterdir()}
