"""Committing ``_metadata`` (issue 14): the file, then the commit marker, on the local
filesystem and on fsspec's in-memory one (an object store without atomic rename). A crash
between the two writes leaves a checkpoint that no reader takes for complete; the previous
one is used."""

from __future__ import annotations

import json
import pickle
import random
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import fsspec
import pytest

from flintlock.common.ids import CheckpointId, JobId, JobVertexId, SubtaskIndex
from flintlock.runtime.checkpoint import storage as storage_module
from flintlock.runtime.checkpoint.completed import CheckpointProperties, CompletedCheckpoint
from flintlock.runtime.checkpoint.metadata import read_metadata, resolve_savepoint, write_metadata
from flintlock.runtime.checkpoint.pending import TaskId
from flintlock.runtime.checkpoint.storage import (
    COMMIT_MARKER,
    CheckpointStorage,
    UncommittedCheckpointError,
    join,
    read_state,
    resolve,
)
from flintlock.runtime.checkpoint.store import CompletedCheckpointStore
from flintlock.runtime.state.handles import CorruptStateError
from tests.unit.checkpoint.file_states import file_state, handle_of

JOB = JobId("job-commit")
TASK = TaskId(JobVertexId("map"), SubtaskIndex(0))
V0 = Path(__file__).parents[2] / "fixtures" / "savepoints" / "v0-2026-11-25"


class Crash(BaseException):
    """The driver dies at this point."""


