"""The changelog operators against real Flink 2.3 (issue 28): the same input changelogs as
``tests/table/oracle/changelog_ops.py`` (run on PyFlink 2.3.0, parallelism 1, no mini-batch),
and exactly the output sequence recorded in ``tests/table/fixtures/changelog_ops.txt`` — on
the hashmap and on the RocksDB keyed state backend (whose state reads return copies, so an
operator that changed a value without writing it back would fail here)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from flintlock.datastream.changelog.aggregates import Avg, Count, Count1, Sum
from flintlock.datastream.changelog.aggregates_retract import (
    FirstValueWithRetract,
    LastValueWithRetract,
    MaxWithRetract,
)
from flintlock.datastream.changelog.group_agg import AggregateCall, GroupAggFunction
from flintlock.datastream.changelog.sort_keys import sort_key_selector
from flintlock.datastream.changelog.topn_append import AppendOnlyTopNFunction
from flintlock.datastream.changelog.topn_retract import RetractableTopNFunction
from flintlock.runtime.state.heap import HeapKeyedStateBackend
from flintlock.runtime.state.keygroups import KeyGroupRange
from flintlock.runtime.state.rocksdb import RocksDBKeyedStateBackend
from tests.table.changelog_harness import Harness, r

FIXTURE = Path(__file__).parent / "fixtures" / "changelog_ops.txt"

GROUP_INPUT = [("+I", "a", 1), ("+I", "a", 2), ("-D", "a", 1), ("+I", "b", 5), ("+I", "a", 2),
               ("-U", "a", 2), ("+U", "a", 3), ("-D", "a", 2), ("-D", "a", 3),
               ("+I", "a", None)]
INSERT_ONLY_INPUT = [("+I", "p", 10), ("+I", "p", 5), ("+I", "p", 20), ("+I", "p", 7),
                     ("+I", "p", 1), ("+I", "p", 7), ("+I", "q", 3), ("+I", "p", 30)]
UPDATING_INPUT = [("+I", "p", 10), ("+I", "p", 5), ("+I", "p", 3), ("-D", "p", 10),
                  ("-U", "p", 5), ("+U", "p", 6), ("+I", "p", 8), ("-D", "p", 3),
                  ("-D", "p", 8)]
V_DESC = sort_key_selector([1], [False])


def _flink(case: str) -> list[tuple[str, list]]:
    """The rows Flink emitted for ``case``: (kind, values)."""
    lines = FIXTURE.read_text().split(f"=== CASE {case}\n", 1)[1].split("=== ", 1)[0]
    return [(line[:2], ast.literal_eval(line[2:])) for line in lines.splitlines()]


@pytest.fixture(params=["hashmap", "rocksdb"])
def backend(request, tmp_path):
    if request.param == "hashmap":
        return HeapKeyedStateBackend(KeyGroupRange(0, 127), 128)
    return RocksDBKeyedStateBackend(KeyGroupRange(0, 127), 128, local_dir=str(tmp_path))


def _run(function, events, backend) -> list[tuple[str, list]]:
    h = Harness(function, [function.key_selector()], state=backend)
    h.feed(*(r(kind, *values) for kind, *values in events))
    return [(row.get_row_kind().short_string(), list(row)) for row in h.rows()]


def test_group_by_with_every_retracting_builtin(backend) -> None:
    calls = [AggregateCall(Count1()), AggregateCall(Sum(bits=32), (1,)),
             AggregateCall(MaxWithRetract(), (1,)),
             AggregateCall(Count(), (1,), distinct=True),
             AggregateCall(Avg("integral"), (1,)), AggregateCall(FirstValueWithRetract(), (1,)),
             AggregateCall(LastValueWithRetract(), (1,))]
    assert _run(GroupAggFunction((0,), calls), GROUP_INPUT, backend) == _flink("group")


def test_global_aggregation(backend) -> None:
    calls = [AggregateCall(Count1()), AggregateCall(Sum(bits=32), (1,))]
    assert _run(GroupAggFunction((), calls), GROUP_INPUT, backend) == _flink("global")


@pytest.mark.parametrize(("case", "n", "start", "numbered"), [
    ("append topn rn", 3, 1, True), ("append topn no rn", 2, 1, False),
    ("append topn offset", 3, 2, True)])
def test_append_only_top_n(case, n, start, numbered, backend) -> None:
    function = AppendOnlyTopNFunction((0,), V_DESC, n, start, numbered)
    assert _run(function, INSERT_ONLY_INPUT, backend) == _flink(case)


@pytest.mark.parametrize(("case", "numbered"), [("retract topn rn", True),
                                                 ("retract topn no rn", False)])
def test_retractable_top_n(case, numbered, backend) -> None:
    function = RetractableTopNFunction((0,), V_DESC, 2, 1, numbered)
    assert _run(function, UPDATING_INPUT, backend) == _flink(case)


NULLS_FIXTURE = Path(__file__).parent / "fixtures" / "changelog_topn_nulls.txt"
NULLS_INPUT = [("+I", "p", 5, "a"), ("+I", "p", None, "b"), ("+I", "p", 7, "c"),
               ("+I", "p", None, "d"), ("+I", "p", 1, "e")]


@pytest.mark.parametrize(("case", "ascending", "nulls_first"), [
    ("asc", True, None), ("desc", False, None), ("asc nulls last", True, False),
    ("desc nulls first", False, True)])
def test_null_order_of_the_sort_key(case, ascending, nulls_first, backend) -> None:
    key = sort_key_selector([1], [ascending], [nulls_first])
    function = AppendOnlyTopNFunction((0,), key, 3)
    block = NULLS_FIXTURE.read_text().split(f"=== CASE {case}\n", 1)[1].split("=== ", 1)[0]
    flink = [(line[:2], ast.literal_eval(line[2:])) for line in block.splitlines()]
    assert _run(function, NULLS_INPUT, backend) == flink
