"""Row: construction, access by position and name, factory use, equality, hashing, pickling."""

import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flintlock.common import Row, RowKind


def test_positional_row() -> None:
    row = Row(1, "a", None)
    assert row[0] == 1 and row[1] == "a" and row[2] is None
    assert row[1:] == ["a", None]
    assert len(row) == 3
    assert list(row) == [1, "a", None]
    assert "a" in row
    assert repr(row) == "<Row(1, 'a', None)>"
    assert row.get_field_names() is None


def test_named_row_keeps_the_given_field_order() -> None:
    row = Row(name="Alice", age=11)
    assert row.name == "Alice" and row["age"] == 11 and row[0] == "Alice"
    assert row.as_dict() == {"name": "Alice", "age": 11}
    assert "name" in row and "Alice" not in row
    assert repr(row) == "Row(name='Alice', age=11)"


def test_row_used_as_a_factory() -> None:
    person = Row("name", "age")
    alice = person("Alice", 11)
    assert alice == Row(name="Alice", age=11)
    assert alice.age == 11
    with pytest.raises(ValueError):
        person("a", 1, "extra")


def test_mixing_positional_and_named_values_fails() -> None:
    with pytest.raises(ValueError):
        Row(1, b=2)


def test_unknown_fields_and_attribute_assignment() -> None:
    row = Row(a=1)
    with pytest.raises(AttributeError):
        row.b  # noqa: B018
    with pytest.raises(KeyError):
        row["b"]
    with pytest.raises(AttributeError):
        row.a = 2
    row["a"] = 2
    row[0] = 3
    assert row.a == 3


def test_as_dict_needs_names_and_can_recurse() -> None:
    with pytest.raises(TypeError):
        Row(1, 2).as_dict()
    nested = Row(inner=Row(x=1), items=[Row(y=2)])
    assert nested.as_dict(recursive=True) == {"inner": {"x": 1}, "items": [{"y": 2}]}
    assert isinstance(nested.as_dict()["inner"], Row)


def test_row_kind() -> None:
    row = Row(1)
    assert row.get_row_kind() is RowKind.INSERT
    row.set_row_kind(RowKind.UPDATE_AFTER)
    assert row.get_row_kind() is RowKind.UPDATE_AFTER
    assert row != Row(1)
    assert RowKind.DELETE.short_string() == "-D"
    assert str(RowKind.UPDATE_BEFORE) == "-U"
    with pytest.raises(TypeError):
        row.set_row_kind(2)  # type: ignore[arg-type]


def test_print_string_shows_kind_and_values() -> None:
    row = Row(1, "a")
    row.set_row_kind(RowKind.DELETE)
    assert row.to_print_string() == "-D[1, a]"


def test_equality_of_named_rows_ignores_field_order_and_hash_agrees() -> None:
    first, second = Row(a=1, b=2), Row(b=2, a=1)
    assert first == second
    assert hash(first) == hash(second)
    assert Row(1, 2) != Row(a=1, b=2)
    assert Row(1, 2) != (1, 2)


def test_set_field_names_checks_arity() -> None:
    row = Row(1, 2)
    row.set_field_names(["x", "y"])
    assert row.y == 2
    with pytest.raises(ValueError):
        row.set_field_names(["x"])
    assert row.get_fields_by_names(["y", "x"]) == [2, 1]


values = st.one_of(st.none(), st.integers(), st.text(max_size=5), st.floats(allow_nan=False))


@given(st.lists(values, max_size=6), st.sampled_from(list(RowKind)), st.booleans())
def test_pickle_round_trip_keeps_values_names_and_kind(
        items: list[object], kind: RowKind, named: bool) -> None:
    row = Row(*items)
    if named:
        row.set_field_names([f"f{index}" for index in range(len(items))])
    row.set_row_kind(kind)
    copy = pickle.loads(pickle.dumps(row))
    assert copy == row
    assert copy.get_field_names() == row.get_field_names()
    assert copy.get_row_kind() is kind


@given(st.lists(st.integers(), max_size=6))
def test_equal_rows_hash_alike(items: list[int]) -> None:
    assert hash(Row(*items)) == hash(Row(*list(items)))
    assert {Row(*items): 1}[Row(*items)] == 1
