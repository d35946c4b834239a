"""The group aggregation through the batch operator (KEYED_BATCH_PROCESS): the same rows as
per record (KEYED_PROCESS), its direct-dict path on the heap backend, the per-record fallback
(RocksDB, TTL, timestamped batches), and snapshots taken mid-stream (copy-on-write while in
flight, restored at the same and at another parallelism)."""

from __future__ import annotations

from typing import Any

import pytest

from flintlock.common.operator_spec import OperatorKind, OperatorSpec
from flintlock.datastream.changelog.aggregates import Count1, Sum
from flintlock.datastream.changelog.aggregates_retract import MaxWithRetract
from flintlock.datastream.changelog.group_agg import AggregateCall, GroupAggFunction
from flintlock.runtime.network.event_time import TimestampedBatch
from flintlock.runtime.state.heap import HeapKeyedStateBackend
from flintlock.runtime.state.keygroups import KeyGroupRange, key_group_index
from flintlock.runtime.state.rocksdb import RocksDBKeyedStateBackend
from flintlock.runtime.tasks.batch_process_operator import KeyedBatchProcessOperator
from flintlock.testing.operators import MemoryStateWriter, open_operator
from tests.table.changelog_harness import r, show

EVENTS = [("+I", "a", 1), ("+I", "a", 2), ("-D", "a", 1), ("+I", "b", 5), ("+I", "a", 2),
          ("-U", "a", 2), ("+U", "a", 3), ("-D", "a", 2), ("-D", "a", 3), ("+I", "a", None),
          ("-D", "z", 1), ("+I", "c", 4), ("+I", "b", 5), ("+U", "c", 1), ("-U", "b", 5)]


def _function(retention_ms: int = 0) -> GroupAggFunction:
    calls = [AggregateCall(Count1()), AggregateCall(Sum(bits=64), (1,)),
             AggregateCall(MaxWithRetract(), (1,))]
    return GroupAggFunction((0,), calls, True, retention_ms)


def _open(kind: OperatorKind, backend: Any, function: GroupAggFunction | None = None
          ) -> tuple[Any, Any]:
    function = function or _function()
    spec = OperatorSpec(kind, function=function, keyed=True)
    return open_operator(spec, keyed_backend=backend, key_selectors=(function.key_selector(),))


ALL_GROUPS = KeyGroupRange(0, 127)


def _heap(groups: KeyGroupRange = ALL_GROUPS) -> HeapKeyedStateBackend:
    return HeapKeyedStateBackend(groups, 128)


def _rows(events: list[tuple[Any, ...]]) -> list[Any]:
    return [r(kind, *values) for kind, *values in events]


def _per_record(events: list[tuple[Any, ...]]) -> list[str]:
    operator, out = _open(OperatorKind.KEYED_PROCESS, _heap())
    operator.process_batch(_rows(events))
    return [show(v) for v in out.values()]


def _forbid_per_record(operator: Any) -> None:
    def refuse(value: Any, ctx: Any) -> Any:
        raise AssertionError("the per-record step ran on the batch path")
    operator.function.process_element = refuse


@pytest.mark.parametrize("batch_size", [1, 4, len(EVENTS)])
def test_heap_backend_takes_the_batch_path_with_the_same_rows(batch_size: int) -> None:
    operator, out = _open(OperatorKind.KEYED_BATCH_PROCESS, _heap())
    assert isinstance(operator, KeyedBatchProcessOperator)
    _forbid_per_record(operator)
    rows = _rows(EVENTS)
    for start in range(0, len(rows), batch_size):
        operator.process_batch(rows[start:start + batch_size])
    assert [show(v) for v in out.values()] == _per_record(EVENTS)


def test_rocksdb_falls_back_to_the_per_record_step(tmp_path: Any) -> None:
    backend = RocksDBKeyedStateBackend(KeyGroupRange(0, 127), 128, local_dir=str(tmp_path))
    operator, out = _open(OperatorKind.KEYED_BATCH_PROCESS, backend)
    assert operator._access is None
    operator.process_batch(_rows(EVENTS))
    assert [show(v) for v in out.values()] == _per_record(EVENTS)


