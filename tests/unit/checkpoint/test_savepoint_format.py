"""The versioned ``_metadata`` format (issue 14): the format-1 fixtures still read, field by
field; format 2 round-trips every kind of state and reads after the classes were renamed;
damaged, foreign and newer files are typed errors naming the file."""

from __future__ import annotations

import base64
import hashlib
import json
import pickle
import shutil
import string
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flintlock.common.canonical_keys import ENCODING as KEY_ENCODING
from flintlock.common.canonical_keys import LEGACY_ENCODING
from flintlock.common.ids import CheckpointId, JobId, JobVertexId, SubtaskIndex
from flintlock.runtime.checkpoint import metadata, metadata_json
from flintlock.runtime.checkpoint.completed import CheckpointProperties, CompletedCheckpoint
from flintlock.runtime.checkpoint.finished import FINISHED_TASK
from flintlock.runtime.checkpoint.metadata import decode, encode, read_metadata, resolve_savepoint
from flintlock.runtime.checkpoint.metadata_json import UnsupportedTaskStateError, to_document
from flintlock.runtime.checkpoint.pending import TaskId
from flintlock.runtime.checkpoint.storage import CheckpointStorageLocation, read_state
from flintlock.runtime.enumerators import EnumeratorState
from flintlock.runtime.state.handles import (
    ByteStateHandle,
    CorruptStateError,
    StateHandle,
    StreamStateHandle,
)
from flintlock.runtime.state.keygroups import KeyGroupRange
from flintlock.runtime.state.snapshots import (
    DistributionMode,
    IncrementalKeyedStateHandle,
    KeyGroupsStateHandle,
    OperatorId,
    OperatorStateHandle,
    OperatorStateMeta,
    OperatorSubtaskState,
    TaskStateSnapshot,
)
from tests.unit.checkpoint.renamed_classes import renamed_copy, run_renamed

FIXTURES = Path(__file__).parents[2] / "fixtures" / "savepoints"
V0 = FIXTURES / "v0-2026-11-25"
V0_SHAPES = FIXTURES / "v0-2026-11-25-shapes"


def _copy(source: Path, tmp_path: Path) -> Path:
    target = tmp_path / "moved" / source.name
    shutil.copytree(source, target)
    return target


# -- format 1 (the fixtures) ----------------------------------------------------------------


def test_the_v0_savepoint_reads_with_its_files_found_where_it_now_is(tmp_path: Path) -> None:
    where = _copy(V0, tmp_path)
    checkpoint = resolve_savepoint(str(where))
    assert (checkpoint.checkpoint_id, checkpoint.job_id) == (1, "49b891c2c8cb3b95fc250a4170f112ee")
    assert checkpoint.properties == CheckpointProperties.for_savepoint()
    assert checkpoint.location == str(where)
    assert checkpoint.metadata_path == str(where / "_metadata")
    files = [h.handle for state in checkpoint.task_states.values()
             if isinstance(state, TaskStateSnapshot)
             for op in state.subtask_states.values() for h in op.managed_keyed_state]
    assert sorted(Path(h.uri).name for h in files) == sorted(  # type: ignore[union-attr]
        p.name for p in V0.iterdir() if p.name.endswith("-keyed"))
    for handle in files:
        assert Path(handle.uri).parent == where  # type: ignore[union-attr]
        assert read_state(handle)  # size and SHA-256 as recorded
    enumerators = [s for s in checkpoint.task_states.values() if isinstance(s, EnumeratorState)]
    assert len(enumerators) == 1 and enumerators[0].load().dealer.cursor == 2
    subtasks = {task.subtask for task in checkpoint.task_states}
    assert subtasks == {-1, 0, 1}


