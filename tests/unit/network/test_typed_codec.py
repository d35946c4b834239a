"""Typed codecs (``runtime.network.typed_codec``) and the serializer that owns them
(``typed_serializer``), read back by the reader every input channel uses
(``event_time.RunDetectingSerializer``).

What is shown: each layout (``V`` scalars, ``R`` rows of fixed-width fields, ``C`` columns for
tuples with text or booleans) and the pickle fallback of types without a plan round-trip their
declared type, edge values included, with PyFlink's conversions (an int for DOUBLE/FLOAT
arrives as a float, FLOAT rounded to 32 bits, a list for a TUPLE as a tuple, a tuple for a ROW
as a ``Row``); a trailing ``StampedRun`` keeps its timestamps; a record that does not fit is a
``RecordTypeMismatchError`` naming the operator, the type and the value, whether it is found
by a writer (``dumps``) or at a chained sink (``check_batch``); a damaged chunk is a
``CorruptChannelDataError``. The last tests run the codec through a real ``RecordWriter`` and
partition. Every test runs twice: with the C accelerator's row packer (where it was built) and
with its Python twin (``struct``).
"""

from __future__ import annotations

import datetime
import decimal
import math
import struct
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flintlock.common.typeinfo import (
    BasicType,
    BasicTypeInfo,
    RecordTypeMismatchError,
    TupleTypeInfo,
    TypeInformation,
    Types,
)
from flintlock.common.types import Row
from flintlock.runtime.network import typed_codec
from flintlock.runtime.network.channel_selector import KeyGroupSelector
from flintlock.runtime.network.event_time import (
    NO_TIMESTAMP,
    RunDetectingSerializer,
    StampedRun,
    TimestampedBatch,
)
from flintlock.runtime.network.serialization import CorruptChannelDataError, RecordDeserializer
from flintlock.runtime.network.typed_codec import (
    ENCODE_ERRORS,
    MAGIC,
    compile_plan,
    decode_chunk,
    encode_chunk,
)
from flintlock.runtime.network.typed_serializer import TypedBatchSerializer, serializer_for
from flintlock.runtime.state.keygroups import assign_key_to_operator
from flintlock.runtime.tasks.channel_state_io import CheckpointableDeserializer

from .test_writer import drain
from .test_writer import setup as writer_setup

OPERATOR = "typed producer"
LONG, INT, STRING, BOOLEAN = Types.LONG(), Types.INT(), Types.STRING(), Types.BOOLEAN()
PAIR = Types.TUPLE([LONG, LONG])  # rows layout
NAMED = Types.TUPLE([STRING, LONG])  # columns layout
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
PICKLE_PROTOCOL_2_PLUS = 0x80
_FLOAT32 = struct.Struct("<f")
PACKERS = ["C", "Python"] if typed_codec.accelerator is not None else ["Python"]


@pytest.fixture(scope="module", params=PACKERS, autouse=True)
def packer(request: pytest.FixtureRequest) -> Iterator[str]:
    """Which row packer the plans compiled in a test use (module-scoped: hypothesis runs
    every example of a test under one)."""
    with pytest.MonkeyPatch.context() as patch:
        if request.param == "Python":
            patch.setattr(typed_codec, "accelerator", None)
        yield request.param


# -- values and what they become -------------------------------------------------------------

def _ints(bits: int) -> st.SearchStrategy[int]:
    return st.integers(-(1 << (bits - 1)), (1 << (bits - 1)) - 1)


TEXT = st.text(st.characters(exclude_categories=()))  # NUL and lone surrogates included
FLOAT32S = st.floats(width=32) | st.floats(-3.4e38, 3.4e38) | st.sampled_from(
    [math.nan, math.inf, -math.inf, -0.0])
"""Floats a FLOAT holds without overflow (beyond its range: see the infinity test)."""

SCALARS: dict[str, tuple[TypeInformation, st.SearchStrategy[Any]]] = {
    "LONG": (Types.LONG(), _ints(64)),
    "INT": (Types.INT(), _ints(32)),
    "SHORT": (Types.SHORT(), _ints(16)),
    "BYTE": (Types.BYTE(), _ints(8)),
    "DOUBLE": (Types.DOUBLE(), st.floats() | st.integers(-(2**64), 2**64)),
    "FLOAT": (Types.FLOAT(), FLOAT32S | st.integers(-(2**64), 2**64)),
    "BOOLEAN": (Types.BOOLEAN(), st.booleans()),
    "STRING": (Types.STRING(), TEXT),
}
FIXED_WIDTH = ["LONG", "INT", "SHORT", "BYTE", "DOUBLE", "FLOAT"]

