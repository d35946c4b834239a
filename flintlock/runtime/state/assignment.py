"""Which state each subtask restores, for any new parallelism (rescaling).

Input: the states of a completed checkpoint (operator id → old subtask index →
``OperatorSubtaskState``), the new parallelism and the max parallelism of every operator of
the new job. Output: operator id → new subtask index → the ``OperatorSubtaskState`` to restore
(every new subtask gets one, possibly empty). Rules, as in Flink:

* keyed state moves by key group: new subtask ``i`` owns ``KeyGroupRange.for_subtask(maxp,
  p, i)`` and gets every old keyed handle restricted to that range; restore then reads only
  those groups (an incremental RocksDB handle stays whole: the restoring backend opens the
  database and keeps only its groups). The max parallelism cannot change (the key groups would).
* split-distribute operator list state: with an unchanged parallelism each subtask keeps its
  own elements; otherwise all elements (in old-subtask order) are split into ``p`` contiguous
  runs whose sizes differ by at most one.
* union operator list state: every new subtask gets every element, also with an unchanged
  parallelism.
* channel state (unaligned checkpoints) stays with its subtask when the parallelism is
  unchanged; otherwise ``ChannelStateRescaleError`` — Flink cannot rescale unaligned
  in-flight state either, because the channels it belongs to do not exist any more.
* state of an operator the new job lacks is an error unless ``allow_non_restored_state``.

A pure function of its inputs; called by the JobManager when it (re)deploys a job.
"""

from __future__ import annotations

from collections.abc import Mapping

from flintlock.runtime.state.errors import (
    ChannelStateRescaleError,
    InvalidParallelismError,
    MaxParallelismMismatchError,
    NonRestoredStateError,
)
from flintlock.runtime.state.keygroups import KeyGroupRange
from flintlock.runtime.state.snapshots import (
    DistributionMode,
    KeyedStateHandle,
    OperatorId,
    OperatorStateHandle,
    OperatorStateMeta,
    OperatorSubtaskState,
)

SubtaskStates = Mapping[int, OperatorSubtaskState]


def assign_states(
    checkpoint_states: Mapping[OperatorId, SubtaskStates],
    new_parallelism: Mapping[OperatorId, int],
    max_parallelism: Mapping[OperatorId, int],
    old_parallelism: Mapping[OperatorId, int] | None = None,
    allow_non_restored_state: bool = False,
) -> dict[OperatorId, dict[int, OperatorSubtaskState]]:
    """Every new subtask's restore state; see the module docstring for the rules."""
    missing = tuple(
        sorted(
            op for op, states in checkpoint_states.items()
            if op not in new_parallelism and any(not s.is_empty() for s in states.values())
        )
    )
    if missing and not allow_non_restored_state:
        raise NonRestoredStateError(missing)
    result: dict[OperatorId, dict[int, OperatorSubtaskState]] = {}
    for operator_id, parallelism in new_parallelism.items():
        states = checkpoint_states.get(operator_id, {})
        old = (old_parallelism or {}).get(operator_id, max(states, default=-1) + 1)
        result[operator_id] = assign_operator(
            operator_id, states, old, parallelism, max_parallelism[operator_id]
        )
    return result


def assign_operator(
    operator_id: str,
    states: SubtaskStates,
    old_parallelism: int,
    new_parallelism: int,
    max_parallelism: int,
) -> dict[int, OperatorSubtaskState]:
    """The restore state of each of ``new_parallelism`` subtasks of one operator."""
    if not 0 < new_parallelism <= max_parallelism:
        raise InvalidParallelismError(operator_id, new_parallelism, max_parallelism)
    ordered = [states[i] for i in sorted(states)]
    keyed = [h for s in ordered for h in s.managed_keyed_state]
    for handle in keyed:
        if handle.max_parallelism != max_parallelism:
            raise MaxParallelismMismatchError(handle.max_parallelism, max_parallelism)
    unchanged = old_parallelism == new_parallelism
    if not unchanged and any(s.has_channel_state for s in ordered):
        raise ChannelStateRescaleError(operator_id, old_parallelism, new_parallelism)
    operator = _assign_operator_state(states, unchanged, new_parallelism)
    result = {}
    for index in range(new_parallelism):
        own = states.get(index, OperatorSubtaskState()) if unchanged else OperatorSubtaskState()
        result[index] = OperatorSubtaskState(
            managed_keyed_state=_keyed_for(keyed, max_parallelism, new_parallelism, index),
            managed_operator_state=operator[index],
            input_channel_state=own.input_channel_state,
            result_subpartition_state=own.result_subpartition_state,
        )
    return result


def _keyed_for(
    handles: list[KeyedStateHandle], max_parallelism: int, parallelism: int, index: int
) -> tuple[KeyedStateHandle, ...]:
    owned = KeyGroupRange.for_subtask(max_parallelism, parallelism, index)
    restricted = (handle.intersect(owned) for handle in handles)
    return tuple(h for h in restricted if h is not None)


def even_split(count: int, parts: int) -> list[range]:
    """``range(count)`` cut into ``parts`` contiguous runs; the first ``count % parts`` runs
    are one longer."""
    base, extra = divmod(count, parts)
    runs, start = [], 0
    for part in range(parts):
        length = base + (1 if part < extra else 0)
        runs.append(range(start, start + length))
        start += length
    return runs


# One element: which old handle it is in, and its start offset there.
_Element = tuple[int, int]


def _assign_operator_state(
    states: SubtaskStates, unchanged: bool, parallelism: int
) -> list[tuple[OperatorStateHandle, ...]]:
    owners = [i for i in sorted(states) for _ in states[i].managed_operator_state]
    handles = [h for i in sorted(states) for h in states[i].managed_operator_state]
    # per new subtask: handle index → state name → (offsets, mode)
    plan: list[dict[int, dict[str, OperatorStateMeta]]] = [{} for _ in range(parallelism)]
    for name, mode in _state_modes(handles).items():
        elements: list[_Element] = [
            (n, offset)
            for n, handle in enumerate(handles)
            if name in handle.state_offsets
            for offset in handle.state_offsets[name].offsets
        ]
        if mode is DistributionMode.UNION:
            shares = [elements] * parallelism
        elif unchanged:
            shares = [[e for e in elements if owners[e[0]] == i] for i in range(parallelism)]
        else:
            shares = [[elements[i] for i in run] for run in even_split(len(elements), parallelism)]
        for index, share in enumerate(shares):
            _add_share(plan[index], name, mode, share, handles)
    return [
        tuple(OperatorStateHandle(metas, handles[n].handle) for n, metas in sorted(p.items()))
        for p in plan
    ]


def _state_modes(handles: list[OperatorStateHandle]) -> dict[str, DistributionMode]:
    modes: dict[str, DistributionMode] = {}
    for handle in handles:
        for name, meta in handle.state_offsets.items():
            modes.setdefault(name, meta.mode)
    return modes


def _add_share(
    plan: dict[int, dict[str, OperatorStateMeta]],
    name: str,
    mode: DistributionMode,
    share: list[_Element],
    handles: list[OperatorStateHandle],
) -> None:
    """Record ``share`` (elements of state ``name``) for one new subtask, grouped by handle.
    A subtask that gets no element still learns the state's mode from the first handle."""
    by_handle: dict[int, list[int]] = {}
    for n, offset in share:
        by_handle.setdefault(n, []).append(offset)
    if not by_handle and handles:
        first = next(n for n, h in enumerate(handles) if name in h.state_offsets)
        by_handle[first] = []
    for n, offsets in by_handle.items():
        plan.setdefault(n, {})[name] = OperatorStateMeta(tuple(offsets), mode)

