"""The keyed state backend contract: the base class every keyed backend implements.

A ``KeyedStateBackend`` holds the keyed state of one operator in one subtask: the key groups
of ``key_group_range`` out of ``max_parallelism``. The operator sets the current key before it
calls user code (``set_current_key``), and every state object it handed out reads and writes
the entry of that key. ``get_partitioned_state(descriptor)`` returns the same object for the
same name every time; a name used with another kind (or with and without TTL) is a
``StateKindMismatchError``, also against what was restored.

Invariants:
* before the first ``set_current_key``, ``current_key`` is a sentinel whose hash raises
  ``NoCurrentKeyError``, so state access without a key fails with a typed error at no cost to
  the hot path;
* backends never hash a key to its key group on access (heap) — key groups are computed when
  a snapshot is written or state is restored;
* a snapshot has a synchronous part (``snapshot()``, on the task thread, quick) and an
  asynchronous part (``KeyedStateSnapshot.write``, on any thread, while the task goes on);
  nothing the task does after ``snapshot()`` returns changes what is written.

Threads: everything except ``KeyedStateSnapshot.write``/``release`` belongs to the task thread.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from flintlock.common.clock import SYSTEM_CLOCK, Clock
from flintlock.common.ids import CheckpointId
from flintlock.common.state import (
    AggregatingStateDescriptor,
    ReducingStateDescriptor,
    State,
    StateDescriptor,
    StateKind,
    StateTtlConfig,
)
from flintlock.runtime.state.errors import NoCurrentKeyError, StateKindMismatchError
from flintlock.runtime.state.keygroups import KeyGroupRange
from flintlock.runtime.state.snapshots import (
    KeyedStateHandle,
    ReadState,
    StateWriter,
)
from flintlock.runtime.state.ttl import (
    TtlAggregatingState,
    TtlListState,
    TtlMapState,
    TtlReducingState,
    TtlValueState,
    snapshot_filter,
)

DEFAULT_INLINE_THRESHOLD = 20 * 1024


class _NoKey:
    """The current key before any was set: hashing it (any state access) raises."""

    __slots__ = ()

    def __hash__(self) -> int:
        raise NoCurrentKeyError()

    def __eq__(self, other: object) -> bool:
        return other is self

    def __repr__(self) -> str:
        return "<no current key>"


NO_KEY: Any = _NoKey()


@dataclass(frozen=True, slots=True)
class KeyedStateStatistics:
    """What a keyed backend holds now (for metrics, logs and benchmarks)."""

    backend: str
    states: int  # registered or restored state names
    entries: int  # key entries over all states (RocksDB: its estimate, map entries counted)
    snapshots_in_flight: int


class KeyedStateSnapshot(Protocol):
    """The result of a snapshot's synchronous part."""

    def write(self, writer: StateWriter, name: str) -> KeyedStateHandle | None:
        """The asynchronous part: serialise and write; None when there is no state at all.
        Releases the snapshot's resources when done (also on failure)."""

    def release(self) -> None:
        """Give up the snapshot without writing (checkpoint aborted). Idempotent."""


def kind_label(kind: StateKind, ttl: bool) -> str:
    return f"{kind.value} with TTL" if ttl else kind.value


def storage_kind(descriptor: StateDescriptor) -> StateKind:
    """The kind a backend stores: TTL reducing/aggregating state keeps stamped values."""
    if descriptor.ttl_config is not None and descriptor.kind in (
        StateKind.REDUCING, StateKind.AGGREGATING,
    ):
        return StateKind.VALUE
    return descriptor.kind