EDGE_VALUES: dict[str, list[Any]] = {
    "LONG": [0, -1, INT64_MIN, INT64_MAX, NO_TIMESTAMP],
    "INT": [-(2**31), 2**31 - 1, -7],
    "SHORT": [-(2**15), 2**15 - 1, -7],
    "BYTE": [-128, 127, -1],
    "DOUBLE": [math.nan, math.inf, -math.inf, -0.0, 0.0, 5e-324, 1.7976931348623157e308,
               -3, INT64_MAX, 2**64],
    "FLOAT": [math.nan, math.inf, -math.inf, -0.0, 0.1, 1.4e-45, 3.4028234663852886e38, -3,
              2**24 + 1],
    "BOOLEAN": [True, False],
    "STRING": ["", "a", "ünïcødé ✓ 𝄞 中文", "\x00", "a\x00b", "\x00\x00", "\ud800", "\udfff x",
               "x" * 10_000],
}


def _float32(value: float) -> float:
    """``value`` as a Java float: rounded to 32 bits, ±inf beyond the range (C's cast)."""
    try:
        return float(_FLOAT32.unpack(_FLOAT32.pack(value))[0])
    except OverflowError:
        return math.copysign(math.inf, value)


def _expected(type_info: TypeInformation, value: Any) -> Any:
    """What a reader gets for ``value`` of ``type_info`` (types with a codec plan)."""
    if isinstance(type_info, BasicTypeInfo):
        kind = type_info.basic_type
        if kind is BasicType.DOUBLE:
            return float(value)
        if kind is BasicType.FLOAT:
            return _float32(float(value))
        return value
    assert isinstance(type_info, TupleTypeInfo)
    return tuple(map(_expected, type_info.get_field_types(), value))


def _same(got: Any, expected: Any) -> bool:
    """Equal, of the same type, NaN equal to NaN and -0.0 told apart from 0.0."""
    if type(got) is not type(expected):
        return False
    if isinstance(got, float):
        if math.isnan(expected):
            return math.isnan(got)
        return got == expected and math.copysign(1.0, got) == math.copysign(1.0, expected)
    if isinstance(got, (tuple, list)):
        return len(got) == len(expected) and all(map(_same, got, expected))
    if isinstance(got, Row):
        return got.get_field_names() == expected.get_field_names() and _same(
            list(got), list(expected))
    if isinstance(got, dict):
        return got.keys() == expected.keys() and all(_same(got[k], expected[k]) for k in got)
    if isinstance(got, decimal.Decimal) and got.is_nan():
        return expected.is_nan()
    return bool(got == expected)


def _assert_round_trips(type_info: TypeInformation, records: list[Any], layout: str) -> None:
    """Through the codec alone, and through the writer's serializer and the reader, with the
    chunk in ``layout`` (so the codec, not the pickle fallback, carried it)."""
    expected = [_expected(type_info, record) for record in records]
    plan = compile_plan(type_info)
    assert plan is not None
    values, run = decode_chunk(encode_chunk(plan, records))
    assert run is None and _same(values, expected), (values, expected)
    data = bytes(TypedBatchSerializer(type_info, OPERATOR).dumps(records))
    assert data[0] == MAGIC and chr(data[3]) == layout
    reader = RunDetectingSerializer()
    got = reader.loads(data)
    assert _same(got, expected), (got, expected)
    assert not reader.saw_runs


# -- round trips of every layout -------------------------------------------------------------

@settings(max_examples=200, deadline=None)
@given(data=st.data(), kind=st.sampled_from(sorted(SCALARS)))
def test_every_scalar_type_round_trips_as_one_column(data, kind):
    type_info, values = SCALARS[kind]
    records = data.draw(st.lists(values, max_size=60))
    _assert_round_trips(type_info, records, "V")


@pytest.mark.parametrize("kind", sorted(EDGE_VALUES))
def test_edge_values_round_trip_together_and_each_alone(kind):
    type_info = SCALARS[kind][0]
    values = EDGE_VALUES[kind]
    _assert_round_trips(type_info, values, "V")
    for value in values:
        _assert_round_trips(type_info, [value], "V")