@pytest.fixture(params=["local", "memory"])
def base(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "local":
        yield str(tmp_path / "checkpoints")
        return
    root = f"memory://flintlock-commit-{uuid.uuid4().hex}"
    yield root
    fs, path = resolve(root)
    if fs.exists(path):
        fs.rm(path, recursive=True)


def _exists(uri: str) -> bool:
    fs, path = resolve(uri)
    return bool(fs.exists(path))


def _read(uri: str) -> bytes:
    fs, path = resolve(uri)
    return bytes(fs.cat_file(path))


def _write(uri: str, data: bytes) -> None:
    fs, path = resolve(uri)
    fs.pipe_file(path, data)


def _checkpoint(storage: CheckpointStorage, n: int, savepoint: bool = False
                ) -> CompletedCheckpoint:
    location = (storage.init_savepoint(CheckpointId(n)) if savepoint
                else storage.init_checkpoint(CheckpointId(n)))
    state = file_state(location.write_state("map-0", f"state of {n}".encode()))
    props = CheckpointProperties.for_savepoint() if savepoint else CheckpointProperties()
    return CompletedCheckpoint(JOB, CheckpointId(n), n, n + 1, {TASK: state}, props,
                               location.uri, location.metadata_uri)


def _crash_on_marker(monkeypatch: pytest.MonkeyPatch) -> None:
    real = storage_module.write_file

    def write_file(uri: str, data: bytes | memoryview) -> None:
        if uri.endswith("/" + COMMIT_MARKER):
            raise Crash()
        real(uri, data)

    monkeypatch.setattr(storage_module, "write_file", write_file)


def test_metadata_is_committed_by_a_marker_naming_it(base: str) -> None:
    checkpoint = _checkpoint(CheckpointStorage(base, JOB), 1)
    write_metadata(checkpoint)
    marker = json.loads(_read(join(checkpoint.location, COMMIT_MARKER)))
    data = _read(checkpoint.metadata_path)
    assert marker["kind"] == "flintlock-checkpoint-commit"
    assert marker["size"] == len(data) and len(marker["sha256"]) == 64
    assert read_metadata(checkpoint.metadata_path) == checkpoint
    assert read_state(handle_of(resolve_savepoint(checkpoint.location).task_states[TASK])) == (
        b"state of 1")


def test_a_crash_before_the_marker_leaves_the_previous_checkpoint_in_use(
        base: str, monkeypatch: pytest.MonkeyPatch) -> None:
    storage = CheckpointStorage(base, JOB)
    store = CompletedCheckpointStore(1, storage.job_dir)
    previous = _checkpoint(storage, 1)
    store.add(previous)
    crashed = _checkpoint(storage, 2)
    _crash_on_marker(monkeypatch)
    with pytest.raises(Crash):
        store.add(crashed)
    monkeypatch.undo()
    assert _exists(crashed.metadata_path)  # written: only the marker is missing
    assert not _exists(join(crashed.location, COMMIT_MARKER))
    assert store.latest() is previous
    with pytest.raises(UncommittedCheckpointError, match="never committed") as caught:
        resolve_savepoint(crashed.location)
    assert caught.value.uri == crashed.metadata_path
    recovered = CompletedCheckpointStore.recover(storage.job_dir)
    latest = recovered.latest()
    assert latest is not None and latest.checkpoint_id == 1
    assert recovered.highest_checkpoint_id == 2
    assert read_state(handle_of(latest.task_states[TASK])) == b"state of 1"


def test_a_savepoint_whose_marker_was_never_written_is_refused(
        base: str, monkeypatch: pytest.MonkeyPatch) -> None:
    savepoint = _checkpoint(CheckpointStorage(base, JOB, f"{base}/sp", random.Random(2)), 3,
                            savepoint=True)
    _crash_on_marker(monkeypatch)
    with pytest.raises(Crash):
        write_metadata(savepoint)
    monkeypatch.undo()
    with pytest.raises(UncommittedCheckpointError):
        resolve_savepoint(savepoint.location)
    with pytest.raises(UncommittedCheckpointError):
        resolve_savepoint(savepoint.metadata_path)


@pytest.mark.parametrize("damage", ["torn", "other-metadata", "replaced-metadata"])
def test_a_marker_that_does_not_name_the_metadata_commits_nothing(base: str, damage: str
                                                                  ) -> None:
    storage = CheckpointStorage(base, JOB)
    first, second = _checkpoint(storage, 1), _checkpoint(storage, 2)
    write_metadata(first)
    write_metadata(second)
    marker = join(second.location, COMMIT_MARKER)
    if damage == "torn":
        _write(marker, _read(marker)[:20])
    elif damage == "other-metadata":
        _write(marker, _read(join(first.location, COMMIT_MARKER)))
    else:
        _write(second.metadata_path, _read(first.metadata_path))
    with pytest.raises(UncommittedCheckpointError):
        read_metadata(second.metadata_path)
    recovered = CompletedCheckpointStore.recover(storage.job_dir, num_retained=2)
    assert [c.checkpoint_id for c in recovered.checkpoints] == [1]


def test_the_uncommitted_error_is_a_corrupt_state_error_and_pickles() -> None:
    error = UncommittedCheckpointError("/x/_metadata", "never committed: no marker")
    assert isinstance(error, CorruptStateError)
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is UncommittedCheckpointError and str(copy) == str(error)


def test_an_object_store_is_written_in_place_never_moved(monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    """fsspec's ``mv`` on an object store copies, then deletes; nothing may rely on it."""
    base = f"memory://flintlock-commit-{uuid.uuid4().hex}"
    memory = type(fsspec.filesystem("memory"))

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("mv used on an object store")

    monkeypatch.setattr(memory, "mv", refuse)
    checkpoint = _checkpoint(CheckpointStorage(base, JOB), 1)
    write_metadata(checkpoint)
    fs, path = resolve(checkpoint.location)
    names = sorted(p.rsplit("/", 1)[-1] for p in fs.ls(path, detail=False))
    assert names == ["_metadata", COMMIT_MARKER, "map-0"]
    assert read_metadata(checkpoint.metadata_path) == checkpoint
    fs.rm(resolve(base)[1], recursive=True)


def test_local_files_appear_whole_under_their_name_by_os_replace(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    replaced: list[tuple[str, str]] = []
    real = storage_module.os.replace

    def replace(src: str, dst: str) -> None:
        assert Path(src).read_bytes()  # complete (and fsynced) before it gets the name
        replaced.append((Path(src).name, Path(dst).name))
        real(src, dst)

    monkeypatch.setattr(storage_module.os, "replace", replace)
    checkpoint = _checkpoint(CheckpointStorage(str(tmp_path), JOB), 1)
    write_metadata(checkpoint)
    assert [dst for _, dst in replaced] == ["map-0", "_metadata", COMMIT_MARKER]
    assert all(".inprogress-" in src for src, _ in replaced)
    assert not [p for p in Path(checkpoint.location).iterdir() if "inprogress" in p.name]


def test_a_v0_savepoint_on_an_object_store_needs_no_marker() -> None:
    base = f"memory://flintlock-commit-{uuid.uuid4().hex}/v0"
    fs, path = resolve(base)
    for file in V0.iterdir():
        fs.pipe_file(f"{path}/{file.name}", file.read_bytes())
    checkpoint = resolve_savepoint(base)
    assert checkpoint.checkpoint_id == 1 and checkpoint.location == base
    keyed = [op.managed_keyed_state[0].handle
             for state in checkpoint.task_states.values()
             for op in getattr(state, "subtask_states", {}).values() if op.managed_keyed_state]
    assert keyed and all(read_state(h) for h in keyed)
    assert all(h.uri.startswith("memory:///") for h in keyed)  # type: ignore[union-attr]
    fs.rm(resolve(base.rsplit("/", 1)[0])[1], recursive=True)


def test_a_local_savepoint_copied_to_an_object_store_restores(tmp_path: Path) -> None:
    storage = CheckpointStorage(str(tmp_path), JOB, str(tmp_path / "sp"), random.Random(4))
    savepoint = _checkpoint(storage, 5, savepoint=True)
    write_metadata(savepoint)
    target = f"memory://flintlock-commit-{uuid.uuid4().hex}/copied"
    fs, path = resolve(target)
    for file in Path(savepoint.location).iterdir():
        fs.pipe_file(f"{path}/{file.name}", file.read_bytes())
    shutil.rmtree(savepoint.location)
    restored = resolve_savepoint(target)
    assert read_state(handle_of(restored.task_states[TASK])) == b"state of 5"
    fs.rm(resolve(target.rsplit("/", 1)[0])[1], recursive=True)
