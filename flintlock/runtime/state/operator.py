"""Operator (non-keyed) state: named lists of elements per subtask; sources keep offsets here.

``get_list_state`` gives *split-distribute* list state: on rescaling, all subtasks' elements
are pooled and split evenly (each element to exactly one new subtask). ``get_union_list_state``
gives *union* list state: every new subtask gets every element. With an unchanged parallelism
each subtask gets back exactly its own split state.

Snapshot design: operator state is small (offsets, pending transaction ids), so the
synchronous part pickles every element at once — a deep copy that later mutations cannot touch
— and the asynchronous part only writes the blob. Each element is pickled on its own and its
start offset recorded (``OperatorStateMeta``), so redistribution can move single elements
without rewriting anything; ``pickle.loads`` stops at each element's end by itself. Elements
are read back through ``pickles.loads``: connectors keep their own split classes here, and a
moved one is found through ``pickles.MOVED``.

Threads: the backend and its states belong to the task thread; ``OperatorStateSnapshot.write``
may run on any thread (it touches only its own bytes).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from flintlock.common.state import ListState, ListStateDescriptor
from flintlock.runtime.state import pickles as state_pickles
from flintlock.runtime.state.backend import DEFAULT_INLINE_THRESHOLD
from flintlock.runtime.state.errors import SnapshotReleasedError, StateKindMismatchError
from flintlock.runtime.state.snapshots import (
    DistributionMode,
    OperatorStateHandle,
    OperatorStateMeta,
    ReadState,
    StateWriter,
    read_blob,
    write_blob,
)

_LABELS = {
    DistributionMode.SPLIT_DISTRIBUTE: "operator list",
    DistributionMode.UNION: "union list",
}


class OperatorListState(ListState[Any]):
    """One named list of one subtask."""

    __slots__ = ("elements",)

    def __init__(self, elements: list[Any] | None = None) -> None:
        self.elements: list[Any] = elements if elements is not None else []

    def get(self) -> list[Any]:
        return self.elements

    def add(self, value: Any) -> None:
        if value is None:
            raise ValueError("cannot add None to a list state")
        self.elements.append(value)

    def add_all(self, values: list[Any]) -> None:
        for value in values or ():
            self.add(value)

    def update(self, values: list[Any]) -> None:
        self.elements = []
        self.add_all(values)

    def clear(self) -> None:
        self.elements = []

    def __iter__(self) -> Iterator[Any]:
        return iter(self.elements)


class OperatorStateBackend:
    """The operator states of one operator in one subtask."""

    def __init__(self, inline_threshold: int = DEFAULT_INLINE_THRESHOLD) -> None:
        self.inline_threshold = inline_threshold
        self._states: dict[str, tuple[DistributionMode, OperatorListState]] = {}

    def get_list_state(self, descriptor: ListStateDescriptor) -> OperatorListState:
        return self._get(descriptor, DistributionMode.SPLIT_DISTRIBUTE)

    def get_union_list_state(self, descriptor: ListStateDescriptor) -> OperatorListState:
        return self._get(descriptor, DistributionMode.UNION)

    def _get(self, descriptor: ListStateDescriptor, mode: DistributionMode) -> OperatorListState:
        if not isinstance(descriptor, ListStateDescriptor):
            raise TypeError(
                f"operator state is list state; got a {type(descriptor).__name__}"
            )
        known = self._states.get(descriptor.name)
        if known is None:
            known = self._states[descriptor.name] = (mode, OperatorListState())
        elif known[0] is not mode:
            raise StateKindMismatchError(descriptor.name, _LABELS[known[0]], _LABELS[mode])
        return known[1]

    def state_names(self) -> list[str]:
        return sorted(self._states)

    def snapshot(self) -> OperatorStateSnapshot:
        """Synchronous part: pickles every element now."""
        parts: list[bytes] = []
        metas: dict[str, OperatorStateMeta] = {}
        position = 0
        for name, (mode, state) in self._states.items():
            offsets = []
            for element in state.elements:
                data = state_pickles.dumps(element)
                offsets.append(position)
                parts.append(data)
                position += len(data)
            metas[name] = OperatorStateMeta(tuple(offsets), mode)
        return OperatorStateSnapshot(b"".join(parts), metas, self.inline_threshold)

    def restore(self, handles: Sequence[OperatorStateHandle], read_state: ReadState) -> None:
        """Append the elements named by ``handles`` to the states (as assigned on rescaling)."""
        for handle in handles:
            view = memoryview(read_blob(handle.handle, read_state))
            for name, meta in handle.state_offsets.items():
                known = self._states.get(name)
                if known is None:
                    known = self._states[name] = (meta.mode, OperatorListState())
                elif known[0] is not meta.mode:
                    raise StateKindMismatchError(name, _LABELS[meta.mode], _LABELS[known[0]])
                known[1].elements.extend(state_pickles.loads(view[offset:])
                                        for offset in meta.offsets)

    def dispose(self) -> None:
        self._states.clear()


class OperatorStateSnapshot:
    """The pickled operator state, waiting for the asynchronous write."""

    def __init__(
        self, data: bytes, metas: dict[str, OperatorStateMeta], inline_threshold: int
    ) -> None:
        self._data: bytes | None = data  # None once released
        self._metas = metas
        self._inline_threshold = inline_threshold

    def write(self, writer: StateWriter, name: str) -> OperatorStateHandle | None:
        data, metas = self._data, self._metas
        if data is None:
            raise SnapshotReleasedError("operator")
        if not metas:
            return None
        blob = write_blob(writer, name, data, self._inline_threshold)
        return OperatorStateHandle(dict(metas), blob)

    def release(self) -> None:
        self._data = None