def test_ints_for_double_and_float_arrive_as_floats_and_float_is_rounded_to_32_bits():
    [three] = RunDetectingSerializer().loads(
        TypedBatchSerializer(Types.DOUBLE(), OPERATOR).dumps([3]))
    assert type(three) is float and three == 3.0
    [tenth] = RunDetectingSerializer().loads(
        TypedBatchSerializer(Types.FLOAT(), OPERATOR).dumps([0.1]))
    assert tenth == 0.10000000149011612 == _FLOAT32.unpack(_FLOAT32.pack(0.1))[0]


@st.composite
def _tuple_batches(draw, field_kinds: list[str], text_or_bool: bool):
    """A TUPLE type of fields from ``field_kinds`` (at least one STRING or BOOLEAN field with
    ``text_or_bool``) and a batch of its records, some given as lists."""
    kinds = draw(st.lists(st.sampled_from(field_kinds), min_size=1, max_size=5))
    if text_or_bool:
        kinds.insert(draw(st.integers(0, len(kinds))),
                     draw(st.sampled_from(["STRING", "BOOLEAN"])))
    type_info = Types.TUPLE([SCALARS[kind][0] for kind in kinds])
    record = st.tuples(*(SCALARS[kind][1] for kind in kinds))
    records = draw(st.lists(record | record.map(list), max_size=40))
    return type_info, records


@settings(max_examples=200, deadline=None)
@given(batch=_tuple_batches(FIXED_WIDTH, text_or_bool=False))
def test_tuples_of_fixed_width_fields_round_trip_as_packed_rows(batch):
    type_info, records = batch
    _assert_round_trips(type_info, records, "R")


@settings(max_examples=200, deadline=None)
@given(batch=_tuple_batches(sorted(SCALARS), text_or_bool=True))
def test_tuples_with_text_or_booleans_round_trip_as_columns(batch):
    type_info, records = batch
    _assert_round_trips(type_info, records, "C")


@pytest.mark.parametrize("type_info, layout, record", [
    pytest.param(Types.LONG(), "V", -5, id="scalar"),
    pytest.param(Types.STRING(), "V", "\x00é", id="text with NUL"),
    pytest.param(Types.TUPLE([Types.LONG(), Types.FLOAT()]), "R", (INT64_MIN, 0.1), id="rows"),
    pytest.param(Types.TUPLE([Types.STRING(), Types.BOOLEAN(), Types.DOUBLE()]), "C",
                 ["", False, 2], id="columns"),
])
@pytest.mark.parametrize("size", [0, 1, 5_000])
def test_empty_single_and_large_batches_round_trip(type_info, layout, record, size):
    _assert_round_trips(type_info, [record] * size, layout)


def test_an_empty_batch_of_a_tuple_with_text_is_an_empty_chunk_not_a_pickle():
    type_info = Types.TUPLE([Types.STRING(), Types.LONG()])
    data = bytes(TypedBatchSerializer(type_info, OPERATOR).dumps([]))
    assert data[0] == MAGIC
    assert RunDetectingSerializer().loads(data) == []


@pytest.mark.parametrize("value", [1e300, -1e300, 3.5e38])
@pytest.mark.parametrize("type_info, record_of, first_of", [
    pytest.param(Types.FLOAT(), lambda v: v, lambda r: r, id="scalar"),
    pytest.param(Types.TUPLE([Types.FLOAT(), Types.LONG()]), lambda v: (v, 1), lambda r: r[0],
                 id="rows"),
    pytest.param(Types.TUPLE([Types.FLOAT(), Types.STRING()]), lambda v: (v, "s"),
                 lambda r: r[0], id="columns"),
    pytest.param(Types.ROW([Types.FLOAT()]), lambda v: (v,), lambda r: r[0], id="ROW"),
])
def test_a_float_beyond_the_float32_range_arrives_as_infinity_in_every_layout(
        type_info, record_of, first_of, value):
    """Java's (float) cast, which ``array('f')`` applies too; ``struct`` refuses to pack such
    a value, so neither the rows layout nor the fallback may let its ``OverflowError`` out."""
    [got] = RunDetectingSerializer().loads(
        TypedBatchSerializer(type_info, OPERATOR).dumps([record_of(value)]))
    assert first_of(got) == math.copysign(math.inf, value)