def _shapes_expected(directory: Path) -> CompletedCheckpoint:
    """What make_v0.py --shapes pickled, with its files under ``directory`` (relocated)."""
    here, shared = str(directory), "/old/checkpoints/job/shared"
    sst = StreamStateHandle(f"{shared}/000009.sst-1a2b", 4096, "ab" * 32)
    sst_old = StreamStateHandle(f"{shared}/000007.sst-3c4d", 2048, "cd" * 32)
    incremental = IncrementalKeyedStateHandle(
        KeyGroupRange(0, 63), 128, (("counts", "value"), ("seen", "map")), "backend-1", 7,
        (("000007.sst", sst_old), ("000009.sst", sst)),
        (("MANIFEST-000011", StreamStateHandle(f"{here}/op-private-MANIFEST", 300, "ef" * 32)),
         ("CURRENT", ByteStateHandle(b"MANIFEST-000011\n"))),
        (("counts", b"\x00\x01"), ("seen", b"\x00\x02")), frozenset({sst.uri}))
    operator = OperatorStateHandle(
        {"offsets": OperatorStateMeta((0, 5, 10), DistributionMode.SPLIT_DISTRIBUTE),
         "broadcast": OperatorStateMeta((15,), DistributionMode.UNION)},
        StreamStateHandle(f"{here}/op-operator", 20, "01" * 32))
    state = OperatorSubtaskState(
        managed_keyed_state=(incremental,), managed_operator_state=(operator,),
        input_channel_state=(ByteStateHandle(b"FLCS-input"),),
        result_subpartition_state=(StreamStateHandle(f"{here}/op-output", 9, "02" * 32),))
    a, b = JobVertexId("a" * 32), JobVertexId("b" * 32)
    return CompletedCheckpoint(
        JobId("0123456789abcdef0123456789abcdef"), CheckpointId(7), 1000, 1250, {
            TaskId(a, SubtaskIndex(0)): TaskStateSnapshot({OperatorId("c" * 32): state}),
            TaskId(a, SubtaskIndex(1)): FINISHED_TASK,
            TaskId(b, SubtaskIndex(0)): None,
            TaskId(b, SubtaskIndex(-1)): EnumeratorState("d" * 32, pickle.dumps([1, 2], 4)),
        },
        CheckpointProperties(periodic=False, discard_on_cancelled=False,
                             discard_on_failed=False),
        here, f"{here}/_metadata", {"note": "shapes"})


def test_every_kind_of_v0_value_reads_field_by_field(tmp_path: Path) -> None:
    where = _copy(V0_SHAPES, tmp_path)
    checkpoint = read_metadata(str(where / "_metadata"))
    assert checkpoint == _shapes_expected(where)
    assert checkpoint.task_states[TaskId(JobVertexId("a" * 32), SubtaskIndex(1))] is FINISHED_TASK


def test_v0_metadata_needs_no_commit_marker(tmp_path: Path) -> None:
    where = _copy(V0, tmp_path)
    assert not (where / "_metadata.committed").exists()
    assert read_metadata(str(where / "_metadata")).checkpoint_id == 1


class Boom:
    def __reduce__(self) -> tuple[Any, ...]:
        return (print, ("a format-1 payload ran code",))


