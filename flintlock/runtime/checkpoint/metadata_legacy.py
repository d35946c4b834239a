"""Format 1 of ``_metadata`` (flintlock up to 2026-11-25): a pickled ``CompletedCheckpoint``,
read without the classes that wrote it.

A format-1 payload is a pickle of the in-memory checkpoint: ``CompletedCheckpoint``,
``CheckpointProperties``, ``TaskId``, ``TaskStateSnapshot``, ``OperatorSubtaskState``, the
handles, ``FINISHED_TASK``, ``EnumeratorState``, each named by the module and class it had
then. Unpickling it through the classes of today would break as soon as one of them is
renamed, moved or given another field. So this reader imports nothing by the names in the
pickle: ``_SHAPES`` lists every (module, name) a format-1 payload can hold with the fields
that class had, in order (dataclasses pickle their fields as a list in that order, or as a
dict without slots); the unpickler gives a stand-in that records those fields, and refuses any
other name with ``CorruptStateError`` (so reading format 1 also runs no code a payload names).
The stand-ins are then turned into today's classes by keyword, here and nowhere else.

Relocation: format 1 recorded every state file by its absolute URI. A file under the
directory the checkpoint was written to (its recorded ``location``) is looked up under the
directory it is read from, so a savepoint copied elsewhere (the fixture in
tests/fixtures/savepoints/v0-2026-11-25) restores; files outside it (shared files of
incremental checkpoints) keep their URI.

This module is kept for as long as format-1 savepoints may exist, i.e. for ever; the fixture
test fails if it stops reading them. Who calls it: ``metadata``. Pure functions.
"""

from __future__ import annotations

import io
import pickle
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from flintlock.common.ids import CheckpointId, JobId, JobVertexId, SubtaskIndex
from flintlock.runtime.checkpoint.completed import CheckpointProperties, CompletedCheckpoint
from flintlock.runtime.checkpoint.enumerator_state import EnumeratorState
from flintlock.runtime.checkpoint.finished import FINISHED_TASK
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


@dataclass(frozen=True)
class _Shape:
    """A format-1 class: its fields in pickling order, and the defaults it had."""

    name: str
    fields: tuple[str, ...]
    defaults: Mapping[str, Any] = field(default_factory=dict)


class _Pickled:
    """A format-1 object: the values of its shape's fields."""

    __slots__ = ("values",)
    shape: ClassVar[_Shape]

    def __setstate__(self, state: Any) -> None:
        shape = self.shape
        if isinstance(state, tuple) and len(state) == 2 and isinstance(state[1], dict):
            state = {**(state[0] or {}), **state[1]}  # (__dict__, slots) of a plain class
        if isinstance(state, dict):
            values = dict(state)
        elif isinstance(state, list | tuple) and len(state) <= len(shape.fields):
            values = dict(zip(shape.fields, state, strict=False))
        else:
            raise TypeError(f"{shape.name}: unexpected pickled state {type(state).__name__}")
        missing = [name for name in shape.fields if name not in values]
        for name in missing:
            if name not in shape.defaults:
                raise TypeError(f"{shape.name}: no value for field {name!r}")
            values[name] = shape.defaults[name]
        self.values = values

    def __getattr__(self, name: str) -> Any:
        try:
            return object.__getattribute__(self, "values")[name]
        except (KeyError, AttributeError):
            raise AttributeError(name) from None


