"""Checkpoint storage and metadata: layout, verified reads, typed errors for damaged files."""

from __future__ import annotations

import pickle
import random
import re
import uuid
from pathlib import Path

import pytest

from flintlock.common.config import Configuration
from flintlock.common.ids import CheckpointId, JobId, JobVertexId, SubtaskIndex
from flintlock.runtime.checkpoint import metadata
from flintlock.runtime.checkpoint.completed import CheckpointProperties, CompletedCheckpoint
from flintlock.runtime.checkpoint.metadata import (
    decode,
    encode,
    read_metadata,
    resolve_savepoint,
    write_metadata,
)
from flintlock.runtime.checkpoint.pending import TaskId
from flintlock.runtime.checkpoint.storage import (
    CheckpointStorage,
    CheckpointStorageLocation,
    InvalidStateNameError,
    NoSavepointDirectoryError,
    StateFileExistsError,
    discard_state,
    read_state,
)
from flintlock.runtime.state.handles import ByteStateHandle, CorruptStateError
from tests.unit.checkpoint.file_states import inline_state

JOB = JobId("0123456789abcdef")
TASK = TaskId(JobVertexId("map"), SubtaskIndex(0))


def storage(tmp_path: Path) -> CheckpointStorage:
    return CheckpointStorage(str(tmp_path / "chk"), JOB, str(tmp_path / "sp"), random.Random(3))


def completed(location: CheckpointStorageLocation, savepoint: bool = False) -> CompletedCheckpoint:
    props = CheckpointProperties.for_savepoint() if savepoint else CheckpointProperties()
    return CompletedCheckpoint(JOB, location.checkpoint_id, 10, 20, {TASK: inline_state(b"four")},
                               props, location.uri, location.metadata_uri)


def test_layout_and_round_trip(tmp_path: Path) -> None:
    location = storage(tmp_path).init_checkpoint(CheckpointId(3))
    assert location.uri == str(tmp_path / "chk" / JOB / "chk-3")
    handle = location.write_state("map-0-keyed", memoryview(b"hello state"))
    assert handle.size == 11
    assert Path(handle.uri).read_bytes() == b"hello state"
    assert read_state(handle) == b"hello state"
    assert not [p for p in Path(location.uri).iterdir() if "inprogress" in p.name]
    discard_state(handle)
    discard_state(handle)
    assert not Path(handle.uri).exists()


def test_byte_handles_are_read_inline() -> None:
    assert read_state(ByteStateHandle(b"abc")) == b"abc"


def test_any_fsspec_url_works() -> None:
    base = f"memory://flintlock-test-{uuid.uuid4().hex}"
    location = CheckpointStorage(base, JOB).init_checkpoint(CheckpointId(1))
    handle = location.write_state("s", b"in memory")
    assert handle.uri.startswith("memory://")
    assert read_state(handle) == b"in memory"
    checkpoint = completed(location)
    write_metadata(checkpoint)
    assert read_metadata(location.metadata_uri).checkpoint_id == 1


def test_state_file_corruption_is_a_typed_error_naming_the_file(tmp_path: Path) -> None:
    location = storage(tmp_path).init_checkpoint(CheckpointId(1))
    truncated = location.write_state("a", b"0123456789")
    flipped = location.write_state("b", b"0123456789")
    deleted = location.write_state("c", b"0123456789")
    Path(truncated.uri).write_bytes(b"01234")
    Path(flipped.uri).write_bytes(b"0123456788")
    Path(deleted.uri).unlink()
    for handle, detail in ((truncated, "expected 10 bytes"), (flipped, "SHA-256"),
                           (deleted, "missing")):
        with pytest.raises(CorruptStateError, match=re.escape(handle.uri)) as caught:
            read_state(handle)
        assert detail in str(caught.value)
        assert caught.value.uri == handle.uri


def test_state_names_are_checked(tmp_path: Path) -> None:
    location = storage(tmp_path).init_checkpoint(CheckpointId(1))
    for bad in ("", "a/b", "../x", "_metadata", "_metadata.committed", ".hidden",
                "x.inprogress-1"):
        with pytest.raises(InvalidStateNameError):
            location.write_state(bad, b"")
    location.write_state("once", b"1")
    with pytest.raises(StateFileExistsError):
        location.write_state("once", b"2")