class KeyedStateBackend(ABC):
    """Keyed state of one operator in one subtask; see the module docstring."""

    def __init__(
        self,
        key_group_range: KeyGroupRange,
        max_parallelism: int,
        clock: Clock = SYSTEM_CLOCK,
        inline_threshold: int = DEFAULT_INLINE_THRESHOLD,
    ) -> None:
        self.key_group_range = key_group_range
        self.max_parallelism = max_parallelism
        self.clock = clock
        self.inline_threshold = inline_threshold
        self.current_key: Any = NO_KEY  # task thread; read by every state object on access
        self._states: dict[str, tuple[str, State]] = {}
        self._labels: dict[str, str] = {}  # state name → kind label, registered or restored
        self._snapshot_ttl: dict[str, tuple[StateKind, StateTtlConfig]] = {}

    # -- current key -------------------------------------------------------------------------

    def set_current_key(self, key: Any) -> None:
        self.current_key = key

    def get_current_key(self) -> Any:
        if self.current_key is NO_KEY:
            raise NoCurrentKeyError()
        return self.current_key

    # -- states ------------------------------------------------------------------------------

    def get_partitioned_state(self, descriptor: StateDescriptor) -> Any:
        """The state object for ``descriptor`` (the same one for the same name)."""
        label = kind_label(descriptor.kind, descriptor.ttl_config is not None)
        known = self._states.get(descriptor.name)
        if known is not None:
            if known[0] != label:
                raise StateKindMismatchError(descriptor.name, known[0], label)
            return known[1]
        restored = self._labels.get(descriptor.name)
        if restored is not None and restored != label:
            raise StateKindMismatchError(descriptor.name, restored, label)
        state = self._build(descriptor)
        self._states[descriptor.name] = (label, state)
        self._labels[descriptor.name] = label
        return state

    def _build(self, descriptor: StateDescriptor) -> State:
        ttl = descriptor.ttl_config
        inner = self._create_state(descriptor.name, storage_kind(descriptor), descriptor)
        if ttl is None:
            return inner
        if ttl.cleanup_full_snapshot:
            self._snapshot_ttl[descriptor.name] = (descriptor.kind, ttl)
        if descriptor.kind is StateKind.LIST:
            return TtlListState(inner, ttl, self.clock)  # type: ignore[arg-type]
        if descriptor.kind is StateKind.MAP:
            return TtlMapState(inner, ttl, self.clock)  # type: ignore[arg-type]
        value = TtlValueState(inner, ttl, self.clock)  # type: ignore[arg-type]
        if isinstance(descriptor, ReducingStateDescriptor):
            return TtlReducingState(value, descriptor.reduce)
        if isinstance(descriptor, AggregatingStateDescriptor):
            return TtlAggregatingState(value, descriptor.agg_function)
        return value

    def batch_value_state(self, descriptor: StateDescriptor) -> Any:
        """A value state that reads and writes a batch of keys at once
        (``reduce_batch(keys, records, reduce)``), or None (the default) where the backend has
        none; see ``RocksDBKeyedStateBackend.batch_value_state``."""
        return None

    def snapshot_filters(self) -> dict[str, Callable[[Any], Any]]:
        """Per state with ``cleanup_full_snapshot``: drops what is expired now from a snapshot."""
        now = float(self.clock.wall_ms())
        return {
            name: snapshot_filter(kind, ttl, now)
            for name, (kind, ttl) in self._snapshot_ttl.items()
        }

    def state_names(self) -> list[str]:
        return sorted(self._labels)

    @abstractmethod
    def _create_state(self, name: str, kind: StateKind, descriptor: StateDescriptor) -> State:
        """A state object of ``kind`` over the storage of ``name`` (no TTL handling)."""

    @abstractmethod
    def keys(self, name: str) -> Iterator[Any]:
        """The keys that have an entry in state ``name`` (a stable copy: safe to modify state
        while iterating)."""

    def apply_to_all_keys(
        self, descriptor: StateDescriptor, function: Callable[[Any, Any], None]
    ) -> None:
        """Call ``function(key, state)`` with each key of ``descriptor``'s state current."""
        state = self.get_partitioned_state(descriptor)
        previous = self.current_key
        try:
            for key in list(self.keys(descriptor.name)):
                self.set_current_key(key)
                function(key, state)
        finally:
            if previous is NO_KEY:
                self.current_key = NO_KEY
            else:
                self.set_current_key(previous)

    # -- snapshot and restore ----------------------------------------------------------------

    @abstractmethod
    def snapshot(self, checkpoint_id: CheckpointId | None = None) -> KeyedStateSnapshot:
        """The synchronous part of a snapshot: quick, on the task thread. ``checkpoint_id``
        lets an incremental backend match ``notify_checkpoint_complete`` to its uploads."""

    def notify_checkpoint_complete(self, checkpoint_id: CheckpointId) -> None:  # noqa: B027
        """Checkpoint ``checkpoint_id`` completed (task thread). Default: nothing to do."""

    def notify_checkpoint_aborted(self, checkpoint_id: CheckpointId) -> None:  # noqa: B027
        """Checkpoint ``checkpoint_id`` was aborted (task thread). Default: nothing to do."""

    @abstractmethod
    def restore(self, handles: Sequence[KeyedStateHandle], read_state: ReadState) -> None:
        """Load the entries of the key groups this backend owns from ``handles``."""

    @abstractmethod
    def statistics(self) -> KeyedStateStatistics:
        """A snapshot of the backend's size; task thread."""

    @abstractmethod
    def dispose(self) -> None:
        """Release memory and files. The backend must not be used afterwards."""