@pytest.mark.parametrize("payload", [
    pickle.dumps(Boom()),
    pickle.dumps({"not": "a checkpoint"}),
    pickle.dumps(Boom())[:-4],
    b"\x80\x05garbage",
])
def test_a_foreign_or_damaged_v0_payload_is_a_typed_error_and_runs_nothing(
        payload: bytes, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(CorruptStateError) as caught:
        decode(metadata.wrap(metadata.PICKLE_FORMAT, payload), "/x/_metadata")
    assert caught.value.uri == "/x/_metadata"
    assert "format-1" in str(caught.value)
    assert capsys.readouterr().out == ""


# -- format 2 -----------------------------------------------------------------------------


BASE = "/checkpoints/job/chk-9"
_names = st.text(string.ascii_letters + string.digits + "-_.", min_size=1, max_size=12)
_sha = st.binary(min_size=32, max_size=32).map(bytes.hex)
_files = st.one_of(
    st.builds(lambda n, s, h: StreamStateHandle(f"{BASE}/{n}", s, h), _names.filter(
        lambda n: n not in (".", "..")), st.integers(0, 2**40), _sha),
    st.builds(lambda n, s, h: StreamStateHandle(f"/checkpoints/job/shared/{n}", s, h),
              _names, st.integers(0, 2**40), _sha),
    st.builds(lambda n, s, h: StreamStateHandle(f"s3://bucket/x/{n}", s, h),
              _names, st.integers(0, 2**40), _sha),
)
_handles: st.SearchStrategy[StateHandle] = st.one_of(
    _files, st.builds(ByteStateHandle, st.binary()))
_ranges = st.tuples(st.integers(0, 60), st.integers(0, 3)).map(
    lambda p: KeyGroupRange(p[0], p[0] + p[1]))
_states = st.lists(st.tuples(st.text(), st.sampled_from(["value", "list", "map"])),
                   max_size=3).map(tuple)


@st.composite
def _key_groups(draw: Any) -> KeyGroupsStateHandle:
    key_groups = draw(_ranges)
    offsets = tuple(sorted(draw(st.lists(st.integers(0, 10**6), min_size=len(key_groups) + 1,
                                         max_size=len(key_groups) + 1))))
    return KeyGroupsStateHandle(key_groups, offsets, draw(_handles),
                                draw(st.integers(64, 32768)), draw(_states))


@st.composite
def _incremental(draw: Any) -> IncrementalKeyedStateHandle:
    shared = draw(st.lists(st.tuples(_names, _files), max_size=3, unique_by=lambda p: p[1].uri))
    uploaded = frozenset(h.uri for _, h in shared if draw(st.booleans()))
    return IncrementalKeyedStateHandle(
        draw(_ranges), 128, draw(_states), draw(_names), draw(st.integers(1, 10**6)),
        tuple(shared), tuple(draw(st.lists(st.tuples(_names, _handles), max_size=3))),
        tuple(draw(st.lists(st.tuples(st.text(), st.binary(max_size=2)), max_size=3))),
        uploaded, draw(st.sampled_from([KEY_ENCODING, LEGACY_ENCODING])))


_operator_states = st.builds(OperatorStateHandle, st.dictionaries(st.text(), st.builds(
    OperatorStateMeta, st.lists(st.integers(0, 10**9)).map(tuple),
    st.sampled_from(DistributionMode)), max_size=3), _handles)
_subtask = st.builds(
    OperatorSubtaskState,
    st.lists(st.one_of(_key_groups(), _incremental()), max_size=2).map(tuple),
    st.lists(_operator_states, max_size=2).map(tuple),
    st.lists(_handles, max_size=2).map(tuple),
    st.lists(_handles, max_size=2).map(tuple))
_task_states = st.one_of(
    st.none(), st.just(FINISHED_TASK),
    st.builds(EnumeratorState, _names, st.binary()),
    st.builds(TaskStateSnapshot, st.dictionaries(_names.map(OperatorId), _subtask, max_size=2)))
_checkpoints = st.builds(
    lambda job, n, t, d, tasks, props, extra: CompletedCheckpoint(
        JobId(job), CheckpointId(n), t, t + d, tasks, props, BASE, f"{BASE}/_metadata", extra),
    _names, st.integers(1, 2**53), st.integers(0, 2**45), st.integers(0, 10**6),
    st.dictionaries(st.builds(TaskId, _names.map(JobVertexId),
                              st.integers(-1, 100).map(SubtaskIndex)), _task_states,
                    max_size=4),
    st.builds(CheckpointProperties, *[st.booleans()] * 7),
    st.dictionaries(st.text(), st.text(), max_size=2))


@settings(max_examples=150, deadline=None)
@given(_checkpoints)
def test_format_3_round_trips_every_kind_of_state(checkpoint: CompletedCheckpoint) -> None:
    data = encode(checkpoint)
    assert data[8:12] == b"\x00\x00\x00\x03"
    assert decode(data, checkpoint.metadata_path) == checkpoint


def _incremental_document(version: int, key_encoding: str | None) -> bytes:
    handle = IncrementalKeyedStateHandle(
        KeyGroupRange(0, 3), 4, (("n", "value"),), "b", 1, (), (), (("n", b"\0\0"),),
        frozenset(), KEY_ENCODING)
    task = TaskId(JobVertexId("v"), SubtaskIndex(0))
    checkpoint = replace(_sample_checkpoint(), task_states={
        task: TaskStateSnapshot({OperatorId("op"): OperatorSubtaskState((handle,))})})
    document = json.loads(metadata_json.dumps(checkpoint))
    keyed = document["tasks"][0]["state"]["operators"][0]["keyed"][0]
    del keyed["key_encoding"]
    if key_encoding is not None:
        keyed["key_encoding"] = key_encoding
    return metadata.wrap(version, json.dumps(document).encode())


def _keyed_of(checkpoint: CompletedCheckpoint) -> Any:
    (state,) = checkpoint.task_states.values()
    assert isinstance(state, TaskStateSnapshot)
    return state.subtask_states[OperatorId("op")].managed_keyed_state[0]


def test_format_2_incremental_state_holds_pickled_keys_and_format_3_names_its_encoding():
    old = decode(_incremental_document(2, None), f"{BASE}/_metadata")
    assert _keyed_of(old).key_encoding == LEGACY_ENCODING
    new = decode(_incremental_document(3, KEY_ENCODING), f"{BASE}/_metadata")
    assert _keyed_of(new).key_encoding == KEY_ENCODING
    with pytest.raises(CorruptStateError, match=r"keyed\[0\]\.key_encoding: missing"):
        decode(_incremental_document(3, None), f"{BASE}/_metadata")
    with pytest.raises(CorruptStateError, match="unknown key encoding 'zstd'"):
        decode(_incremental_document(3, "zstd"), f"{BASE}/_metadata")


def _sample_checkpoint(base: str = BASE) -> CompletedCheckpoint:
    inside = StreamStateHandle(f"{base}/op-0-keyed", 3, "ab" * 32)
    keyed = KeyGroupsStateHandle(KeyGroupRange(0, 1), (0, 1, 3), inside, 128, (("n", "value"),))
    operator = OperatorStateHandle({"pos": OperatorStateMeta((0,), DistributionMode.UNION)},
                                   ByteStateHandle(b"\x80\x05K\x07."))
    state = TaskStateSnapshot({OperatorId("op"): OperatorSubtaskState((keyed,), (operator,))})
    return CompletedCheckpoint(
        JobId("job"), CheckpointId(9), 100, 150,
        {TaskId(JobVertexId("v"), SubtaskIndex(0)): state,
         TaskId(JobVertexId("v"), SubtaskIndex(1)): FINISHED_TASK},
        CheckpointProperties.for_savepoint(), base, f"{base}/_metadata")


def test_format_2_names_fields_not_classes_and_files_relative_to_the_directory() -> None:
    data = encode(_sample_checkpoint())
    assert not any(name in data for name in (b"flintlock", b"Checkpoint", b"Handle"))
    document = json.loads(data[52:])
    assert document["properties"]["savepoint"] is True
    task = document["tasks"][0]
    assert (task["vertex"], task["subtask"]) == ("v", 0)
    operator = task["state"]["operators"][0]
    assert operator["keyed"][0]["data"] == {"path": "op-0-keyed", "size": 3, "sha256": "ab" * 32}
    assert operator["operator"][0]["data"] == {
        "inline": base64.b64encode(b"\x80\x05K\x07.").decode()}
    assert document["tasks"][1]["state"] == {"kind": "finished"}


RENAMED_READER = """
import json, pickle, sys
import flintlock.runtime.checkpoint.completed as completed
from flintlock.runtime.checkpoint import metadata, metadata_json

out = {"renamed": not hasattr(completed, "CompletedCheckpoint")
       and hasattr(completed, "RenamedCompletedCheckpoint")}
try:
    pickle.loads(open(sys.argv[1] if len(sys.argv) > 1 else PAYLOAD, "rb").read()[52:])
except AttributeError as exc:
    out["plain_pickle"] = str(exc)
for path in PATHS:
    checkpoint = metadata.read_metadata(path)
    out[path] = [type(checkpoint).__name__, metadata_json.to_document(checkpoint)]
print(json.dumps(out))
"""


def test_metadata_of_both_formats_reads_in_a_flintlock_whose_classes_were_renamed(
        tmp_path: Path) -> None:
    """The classes of a checkpoint renamed in a copy of the package (renamed_classes.py): the
    format-1 fixtures and a format-2 savepoint written here read there, field for field."""
    v0, shapes = _copy(V0, tmp_path / "v0"), _copy(V0_SHAPES, tmp_path / "v0")
    sample = CheckpointStorageLocation(str(tmp_path / "v2"), CheckpointId(9), True).create()
    metadata.write_metadata(_sample_checkpoint(sample.uri))
    paths = [str(v0 / "_metadata"), str(shapes / "_metadata"), sample.metadata_uri]
    root = renamed_copy(tmp_path / "later")
    script = f"PATHS = {paths!r}\nPAYLOAD = {paths[1]!r}\n" + RENAMED_READER
    out = json.loads(run_renamed(root, script))
    assert out["renamed"] is True
    assert "RenamedCompletedCheckpoint" not in out["plain_pickle"]
    assert "CompletedCheckpoint" in out["plain_pickle"]  # the old way fails there
    for path in paths:
        assert out[path][0] == "RenamedCompletedCheckpoint"
        assert out[path][1] == to_document(read_metadata(path)), path
    assert out[paths[1]][1] == to_document(_shapes_expected(shapes))


def test_a_format_2_savepoint_moved_elsewhere_finds_its_files(tmp_path: Path) -> None:
    first = CheckpointStorageLocation(str(tmp_path / "sp-a"), CheckpointId(9), True).create()
    handle = first.write_state("op-0-keyed", b"abc")
    checkpoint = _sample_checkpoint(first.uri)
    keyed = checkpoint.task_states[TaskId(JobVertexId("v"), SubtaskIndex(0))]
    assert isinstance(keyed, TaskStateSnapshot)
    state = keyed.subtask_states[OperatorId("op")]
    moved_in = KeyGroupsStateHandle(KeyGroupRange(0, 1), (0, 1, 3), handle, 128, ())
    tasks = {**checkpoint.task_states, TaskId(JobVertexId("v"), SubtaskIndex(0)):
             TaskStateSnapshot({OperatorId("op"): OperatorSubtaskState(
                 (moved_in,), state.managed_operator_state)})}
    metadata.write_metadata(CompletedCheckpoint(
        checkpoint.job_id, checkpoint.checkpoint_id, 1, 2, tasks, checkpoint.properties,
        first.uri, first.metadata_uri))
    shutil.move(first.uri, tmp_path / "elsewhere")
    restored = resolve_savepoint(str(tmp_path / "elsewhere"))
    snapshot = restored.task_states[TaskId(JobVertexId("v"), SubtaskIndex(0))]
    assert isinstance(snapshot, TaskStateSnapshot)
    found = snapshot.subtask_states[OperatorId("op")].managed_keyed_state[0]
    assert isinstance(found, KeyGroupsStateHandle)
    assert found.handle == StreamStateHandle(str(tmp_path / "elsewhere" / "op-0-keyed"), 3,
                                             hashlib.sha256(b"abc").hexdigest())
    assert read_state(found.handle) == b"abc"


class AckedWithSomethingElse:
    state_size = 0

    def discard(self) -> None:
        pass


def test_a_task_state_the_format_has_no_name_for_is_refused_when_written() -> None:
    checkpoint = _sample_checkpoint()
    tasks = {TaskId(JobVertexId("v"), SubtaskIndex(3)): AckedWithSomethingElse()}
    odd = CompletedCheckpoint(checkpoint.job_id, checkpoint.checkpoint_id, 1, 2, tasks,
                              checkpoint.properties, BASE, f"{BASE}/_metadata")
    with pytest.raises(UnsupportedTaskStateError, match=r"v\[3\].*AckedWithSomethingElse"):
        encode(odd)
    error = UnsupportedTaskStateError("v[3]", "AckedWithSomethingElse")
    assert str(pickle.loads(pickle.dumps(error))) == str(error)


# -- damaged, foreign and newer files -------------------------------------------------------


def _rewrap(document: Any) -> bytes:
    return metadata.wrap(metadata.JSON_FORMAT, json.dumps(document).encode())


def _damaged(kind: str) -> bytes:
    data = encode(_sample_checkpoint())
    document = json.loads(data[52:])
    operator = document["tasks"][0]["state"]["operators"][0]
    if kind == "short":
        return data[:40]
    if kind == "magic":
        return b"PK\x03\x04" + data[4:]
    if kind == "version-0":
        return data[:8] + b"\x00\x00\x00\x00" + data[12:]
    if kind == "version-4":
        return data[:8] + b"\x00\x00\x00\x04" + data[12:]
    if kind == "truncated":
        return data[:-7]
    if kind == "flipped":
        return data[:-5] + bytes([data[-5] ^ 0x20]) + data[-4:]
    if kind == "not-json":
        return metadata.wrap(metadata.JSON_FORMAT, b"{\"job_id\": ")
    if kind == "not-utf8":
        return metadata.wrap(metadata.JSON_FORMAT, b"\xff\xfe{}")
    if kind == "missing-field":
        del document["checkpoint_id"]
    elif kind == "wrong-type":
        operator["keyed"][0]["offsets"] = ["0", 1, 3]
    elif kind == "bool-for-int":
        document["trigger_timestamp"] = True
    elif kind == "bad-base64":
        operator["operator"][0]["data"] = {"inline": "not base64!"}
    elif kind == "escaping-path":
        operator["keyed"][0]["data"]["path"] = "../other-job/chk-1/file"
    elif kind == "unknown-kind":
        document["tasks"][0]["state"]["kind"] = "hologram"
    elif kind == "bad-sha":
        operator["keyed"][0]["data"]["sha256"] = "xyz"
    elif kind == "offsets-count":
        operator["keyed"][0]["offsets"] = [0, 3]
    elif kind == "mode":
        operator["operator"][0]["states"][0]["mode"] = "broadcast"
    return _rewrap(document)


@pytest.mark.parametrize(("kind", "detail"), [
    ("short", "shorter than the header"), ("magic", "bad magic"),
    ("version-0", "version 0"), ("version-4", "version 4 (written by a newer flintlock?)"),
    ("truncated", "header says"), ("flipped", "SHA-256 mismatch"),
    ("not-json", "not JSON"), ("not-utf8", "not JSON"),
    ("missing-field", "checkpoint_id: missing"),
    ("wrong-type", "tasks[0].state.operators[0].keyed[0].offsets: expected a list of integers"),
    ("bool-for-int", "trigger_timestamp: expected an integer, found bool"),
    ("bad-base64", "operator[0].data.inline: not base64"),
    ("escaping-path", "is not a plain path inside the checkpoint"),
    ("unknown-kind", "unknown task state kind 'hologram'"),
    ("bad-sha", "not a hexadecimal SHA-256"),
    ("offsets-count", "inconsistent metadata: 2 offsets for 2 key groups"),
    ("mode", "unknown distribution mode 'broadcast'"),
])
def test_damaged_foreign_or_newer_metadata_is_a_typed_error_naming_file_and_field(
        kind: str, detail: str) -> None:
    with pytest.raises(CorruptStateError) as caught:
        decode(_damaged(kind), "memory:///chk/job/chk-9/_metadata")
    assert caught.value.uri == "memory:///chk/job/chk-9/_metadata"
    assert detail in str(caught.value)
    assert "memory:///chk/job/chk-9/_metadata" in str(caught.value)