_COMPLETED = "flintlock.runtime.checkpoint.completed"
_SNAPSHOTS = "flintlock.runtime.state.snapshots"
_HANDLES = "flintlock.runtime.checkpoint.handles"  # where format 1 found them (now state.handles)
_SHAPES = {
    (_COMPLETED, "CompletedCheckpoint"): _Shape("CompletedCheckpoint", (
        "job_id", "checkpoint_id", "trigger_timestamp", "completion_timestamp", "task_states",
        "properties", "location", "metadata_path", "extra"), {"extra": {}}),
    (_COMPLETED, "CheckpointProperties"): _Shape("CheckpointProperties", (
        "is_savepoint", "periodic", "discard_on_subsumed", "discard_on_finished",
        "discard_on_cancelled", "discard_on_failed", "discard_on_suspended")),
    ("flintlock.runtime.checkpoint.pending", "TaskId"): _Shape("TaskId", ("vertex", "subtask")),
    ("flintlock.runtime.enumerators", "EnumeratorState"): _Shape(
        "EnumeratorState", ("operator_id", "data")),
    (_SNAPSHOTS, "TaskStateSnapshot"): _Shape(
        "TaskStateSnapshot", ("subtask_states",), {"subtask_states": {}}),
    (_SNAPSHOTS, "OperatorSubtaskState"): _Shape("OperatorSubtaskState", (
        "managed_keyed_state", "managed_operator_state", "input_channel_state",
        "result_subpartition_state"), dict.fromkeys((
            "managed_keyed_state", "managed_operator_state", "input_channel_state",
            "result_subpartition_state"), ())),
    (_SNAPSHOTS, "KeyGroupsStateHandle"): _Shape("KeyGroupsStateHandle", (
        "key_group_range", "offsets", "handle", "max_parallelism", "states"),
        {"max_parallelism": 128, "states": ()}),
    (_SNAPSHOTS, "IncrementalKeyedStateHandle"): _Shape("IncrementalKeyedStateHandle", (
        "key_group_range", "max_parallelism", "states", "backend_id", "checkpoint_id", "shared",
        "private", "state_ids", "uploaded"), {"uploaded": frozenset()}),
    (_SNAPSHOTS, "OperatorStateHandle"): _Shape(
        "OperatorStateHandle", ("state_offsets", "handle")),
    (_SNAPSHOTS, "OperatorStateMeta"): _Shape("OperatorStateMeta", ("offsets", "mode")),
    ("flintlock.runtime.state.keygroups", "KeyGroupRange"): _Shape(
        "KeyGroupRange", ("start", "end")),
    (_HANDLES, "StreamStateHandle"): _Shape("StreamStateHandle", ("uri", "size", "sha256")),
    (_HANDLES, "ByteStateHandle"): _Shape("ByteStateHandle", ("data",)),
}
_STAND_INS: dict[tuple[str, str], type[_Pickled]] = {
    name: type(f"Format1{shape.name}", (_Pickled,), {"shape": shape, "__slots__": ()})
    for name, shape in _SHAPES.items()
}
_FINISHED = object()
_MODES = {"split": DistributionMode.SPLIT_DISTRIBUTE, "union": DistributionMode.UNION}


class _DistributionMode:
    """``DistributionMode(value)`` as format 1 pickled it: the enum's value."""

    def __init__(self, value: str) -> None:
        self.mode = _MODES[value]


_OTHER_NAMES: dict[tuple[str, str], Any] = {
    ("flintlock.runtime.checkpoint.finished", "FINISHED_TASK"): _FINISHED,
    (_SNAPSHOTS, "DistributionMode"): _DistributionMode,
}


class _Format1Unpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        found = _STAND_INS.get((module, name)) or _OTHER_NAMES.get((module, name))
        if found is None:
            raise pickle.UnpicklingError(
                f"{module}.{name} is not part of format-1 checkpoint metadata")
        return found


def loads(payload: bytes, uri: str, directory: str) -> CompletedCheckpoint:
    """The checkpoint in the format-1 ``payload`` of ``uri``, found in ``directory``."""
    try:
        root = _Format1Unpickler(io.BytesIO(payload)).load()
    except Exception as exc:  # any failure of a damaged pickle: typed, with the cause
        raise CorruptStateError(uri, f"format-1 payload does not unpickle: {exc}") from exc
    if not isinstance(root, _STAND_INS[(_COMPLETED, "CompletedCheckpoint")]):
        raise CorruptStateError(uri, f"format-1 payload is a {type(root).__name__}")
    try:
        return _Converter(root.location, directory).checkpoint(root, uri)
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        raise CorruptStateError(uri, f"inconsistent format-1 metadata: {exc!r}") from exc


