"""``route_by_key`` (the keyed writer's loop) in C against its Python twin: the same lists,
the same cache and the same ``on_miss`` calls, on random batches with cached, new and
unhashable keys, with and without timestamps; and the same errors."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flintlock.common.speedups import accelerator
from flintlock.runtime.network.key_routing import route_by_key_python

compiled = pytest.mark.skipif(accelerator is None, reason="the C accelerator is not built here")
KEYS = st.one_of(st.integers(-3, 3), st.text(max_size=2), st.lists(st.integers(0, 2), max_size=2),
                 st.tuples(st.integers(0, 2), st.booleans()))


def _route(route: Any, records: list[Any], cached: dict[Any, int], count: int, stamped: bool
           ) -> tuple[Any, ...]:
    cache = dict(cached)
    misses: list[Any] = []

    def on_miss(key: Any) -> int:
        misses.append(key)
        channel = len(repr(key)) % count
        try:
            cache[key] = channel
        except TypeError:
            pass
        return channel

    targets: list[list[Any]] = [[] for _ in range(count)]
    stamps = list(range(len(records))) if stamped else None
    stamp_targets: list[list[int]] | None = [[] for _ in range(count)] if stamped else None
    route(records, lambda record: record[0], cache, on_miss, targets, stamps, stamp_targets)
    return targets, stamp_targets, cache, misses


@compiled
@given(keys=st.lists(KEYS, max_size=30), cached=st.dictionaries(st.integers(-3, 3),
                                                                  st.integers(0, 2)),
       count=st.integers(1, 3), stamped=st.booleans())
def test_the_c_routing_is_the_python_routing(keys: list[Any], cached: dict[Any, int],
                                             count: int, stamped: bool) -> None:
    assert accelerator is not None
    records = [(key, index) for index, key in enumerate(keys)]
    cached = {key: channel % count for key, channel in cached.items()}
    expected = _route(route_by_key_python, records, cached, count, stamped)
    assert _route(accelerator.route_by_key, records, cached, count, stamped) == expected


def test_a_record_goes_to_its_keys_channel_in_order() -> None:
    targets, stamp_targets, cache, misses = _route(
        route_by_key_python, [(1, "a"), ("xy", "b"), (1, "c"), ([0], "d")], {1: 0}, 3, True)
    # on_miss: channel len(repr(key)) % 3, so "xy" -> 1, [0] -> 0 (not cached: unhashable)
    assert targets == [[(1, "a"), (1, "c"), ([0], "d")], [("xy", "b")], []]
    assert stamp_targets == [[0, 2, 3], [1], []]
    assert cache == {1: 0, "xy": 1} and misses == ["xy", [0]]


@pytest.mark.parametrize("route", [
    route_by_key_python,
    pytest.param(getattr(accelerator, "route_by_key", None), marks=compiled)])
def test_errors_are_the_same_in_both(route: Any) -> None:
    with pytest.raises(ValueError, match="differ in length"):
        route([(1,)], lambda r: r[0], {}, lambda k: 0, [[]], [], [[]])
    with pytest.raises(ZeroDivisionError):
        route([(1,)], lambda r: 1 // 0, {}, lambda k: 0, [[]], None, None)
    with pytest.raises(IndexError):
        route([(1,)], lambda r: r[0], {1: 5}, lambda k: 0, [[]], None, None)
    targets: list[list[Any]] = [[]]
    with pytest.raises(KeyError):  # on_miss's own error, the records before it routed
        route([(1,), (2,)], lambda r: r[0], {1: 0}, lambda k: {}[k], targets, None, None)
    assert targets == [[(1,)]]
