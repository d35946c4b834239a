"""Types: factories, validation (accepts what the type holds, rejects the rest with an error
naming operator, type and value), nullability, serializer kinds, equality and pickling."""

import datetime
import decimal
import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flintlock.common import Instant, Row, Types
from flintlock.common.typeinfo import (
    PickledBytesTypeInfo,
    RecordTypeMismatchError,
    RowTypeInfo,
    SerializerKind,
    TupleTypeInfo,
)

ACCEPTED = [
    (Types.STRING(), "text"),
    (Types.BYTE(), -128),
    (Types.SHORT(), 32767),
    (Types.INT(), -(2**31)),
    (Types.LONG(), 2**63 - 1),
    (Types.BIG_INT(), 2**100),
    (Types.FLOAT(), 1.5),
    (Types.DOUBLE(), 3),
    (Types.BOOLEAN(), False),
    (Types.CHAR(), "x"),
    (Types.BIG_DEC(), decimal.Decimal("1.25")),
    (Types.INSTANT(), Instant(1, 2)),
    (Types.SQL_DATE(), datetime.date(2024, 1, 2)),
    (Types.SQL_TIME(), datetime.time(12, 30)),
    (Types.SQL_TIMESTAMP(), datetime.datetime(2024, 1, 2, 3, 4)),
    (Types.LOCAL_DATE(), datetime.date(2024, 1, 2)),
    (Types.LOCAL_TIME(), datetime.time(1)),
    (Types.LOCAL_DATE_TIME(), datetime.datetime(2024, 1, 2)),
    (Types.PICKLED_BYTE_ARRAY(), object()),
    (Types.ROW([Types.INT(), Types.STRING()]), Row(1, None)),
    (Types.ROW_NAMED(["a"], [Types.LONG()]), Row(a=5)),
    (Types.TUPLE([Types.INT(), Types.STRING()]), (1, "a")),
    (Types.LIST(Types.INT()), [1, 2]),
    (Types.MAP(Types.STRING(), Types.INT()), {"a": 1, "b": None}),
    (Types.PRIMITIVE_ARRAY(Types.INT()), [1, 2]),
    (Types.PRIMITIVE_ARRAY(Types.BYTE()), b"\x00\x01"),
    (Types.BASIC_ARRAY(Types.STRING()), ["a", None]),
    (Types.OBJECT_ARRAY(Types.ROW([Types.INT()])), [Row(1), None]),
]

REJECTED = [
    (Types.STRING(), 1, "expected a str"),
    (Types.BYTE(), 128, "out of the 8-bit range"),
    (Types.SHORT(), -32769, "16-bit"),
    (Types.INT(), 2**31, "32-bit"),
    (Types.LONG(), -(2**63) - 1, "64-bit"),
    (Types.INT(), True, "expected an int"),
    (Types.INT(), 1.0, "expected an int"),
    (Types.DOUBLE(), "1.0", "expected a float"),
    (Types.DOUBLE(), False, "expected a float"),
    (Types.BOOLEAN(), 1, "expected a bool"),
    (Types.CHAR(), "xy", "length 1"),
    (Types.BIG_DEC(), 1.5, "decimal"),
    (Types.SQL_DATE(), datetime.datetime(2024, 1, 1), "datetime.date"),
    (Types.SQL_TIMESTAMP(), datetime.date(2024, 1, 1), "datetime.datetime"),
    (Types.INT(), None, "null is not allowed"),
    (Types.ROW([Types.INT()]), (1,), "expected a Row"),
    (Types.ROW([Types.INT(), Types.INT()]), Row(1), "expected 2 fields, got 1"),
    (Types.ROW_NAMED(["a", "b"], [Types.INT(), Types.STRING()]), Row(1, 2), "field 'b'"),
    (Types.TUPLE([Types.INT()]), [1], "expected a tuple"),
    (Types.TUPLE([Types.INT(), Types.INT()]), (1, None), "field 1: null is not allowed"),
    (Types.LIST(Types.STRING()), ["a", None], "element 1: null"),
    (Types.LIST(Types.STRING()), ("a",), "expected a list"),
    (Types.MAP(Types.STRING(), Types.INT()), {1: 1}, "key 1"),
    (Types.MAP(Types.STRING(), Types.INT()), {"a": "x"}, "value of key 'a'"),
    (Types.PRIMITIVE_ARRAY(Types.INT()), [1, None], "element 1"),
    (Types.BASIC_ARRAY(Types.INT()), [1, "x"], "element 1"),
]


