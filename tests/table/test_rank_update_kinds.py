"""Top-N leaves out UPDATE_BEFORE when no consumer needs it (``planner/update_kinds``, issue 33):
as Flink's rank honours the update-kind trait, a ROW_NUMBER Top-N into a blackhole table (q19,
q9's Top-1) is built with ``generate_update_before=False``; into a print table, or under a
filter, it keeps it. And the functions' rows without -U are the rows with it, -U removed."""

from __future__ import annotations

from typing import Any

import pytest

from flintlock.datastream.changelog.sort_keys import SortKeySelector
from flintlock.datastream.changelog.top1 import Top1Function
from flintlock.datastream.changelog.topn_append import AppendOnlyTopNFunction
from flintlock.datastream.changelog.topn_base import TopNFunction
from tests.table.changelog_harness import Harness, r
from tests.table.test_calc_fusion import graphs
from tests.table.test_update_kinds import t_env  # noqa: F401 - the fixture

TOP3 = ("SELECT k, c FROM (SELECT k, c, ROW_NUMBER() OVER (PARTITION BY k ORDER BY c DESC) "
        "AS rn FROM (SELECT MOD(id, 2) AS k, id AS c FROM src)) WHERE rn <= {n}")


def _flags(monkeypatch: pytest.MonkeyPatch, run: Any) -> list[tuple[str, bool]]:
    captured = graphs(monkeypatch)
    run().wait()
    return [(type(node.operator.function).__name__, node.operator.function.generate_update_before)
            for node in captured[-1]._nodes.values()
            if isinstance(getattr(node.operator, "function", None), TopNFunction)]


def test_a_blackhole_sink_gets_a_top_n_without_update_before(t_env, monkeypatch) -> None:  # noqa: F811
    assert _flags(monkeypatch, lambda: t_env.execute_sql(
        f"INSERT INTO hole {TOP3.format(n=3)}")) == [("AppendOnlyTopNFunction", False)]
    assert _flags(monkeypatch, lambda: t_env.execute_sql(
        f"INSERT INTO hole {TOP3.format(n=1)}")) == [("Top1Function", False)]
    assert _flags(monkeypatch, lambda: t_env.execute_sql(
        f"INSERT INTO shown {TOP3.format(n=3)}")) == [("AppendOnlyTopNFunction", True)]
    assert _flags(monkeypatch, lambda: t_env.execute_sql(
        f"INSERT INTO hole SELECT * FROM ({TOP3.format(n=3)}) WHERE c > 0")) == [
        ("AppendOnlyTopNFunction", True)]  # a filter on an updated row needs its -U


@pytest.mark.parametrize("make", [
    lambda before: Top1Function((0,), SortKeySelector([1], [False], [False]), before),
    lambda before: AppendOnlyTopNFunction((0,), SortKeySelector([1], [False], [False]), 3, 1,
                                          True, before)])
def test_without_update_before_the_rows_are_the_same_less_the_minus_u(make) -> None:
    rows = [r("+I", k, v) for k, v in [(1, 5), (1, 7), (2, 1), (1, 6), (1, 9), (2, 3), (1, 2)]]
    outputs = []
    for before in (True, False):
        function = make(before)
        h = Harness(function, [function.key_selector()])
        outputs.append([line for row in rows for line in h.feed(row)])
    with_before, without = outputs
    assert any(line.startswith("-U") for line in with_before)
    assert without == [line for line in with_before if not line.startswith("-U")]
