"""What a snapshot of state produces: handles, per-operator and per-task snapshot results.

A subtask's snapshot for checkpoint n is a ``TaskStateSnapshot``: for every operator of its
chain an ``OperatorSubtaskState`` holding

* keyed state as ``KeyGroupsStateHandle``s: one written blob plus the byte boundaries of each
  key group in it, so a restore (after rescaling, too) deserialises only the groups it owns;
  or, for an incremental RocksDB checkpoint, an ``IncrementalKeyedStateHandle``: the files of
  a native RocksDB checkpoint, its immutable SST files *shared* with other checkpoints;
* operator state as ``OperatorStateHandle``s: one blob plus, per state name, the offsets of
  its elements and how they are redistributed on rescaling (even split or union);
* channel state (unaligned checkpoints): opaque handles written by the barrier layer.

Everything here is a frozen, picklable value: it travels with the ack to the JobManager and
is stored in the checkpoint metadata. ``discard()`` deletes the files a snapshot wrote itself
(through fsspec, tolerating files already gone): its private files and the shared files it
uploaded, never shared files it only references; the coordinator calls it for checkpoints that
never completed. A completed checkpoint's shared files belong to the completed-checkpoint
store's ``SharedStateRegistry`` (reference counts over the retained checkpoints), so the store
calls ``discard_private()`` and lets the registry delete shared files. Both run on the
JobManager's thread.

Writing goes through ``StateWriter.write_state(name, data) -> StreamStateHandle`` (the
checkpoint storage location implements it); reading through an injected
``read_state(handle) -> bytes`` that verifies the checksum and raises ``CorruptStateError``.
Blobs under the inline threshold become ``ByteStateHandle``s kept in the metadata itself.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import NewType, Protocol

from flintlock.common.canonical_keys import LEGACY_ENCODING
from flintlock.common.ids import CheckpointId
from flintlock.runtime.state.handles import ByteStateHandle, StateHandle, StreamStateHandle
from flintlock.runtime.state.keygroups import KeyGroupRange

OperatorId = NewType("OperatorId", str)

ReadState = Callable[[StreamStateHandle], bytes]


class StateWriter(Protocol):
    """Where the asynchronous part of a snapshot writes (a checkpoint storage location)."""

    def write_state(self, name: str, data: bytes) -> StreamStateHandle: ...


def write_blob(writer: StateWriter, name: str, data: bytes, inline_threshold: int) -> StateHandle:
    """Small blobs stay inline in the metadata; larger ones become a file."""
    if len(data) < inline_threshold:
        return ByteStateHandle(data)
    return writer.write_state(name, data)


def read_blob(handle: StateHandle, read_state: ReadState) -> bytes:
    if isinstance(handle, ByteStateHandle):
        return handle.data
    return read_state(handle)


def discard_handle(handle: StateHandle) -> None:
    """Delete the file behind ``handle``; inline handles and missing files are fine."""
    if not isinstance(handle, StreamStateHandle):
        return
    from fsspec.core import url_to_fs  # on first use (see checkpoint.storage.resolve)

    fs, path = url_to_fs(handle.uri)
    try:
        fs.rm(path)
    except FileNotFoundError:
        return


@dataclass(frozen=True, slots=True)
class KeyGroupsStateHandle:
    """Keyed state of the key groups in ``key_group_range``, inside ``handle``'s bytes.

    ``offsets`` has ``len(key_group_range) + 1`` entries: group ``g``'s block is
    ``data[offsets[i]:offsets[i + 1]]`` with ``i = g - key_group_range.start`` (an empty block:
    nothing of that group). ``states`` lists the state names with their kind, as written.
    """

    key_group_range: KeyGroupRange
    offsets: tuple[int, ...]
    handle: StateHandle
    max_parallelism: int = 128
    states: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        if len(self.offsets) != len(self.key_group_range) + 1:
            raise ValueError(
                f"{len(self.offsets)} offsets for {len(self.key_group_range)} key groups"
            )

    def block(self, key_group: int) -> tuple[int, int]:
        """(start, end) of ``key_group``'s block in the blob."""
        i = key_group - self.key_group_range.start
        return self.offsets[i], self.offsets[i + 1]

    def intersect(self, key_groups: KeyGroupRange) -> KeyGroupsStateHandle | None:
        """The same blob restricted to ``key_groups``; None if they do not overlap."""
        common = self.key_group_range.intersection(key_groups)
        if len(common) == 0:
            return None
        first = common.start - self.key_group_range.start
        offsets = self.offsets[first : first + len(common) + 1]
        return KeyGroupsStateHandle(common, offsets, self.handle, self.max_parallelism, self.states)

    @property
    def state_size(self) -> int:
        return self.offsets[-1] - self.offsets[0]


