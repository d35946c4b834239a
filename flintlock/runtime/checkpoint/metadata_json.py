"""Formats 2 and 3 of ``_metadata``: a completed checkpoint as a JSON document, field by field.

Format 3 (issue 27) differs from 2 in one field: ``rocksdb-incremental`` keyed state names the
encoding of the keys inside its database's entry keys (``key_encoding``: ``canonical-1``, or
``pickle``, which is what a format-2 document's incremental state always holds).

The document says what a checkpoint is — ids, times, properties, and per task the handles of
its state — in names of its own, never in the names of the classes that hold it in memory, so
classes can be renamed, moved or reshaped without touching a savepoint. docs/internals/
savepoint-format.md has the schema as a table; in short::

    {"job_id", "checkpoint_id", "trigger_timestamp", "completion_timestamp",
     "properties": {"savepoint", "periodic", "discard_on_subsumed", ...},
     "extra": {str: str},
     "tasks": [{"vertex", "subtask", "state": null | {"kind": "operators" | "finished" |
                                                               "enumerator", ...}}]}

A state file is named relative to the checkpoint's directory (``{"path", "size",
"sha256"}``), so a savepoint can be moved or copied as a directory; a file outside it (a file
an incremental checkpoint shares with others) by its full URI (``{"uri", ...}``); small state
kept in the metadata itself as ``{"inline": <base64>}``. The bytes of state (key-group blocks,
operator-state elements, an enumerator's state) stay opaque here: they are the job's pickled
values (``flintlock.runtime.state.pickles``).

Reading checks every field's presence and type and raises ``CorruptStateError`` naming the
file and the field (``tasks[3].state.operators[0].keyed[0].offsets``); fields it does not know
are ignored. Writing a task state of a kind the format has no name for is an
``UnsupportedTaskStateError``: it must get a name (and a new format version) first.

Who calls it: ``metadata`` (after the envelope is verified). Pure functions.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Mapping
from typing import Any

from flintlock.common.canonical_keys import ENCODING as KEY_ENCODING
from flintlock.common.canonical_keys import LEGACY_ENCODING
from flintlock.common.errors import FlintlockError
from flintlock.common.ids import CheckpointId, JobId, JobVertexId, SubtaskIndex
from flintlock.runtime.checkpoint.completed import CheckpointProperties, CompletedCheckpoint
from flintlock.runtime.checkpoint.enumerator_state import EnumeratorState
from flintlock.runtime.checkpoint.finished import FINISHED_TASK, FinishedTaskState
from flintlock.runtime.checkpoint.pending import SubtaskState, TaskId
from flintlock.runtime.checkpoint.storage import canonical_uri, join
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
    KeyedStateHandle,
    KeyGroupsStateHandle,
    OperatorId,
    OperatorStateHandle,
    OperatorStateMeta,
    OperatorSubtaskState,
    TaskStateSnapshot,
)

PROPERTY_FIELDS = (
    ("savepoint", "is_savepoint"), ("periodic", "periodic"),
    ("discard_on_subsumed", "discard_on_subsumed"), ("discard_on_finished", "discard_on_finished"),
    ("discard_on_cancelled", "discard_on_cancelled"), ("discard_on_failed", "discard_on_failed"),
    ("discard_on_suspended", "discard_on_suspended"),
)
"""(document name, ``CheckpointProperties`` attribute)."""

KEY_ENCODING_VERSION = 3
"""The first format whose ``rocksdb-incremental`` state names its ``key_encoding``."""

_MODES = {DistributionMode.SPLIT_DISTRIBUTE: "split", DistributionMode.UNION: "union"}
_MODE_OF = {name: mode for mode, name in _MODES.items()}
Document = dict[str, Any]


class UnsupportedTaskStateError(FlintlockError):
    """A completed checkpoint holds a task state the metadata format has no name for."""

    def __init__(self, task: str, kind: str) -> None:
        super().__init__(task, kind)
        self.task = task
        self.kind = kind

    def __str__(self) -> str:
        return (f"task {self.task} acknowledged with a {self.kind}, which the checkpoint "
                "metadata format cannot record")


# -- writing --------------------------------------------------------------------------------


def dumps(checkpoint: CompletedCheckpoint) -> bytes:
    """The JSON bytes of ``checkpoint`` (UTF-8, sorted keys, no whitespace)."""
    document = to_document(checkpoint)
    return json.dumps(document, sort_keys=True, separators=(",", ":"),
                      allow_nan=False).encode("utf-8")


def to_document(checkpoint: CompletedCheckpoint) -> Document:
    base = canonical_uri(checkpoint.location)
    return {
        "job_id": str(checkpoint.job_id),
        "checkpoint_id": int(checkpoint.checkpoint_id),
        "trigger_timestamp": checkpoint.trigger_timestamp,
        "completion_timestamp": checkpoint.completion_timestamp,
        "properties": {name: getattr(checkpoint.properties, attribute)
                       for name, attribute in PROPERTY_FIELDS},
        "extra": dict(checkpoint.extra),
        "tasks": [{"vertex": str(task.vertex), "subtask": int(task.subtask),
                   "state": _task_state(task, state, base)}
                  for task, state in sorted(checkpoint.task_states.items())],
    }


def _task_state(task: TaskId, state: SubtaskState | None, base: str) -> Document | None:
    if state is None:
        return None
    if isinstance(state, FinishedTaskState):
        return {"kind": "finished"}
    if isinstance(state, EnumeratorState):
        return {"kind": "enumerator", "operator_id": state.operator_id,
                "data": _b64(state.data)}
    if isinstance(state, TaskStateSnapshot):
        return {"kind": "operators", "operators": [
            _operator(str(operator_id), operator, base)
            for operator_id, operator in sorted(state.subtask_states.items())]}
    raise UnsupportedTaskStateError(str(task), type(state).__name__)


def _operator(operator_id: str, state: OperatorSubtaskState, base: str) -> Document:
    return {
        "operator_id": operator_id,
        "keyed": [_keyed(handle, base) for handle in state.managed_keyed_state],
        "operator": [_operator_state(handle, base) for handle in state.managed_operator_state],
        "input_channels": [handle_document(h, base) for h in state.input_channel_state],
        "result_subpartitions": [handle_document(h, base)
                                 for h in state.result_subpartition_state],
    }


def _keyed(handle: KeyedStateHandle, base: str) -> Document:
    common = {
        "key_groups": [handle.key_group_range.start, handle.key_group_range.end],
        "max_parallelism": handle.max_parallelism,
        "states": [{"name": name, "kind": kind} for name, kind in handle.states],
    }
    if isinstance(handle, KeyGroupsStateHandle):
        return {"kind": "key-groups", **common, "offsets": list(handle.offsets),
                "data": handle_document(handle.handle, base)}
    return {
        "kind": "rocksdb-incremental", **common,
        "backend_id": handle.backend_id, "checkpoint_id": handle.checkpoint_id,
        "shared": [{"name": name, "file": handle_document(file, base),
                    "uploaded": file.uri in handle.uploaded} for name, file in handle.shared],
        "private": [{"name": name, "file": handle_document(file, base)}
                    for name, file in handle.private],
        "state_ids": [{"name": name, "id": _b64(state_id)} for name, state_id in handle.state_ids],
        "key_encoding": handle.key_encoding,
    }


def _operator_state(handle: OperatorStateHandle, base: str) -> Document:
    return {
        "states": [{"name": name, "mode": _MODES[meta.mode], "offsets": list(meta.offsets)}
                   for name, meta in sorted(handle.state_offsets.items())],
        "data": handle_document(handle.handle, base),
    }


def handle_document(handle: StateHandle, base: str) -> Document:
    """A handle's document: inline bytes, a path under ``base``, or a full URI."""
    if isinstance(handle, ByteStateHandle):
        return {"inline": _b64(handle.data)}
    prefix = base.rstrip("/") + "/"
    if handle.uri.startswith(prefix):
        return {"path": handle.uri[len(prefix):], "size": handle.size, "sha256": handle.sha256}
    return {"uri": handle.uri, "size": handle.size, "sha256": handle.sha256}


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


