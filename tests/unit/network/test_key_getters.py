"""plain_key_getter: a plain field-getting key selector becomes a C getter with the same
results and errors; anything else is handed back unchanged (issue 31)."""

from __future__ import annotations

import operator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flintlock.runtime.network.key_getters import plain_key_getter


def first_field(t: Any) -> Any:
    return t[0]


def last_field(t: Any) -> Any:
    return t[-1]


def by_name(r: Any) -> Any:
    return r["word"]


def word_of(r: Any) -> Any:
    return r.word


class Word:
    def __init__(self, word: object, count: object = 0) -> None:
        self.word = word
        self.count = count


INDEX = 0


def through_global(t: Any) -> Any:
    return t[INDEX]


def nested(t: Any) -> Any:
    return t[0][0]


def with_default(t: Any, i: int = 0) -> Any:
    return t[i]


def two_steps(t: Any) -> Any:
    x = t[0]
    return x


def of_float(t: Any) -> Any:
    return t[0.5]


def of_tuple(t: Any) -> Any:
    return t[0, 1]


def closure(i: int) -> Any:
    return lambda t: t[i]


class Selector:
    """A user's KeySelector: get_key reads only its value."""

    def get_key(self, value: Any) -> Any:
        return value[0]


class ReadsSelf:
    def __init__(self) -> None:
        self.i = 0

    def get_key(self, value: Any) -> Any:
        return value[self.i]

    def own_field(self, value: Any) -> Any:
        return self.i


def pair_key(t: Any) -> Any:
    return (t[0], t[-1])


def names_key(r: Any) -> Any:
    return (r.word, r.count)


def one_tuple(t: Any) -> Any:
    return (t[0],)


def mixed(r: Any) -> Any:
    return (r[0], r.word)


def same_field_twice(t: Any) -> Any:
    return (t[0], t[0])


@pytest.mark.parametrize(("function", "expected"), [
    (first_field, operator.itemgetter(0)), (last_field, operator.itemgetter(-1)),
    (by_name, operator.itemgetter("word")), (word_of, operator.attrgetter("word")),
    (lambda t: t[1], operator.itemgetter(1)), (lambda r: r.key, operator.attrgetter("key")),
    (Selector().get_key, operator.itemgetter(0)), (pair_key, operator.itemgetter(0, -1)),
    (names_key, operator.attrgetter("word", "count")),
    (same_field_twice, operator.itemgetter(0, 0)),
])
def test_plain_field_getters_become_c_getters(function: Any, expected: Any) -> None:
    getter = plain_key_getter(function)
    assert type(getter) is type(expected)
    assert repr(getter) == repr(expected)


@pytest.mark.parametrize("function", [
    through_global, nested, with_default, two_steps, of_float, of_tuple, closure(0),
    operator.itemgetter(0), len, lambda *t: t[0], lambda t, u=1: t[0],
    lambda t: t.word.upper, ReadsSelf().get_key, ReadsSelf().own_field, Selector.get_key,
    one_tuple, mixed,
])
def test_anything_else_is_left_unchanged(function: Any) -> None:
    assert plain_key_getter(function) is function


def _outcome(function: Any, value: Any) -> tuple[str, Any]:
    try:
        return "value", function(value)
    except Exception as error:  # the outcome compared is the error itself
        return type(error).__name__, str(error)


values = st.one_of(
    st.tuples(st.integers()), st.tuples(st.text(), st.integers()),
    st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=4), st.integers()),
    st.integers(), st.none(), st.text(max_size=3), st.builds(Word, st.integers()),
    st.builds(Word, st.integers(), st.integers()), st.tuples(),
)


@settings(max_examples=60)
@given(values)
def test_same_key_or_same_error_as_the_function(value: Any) -> None:
    for function in (first_field, last_field, by_name, word_of, Selector().get_key, pair_key,
                     names_key):
        assert _outcome(plain_key_getter(function), value) == _outcome(function, value)


def test_the_keyed_writer_and_keyed_operators_call_the_c_getter() -> None:
    from types import SimpleNamespace

    from flintlock.runtime.network.channel_selector import KeyGroupSelector
    from flintlock.runtime.tasks.operators import MapOperator

    assert repr(KeyGroupSelector(first_field, 128).key_selector) == "operator.itemgetter(0)"
    assert KeyGroupSelector(through_global, 128).key_selector is through_global
    operator_ = MapOperator(SimpleNamespace(function=None))  # type: ignore[arg-type]
    operator_.context = SimpleNamespace(  # type: ignore[assignment]
        key_selectors=(SimpleNamespace(get_key=word_of), nested), operator_name="keyed")
    getter = operator_._key_selector()
    assert repr(getter) == "operator.attrgetter('word')"
    assert operator_._key_selector() is getter  # recognised once per operator
    assert operator_._key_selector(1) is nested