# -- types without a plan: the pickle fallback -----------------------------------------------

def _row(names: list[str], values: Any) -> Row:
    row = Row(*values)
    row.set_field_names(names)
    return row


OPTIONAL_LONG = _ints(64) | st.none()
FALLBACK: dict[str, tuple[TypeInformation, st.SearchStrategy[Any], Any]] = {
    # name: (type, values given, what a reader gets for one of them)
    "ROW": (Types.ROW([Types.LONG(), Types.STRING()]),
            st.tuples(OPTIONAL_LONG, TEXT | st.none()),
            lambda value: _row(["f0", "f1"], value)),
    "ROW_NAMED": (Types.ROW_NAMED(["word", "score"], [Types.STRING(), Types.DOUBLE()]),
                  st.tuples(TEXT, st.floats() | st.none()) | st.builds(
                      lambda w, s: _row(["word", "score"], (w, s)), TEXT, st.floats()),
                  lambda value: _row(["word", "score"], value)),
    "LIST": (Types.LIST(Types.LONG()), st.lists(_ints(64)), lambda value: value),
    "MAP": (Types.MAP(Types.STRING(), Types.DOUBLE()),
            st.dictionaries(TEXT, st.floats() | st.none(), max_size=4), lambda value: value),
    "BASIC_ARRAY": (Types.BASIC_ARRAY(Types.LONG()), st.lists(OPTIONAL_LONG),
                    lambda value: value),
    "BIG_DEC": (Types.BIG_DEC(), st.decimals(), lambda value: value),
    "SQL_DATE": (Types.SQL_DATE(), st.dates(), lambda value: value),
    "SQL_TIMESTAMP": (Types.SQL_TIMESTAMP(), st.datetimes(), lambda value: value),
    "nested TUPLE": (Types.TUPLE([Types.TUPLE([Types.LONG(), Types.LONG()]), Types.STRING()]),
                     st.tuples(st.tuples(_ints(64), _ints(64)), TEXT), lambda value: value),
    "TUPLE with a ROW": (Types.TUPLE([Types.LONG(), Types.ROW([Types.STRING()])]),
                         st.tuples(_ints(64), st.tuples(TEXT | st.none())),
                         lambda value: (value[0], _row(["f0"], value[1]))),
}


@settings(max_examples=150, deadline=None)
@given(data=st.data(), name=st.sampled_from(sorted(FALLBACK)))
def test_types_without_a_plan_are_pickled_checked_and_converted(data, name):
    type_info, values, expected_of = FALLBACK[name]
    assert compile_plan(type_info) is None
    records = data.draw(st.lists(values, max_size=20))
    serializer = serializer_for(type_info, OPERATOR)
    assert isinstance(serializer, TypedBatchSerializer)
    encoded = bytes(serializer.dumps(records))
    assert encoded[0] == PICKLE_PROTOCOL_2_PLUS
    got = RunDetectingSerializer().loads(encoded)
    expected = [expected_of(record) for record in records]
    assert _same(got, expected), (got, expected)


@pytest.mark.parametrize("type_info, record, expected", [
    (Types.ROW_NAMED(["a", "b"], [LONG, STRING]), (None, None), Row(a=None, b=None)),
    (Types.BASIC_ARRAY(STRING), ["x", None], ["x", None]),
    (Types.MAP(STRING, LONG), {"k": None}, {"k": None}),
    (Types.OBJECT_ARRAY(Types.ROW([LONG])), [None], [None]),
])
def test_none_is_kept_where_the_type_is_nullable(type_info, record, expected):
    [got] = RunDetectingSerializer().loads(
        TypedBatchSerializer(type_info, OPERATOR).dumps([record]))
    assert got == expected


def test_sql_dates_and_decimals_keep_their_types():
    day, amount = datetime.date(1970, 1, 1), decimal.Decimal("-0.000")
    for type_info, value in [(Types.SQL_DATE(), day), (Types.BIG_DEC(), amount)]:
        [got] = RunDetectingSerializer().loads(
            TypedBatchSerializer(type_info, OPERATOR).dumps([value]))
        assert type(got) is type(value) and str(got) == str(value)