def test_savepoint_locations(tmp_path: Path) -> None:
    location = storage(tmp_path).init_savepoint(CheckpointId(5))
    assert re.fullmatch(r"savepoint-012345-[0-9a-f]{12}", Path(location.uri).name)
    assert Path(location.uri).parent == tmp_path / "sp"
    assert location.is_savepoint
    target = storage(tmp_path).init_savepoint(CheckpointId(6), str(tmp_path / "mine"))
    assert Path(target.uri).parent == tmp_path / "mine"
    with pytest.raises(NoSavepointDirectoryError):
        CheckpointStorage(str(tmp_path), JOB).init_savepoint(CheckpointId(7))


def test_storage_from_config(tmp_path: Path) -> None:
    config = Configuration({"execution.checkpointing.dir": str(tmp_path / "x"),
                            "execution.checkpointing.savepoint-dir": str(tmp_path / "y")})
    built = CheckpointStorage.from_config(config, JOB)
    assert built.job_dir == str(tmp_path / "x" / JOB)
    assert built.savepoint_dir == str(tmp_path / "y")
    assert CheckpointStorage.from_config(Configuration(), JOB).checkpoint_dir


def test_location_pickles_by_uri(tmp_path: Path) -> None:
    location = storage(tmp_path).init_checkpoint(CheckpointId(2))
    copy = pickle.loads(pickle.dumps(location))
    assert (copy.uri, copy.checkpoint_id) == (location.uri, 2)
    assert read_state(copy.write_state("x", b"1")) == b"1"


def test_metadata_round_trip_and_resolve(tmp_path: Path) -> None:
    location = storage(tmp_path).init_savepoint(CheckpointId(4))
    write_metadata(completed(location, savepoint=True))
    by_dir = resolve_savepoint(location.uri)
    by_file = resolve_savepoint(location.metadata_uri)
    assert by_dir.checkpoint_id == by_file.checkpoint_id == 4
    assert by_dir.is_savepoint
    assert by_file.location == location.uri
    assert by_dir.task_states[TASK].state_size == 4


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage", "empty", "delete"])
def test_damaged_metadata_is_a_typed_error_naming_the_file(tmp_path: Path, damage: str) -> None:
    location = storage(tmp_path).init_checkpoint(CheckpointId(1))
    write_metadata(completed(location))
    path = Path(location.metadata_uri)
    data = path.read_bytes()
    if damage == "truncate":
        path.write_bytes(data[: len(data) - 3])
    elif damage == "flip":
        path.write_bytes(data[:-5] + bytes([data[-5] ^ 0x40]) + data[-4:])
    elif damage == "garbage":
        path.write_bytes(b"not a checkpoint at all, just some text " * 3)
    elif damage == "empty":
        path.write_bytes(b"")
    else:
        path.unlink()
    with pytest.raises(CorruptStateError) as caught:
        resolve_savepoint(location.uri)
    assert caught.value.uri == location.metadata_uri
    assert location.metadata_uri in str(caught.value)


def test_decode_checks_version_and_payload_type() -> None:
    data = bytearray(encode(completed(CheckpointStorageLocation("/nowhere", CheckpointId(1)))))
    data[11] = 99
    with pytest.raises(CorruptStateError, match="version 99"):
        decode(bytes(data), "x")
    with pytest.raises(CorruptStateError, match="expected an object"):
        decode(metadata.wrap(metadata.JSON_FORMAT, b'"not a checkpoint"'), "x")
    with pytest.raises(CorruptStateError, match="format-1 payload is a str"):
        decode(metadata.wrap(metadata.PICKLE_FORMAT, pickle.dumps("not a checkpoint")), "x")


def test_error_survives_pickling() -> None:
    error = CorruptStateError("/a/_metadata", "truncated")
    assert str(pickle.loads(pickle.dumps(error))) == str(error)
    assert str(pickle.loads(pickle.dumps(StateFileExistsError("/x")))) == str(
        StateFileExistsError("/x"))
