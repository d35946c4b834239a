"""State-backed data views in the bundled Python aggregation (``changelog.agg_views``): each
``ListView`` / ``MapView`` of an accumulator is a keyed list / map state of its own, the
accumulator is stored without it, a bundle reads only the entries the function touches, and
the views are snapshotted, restored and rescaled with their key. Thread-free operator tests."""

from __future__ import annotations

import pickle
import random
from typing import Any

import pytest

from flintlock.common.types import Row
from flintlock.datastream.changelog.bundled_agg import (
    BundledGroupAggFunction,
    BundledGroupTableAggFunction,
)
from flintlock.datastream.changelog.group_agg import AggregateCall
from flintlock.runtime.state import heap_states
from flintlock.runtime.state.heap import HeapKeyedStateBackend
from flintlock.runtime.state.keygroups import KeyGroupRange, assign_key_to_operator
from flintlock.table.data_view import ListView, MapView
from tests.table.changelog_harness import Harness, r

MAX_PARALLELISM = 128


class DistinctCount:
    """Distinct values with retraction: a MapView value -> multiplicity, and a counter."""

    def create_accumulator(self) -> Row:
        return Row(MapView(), 0)

    def accumulate(self, acc: Row, value: str) -> None:
        seen = acc[0]
        if seen.contains(value):
            seen[value] = seen.get(value) + 1
        else:
            seen.put(value, 1)
            acc[1] += 1

    def retract(self, acc: Row, value: str) -> None:
        seen = acc[0]
        left = seen.get(value)
        if left is None:
            return
        if left == 1:
            del seen[value]
            acc[1] -= 1
        else:
            seen[value] = left - 1

    def get_value(self, acc: Row) -> int:
        return int(acc[1])


class Collect:
    """Every value in a ListView (a list accumulator), sorted, and the last one seen."""

    def create_accumulator(self) -> list[Any]:
        return [ListView(), None]

    def accumulate(self, acc: list[Any], value: str) -> None:
        acc[0].add(value)
        acc[1] = value

    def retract(self, acc: list[Any], value: str) -> None:
        kept = [v for v in acc[0] if v != value]
        acc[0].clear()
        acc[0].add_all(kept)

    def get_value(self, acc: list[Any]) -> str:
        return ",".join(sorted(acc[0].get()))

    def emit_value(self, acc: list[Any]) -> Any:
        for value in sorted(acc[0]):
            yield (value,)


def _aggregation() -> BundledGroupAggFunction:
    return BundledGroupAggFunction((0,), [AggregateCall(DistinctCount(), (1,)),
                                          AggregateCall(Collect(), (1,))])


def _harness(backend: HeapKeyedStateBackend | None = None) -> Harness:
    function = _aggregation()
    return Harness(function, [function.key_selector()], state=backend)


def test_a_large_map_view_is_stored_apart_and_only_touched_entries_are_read(monkeypatch
                                                                            ) -> None:
    function = BundledGroupAggFunction((0,), [AggregateCall(DistinctCount(), (1,))])
    harness = Harness(function, [function.key_selector()])
    for i in range(3000):
        harness.feed(r("+I", "k", f"v{i}"))
    accumulators = list(harness.backend._tables["accState"].values())
    assert len(pickle.dumps(accumulators)) < 300  # 3000 entries would take ~30 kB
    assert len(harness.backend._tables["agg0$f0"]["k"]) == 3000

    calls: dict[str, int] = {}
    for name in ("get", "put", "contains", "remove", "items", "keys", "values", "is_empty"):
        original = getattr(heap_states.HeapMapState, name)

        def counted(self: Any, *args: Any, _name: str = name, _f: Any = original) -> Any:
            calls[_name] = calls.get(_name, 0) + 1
            return _f(self, *args)
        monkeypatch.setattr(heap_states.HeapMapState, name, counted)
    assert harness.feed(r("+I", "k", "v7"), r("-D", "k", "v8")) == ["-U[k, 3000]",
                                                                  "+U[k, 2999]"]
    # v7: contains, get, put; v8: get, contains + remove (del): no whole read of the view
    assert calls == {"contains": 2, "get": 2, "put": 1, "remove": 1}


def test_views_give_the_results_of_in_memory_views_and_are_cleared_with_their_key() -> None:
    harness = _harness()
    assert harness.feed(r("+I", "a", "x"), r("+I", "a", "y"), r("+I", "a", "x")) == [
        "+I[a, 1, x]", "-U[a, 1, x]", "+U[a, 2, x,y]", "-U[a, 2, x,y]", "+U[a, 2, x,x,y]"]
    assert harness.feed(r("-D", "a", "x"), r("-D", "a", "y"), r("-D", "a", "x")) == [
        "-U[a, 2, x,x,y]", "+U[a, 2, y]", "-U[a, 2, y]", "+U[a, 1, ]", "-D[a, 1, ]"]
    tables = harness.backend._tables
    assert not tables["accState"] and not tables["agg0$f0"] and not tables["agg1$f0"]
    assert harness.feed(r("+I", "a", "z")) == ["+I[a, 1, z]"]  # a new key starts empty