# -- timestamped batches ---------------------------------------------------------------------

TIMESTAMPS = st.integers(INT64_MIN, INT64_MAX) | st.sampled_from(
    [NO_TIMESTAMP, INT64_MIN, INT64_MAX, 0, -1])
TYPED = [SCALARS[kind] for kind in sorted(SCALARS)] + [
    (Types.TUPLE([Types.LONG(), Types.DOUBLE()]), st.tuples(_ints(64), st.floats())),
    (Types.TUPLE([Types.STRING(), Types.INT()]), st.tuples(TEXT, _ints(32))),
]


@settings(max_examples=200, deadline=None)
@given(data=st.data(), typed=st.sampled_from(TYPED))
def test_a_trailing_stamped_run_round_trips_with_its_timestamps(data, typed):
    type_info, values = typed
    plain = data.draw(st.lists(values, max_size=10))
    run_values = data.draw(st.lists(values, max_size=10))
    timestamps = data.draw(st.lists(TIMESTAMPS, min_size=len(run_values),
                                    max_size=len(run_values)))
    expected_plain = [_expected(type_info, value) for value in plain]
    expected_run = [_expected(type_info, value) for value in run_values]

    plan = compile_plan(type_info)
    assert plan is not None
    got_plain, run = decode_chunk(encode_chunk(plan, plain, (run_values, timestamps)))
    assert run is not None
    assert _same(got_plain, expected_plain) and _same(run[0], expected_run)
    assert run[1] == timestamps

    data_bytes = bytes(TypedBatchSerializer(type_info, OPERATOR).dumps(
        [*plain, StampedRun(run_values, timestamps)]))
    assert data_bytes[0] == MAGIC
    reader = RunDetectingSerializer()
    *got, last = reader.loads(data_bytes)
    assert reader.saw_runs
    assert type(last) is StampedRun and last.timestamps == timestamps
    assert _same(got, expected_plain) and _same(last.values, expected_run)


def test_a_stamped_run_of_a_type_without_a_plan_keeps_its_timestamps():
    type_info = Types.ROW([Types.LONG()])
    records = [(1,), StampedRun([(2,), (3,)], [INT64_MIN, INT64_MAX])]
    reader = RunDetectingSerializer()
    got = reader.loads(TypedBatchSerializer(type_info, OPERATOR).dumps(records))
    assert reader.saw_runs
    rows = [_row(["f0"], (value,)) for value in (1, 2, 3)]
    assert got == [rows[0], StampedRun(rows[1:], [INT64_MIN, INT64_MAX])]


def test_a_chained_sink_gets_a_timestamped_batch_converted_with_its_timestamps():
    batch = TimestampedBatch([1, 2.5], [NO_TIMESTAMP, 7])
    checked = TypedBatchSerializer(Types.DOUBLE(), OPERATOR).check_batch(batch)
    assert type(checked) is TimestampedBatch
    assert _same(list(checked), [1.0, 2.5]) and checked.timestamps == [NO_TIMESTAMP, 7]


# -- records that do not fit -----------------------------------------------------------------


