"""The updatable Top-N (``flintlock.datastream.changelog.topn_update``, issue 28) behind a
GROUP BY COUNT, as Flink 2.3 plans ``ROW_NUMBER() OVER (PARTITION BY p ORDER BY c DESC) <= 2``
over ``SELECT p, k, COUNT(*) c ... GROUP BY p, k`` (UpdateFastStrategy, the aggregation
emitting no -U): exactly the sequences real PyFlink recorded in
``tests/table/fixtures/changelog_update_topn.txt`` (by
``tests/table/oracle/changelog_update_topn.py``), with and without the row number; and the
input rules it enforces."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flintlock.datastream.changelog.aggregates import Count1
from flintlock.datastream.changelog.errors import InvalidOperatorArgumentError, UpsertInputError
from flintlock.datastream.changelog.group_agg import AggregateCall, GroupAggFunction
from flintlock.datastream.changelog.sort_keys import sort_key_selector
from flintlock.datastream.changelog.topn_retract import RetractableTopNFunction
from flintlock.datastream.changelog.topn_update import UpdatableTopNFunction
from tests.table.changelog_harness import Harness, apply_changelog, r

FIXTURE = Path(__file__).parent / "fixtures" / "changelog_update_topn.txt"
EVENTS = [("p", "a"), ("p", "b"), ("p", "b"), ("p", "c"), ("p", "c"), ("p", "c"), ("p", "a"),
          ("p", "a"), ("q", "x"), ("p", "d"), ("p", "b"), ("p", "b")]
COUNT_DESC = sort_key_selector([2], [False])


def _flink(case: str) -> list[tuple[str, list]]:
    block = FIXTURE.read_text().split(f"=== CASE {case}\n", 1)[1].split("--- rows\n", 1)[1]
    lines = block.split("=== ", 1)[0].splitlines()
    return [(line[:2], ast.literal_eval(line[2:])) for line in lines]


def _top(numbered: bool, **options) -> Harness:
    function = UpdatableTopNFunction((0,), COUNT_DESC, 2, 1, numbered, row_key=(0, 1),
                                     **options)
    return Harness(function, [function.key_selector()])


@pytest.mark.parametrize(("case", "numbered"), [("update topn rn", True),
                                                 ("update topn no rn", False)])
def test_top_n_of_a_group_by_count_is_flinks_sequence(case, numbered) -> None:
    count = GroupAggFunction((0, 1), [AggregateCall(Count1())], generate_update_before=False)
    aggregate = Harness(count, [count.key_selector()])
    top = _top(numbered)
    aggregate.feed(*(r("+I", *event) for event in EVENTS))
    top.feed(*aggregate.rows())
    assert [(row.get_row_kind().short_string(), list(row)) for row in top.rows()] == (
        _flink(case))


def test_an_unchanged_sort_key_updates_the_row_in_place() -> None:
    top = _top(True)
    top.feed(r("+I", "p", "a", 5), r("+I", "p", "b", 3))
    assert top.feed(r("+U", "p", "b", 3)) == ["-U[p, b, 3, 2]", "+U[p, b, 3, 2]"]
    assert _top(True, generate_update_before=False).feed(
        r("+I", "p", "a", 5), r("+U", "p", "a", 5)) == ["+I[p, a, 5, 1]", "+U[p, a, 5, 1]"]


def test_retractions_and_sort_keys_moving_down_are_refused() -> None:
    top = _top(True)
    top.feed(r("+I", "p", "a", 5))
    with pytest.raises(UpsertInputError, match="monotonicity"):
        top.feed(r("+U", "p", "a", 4))
    with pytest.raises(UpsertInputError, match="UPDATE_BEFORE"):
        top.feed(r("-U", "p", "a", 5))
    with pytest.raises(InvalidOperatorArgumentError, match="row_key"):
        UpdatableTopNFunction((0,), COUNT_DESC, 2, row_key=())


@settings(max_examples=150, deadline=None)
@given(events=st.lists(st.tuples(st.sampled_from("pq"), st.sampled_from("abcdef")),
                       max_size=40),
       n=st.integers(1, 4), numbered=st.booleans())
def test_the_updatable_top_n_ends_with_the_table_the_retractable_one_does(events, n,
                                                                       numbered) -> None:
    """Over a GROUP BY COUNT (sort keys only grow), the fast strategy and the retract strategy
    describe the same top N at every step's end (ties: the row that reached the count first
    ranks first, in both)."""
    tables = []
    for cls, update_before in ((UpdatableTopNFunction, False), (RetractableTopNFunction, True)):
        count = GroupAggFunction((0, 1), [AggregateCall(Count1())],
                                 generate_update_before=update_before)
        aggregate = Harness(count, [count.key_selector()])
        options = {"row_key": (0, 1)} if cls is UpdatableTopNFunction else {}
        top_function = cls((0,), COUNT_DESC, n, 1, numbered, **options)
        top = Harness(top_function, [top_function.key_selector()])
        aggregate.feed(*(r("+I", *event) for event in events))
        top.feed(*aggregate.rows())
        tables.append(apply_changelog(top.rows()))
    assert tables[0] == tables[1]
