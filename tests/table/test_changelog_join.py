"""Regular joins over changelogs (``flintlock.datastream.changelog.join``, issue 28): the
sequence Flink's ``StreamingJoinOperator`` emits without mini-batch for INNER, LEFT, RIGHT
and FULL joins — null padding retracted with -D when the first match arrives and re-emitted
with +I when the last one goes, the input's kind forwarded on inner sides — and the tables
those changelogs describe equal the join of the net inputs (hypothesis)."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flintlock.datastream.changelog.errors import InvalidOperatorArgumentError
from flintlock.datastream.changelog.join import JoinType, StreamingJoinFunction
from flintlock.runtime.state.keygroups import KeyGroupRange
from flintlock.runtime.state.rocksdb import RocksDBKeyedStateBackend
from tests.table.changelog_harness import Harness, apply_changelog, r


def _join(join_type: JoinType, condition=None, state=None, **options) -> Harness:
    function = StreamingJoinFunction(join_type, 2, 2, (0,), (0,), condition, **options)
    return Harness(function, [function.left_key_selector(), function.right_key_selector()],
                   state=state)


def test_inner_join_forwards_the_input_kind() -> None:
    h = _join(JoinType.INNER)
    assert h.feed(r("+I", 1, "l1")) == []
    assert h.feed(r("+I", 1, "r1"), side=1) == ["+I[1, l1, 1, r1]"]
    assert h.feed(r("+U", 1, "r2"), side=1) == ["+U[1, l1, 1, r2]"]
    assert h.feed(r("-U", 1, "r1"), side=1) == ["-U[1, l1, 1, r1]"]
    assert h.feed(r("+I", 1, "l2")) == ["+I[1, l2, 1, r2]"]
    assert h.feed(r("-D", 1, "l1")) == ["-D[1, l1, 1, r2]"]


def test_left_join_retracts_the_padding_on_the_first_match_and_restores_it_after_the_last():
    h = _join(JoinType.LEFT)
    assert h.feed(r("+I", 1, "l1")) == ["+I[1, l1, null, null]"]
    assert h.feed(r("+I", 1, "r1"), side=1) == ["-D[1, l1, null, null]", "+I[1, l1, 1, r1]"]
    assert h.feed(r("+I", 1, "r2"), side=1) == ["+I[1, l1, 1, r2]"]
    assert h.feed(r("-D", 1, "r1"), side=1) == ["-D[1, l1, 1, r1]"]
    assert h.feed(r("-U", 1, "r2"), side=1) == ["-U[1, l1, 1, r2]", "+I[1, l1, null, null]"]
    assert h.feed(r("-D", 1, "l1")) == ["-D[1, l1, null, null]"]


def test_left_join_outer_input_uses_insert_and_delete_only() -> None:
    h = _join(JoinType.LEFT)
    h.feed(r("+I", 1, "r1"), side=1)
    assert h.feed(r("+U", 1, "l1")) == ["+I[1, l1, 1, r1]"]
    assert h.feed(r("-U", 1, "l1")) == ["-D[1, l1, 1, r1]"]
    assert h.feed(r("+I", 2, "l2")) == ["+I[2, l2, null, null]"]


def test_right_join_mirrors_the_left_join() -> None:
    h = _join(JoinType.RIGHT)
    assert h.feed(r("+I", 1, "r1"), side=1) == ["+I[null, null, 1, r1]"]
    assert h.feed(r("+I", 1, "l1")) == ["-D[null, null, 1, r1]", "+I[1, l1, 1, r1]"]
    assert h.feed(r("-D", 1, "l1")) == ["-D[1, l1, 1, r1]", "+I[null, null, 1, r1]"]


def test_full_join_pads_both_sides() -> None:
    h = _join(JoinType.FULL)
    assert h.feed(r("+I", 1, "l1")) == ["+I[1, l1, null, null]"]
    assert h.feed(r("+I", 1, "r1"), side=1) == ["-D[1, l1, null, null]", "+I[1, l1, 1, r1]"]
    assert h.feed(r("+I", 1, "l2")) == ["+I[1, l2, 1, r1]"]
    assert h.feed(r("-D", 1, "r1"), side=1) == [
        "-D[1, l1, 1, r1]", "+I[1, l1, null, null]", "-D[1, l2, 1, r1]",
        "+I[1, l2, null, null]"]
    assert h.feed(r("-D", 1, "l1")) == ["-D[1, l1, null, null]"]


@pytest.mark.parametrize("rocksdb", [False, True], ids=["hashmap", "rocksdb"])
def test_duplicate_rows_match_once_per_copy(rocksdb, tmp_path) -> None:
    state = RocksDBKeyedStateBackend(KeyGroupRange(0, 127), 128, local_dir=str(tmp_path)) \
        if rocksdb else None
    h = _join(JoinType.LEFT, state=state)
    h.feed(r("+I", 1, "l"), r("+I", 1, "l"))
    assert h.feed(r("+I", 1, "r"), side=1) == [
        "-D[1, l, null, null]", "+I[1, l, 1, r]", "-D[1, l, null, null]", "+I[1, l, 1, r]"]
    assert h.feed(r("-D", 1, "r"), side=1) == [
        "-D[1, l, 1, r]", "+I[1, l, null, null]", "-D[1, l, 1, r]", "+I[1, l, null, null]"]


def test_residual_condition_and_null_keys() -> None:
    h = _join(JoinType.LEFT, condition=lambda left, right: left[1] < right[1])
    assert h.feed(r("+I", 1, 5)) == ["+I[1, 5, null, null]"]
    assert h.feed(r("+I", 1, 3), side=1) == []
    assert h.feed(r("+I", 1, 9), side=1) == ["-D[1, 5, null, null]", "+I[1, 5, 1, 9]"]
    assert h.feed(r("+I", None, 1), r("+I", None, 2), side=1) == []
    assert h.feed(r("+I", None, 0)) == ["+I[null, 0, null, null]"]
    safe = _join(JoinType.INNER, filter_null_keys=(False,))
    safe.feed(r("+I", None, "l"))
    assert safe.feed(r("+I", None, "r"), side=1) == ["+I[null, l, null, r]"]


def test_bad_arguments_are_typed_errors() -> None:
    with pytest.raises(InvalidOperatorArgumentError, match="key fields"):
        StreamingJoinFunction(JoinType.INNER, 2, 2, (0,), (0, 1))
    with pytest.raises(InvalidOperatorArgumentError, match="JoinType"):
        StreamingJoinFunction("LEFT", 2, 2, (0,), (0,))


def _net(events, side):
    table = Counter()
    for s, kind, key, value in events:
        if s == side:
            table[(key, value)] += 1 if kind in ("+I", "+U") else -1
    return +table


def _expected(join_type, events):
    left, right = _net(events, 0), _net(events, 1)
    result = Counter()
    for (lk, lv), ln in left.items():
        matched = False
        for (rk, rv), rn in right.items():
            if lk == rk and lk is not None:
                result[(lk, lv, rk, rv)] += ln * rn
                matched = True
        if not matched and join_type in (JoinType.LEFT, JoinType.FULL):
            result[(lk, lv, None, None)] += ln
    if join_type in (JoinType.RIGHT, JoinType.FULL):
        for (rk, rv), rn in right.items():
            if not any(lk == rk and lk is not None for (lk, _lv) in left):
                result[(None, None, rk, rv)] += rn
    return +result


@st.composite
def _changelogs(draw):
    """Interleaved +I/-D/-U/+U events on both sides that never retract a row not present."""
    events, present = [], {0: Counter(), 1: Counter()}
    for _ in range(draw(st.integers(0, 30))):
        side = draw(st.integers(0, 1))
        rows = [row for row, n in present[side].items() if n > 0]
        if rows and draw(st.booleans()):
            key, value = draw(st.sampled_from(rows))
            kind = draw(st.sampled_from(["-D", "-U"]))
            present[side][(key, value)] -= 1
        else:
            key = draw(st.sampled_from([1, 2, None]))
            value = draw(st.integers(0, 2))
            kind = draw(st.sampled_from(["+I", "+U"]))
            present[side][(key, value)] += 1
        events.append((side, kind, key, value))
    return events


@settings(max_examples=150, deadline=None)
@given(join_type=st.sampled_from(list(JoinType)), events=_changelogs())
def test_the_changelog_describes_the_join_of_the_net_inputs(join_type, events) -> None:
    h = _join(join_type)
    for side, kind, key, value in events:
        h.feed(r(kind, key, value), side=side)
    assert apply_changelog(h.rows()) == _expected(join_type, events)