@dataclass(frozen=True, slots=True)
class IncrementalKeyedStateHandle:
    """The keyed state of one RocksDB backend as the files of a native RocksDB checkpoint.

    ``shared`` maps each SST file name of the checkpoint to where it was uploaded under
    ``<dir>/<job-id>/shared/``: SST files never change, so a later checkpoint of the same
    database references an upload instead of repeating it. ``uploaded`` names the shared
    files this checkpoint uploaded itself (the others it only references). ``private`` holds
    the small mutable files (MANIFEST, CURRENT, OPTIONS, ...), written for this checkpoint
    alone. ``state_ids`` maps state names to the 2-byte ids inside the database's keys.
    ``key_encoding`` names the form of the keys inside the database's entry keys:
    ``canonical_keys.ENCODING`` since issue 27, ``"pickle"`` (``LEGACY_ENCODING``) before, the
    default for handles read from older metadata; a database in another encoding than the
    backend's is migrated on restore, never adopted as it is.

    A restore needs the whole database, so ``intersect`` keeps the handle whole; the restoring
    backend filters the key groups it owns (rescaling).
    """

    key_group_range: KeyGroupRange
    max_parallelism: int
    states: tuple[tuple[str, str], ...]
    backend_id: str
    checkpoint_id: CheckpointId
    shared: tuple[tuple[str, StreamStateHandle], ...]
    private: tuple[tuple[str, StateHandle], ...]
    state_ids: tuple[tuple[str, bytes], ...]
    uploaded: frozenset[str] = frozenset()
    key_encoding: str = LEGACY_ENCODING

    def intersect(self, key_groups: KeyGroupRange) -> IncrementalKeyedStateHandle | None:
        """This handle if it holds any of ``key_groups`` (the database is restored whole)."""
        if len(self.key_group_range.intersection(key_groups)) == 0:
            return None
        return self

    @property
    def state_size(self) -> int:
        """The full size of the checkpointed database."""
        return sum(h.size for _, h in self.shared) + sum(h.size for _, h in self.private)

    @property
    def checkpointed_size(self) -> int:
        """What this checkpoint wrote: its new shared files and its private files."""
        return (sum(h.size for _, h in self.shared if h.uri in self.uploaded)
                + sum(h.size for _, h in self.private))

    def shared_handles(self) -> tuple[StreamStateHandle, ...]:
        return tuple(handle for _, handle in self.shared)

    def own_handles(self) -> Iterable[StateHandle]:
        """The files this checkpoint wrote itself: private ones and its own uploads."""
        yield from (handle for _, handle in self.private)
        yield from (handle for _, handle in self.shared if handle.uri in self.uploaded)


KeyedStateHandle = KeyGroupsStateHandle | IncrementalKeyedStateHandle


class DistributionMode(enum.Enum):
    """How operator list state is redistributed when the parallelism changes."""

    SPLIT_DISTRIBUTE = "split"  # every element goes to exactly one new subtask (even split)
    UNION = "union"  # every new subtask gets every element


@dataclass(frozen=True, slots=True)
class OperatorStateMeta:
    """Start offsets of one operator state's elements in the blob, and its mode."""

    offsets: tuple[int, ...]
    mode: DistributionMode


@dataclass(frozen=True, slots=True)
class OperatorStateHandle:
    """Operator list states of one subtask: name → element offsets and mode, in ``handle``."""

    state_offsets: Mapping[str, OperatorStateMeta]
    handle: StateHandle

    @property
    def state_size(self) -> int:
        return self.handle.size


