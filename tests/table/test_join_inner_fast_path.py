"""The INNER regular join's one-function step (``StreamingJoinFunction._inner``, issue 33's
speed work) emits exactly the rows, in the same order and with the same kinds, as the general
accumulate / retract path it replaces for inner joins, with and without a residual condition,
over random changelogs of both sides (duplicates, retractions, null keys)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from flintlock.datastream.changelog.join import JoinType, StreamingJoinFunction
from tests.table.changelog_harness import Harness, r
from tests.table.test_changelog_join import _changelogs


class _GeneralPath(StreamingJoinFunction):
    """The join with the general path for every join type (the reference)."""

    def process_element1(self, value: Any, ctx: Any) -> list[Any]:
        return self._process(value, self._left, self._right)

    def process_element2(self, value: Any, ctx: Any) -> list[Any]:
        return self._process(value, self._right, self._left)


def _harness(cls: type[StreamingJoinFunction], condition: Any) -> Harness:
    function = cls(JoinType.INNER, 2, 2, (0,), (0,), condition)
    return Harness(function, [function.left_key_selector(), function.right_key_selector()])


def _different_values(left: Any, right: Any) -> bool:
    return bool(left[1] != right[1])


@settings(max_examples=150, deadline=None)
@given(events=_changelogs(), conditioned=st.booleans())
def test_the_inner_step_emits_what_the_general_path_emits(events: Any,
                                                          conditioned: bool) -> None:
    condition = _different_values if conditioned else None
    fast, general = _harness(StreamingJoinFunction, condition), _harness(_GeneralPath, condition)
    for side, kind, key, value in events:
        assert (fast.feed(r(kind, key, value), side=side)
                == general.feed(r(kind, key, value), side=side))