@pytest.mark.parametrize(("type_info", "value"), ACCEPTED, ids=lambda v: repr(v)[:40])
def test_accepts_values_of_the_type(type_info, value) -> None:
    type_info.validate(value, "op")
    assert type_info.is_instance(value)


@pytest.mark.parametrize(("type_info", "value", "detail"), REJECTED, ids=lambda v: repr(v)[:40])
def test_rejects_other_values_naming_operator_type_and_value(type_info, value, detail) -> None:
    with pytest.raises(RecordTypeMismatchError) as caught:
        type_info.validate(value, "My Map")
    message = str(caught.value)
    assert "'My Map'" in message
    assert repr(type_info) in message
    assert repr(value)[:20] in message
    assert detail in message
    assert not type_info.is_instance(value)


def test_mismatch_error_survives_pickling() -> None:
    with pytest.raises(RecordTypeMismatchError) as caught:
        Types.INT().validate("x", "Map")
    copy = pickle.loads(pickle.dumps(caught.value))
    assert str(copy) == str(caught.value)
    assert isinstance(copy, TypeError)


def test_serializer_kind_is_cloudpickle_only_where_arbitrary_objects_may_appear() -> None:
    assert Types.INT().serializer_kind is SerializerKind.PICKLE
    assert Types.ROW([Types.INT(), Types.LIST(Types.STRING())]).serializer_kind is (
        SerializerKind.PICKLE)
    assert Types.PICKLED_BYTE_ARRAY().serializer_kind is SerializerKind.CLOUDPICKLE
    assert Types.TUPLE([Types.INT(), Types.PICKLED_BYTE_ARRAY()]).serializer_kind is (
        SerializerKind.CLOUDPICKLE)
    assert Types.MAP(Types.STRING(), Types.PICKLED_BYTE_ARRAY()).serializer_kind is (
        SerializerKind.CLOUDPICKLE)


def test_equality_hash_repr_and_pickling() -> None:
    row = Types.ROW_NAMED(["a", "b"], [Types.INT(), Types.MAP(Types.STRING(), Types.LONG())])
    assert row == Types.ROW_NAMED(["a", "b"], [Types.INT(), Types.MAP(Types.STRING(),
                                                                      Types.LONG())])
    assert row != Types.ROW([Types.INT(), Types.MAP(Types.STRING(), Types.LONG())])
    assert hash(Types.INT()) == hash(Types.INT())
    assert Types.INT() != Types.LONG()
    assert repr(Types.LIST(Types.SQL_DATE())) == "Types.LIST(Types.SQL_DATE())"
    assert repr(Types.ROW([Types.INT()])) == "Types.ROW([Types.INT()])"
    assert repr(Types.ROW_NAMED(["a"], [Types.INT()])) == "Types.ROW_NAMED(['a'], [Types.INT()])"
    assert Types.ROW([Types.INT()]) == Types.ROW_NAMED(["f0"], [Types.INT()])
    assert pickle.loads(pickle.dumps(row)) == row


def test_row_type_info_accessors() -> None:
    row = Types.ROW_NAMED(["id", "name"], [Types.INT(), Types.STRING()])
    assert isinstance(row, RowTypeInfo)
    assert row.get_field_names() == ["id", "name"]
    assert row.get_field_index("name") == 1 and row.get_field_index("x") == -1
    assert row.get_field_types() == [Types.INT(), Types.STRING()]
    assert row.get_field_type("name") == Types.STRING()
    assert row.get_arity() == 2
    assert Types.ROW([Types.INT()]).get_field_names() == ["f0"]
    tuple_type = Types.TUPLE([Types.INT()])
    assert isinstance(tuple_type, TupleTypeInfo) and tuple_type.get_arity() == 1


def test_bad_type_declarations_fail_at_once() -> None:
    with pytest.raises(TypeError, match=r"not Types\.INT"):
        Types.ROW([Types.INT])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="2 names for 1 types"):
        Types.ROW_NAMED(["a", "b"], [Types.INT()])
    with pytest.raises(ValueError, match="duplicate"):
        Types.ROW_NAMED(["a", "a"], [Types.INT(), Types.INT()])
    with pytest.raises(TypeError, match="primitive"):
        Types.PRIMITIVE_ARRAY(Types.STRING())
    with pytest.raises(TypeError, match="basic"):
        Types.BASIC_ARRAY(Types.ROW([Types.INT()]))
    with pytest.raises(TypeError):
        Types.LIST("int")  # type: ignore[arg-type]