MISMATCHES = [
    # (declared type, batch, the record the error must name)
    pytest.param(LONG, [1, 2**63], 2**63, id="LONG 2**63"),
    pytest.param(LONG, [-(2**63) - 1], -(2**63) - 1, id="LONG below 64 bits"),
    pytest.param(INT, [0, 2**31], 2**31, id="INT 2**31"),
    pytest.param(INT, [-(2**31) - 1], -(2**31) - 1, id="INT below 32 bits"),
    pytest.param(Types.SHORT(), [2**15], 2**15, id="SHORT 2**15"),
    pytest.param(Types.BYTE(), [1, 128], 128, id="BYTE 128"),
    pytest.param(Types.BYTE(), [-129], -129, id="BYTE -129"),
    pytest.param(LONG, ["1"], "1", id="str for LONG"),
    pytest.param(LONG, [1.0], 1.0, id="float for LONG"),
    pytest.param(LONG, [None], None, id="None for LONG"),
    pytest.param(Types.DOUBLE(), [1.5, "2.5"], "2.5", id="str for DOUBLE"),
    pytest.param(Types.FLOAT(), [None], None, id="None for FLOAT"),
    pytest.param(STRING, ["a", 1], 1, id="int for STRING"),
    pytest.param(STRING, [b"bytes"], b"bytes", id="bytes for STRING"),
    pytest.param(STRING, ["a", None], None, id="None for STRING"),
    pytest.param(BOOLEAN, [True, 1], 1, id="int for BOOLEAN"),
    pytest.param(BOOLEAN, [None], None, id="None for BOOLEAN"),
    pytest.param(PAIR, [(1, 2), ("a", 1)], ("a", 1), id="rows: str field"),
    pytest.param(PAIR, [(1.5, 2)], (1.5, 2), id="rows: float field"),
    pytest.param(PAIR, [(1, 2**63)], (1, 2**63), id="rows: out-of-range field"),
    pytest.param(PAIR, [(1, None)], (1, None), id="rows: None field"),
    pytest.param(PAIR, [None], None, id="rows: None record"),
    pytest.param(PAIR, [(1,)], (1,), id="rows: shorter"),
    pytest.param(PAIR, [(1, 2, 3)], (1, 2, 3), id="rows: longer"),
    pytest.param(PAIR, [(1, 2), (3,)], (3,), id="rows: mixed arity"),
    pytest.param(PAIR, [[1, 2], [3, 4, 5]], [3, 4, 5], id="rows: lists of mixed arity"),
    pytest.param(PAIR, [7], 7, id="rows: scalar record"),
    pytest.param(NAMED, [("a", 1), (1, 1)], (1, 1), id="columns: int for str"),
    pytest.param(NAMED, [("a", "1")], ("a", "1"), id="columns: str for LONG"),
    pytest.param(NAMED, [("a", None)], ("a", None), id="columns: None field"),
    pytest.param(NAMED, [None], None, id="columns: None record"),
    pytest.param(NAMED, [("a",)], ("a",), id="columns: shorter"),
    pytest.param(NAMED, [("a", 1, 2)], ("a", 1, 2), id="columns: longer"),
    pytest.param(NAMED, [("a", 1), ("b",)], ("b",), id="columns: mixed arity"),
    pytest.param(Types.TUPLE([STRING, BOOLEAN]), [("a", 1)], ("a", 1), id="columns: int for bool"),
    # iterables that are not tuples (nor lists) must not be taken apart into fields
    pytest.param(Types.TUPLE([STRING, STRING]), ["ab"], "ab", id="str for TUPLE"),
    pytest.param(PAIR, [{1: "x", 2: "y"}], {1: "x", 2: "y"}, id="dict for TUPLE (rows)"),
    pytest.param(NAMED, [{"a": 1, "b": 2}], {"a": 1, "b": 2}, id="dict for TUPLE (columns)"),
    pytest.param(PAIR, [frozenset({1, 2})], frozenset({1, 2}), id="set for TUPLE"),
    pytest.param(PAIR, [range(2)], range(2), id="range for TUPLE"),
    pytest.param(NAMED, [Row("a", 1)], Row("a", 1), id="Row for TUPLE"),
    # the pickle fallback checks with the type's predicate
    pytest.param(Types.ROW([LONG, STRING]), [(1, 2)], _row(["f0", "f1"], (1, 2)),
                 id="ROW: wrong field"),
    pytest.param(Types.ROW([LONG]), [None], None, id="ROW: None record"),
    pytest.param(Types.LIST(LONG), [[1, None]], [1, None], id="LIST: None element"),
    pytest.param(Types.MAP(STRING, LONG), [{1: 1}], {1: 1}, id="MAP: int key"),
    pytest.param(Types.TUPLE([PAIR, STRING]), [((1, "x"), "s")], ((1, "x"), "s"),
                 id="nested TUPLE: wrong inner field"),
    pytest.param(LONG, [*range(4_999), 2**63], 2**63, id="last of 5,000"),
]


def _dumps(type_info: TypeInformation, records: list[Any]) -> object:
    return TypedBatchSerializer(type_info, OPERATOR).dumps(records)


def _dumps_as_run(type_info: TypeInformation, records: list[Any]) -> object:
    run = StampedRun(list(records), [0] * len(records))
    return TypedBatchSerializer(type_info, OPERATOR).dumps([run])


def _check_at_sink(type_info: TypeInformation, records: list[Any]) -> object:
    return TypedBatchSerializer(type_info, OPERATOR).check_batch(records)