def test_a_table_aggregate_with_a_list_view() -> None:
    function = BundledGroupTableAggFunction((0,), AggregateCall(Collect(), (1,)))
    harness = Harness(function, [function.key_selector()])
    assert harness.feed(r("+I", "a", "y"), r("+I", "a", "x")) == [
        "+I[a, y]", "-D[a, y]", "+I[a, x]", "+I[a, y]"]
    assert harness.backend._tables["agg0$f0"]["a"] == ["y", "x"]


def _events(count: int) -> list[Row]:
    chooser = random.Random(7)
    live: list[tuple[str, str]] = []
    out = []
    for _ in range(count):
        if live and chooser.random() < 0.3:
            key, value = live.pop(chooser.randrange(len(live)))
            out.append(r("-D", key, value))
        else:
            key, value = chooser.choice("abcdef"), chooser.choice("uvwxyz")
            live.append((key, value))
            out.append(r("+I", key, value))
    return out


@pytest.mark.parametrize("parallelism", [1, 3])
def test_views_restored_from_a_snapshot_at_another_parallelism_continue_exactly(
        parallelism: int) -> None:
    events = _events(300)
    whole = _harness()
    expected = [line for row in events for line in whole.feed(row)]

    first = _harness()
    got = [line for row in events[:150] for line in first.feed(row)]
    handle, writer = first.snapshot()
    subtasks = []
    for index in range(parallelism):
        backend = HeapKeyedStateBackend(
            KeyGroupRange.for_subtask(MAX_PARALLELISM, parallelism, index), MAX_PARALLELISM)
        backend.restore([handle], writer.read)
        subtasks.append(_harness(backend))
    for row in events[150:]:
        got += subtasks[assign_key_to_operator(row[0], MAX_PARALLELISM, parallelism)].feed(row)
    assert got == expected


def test_a_table_api_udaf_keeps_its_map_view_in_map_state_on_thread_task_managers(
        monkeypatch) -> None:
    from flintlock.table import DataTypes, EnvironmentSettings, TableEnvironment
    from flintlock.table.expressions import col
    from flintlock.table.udf import AggregateFunction, udaf
    from flintlock.testing.executor import use_thread_executor

    class Distinct(DistinctCount, AggregateFunction):
        pass

    calls: dict[str, int] = {}
    for name in ("put", "items", "keys", "values"):
        original = getattr(heap_states.HeapMapState, name)

        def counted(self: Any, *args: Any, _name: str = name, _f: Any = original) -> Any:
            calls[_name] = calls.get(_name, 0) + 1
            return _f(self, *args)
        monkeypatch.setattr(heap_states.HeapMapState, name, counted)
    use_thread_executor(monkeypatch)
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", "1")
    t_env.get_config().set("python.fn-execution.bundle.size", "1")
    table = t_env.from_elements([("a", "x"), ("a", "y"), ("b", "x"), ("a", "x")], ["k", "v"])
    distinct = udaf(Distinct(), result_type=DataTypes.BIGINT(), accumulator_type=DataTypes.ROW(
        [DataTypes.FIELD("f0", DataTypes.MAP_VIEW(DataTypes.STRING(), DataTypes.BIGINT())),
         DataTypes.FIELD("f1", DataTypes.BIGINT())]))
    result = table.group_by(col("k")).select(col("k"), distinct(col("v")).alias("n"))
    rows = [(row.get_row_kind().short_string(), tuple(row))
            for row in result.execute().collect()]
    assert rows == [("+I", ("a", 1)), ("-U", ("a", 1)), ("+U", ("a", 2)), ("+I", ("b", 1))]
    assert calls == {"put": 4}  # every accumulate writes one entry; none reads the view whole


def test_views_on_the_rocksdb_backend_give_the_same_changelog(tmp_path) -> None:
    from flintlock.runtime.state.rocksdb import RocksDBKeyedStateBackend

    events = _events(200)
    heap = _harness()
    expected = [line for row in events for line in heap.feed(row)]
    rocks = RocksDBKeyedStateBackend(KeyGroupRange(0, MAX_PARALLELISM - 1), MAX_PARALLELISM,
                                     local_dir=str(tmp_path))
    try:
        harness = _harness(rocks)  # type: ignore[arg-type]
        assert [line for row in events for line in harness.feed(row)] == expected
    finally:
        rocks.dispose()