def test_state_ttl_falls_back_to_the_per_record_step() -> None:
    operator, out = _open(OperatorKind.KEYED_BATCH_PROCESS, _heap(), _function(60_000))
    assert operator._access is None
    reference, expected = _open(OperatorKind.KEYED_PROCESS, _heap(), _function(60_000))
    operator.process_batch(_rows(EVENTS))
    reference.process_batch(_rows(EVENTS))
    assert [show(v) for v in out.values()] == [show(v) for v in expected.values()]


def test_a_timestamped_batch_keeps_each_records_timestamp() -> None:
    operator, out = _open(OperatorKind.KEYED_BATCH_PROCESS, _heap())
    batch = TimestampedBatch(_rows([("+I", "a", 1), ("+I", "a", 2)]), [10, 20])
    operator.process_batch(batch)
    assert [(show(e[1]), e[2]) for e in out.events if e[0] == "record"] == [
        ("+I[a, 1, 1, 1]", 10), ("-U[a, 1, 1, 1]", 20), ("+U[a, 2, 3, 2]", 20)]


def _snapshot_after(head: list[Any], tail: list[Any]) -> tuple[Any, MemoryStateWriter, list[str]]:
    """Feeds ``head``, takes a snapshot, feeds ``tail`` while it is in flight (the
    accumulator lists change in place), then writes it. Returns the handle, its writer and
    what the tail emitted."""
    backend = _heap()
    operator, out = _open(OperatorKind.KEYED_BATCH_PROCESS, backend)
    _forbid_per_record(operator)
    operator.process_batch(_rows(head))
    snapshot = backend.snapshot()
    seen = len(out.values())
    operator.process_batch(_rows(tail))
    writer = MemoryStateWriter()
    handle = snapshot.write(writer, "keyed")
    return handle, writer, [show(v) for v in out.values()[seen:]]


def test_a_snapshot_in_flight_keeps_the_state_of_its_barrier() -> None:
    head, tail = EVENTS[:6], EVENTS[6:]
    handle, writer, after_barrier = _snapshot_after(head, tail)
    assert after_barrier == _per_record(EVENTS)[len(_per_record(head)):]
    for kind in (OperatorKind.KEYED_BATCH_PROCESS, OperatorKind.KEYED_PROCESS):
        restored = _heap()
        restored.restore([handle], writer.read)
        operator, out = _open(kind, restored)
        operator.process_batch(_rows(tail))
        assert [show(v) for v in out.values()] == after_barrier


def test_restored_at_another_parallelism_each_subtask_continues_its_keys() -> None:
    head, tail = EVENTS[:5], EVENTS[5:]
    handle, writer, after_barrier = _snapshot_after(head, tail)
    outputs = []
    for groups in (KeyGroupRange(0, 63), KeyGroupRange(64, 127)):
        restored = _heap(groups)
        restored.restore([handle], writer.read)
        operator, out = _open(OperatorKind.KEYED_BATCH_PROCESS, restored)
        mine = [e for e in tail if groups.start <= key_group_index(e[1], 128) <= groups.end]
        operator.process_batch(_rows(mine))
        outputs.extend(show(v) for v in out.values())
    assert sorted(outputs) == sorted(after_barrier)


@pytest.mark.parametrize("kind", [OperatorKind.KEYED_BATCH_PROCESS, OperatorKind.KEYED_PROCESS])
def test_an_int_sum_wraps_as_java_on_both_paths(kind: OperatorKind) -> None:
    function = GroupAggFunction((0,), [AggregateCall(Sum(bits=32), (1,))])
    operator, out = _open(kind, _heap(), function)
    operator.process_batch(_rows([("+I", "a", 2**31 - 1), ("+I", "a", 1), ("-D", "a", 1)]))
    assert [show(v) for v in out.values()] == [
        f"+I[a, {2**31 - 1}]", f"-U[a, {2**31 - 1}]", f"+U[a, {-2**31}]",
        f"-U[a, {-2**31}]", f"+U[a, {2**31 - 1}]"]