@pytest.mark.parametrize("path", [_dumps, _dumps_as_run, _check_at_sink],
                         ids=["dumps", "dumps a run", "check_batch"])
@pytest.mark.parametrize("type_info, records, bad", MISMATCHES)
def test_a_record_that_does_not_fit_names_the_operator_the_type_and_the_value(
        path, type_info, records, bad):
    with pytest.raises(RecordTypeMismatchError) as info:
        path(type_info, records)
    error = info.value
    assert error.operator == OPERATOR
    assert error.declared == repr(type_info)
    assert error.value == f"{bad!r} ({type(bad).__name__})"
    assert OPERATOR in str(error) and repr(type_info) in str(error)


def test_the_codecs_own_error_is_the_cause_of_a_mismatch(packer):
    with pytest.raises(RecordTypeMismatchError) as info:
        _dumps(PAIR, [(1, 2), ("a", 1)])
    assert isinstance(info.value.__cause__, TypeError if packer == "C" else struct.error)


# -- corrupt chunks --------------------------------------------------------------------------

def _chunk(type_info: TypeInformation, records: list[Any],
           run: tuple[list[Any], list[int]] | None = None) -> bytes:
    plan = compile_plan(type_info)
    assert plan is not None
    return encode_chunk(plan, records, run)


SMALL_CHUNKS = {
    "longs": _chunk(LONG, [1, -2]),
    "text": _chunk(STRING, ["a", "é"]),
    "text with NUL": _chunk(STRING, ["a\x00", ""]),
    "booleans": _chunk(BOOLEAN, [True, False]),
    "rows": _chunk(Types.TUPLE([LONG, Types.DOUBLE()]), [(1, 2.5), (3, -0.0)]),
    "columns": _chunk(Types.TUPLE([STRING, BOOLEAN, INT]), [("x", True, 1), ("", False, -1)]),
    "with a run": _chunk(PAIR, [(1, 2)], ([(3, 4), (5, 6)], [7, NO_TIMESTAMP])),
    "empty": _chunk(LONG, []),
}
KNOWN_LAYOUTS = b"VRC"
KNOWN_CODES = b"qihbdfs?Sp"


def _assert_corrupt(data: bytes) -> None:
    with pytest.raises(CorruptChannelDataError):
        decode_chunk(data)
    with pytest.raises(CorruptChannelDataError):
        RunDetectingSerializer().loads(data)


@pytest.mark.parametrize("name", sorted(SMALL_CHUNKS))
def test_a_chunk_truncated_at_any_byte_is_corrupt(name):
    chunk = SMALL_CHUNKS[name]
    decode_chunk(chunk)  # whole, it is well formed
    with pytest.raises(CorruptChannelDataError):
        decode_chunk(chunk[:0])
    for end in range(1, len(chunk)):
        _assert_corrupt(chunk[:end])


@settings(max_examples=100, deadline=None)
@given(name=st.sampled_from(sorted(SMALL_CHUNKS)), garbage=st.binary(min_size=1, max_size=64))
def test_bytes_after_a_chunk_make_it_corrupt(name, garbage):
    _assert_corrupt(SMALL_CHUNKS[name] + garbage)


@pytest.mark.parametrize("name", sorted(SMALL_CHUNKS))
def test_an_unknown_layout_byte_is_corrupt(name):
    chunk = SMALL_CHUNKS[name]
    for byte in sorted(set(range(256)) - set(KNOWN_LAYOUTS)):
        _assert_corrupt(chunk[:3] + bytes([byte]) + chunk[4:])


@pytest.mark.parametrize("name", sorted(SMALL_CHUNKS))
def test_an_unknown_column_code_is_corrupt(name):
    chunk = SMALL_CHUNKS[name]
    schema_len = chunk[2]
    codes = range(4, 3 + schema_len) if chr(chunk[3]) != "R" else range(0)
    for position in codes:
        for byte in sorted(set(range(128)) - set(KNOWN_CODES)):
            _assert_corrupt(chunk[:position] + bytes([byte]) + chunk[position + 1:])


def test_a_block_without_a_column_code_is_corrupt():
    block = bytes([1]) + b"V" + struct.pack("<II", 1, 8) + struct.pack("<q", 5)
    _assert_corrupt(bytes([MAGIC, 0]) + block)


