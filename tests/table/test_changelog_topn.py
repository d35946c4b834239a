"""Top-N (ROW_NUMBER) over changelogs (``flintlock.datastream.changelog.topn_append`` and
``topn_retract``, issue 28): the sequences Flink's ``AppendOnlyTopNFunction`` and
``RetractableTopNFunction`` emit with and without the row-number column, and (hypothesis) the
table each changelog describes equals the top N computed from scratch over the net input."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flintlock.datastream.changelog.errors import InvalidOperatorArgumentError, NotInsertOnlyError
from flintlock.datastream.changelog.sort_keys import sort_key_selector
from flintlock.datastream.changelog.topn_append import AppendOnlyTopNFunction
from flintlock.datastream.changelog.topn_retract import RetractableTopNFunction
from tests.table.changelog_harness import Harness, apply_changelog, r

BY_SCORE_DESC = sort_key_selector([1], [False])


def _topn(cls, n, start=1, numbered=True, update_before=True) -> Harness:
    function = cls((), BY_SCORE_DESC, n, start, numbered, update_before)
    return Harness(function, [function.key_selector()])


@pytest.mark.parametrize("cls", [AppendOnlyTopNFunction, RetractableTopNFunction])
def test_row_numbers_shift_down_when_a_better_row_arrives(cls) -> None:
    h = _topn(cls, 3)
    assert h.feed(r("+I", "a", 10)) == ["+I[a, 10, 1]"]
    assert h.feed(r("+I", "b", 5)) == ["+I[b, 5, 2]"]
    assert h.feed(r("+I", "c", 20)) == [
        "-U[a, 10, 1]", "+U[c, 20, 1]", "-U[b, 5, 2]", "+U[a, 10, 2]", "+I[b, 5, 3]"]
    assert h.feed(r("+I", "d", 7)) == ["-U[b, 5, 3]", "+U[d, 7, 3]"]
    assert h.feed(r("+I", "e", 1)) == []


@pytest.mark.parametrize("cls", [AppendOnlyTopNFunction, RetractableTopNFunction])
def test_without_row_numbers_the_row_that_falls_out_is_deleted(cls) -> None:
    h = _topn(cls, 2, numbered=False)
    assert h.feed(r("+I", "a", 10), r("+I", "b", 5)) == ["+I[a, 10]", "+I[b, 5]"]
    assert h.feed(r("+I", "c", 7)) == ["-D[b, 5]", "+I[c, 7]"]
    assert h.feed(r("+I", "d", 1)) == []
    assert h.feed(r("+I", "e", 7)) == []


def test_ties_keep_arrival_order_and_update_before_can_be_off() -> None:
    h = _topn(AppendOnlyTopNFunction, 2, update_before=False)
    assert h.feed(r("+I", "a", 5), r("+I", "b", 5), r("+I", "c", 5)) == [
        "+I[a, 5, 1]", "+I[b, 5, 2]"]
    assert h.feed(r("+I", "d", 6)) == ["+U[d, 6, 1]", "+U[a, 5, 2]"]


def test_an_offset_emits_only_ranks_in_the_range() -> None:
    h = _topn(AppendOnlyTopNFunction, 3, start=2)
    assert h.feed(r("+I", "a", 10)) == []
    assert h.feed(r("+I", "b", 20)) == ["+I[a, 10, 2]"]
    assert h.feed(r("+I", "c", 15)) == ["-U[a, 10, 2]", "+U[c, 15, 2]", "+I[a, 10, 3]"]


def test_retracting_a_top_row_moves_the_rows_below_up() -> None:
    h = _topn(RetractableTopNFunction, 2)
    h.feed(r("+I", "a", 10), r("+I", "b", 5), r("+I", "c", 3))
    assert h.feed(r("-D", "a", 10)) == ["-U[a, 10, 1]", "+U[b, 5, 1]", "-U[b, 5, 2]",
                                        "+U[c, 3, 2]"]
    assert h.feed(r("-U", "b", 5)) == ["-U[b, 5, 1]", "+U[c, 3, 1]", "-D[c, 3, 2]"]
    assert h.feed(r("+U", "b", 6)) == ["-U[c, 3, 1]", "+U[b, 6, 1]", "+I[c, 3, 2]"]


def test_retracting_without_row_numbers_promotes_the_next_row() -> None:
    h = _topn(RetractableTopNFunction, 2, numbered=False)
    h.feed(r("+I", "a", 10), r("+I", "b", 5), r("+I", "c", 3))
    assert h.feed(r("-D", "a", 10)) == ["-D[a, 10]", "+I[c, 3]"]
    assert h.feed(r("-D", "x", 1)) == []
    assert h.feed(r("-D", "c", 3)) == ["-D[c, 3]"]


def test_a_tie_across_the_boundary_promotes_the_row_at_rank_n() -> None:
    h = _topn(RetractableTopNFunction, 3, numbered=False)
    h.feed(r("+I", "a", 2), r("+I", "b", 1), r("+I", "c", 1), r("+I", "d", 1))
    assert h.feed(r("-D", "a", 2)) == ["-D[a, 2]", "+I[d, 1]"]


def test_partitions_are_independent_and_sort_keys_handle_nulls_and_strings() -> None:
    key = sort_key_selector([1, 2], [True, False])
    function = RetractableTopNFunction((0,), key, 2)
    h = Harness(function, [function.key_selector()])
    assert h.feed(r("+I", "p", None, "x"), r("+I", "q", 1, "y")) == [
        "+I[p, null, x, 1]", "+I[q, 1, y, 1]"]
    assert h.feed(r("+I", "p", 1, "a"), r("+I", "p", 1, "z")) == [
        "+I[p, 1, a, 2]", "-U[p, 1, a, 2]", "+U[p, 1, z, 2]"]


def test_append_only_top_n_refuses_updates_and_bad_ranges_are_typed_errors() -> None:
    h = _topn(AppendOnlyTopNFunction, 2)
    with pytest.raises(NotInsertOnlyError, match="UPDATE_AFTER"):
        h.feed(r("+U", "a", 1))
    with pytest.raises(InvalidOperatorArgumentError, match="rank range"):
        AppendOnlyTopNFunction((), BY_SCORE_DESC, 0)


def _from_scratch(rows, n, start, numbered):
    """The top rows of the net input: stable sort by score descending (arrival order among
    ties; a retraction removes the earliest equal row)."""
    ranked = sorted(rows, key=lambda values: -values[1])
    top = ranked[start - 1:n]
    if numbered:
        return Counter((*values, start + i) for i, values in enumerate(top))
    return Counter(top)


@st.composite
def _changelog(draw, retracting):
    events, present = [], []
    for _ in range(draw(st.integers(0, 25))):
        if retracting and present and draw(st.booleans()):
            values = draw(st.sampled_from(present))
            present.remove(values)
            events.append((draw(st.sampled_from(["-D", "-U"])), values))
        else:
            values = (draw(st.sampled_from("abc")), draw(st.integers(0, 2)))
            present.append(values)
            events.append(("+I" if not retracting else draw(st.sampled_from(["+I", "+U"])),
                           values))
    return events, present


def _check_net_input(data, retracting, n, start, numbered) -> None:
    start = min(start, n)
    events, present = data.draw(_changelog(retracting))
    cls = RetractableTopNFunction if retracting else AppendOnlyTopNFunction
    h = _topn(cls, n, start, numbered)
    for kind, values in events:
        h.feed(r(kind, *values))
    assert apply_changelog(h.rows()) == _from_scratch(present, n, start, numbered)


@settings(max_examples=150, deadline=None)
@given(data=st.data(), n=st.integers(1, 4), start=st.integers(1, 3), numbered=st.booleans())
def test_append_only_changelog_describes_the_top_n_of_the_input(data, n, start,
                                                                numbered) -> None:
    _check_net_input(data, False, n, start, numbered)


@settings(max_examples=250, deadline=None)
@given(data=st.data(), n=st.integers(1, 4), start=st.integers(1, 3), numbered=st.booleans())
def test_retracting_changelog_describes_the_top_n_of_the_net_input(data, n, start,
                                                                   numbered) -> None:
    _check_net_input(data, True, n, start, numbered)