class _Converter:
    """Stand-ins → today's classes, with state files moved from ``written`` to ``found``."""

    def __init__(self, written: str, found: str) -> None:
        self._old = canonical_uri(_text(written)).rstrip("/") + "/"
        self._new = canonical_uri(found)

    def checkpoint(self, root: _Pickled, uri: str) -> CompletedCheckpoint:
        return CompletedCheckpoint(
            job_id=JobId(_text(root.job_id)),
            checkpoint_id=CheckpointId(_integer(root.checkpoint_id)),
            trigger_timestamp=_integer(root.trigger_timestamp),
            completion_timestamp=_integer(root.completion_timestamp),
            task_states={self._task(task): self._task_state(state)
                         for task, state in _mapping(root.task_states).items()},
            properties=CheckpointProperties(**{
                name: _flag(value) for name, value in _values(root.properties).items()}),
            location=uri.rsplit("/", 1)[0],
            metadata_path=uri,
            extra={_text(k): _text(v) for k, v in _mapping(root.extra).items()},
        )

    @staticmethod
    def _task(task: Any) -> TaskId:
        _expect(task, "TaskId")
        return TaskId(JobVertexId(_text(task.vertex)), SubtaskIndex(_integer(task.subtask)))

    def _task_state(self, state: Any) -> SubtaskState | None:
        if state is None:
            return None
        if state is _FINISHED:
            return FINISHED_TASK
        if _is(state, "EnumeratorState"):
            return EnumeratorState(_text(state.operator_id), _bytes(state.data))
        _expect(state, "TaskStateSnapshot")
        return TaskStateSnapshot({
            OperatorId(_text(operator_id)): self._operator(operator)
            for operator_id, operator in _mapping(state.subtask_states).items()})

    def _operator(self, state: Any) -> OperatorSubtaskState:
        _expect(state, "OperatorSubtaskState")
        return OperatorSubtaskState(
            managed_keyed_state=self._all(state.managed_keyed_state, self._keyed),
            managed_operator_state=self._all(state.managed_operator_state, self._operator_state),
            input_channel_state=self._all(state.input_channel_state, self._handle),
            result_subpartition_state=self._all(state.result_subpartition_state, self._handle),
        )

    @staticmethod
    def _all(values: Any, convert: Callable[[Any], Any]) -> tuple[Any, ...]:
        if not isinstance(values, tuple | list):
            raise TypeError(f"expected a sequence, found {type(values).__name__}")
        return tuple(convert(value) for value in values)

    def _keyed(self, handle: Any) -> KeyedStateHandle:
        states = tuple((_text(name), _text(kind)) for name, kind in handle.states)
        if _is(handle, "KeyGroupsStateHandle"):
            return KeyGroupsStateHandle(
                _range(handle.key_group_range), tuple(map(_integer, handle.offsets)),
                self._handle(handle.handle), _integer(handle.max_parallelism), states)
        _expect(handle, "IncrementalKeyedStateHandle")
        shared = tuple((_text(name), self._file(file)) for name, file in handle.shared)
        moved = {_text(old.uri): new.uri for (_, old), (_, new) in zip(
            handle.shared, shared, strict=True)}
        return IncrementalKeyedStateHandle(
            _range(handle.key_group_range), _integer(handle.max_parallelism), states,
            _text(handle.backend_id), CheckpointId(_integer(handle.checkpoint_id)), shared,
            tuple((_text(name), self._handle(file)) for name, file in handle.private),
            tuple((_text(name), _bytes(state_id)) for name, state_id in handle.state_ids),
            frozenset(moved.get(uri, uri) for uri in handle.uploaded),
        )

    def _operator_state(self, handle: Any) -> OperatorStateHandle:
        _expect(handle, "OperatorStateHandle")
        metas = {}
        for name, meta in _mapping(handle.state_offsets).items():
            _expect(meta, "OperatorStateMeta")
            if not isinstance(meta.mode, _DistributionMode):
                raise TypeError(f"distribution mode {meta.mode!r}")
            metas[_text(name)] = OperatorStateMeta(tuple(map(_integer, meta.offsets)),
                                                   meta.mode.mode)
        return OperatorStateHandle(metas, self._handle(handle.handle))

    def _handle(self, handle: Any) -> StateHandle:
        if _is(handle, "ByteStateHandle"):
            return ByteStateHandle(_bytes(handle.data))
        return self._file(handle)

    def _file(self, handle: Any) -> StreamStateHandle:
        _expect(handle, "StreamStateHandle")
        uri = _text(handle.uri)
        if uri.startswith(self._old):
            uri = join(self._new, uri[len(self._old):])
        return StreamStateHandle(uri, _integer(handle.size), _text(handle.sha256))


def _is(value: Any, name: str) -> bool:
    return isinstance(value, _Pickled) and value.shape.name == name


def _expect(value: Any, name: str) -> None:
    if not _is(value, name):
        raise TypeError(f"expected a {name}, found {type(value).__name__}")


def _values(value: Any) -> dict[str, Any]:
    _expect(value, "CheckpointProperties")
    values: dict[str, Any] = value.values
    return values


def _range(value: Any) -> KeyGroupRange:
    _expect(value, "KeyGroupRange")
    return KeyGroupRange(_integer(value.start), _integer(value.end))


def _mapping(value: Any) -> Mapping[Any, Any]:
    if not isinstance(value, dict):
        raise TypeError(f"expected a dict, found {type(value).__name__}")
    return value


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected a string, found {type(value).__name__}")
    return value


def _integer(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"expected an integer, found {type(value).__name__}")
    return value


def _flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"expected true or false, found {type(value).__name__}")
    return value


def _bytes(value: Any) -> bytes:
    if not isinstance(value, bytes):
        raise TypeError(f"expected bytes, found {type(value).__name__}")
    return value