def test_a_run_with_fewer_timestamps_than_values_is_corrupt():
    _assert_corrupt(_chunk(LONG, [], ([1, 2], [5])))
    _assert_corrupt(_chunk(LONG, [0], ([1], [5, 6])))


# -- through a record writer and a partition -------------------------------------------------

def _batches(view, deserializer):
    """Each data buffer's records as the deserializer hands them over (``drain`` flattens
    them, which would lose a ``TimestampedBatch``)."""
    out = []
    while (item := view.poll_next()) is not None:
        if not item.buffer.is_event:
            out.append(deserializer.deserialize(item.buffer.view()))
        item.buffer.recycle()
    return [batch for batch in out if batch]


def test_a_keyed_exchange_carries_typed_batches_converted_with_their_timestamps():
    type_info = Types.TUPLE([LONG, Types.DOUBLE()])
    selector = KeyGroupSelector(lambda record: record[0], 128)
    _, _, views, writer = writer_setup(selector, 2, segment=4096,
                                       serializer=serializer_for(type_info, OPERATOR))
    records = [(i % 7 - 3, i) for i in range(5_000)]
    stamped = [((INT64_MAX, 1), NO_TIMESTAMP), ((INT64_MIN, 2.5), INT64_MAX), ((0, 3), 0)]
    readers = [RecordDeserializer(RunDetectingSerializer()) for _ in views]
    got: list[list[Any]] = [[] for _ in views]
    for start in range(0, len(records), 500):  # read as it goes: the pool is small
        writer.emit_batch(records[start:start + 500])
        for channel, view in enumerate(views):
            got[channel] += drain(view, readers[channel])
    writer.emit_stamped_batch([value for value, _ in stamped], [ts for _, ts in stamped])
    writer.close()
    for channel, view in enumerate(views):
        got[channel] += drain(view, readers[channel])
        mine = [(key, float(value)) for key, value in records
                if assign_key_to_operator(key, 128, 2) == channel]
        mine_stamped = [((key, float(value)), ts) for (key, value), ts in stamped
                        if assign_key_to_operator(key, 128, 2) == channel]
        runs = [record for record in got[channel] if type(record) is StampedRun]
        assert _same([record for record in got[channel] if type(record) is not StampedRun],
                     mine)
        assert _same([pair for run in runs
                      for pair in zip(run.values, run.timestamps, strict=True)], mine_stamped)


def test_a_task_reader_gets_a_typed_run_as_one_timestamped_batch():
    type_info = Types.TUPLE([STRING, Types.FLOAT()])
    _, _, views, writer = writer_setup(KeyGroupSelector(lambda record: 0, 128), 1,
                                       serializer=serializer_for(type_info, OPERATOR))
    writer.emit_batch([("plain", 1)])
    writer.emit_stamped_batch([("a\x00", 0.1), ("ü", 2)], [5, INT64_MIN])
    writer.close()
    [batch] = _batches(views[0], CheckpointableDeserializer())
    assert type(batch) is TimestampedBatch
    assert list(batch.pairs()) == [
        (("plain", 1.0), NO_TIMESTAMP), (("a\x00", _float32(0.1)), 5), (("ü", 2.0), INT64_MIN)]


def test_a_record_writer_raises_the_mismatch_on_the_task_thread():
    selector = KeyGroupSelector(lambda record: record[0], 128)
    _, _, _, writer = writer_setup(selector, 2, serializer=serializer_for(PAIR, "pairs"))
    with pytest.raises(RecordTypeMismatchError) as info:
        writer.emit_batch([(1, 1), ("a", 1)])
        writer.flush_all()
    assert (info.value.operator, info.value.declared) == ("pairs", repr(PAIR))
    assert info.value.value == "('a', 1) (tuple)"
    writer.close(flush=False)


def test_a_value_that_fits_no_width_is_refused_as_before():
    plan = compile_plan(Types.TUPLE([Types.INT(), Types.DOUBLE()]))
    assert plan is not None
    assert encode_chunk(plan, [(5, 0.5)])[3:6] == b"Rbd"
    for bad in [(2**31, 0.5), ("5", 0.5), (5.0, 0.5), (1,), (1, 0.5, 2), "ab", (None, 0.5)]:
        with pytest.raises(ENCODE_ERRORS):
            encode_chunk(plan, [(1, 0.5), bad])
