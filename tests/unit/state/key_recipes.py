"""Keys built from recipes: JSON-able descriptions that another process rebuilds on its own.

A recipe is a list whose first item names the kind: ``["int", 3]``, ``["str", "ab", "joined"]``,
``["dataclass", [r1, r2]]`` ... (see ``build``). The hash-seed test sends recipes, not pickles,
to its subprocesses, because a pickle would carry the very object sharing and set order whose
effect on key groups it checks. ``EQUAL_PAIRS`` draws two recipes of equal keys built in
different ways (an int and a Decimal, a tuple and a named tuple, one shared string object and
two equal ones, a frozenset filled in another order, one instant in two time zones).

The key classes live here, in an importable module, so that TaskManager threads and savepoints
refer to them by name.
"""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import enum
import fractions
from typing import Any, NamedTuple

from hypothesis import strategies as st

from flintlock.common.types import Row


@dataclasses.dataclass(frozen=True)
class Point:
    """A dataclass key: equal when of this class with equal fields."""

    x: Any
    y: Any


class Pair(NamedTuple):
    first: Any
    second: Any


class Colour(enum.Enum):
    RED = "red"
    GREEN = (0, 255, 0)
    BLUE = 3


def build(recipe: list[Any]) -> Any:
    """The key ``recipe`` describes, built afresh (no object shared unless it says so)."""
    kind, *args = recipe
    if kind in _SCALARS:
        return _SCALARS[kind](*args)
    if kind == "str":
        text, how = args
        return "".join(list(text)) if how == "joined" else text
    if kind == "tuple":
        return tuple(build(item) for item in args[0])
    if kind == "named":
        return Pair(*(build(item) for item in args[0]))
    if kind == "dataclass":
        return Point(*(build(item) for item in args[0]))
    if kind == "shared":
        value = build(args[0])
        return Point(value, value)
    if kind == "frozenset":
        return frozenset(build(item) for item in args[0])
    if kind == "row":
        return Row(**{name: build(item) for name, item in args[0]})
    raise ValueError(f"unknown recipe {recipe!r}")


def _datetime(seconds: int, offset_minutes: int) -> datetime.datetime:
    zone = datetime.timezone(datetime.timedelta(minutes=offset_minutes))
    return datetime.datetime.fromtimestamp(seconds, zone)


_SCALARS = {
    "int": int,
    "bool": bool,
    "float": float,
    "decimal": decimal.Decimal,
    "fraction": fractions.Fraction,
    "complex": complex,
    "bytes": bytes.fromhex,
    "none": lambda: None,
    "enum": lambda name: Colour[name],
    "datetime": _datetime,
}


def _int_pairs(n: int) -> st.SearchStrategy[tuple[list[Any], list[Any]]]:
    right = [["int", n], ["decimal", f"{n}.000"], ["fraction", n, 1]]
    if abs(n) < 2**53:
        right += [["float", float(n)], ["complex", float(n), 0.0]]
    if n in (0, 1):
        right.append(["bool", bool(n)])
    return st.sampled_from(right).map(lambda r: (["int", n], r))


def _float_pairs(value: float) -> st.SearchStrategy[tuple[list[Any], list[Any]]]:
    text = f"{decimal.Decimal(value):f}"  # exact
    padded = f"{text}0" if "." in text else f"{text}.0"
    right = [["float", value], ["decimal", padded], ["fraction", *value.as_integer_ratio()],
             ["complex", value, -0.0]]
    return st.sampled_from(right).map(lambda r: (["float", value], r))


def _decimal_pair(digits: int, places: int, zeros: int) -> tuple[list[Any], list[Any]]:
    value = decimal.Decimal(digits).scaleb(-places)
    padded = decimal.Decimal(digits * 10**zeros).scaleb(-places - zeros)
    return ["decimal", str(value)], ["decimal", str(padded)]


def _same(recipe: list[Any]) -> tuple[list[Any], list[Any]]:
    return recipe, recipe


_SCALAR_PAIRS = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70).flatmap(_int_pairs),
    st.floats(allow_nan=False, allow_infinity=False).flatmap(_float_pairs),
    st.builds(_decimal_pair, st.integers(-(10**12), 10**12), st.integers(0, 12),
              st.integers(1, 3)),
    st.builds(lambda n, d: _same(["fraction", n, d]), st.integers(-1000, 1000),
              st.integers(1, 1000)),
    st.text(max_size=8).map(lambda s: (["str", s, "plain"], ["str", s, "joined"])),
    st.binary(max_size=8).map(lambda b: _same(["bytes", b.hex()])),
    st.booleans().map(lambda b: (["bool", b], ["int", int(b)])),
    st.just((["none"], ["none"])),
    st.sampled_from(list(Colour.__members__)).map(lambda name: _same(["enum", name])),
    st.builds(lambda s, a, b: (["datetime", s, a], ["datetime", s, b]),
              st.integers(0, 4 * 10**9), st.integers(-900, 900), st.integers(-900, 900)),
)


def _composites(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    def unzip(pairs: list[tuple[Any, Any]]) -> tuple[list[Any], list[Any]]:
        return [left for left, _ in pairs], [right for _, right in pairs]

    def tuples(pairs: list[tuple[Any, Any]], named: bool) -> tuple[list[Any], list[Any]]:
        lefts, rights = unzip(pairs)
        return ["tuple", lefts], ["named" if named and len(pairs) == 2 else "tuple", rights]

    def sets(pairs: list[tuple[Any, Any]]) -> tuple[list[Any], list[Any]]:
        lefts, rights = unzip(pairs)
        return ["frozenset", lefts], ["frozenset", rights[::-1]]

    def rows(pairs: list[tuple[Any, Any]]) -> tuple[list[Any], list[Any]]:
        named = [(f"f{i}", pair) for i, pair in enumerate(pairs)]
        return (["row", [[name, left] for name, (left, _) in named]],
                ["row", [[name, right] for name, (_, right) in named[::-1]]])

    def points(a: tuple[Any, Any], b: tuple[Any, Any], shared: bool
               ) -> tuple[list[Any], list[Any]]:
        if shared:  # Point(v, v) with one object v, and Point(v1, v2) with two equal ones
            return ["shared", a[0]], ["dataclass", [a[0], a[1]]]
        return ["dataclass", [a[0], b[0]]], ["dataclass", [a[1], b[1]]]

    return st.one_of(
        st.builds(tuples, st.lists(children, max_size=3), st.booleans()),
        st.builds(points, children, children, st.booleans()),
        st.lists(children, max_size=4).map(sets),
        st.lists(children, min_size=1, max_size=3).map(rows),
    )


EQUAL_PAIRS = st.recursive(_SCALAR_PAIRS, _composites, max_leaves=8)
"""Pairs ``(left, right)`` of recipes whose keys compare equal."""