def _handles_of(state: OperatorSubtaskState, shared_too: bool) -> Iterable[StateHandle]:
    """Files of ``state``; of incremental keyed state the private ones, and its own uploads
    with ``shared_too``."""
    for keyed in state.managed_keyed_state:
        if isinstance(keyed, IncrementalKeyedStateHandle):
            if shared_too:
                yield from keyed.own_handles()
            else:
                yield from (handle for _, handle in keyed.private)
        else:
            yield keyed.handle
    for operator in state.managed_operator_state:
        yield operator.handle
    yield from state.input_channel_state
    yield from state.result_subpartition_state


@dataclass(frozen=True, slots=True)
class OperatorSubtaskState:
    """Everything one operator of one subtask snapshotted for one checkpoint."""

    managed_keyed_state: tuple[KeyedStateHandle, ...] = ()
    managed_operator_state: tuple[OperatorStateHandle, ...] = ()
    input_channel_state: tuple[StateHandle, ...] = ()
    result_subpartition_state: tuple[StateHandle, ...] = ()

    @property
    def state_size(self) -> int:
        return sum(
            [h.state_size for h in self.managed_keyed_state]
            + [h.state_size for h in self.managed_operator_state]
            + [h.size for h in self.input_channel_state]
            + [h.size for h in self.result_subpartition_state]
        )

    @property
    def checkpointed_size(self) -> int:
        """Bytes this checkpoint wrote for this state (incremental keyed state counts only
        its new shared files and its private files)."""
        return self.state_size - sum(
            h.state_size - h.checkpointed_size for h in self.managed_keyed_state
            if isinstance(h, IncrementalKeyedStateHandle))

    @property
    def has_channel_state(self) -> bool:
        return bool(self.input_channel_state or self.result_subpartition_state)

    def is_empty(self) -> bool:
        return not (
            self.managed_keyed_state or self.managed_operator_state or self.has_channel_state
        )

    def shared_handles(self) -> tuple[StreamStateHandle, ...]:
        """The shared files (incremental checkpoints) this state references or uploaded."""
        return tuple(
            handle for keyed in self.managed_keyed_state
            if isinstance(keyed, IncrementalKeyedStateHandle)
            for handle in keyed.shared_handles()
        )

    def discard(self) -> None:
        """Delete every file this state wrote itself (each at most once); shared files it
        only references stay. For a state that never became part of a completed checkpoint."""
        _discard_all(_handles_of(self, shared_too=True))

    def discard_private(self) -> None:
        """Delete the files that are this checkpoint's alone; shared files are left to the
        completed-checkpoint store's registry."""
        _discard_all(_handles_of(self, shared_too=False))


def _discard_all(handles: Iterable[StateHandle]) -> None:
    seen: set[str] = set()
    for handle in handles:
        if isinstance(handle, StreamStateHandle) and handle.uri not in seen:
            seen.add(handle.uri)
            discard_handle(handle)


@dataclass(frozen=True, slots=True)
class TaskStateSnapshot:
    """A subtask's ack payload: operator id → its ``OperatorSubtaskState``."""

    subtask_states: Mapping[OperatorId, OperatorSubtaskState] = field(default_factory=dict)

    def get(self, operator_id: OperatorId) -> OperatorSubtaskState | None:
        return self.subtask_states.get(operator_id)

    @property
    def state_size(self) -> int:
        return sum(state.state_size for state in self.subtask_states.values())

    @property
    def checkpointed_size(self) -> int:
        return sum(state.checkpointed_size for state in self.subtask_states.values())

    def shared_handles(self) -> tuple[StreamStateHandle, ...]:
        return tuple(h for state in self.subtask_states.values() for h in state.shared_handles())

    @property
    def has_channel_state(self) -> bool:
        return any(state.has_channel_state for state in self.subtask_states.values())

    def discard(self) -> None:
        for state in self.subtask_states.values():
            state.discard()

    def discard_private(self) -> None:
        for state in self.subtask_states.values():
            state.discard_private()