# -- reading --------------------------------------------------------------------------------


def loads(payload: bytes, uri: str, directory: str,
          version: int = KEY_ENCODING_VERSION) -> CompletedCheckpoint:
    """The checkpoint in the JSON ``payload`` of ``uri`` (format ``version``: 2 or 3), found in
    ``directory``."""
    try:
        document = json.loads(payload.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise CorruptStateError(uri, f"the metadata is not JSON: {exc}") from exc
    return from_document(document, uri, directory, version)


def from_document(document: Any, uri: str, directory: str,
                  version: int = KEY_ENCODING_VERSION) -> CompletedCheckpoint:
    """Build the checkpoint; ``location`` is ``directory``, relative paths resolve under it.
    Format 2 has no ``key_encoding`` in ``rocksdb-incremental`` state: its keys are pickles."""
    root = _Node(document, "", uri, version)
    base = canonical_uri(directory)
    try:
        properties, extra = root.node("properties"), root.node("extra")
        return CompletedCheckpoint(
            job_id=JobId(root.text("job_id")),
            checkpoint_id=CheckpointId(root.integer("checkpoint_id")),
            trigger_timestamp=root.integer("trigger_timestamp"),
            completion_timestamp=root.integer("completion_timestamp"),
            task_states={
                TaskId(JobVertexId(task.text("vertex")), SubtaskIndex(task.integer("subtask"))):
                    _read_task_state(task, base) for task in root.nodes("tasks")},
            properties=CheckpointProperties(**{
                attribute: properties.flag(name) for name, attribute in PROPERTY_FIELDS}),
            location=directory.rstrip("/"),
            metadata_path=uri,
            extra={key: extra.text(key) for key in extra.keys()},
        )
    except (TypeError, ValueError) as exc:
        raise CorruptStateError(uri, f"inconsistent metadata: {exc}") from exc


def _read_task_state(task: _Node, base: str) -> SubtaskState | None:
    state = task.optional_node("state")
    if state is None:
        return None
    kind = state.text("kind")
    if kind == "finished":
        return FINISHED_TASK
    if kind == "enumerator":
        return EnumeratorState(state.text("operator_id"), state.b64("data"))
    if kind == "operators":
        return TaskStateSnapshot({
            OperatorId(operator.text("operator_id")): _read_operator(operator, base)
            for operator in state.nodes("operators")})
    raise state.error("kind", f"unknown task state kind {kind!r}")


def _read_operator(node: _Node, base: str) -> OperatorSubtaskState:
    return OperatorSubtaskState(
        managed_keyed_state=tuple(_read_keyed(k, base) for k in node.nodes("keyed")),
        managed_operator_state=tuple(_read_operator_state(o, base) for o in node.nodes("operator")),
        input_channel_state=tuple(read_handle(h, base) for h in node.nodes("input_channels")),
        result_subpartition_state=tuple(
            read_handle(h, base) for h in node.nodes("result_subpartitions")),
    )


def _read_keyed(node: _Node, base: str) -> KeyedStateHandle:
    first, last = node.integers("key_groups", length=2)
    key_groups = KeyGroupRange(first, last)
    states = tuple((s.text("name"), s.text("kind")) for s in node.nodes("states"))
    kind = node.text("kind")
    if kind == "key-groups":
        return KeyGroupsStateHandle(key_groups, node.integers("offsets"),
                                    read_handle(node.node("data"), base),
                                    node.integer("max_parallelism"), states)
    if kind != "rocksdb-incremental":
        raise node.error("kind", f"unknown keyed state kind {kind!r}")
    shared = [(s.text("name"), _read_file(s.node("file"), base), s.flag("uploaded"))
              for s in node.nodes("shared")]
    return IncrementalKeyedStateHandle(
        key_groups, node.integer("max_parallelism"), states, node.text("backend_id"),
        CheckpointId(node.integer("checkpoint_id")),
        tuple((name, file) for name, file, _ in shared),
        tuple((p.text("name"), read_handle(p.node("file"), base)) for p in node.nodes("private")),
        tuple((s.text("name"), s.b64("id")) for s in node.nodes("state_ids")),
        frozenset(file.uri for _, file, uploaded in shared if uploaded),
        _key_encoding(node),
    )


def _key_encoding(node: _Node) -> str:
    """Format 3 names the encoding of the database's keys; before, they were pickles."""
    if node.version < KEY_ENCODING_VERSION:
        return LEGACY_ENCODING
    encoding = node.text("key_encoding")
    if encoding not in (KEY_ENCODING, LEGACY_ENCODING):
        raise node.error("key_encoding", f"unknown key encoding {encoding!r}")
    return encoding


def _read_operator_state(node: _Node, base: str) -> OperatorStateHandle:
    metas = {}
    for state in node.nodes("states"):
        mode = state.text("mode")
        if mode not in _MODE_OF:
            raise state.error("mode", f"unknown distribution mode {mode!r}")
        metas[state.text("name")] = OperatorStateMeta(state.integers("offsets"), _MODE_OF[mode])
    return OperatorStateHandle(metas, read_handle(node.node("data"), base))


def read_handle(node: _Node, base: str) -> StateHandle:
    if "inline" in node.keys():
        return ByteStateHandle(node.b64("inline"))
    return _read_file(node, base)


def _read_file(node: _Node, base: str) -> StreamStateHandle:
    if "path" in node.keys():
        path = node.text("path")
        parts = path.split("/")
        if path.startswith("/") or "://" in path or "\\" in path or any(
                part in ("", ".", "..") for part in parts):
            raise node.error("path", f"{path!r} is not a plain path inside the checkpoint")
        uri = join(base, path)
    else:
        uri = node.text("uri")
    sha256 = node.text("sha256")
    if len(sha256) != 64 or any(c not in "0123456789abcdef" for c in sha256):
        raise node.error("sha256", "not a hexadecimal SHA-256")
    return StreamStateHandle(uri, node.integer("size"), sha256)


class _Node:
    """A JSON object being read: typed field access whose errors name the file and field."""

    __slots__ = ("_uri", "_value", "_where", "version")

    def __init__(self, value: Any, where: str, uri: str, version: int) -> None:
        if not isinstance(value, dict):
            raise CorruptStateError(uri, f"{where or 'the document'}: expected an object")
        self._value: Mapping[str, Any] = value
        self._where = where
        self._uri = uri
        self.version = version  # of the document's format

    def keys(self) -> list[str]:
        return list(self._value)

    def error(self, key: str, detail: str) -> CorruptStateError:
        where = f"{self._where}.{key}" if self._where else key
        return CorruptStateError(self._uri, f"{where}: {detail}")

    def _get(self, key: str, check: Callable[[Any], bool], expected: str) -> Any:
        if key not in self._value:
            raise self.error(key, "missing")
        value = self._value[key]
        if not check(value):
            raise self.error(key, f"expected {expected}, found {type(value).__name__}")
        return value

    def text(self, key: str) -> str:
        value: str = self._get(key, lambda v: isinstance(v, str), "a string")
        return value

    def integer(self, key: str) -> int:
        value: int = self._get(key, _is_int, "an integer")
        return value

    def flag(self, key: str) -> bool:
        value: bool = self._get(key, lambda v: isinstance(v, bool), "true or false")
        return value

    def integers(self, key: str, length: int | None = None) -> tuple[int, ...]:
        values = self._get(key, lambda v: isinstance(v, list) and all(map(_is_int, v)),
                           "a list of integers")
        if length is not None and len(values) != length:
            raise self.error(key, f"expected {length} integers, found {len(values)}")
        return tuple(values)

    def b64(self, key: str) -> bytes:
        text = self.text(key)
        try:
            return base64.b64decode(text.encode("ascii"), validate=True)
        except (binascii.Error, UnicodeEncodeError) as exc:
            raise self.error(key, "not base64") from exc

    def node(self, key: str) -> _Node:
        return _Node(self._get(key, lambda v: isinstance(v, dict), "an object"),
                     self._path(key), self._uri, self.version)

    def optional_node(self, key: str) -> _Node | None:
        if self._get(key, lambda v: v is None or isinstance(v, dict), "an object or null") is None:
            return None
        return self.node(key)

    def nodes(self, key: str) -> list[_Node]:
        values = self._get(key, lambda v: isinstance(v, list), "a list")
        return [_Node(value, f"{self._path(key)}[{i}]", self._uri, self.version)
                for i, value in enumerate(values)]

    def _path(self, key: str) -> str:
        return f"{self._where}.{key}" if self._where else key


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