def test_pyflink_conversion_hooks_are_identities() -> None:
    value = Row(1)
    assert Types.ROW([Types.INT()]).to_internal_type(value) is value
    assert Types.ROW([Types.INT()]).from_internal_type(value) is value
    assert not Types.INT().need_conversion()


def test_coerce_converts_where_pyflink_does() -> None:
    row_type = Types.ROW_NAMED(["id", "tags"],
                               [Types.INT(), Types.LIST(Types.ROW([Types.STRING()]))])
    row = row_type.coerce((1, [("x",), ["y"]]))
    assert row == Row(id=1, tags=[Row(f0="x"), Row(f0="y")])
    assert row.tags[1].f0 == "y"
    row_type.validate(row)
    assert row_type.coerce({"tags": [], "id": 2}) == Row(id=2, tags=[])
    assert Types.TUPLE([Types.INT(), Types.STRING()]).coerce([1, "a"]) == (1, "a")
    assert Types.MAP(Types.STRING(), Types.ROW([Types.INT()])).coerce({"k": (1,)}) == {
        "k": Row(f0=1)}


def test_coerce_leaves_values_that_need_nothing_and_does_not_mutate() -> None:
    value = (1, "a")
    assert Types.TUPLE([Types.INT(), Types.STRING()]).coerce(value) is value
    assert Types.INT().coerce("x") == "x"
    assert Types.ROW([Types.INT()]).coerce((1, 2)) == (1, 2)
    nested = Row(1, [(2,)])
    nested_type = Types.ROW([Types.INT(), Types.LIST(Types.ROW([Types.INT()]))])
    converted = nested_type.coerce(nested)
    assert converted[1] == [Row(f0=2)] and nested[1] == [(2,)]
    flat = Row(1, "a")
    assert Types.ROW([Types.INT(), Types.STRING()]).coerce(flat) is flat
    assert not Types.INT().need_conversion() and Types.ROW([Types.INT()]).need_conversion()
    assert not Types.LIST(Types.INT()).need_conversion()


scalar_types = st.sampled_from([
    Types.STRING(), Types.BYTE(), Types.SHORT(), Types.INT(), Types.LONG(), Types.BIG_INT(),
    Types.FLOAT(), Types.DOUBLE(), Types.BOOLEAN(), Types.CHAR(), Types.BIG_DEC(),
    Types.SQL_DATE(), Types.PICKLED_BYTE_ARRAY(),
])
type_infos = st.recursive(scalar_types, lambda inner: st.one_of(
    st.lists(inner, min_size=1, max_size=4).map(Types.ROW),
    st.lists(inner, min_size=1, max_size=4).map(Types.TUPLE),
    inner.map(Types.LIST),
    inner.map(Types.OBJECT_ARRAY),
    st.tuples(scalar_types, inner).map(lambda pair: Types.MAP(*pair)),
    st.sampled_from([Types.INT(), Types.BYTE(), Types.BOOLEAN()]).map(Types.PRIMITIVE_ARRAY),
), max_leaves=6)
scalars = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([127, 128, -129, 2**31, 2**63]), st.floats(allow_nan=False),
    st.text(max_size=3), st.binary(max_size=3), st.just(datetime.date(2024, 1, 1)),
    st.just(datetime.datetime(2024, 1, 1)), st.just(decimal.Decimal("1.5")),
)
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.lists(inner, max_size=4).map(tuple),
    st.lists(inner, max_size=4).map(lambda items: Row(*items)),
    st.dictionaries(st.text(max_size=2), inner, max_size=3),
), max_leaves=8)


@given(type_infos, values)
def test_the_fast_predicate_agrees_with_the_detailed_check(type_info, value) -> None:
    expected = type_info._problem_or_null(value, nullable=False) is None
    assert type_info.predicate()(value) is expected
    if expected or isinstance(type_info, PickledBytesTypeInfo):
        type_info.validate(value, "op")
        type_info.validator("op")(value)
    else:
        with pytest.raises(RecordTypeMismatchError):
            type_info.validate(value, "op")
        with pytest.raises(RecordTypeMismatchError):
            type_info.validator("op")(value)


@given(type_infos)
def test_types_pickle_without_their_compiled_predicate(type_info) -> None:
    type_info.predicate()
    copy = pickle.loads(pickle.dumps(type_info))
    assert copy == type_info
    assert not hasattr(copy, "_compiled")
    assert copy.predicate()(None) is type_info.predicate()(None)
