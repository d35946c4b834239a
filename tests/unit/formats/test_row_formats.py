"""JSON and CSV row formats: every supported field type round-trips (property-based), and
malformed input raises FormatParseError naming the field, or is skipped and counted."""

import datetime
import decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flintlock.common.typeinfo import Types
from flintlock.common.types import Row
from flintlock.datastream.formats.csv import (
    CsvRowDeserializationSchema,
    CsvRowSerializationSchema,
)
from flintlock.datastream.formats.json import (
    FormatParseError,
    JsonRowDeserializationSchema,
    JsonRowSerializationSchema,
)


def _ints(bits):
    return st.integers(-(1 << (bits - 1)), (1 << (bits - 1)) - 1)


SCALARS = [
    ("s", Types.STRING(), st.text()),
    ("c", Types.CHAR(), st.characters()),
    ("b", Types.BOOLEAN(), st.booleans()),
    ("i8", Types.BYTE(), _ints(8)),
    ("i16", Types.SHORT(), _ints(16)),
    ("i32", Types.INT(), _ints(32)),
    ("i64", Types.LONG(), _ints(64)),
    ("big", Types.BIG_INT(), st.integers(-(10**40), 10**40)),
    ("f", Types.FLOAT(), st.floats(width=32, allow_nan=False, allow_infinity=False)),
    ("d", Types.DOUBLE(), st.floats(allow_nan=False, allow_infinity=False)),
    ("dec", Types.BIG_DEC(), st.decimals(allow_nan=False, allow_infinity=False)),
    ("day", Types.SQL_DATE(), st.dates()),
    ("t", Types.SQL_TIME(), st.times()),
    ("ts", Types.SQL_TIMESTAMP(), st.datetimes()),
]
NESTED = [
    ("inner", Types.ROW_NAMED(["x", "y"], [Types.INT(), Types.STRING()]),
     st.tuples(st.one_of(st.none(), _ints(32)), st.one_of(st.none(), st.text()))
     .map(lambda xy: _row(["x", "y"], list(xy)))),
    ("ints", Types.LIST(Types.LONG()), st.lists(st.one_of(st.none(), _ints(64)))),
    ("words", Types.BASIC_ARRAY(Types.STRING()), st.lists(st.text())),
    ("m", Types.MAP(Types.STRING(), Types.DOUBLE()),
     st.dictionaries(st.text(), st.floats(allow_nan=False, allow_infinity=False))),
]


def _row(names, values):
    row = Row(*values)
    row.set_field_names(names)
    return row


def _rows(fields, nullable=True):
    names = [n for n, _, _ in fields]
    values = [st.one_of(st.none(), s) if nullable else s for _, _, s in fields]
    return st.tuples(*values).map(lambda vs: _row(names, list(vs)))


JSON_FIELDS = SCALARS + NESTED
JSON_TYPE = Types.ROW_NAMED([n for n, _, _ in JSON_FIELDS], [t for _, t, _ in JSON_FIELDS])
CSV_TYPE = Types.ROW_NAMED([n for n, _, _ in SCALARS], [t for _, t, _ in SCALARS])


def _same(a, b):
    """Equal rows; decimals compare by value and sign, floats exactly."""
    assert list(a) == list(b)
    assert a.get_field_names() == b.get_field_names()


@settings(max_examples=150, deadline=None)
@given(_rows(JSON_FIELDS))
def test_json_round_trips_every_field_type(row):
    writer = JsonRowSerializationSchema.builder().with_type_info(JSON_TYPE).build()
    reader = JsonRowDeserializationSchema.builder().type_info(JSON_TYPE).build()
    _same(reader.deserialize(writer.serialize(row)), row)


@settings(max_examples=150, deadline=None)
@given(_rows(SCALARS[1:]), st.text())
def test_csv_round_trips_every_scalar_type(rest, text):
    row = _row(CSV_TYPE.get_field_names(), [text, *rest])  # no null literal: a STRING is never null
    writer = CsvRowSerializationSchema.Builder(CSV_TYPE).build()
    reader = CsvRowDeserializationSchema.Builder(CSV_TYPE).build()
    _same(reader.deserialize(writer.serialize(row)), row)


@settings(max_examples=100, deadline=None)
@given(_rows(SCALARS).filter(lambda r: r[0] != "NULL"))
def test_csv_with_a_null_literal_and_other_delimiters_round_trips(row):
    writer = (CsvRowSerializationSchema.Builder(CSV_TYPE).set_field_delimiter("|")
              .set_quote_character("'").set_null_literal("NULL").build())
    reader = (CsvRowDeserializationSchema.Builder(CSV_TYPE).set_field_delimiter("|")
              .set_quote_character("'").set_null_literal("NULL").build())
    _same(reader.deserialize(writer.serialize(row)), row)


ARRAY_TYPE = Types.ROW_NAMED(["ints", "words", "days"], [
    Types.LIST(Types.INT()), Types.BASIC_ARRAY(Types.STRING()), Types.LIST(Types.SQL_DATE())])


@settings(max_examples=100, deadline=None)
@given(st.lists(_ints(32), min_size=1),
       st.lists(st.text().filter(lambda t: "|" not in t), min_size=1).filter(
           lambda words: words != [""]),
       st.one_of(st.none(), st.lists(st.dates(), min_size=1)))
def test_csv_arrays_round_trip(ints, words, days):
    row = _row(ARRAY_TYPE.get_field_names(), [ints, words, days])
    writer = CsvRowSerializationSchema.Builder(ARRAY_TYPE).set_array_element_delimiter("|").build()
    reader = (CsvRowDeserializationSchema.Builder(ARRAY_TYPE).set_array_element_delimiter("|")
              .build())
    _same(reader.deserialize(writer.serialize(row)), row)


def test_csv_arrays_refuse_what_they_cannot_hold():
    writer = CsvRowSerializationSchema.Builder(ARRAY_TYPE).build()
    with pytest.raises(FormatParseError, match="contains the delimiter"):
        writer.serialize(([1], ["a;b"], None))
    with pytest.raises(FormatParseError, match="null element"):
        writer.serialize(([1, None], ["a"], None))
    reader = CsvRowDeserializationSchema.Builder(ARRAY_TYPE).build()
    with pytest.raises(FormatParseError) as failed:
        reader.deserialize(b"1;x,a,\n")
    assert failed.value.field == "ints"


def test_json_reads_members_by_name_and_missing_ones_as_null():
    row_type = Types.ROW_NAMED(["id", "price", "when"],
                               [Types.LONG(), Types.BIG_DEC(), Types.SQL_DATE()])
    reader = JsonRowDeserializationSchema.builder().type_info(row_type).build()
    row = reader.deserialize(b'{"price": 12.3400000000000000001, "id": 7, "extra": true}')
    assert list(row) == [7, decimal.Decimal("12.3400000000000000001"), None]
    strict = (JsonRowDeserializationSchema.builder().type_info(row_type)
              .fail_on_missing_field().build())
    with pytest.raises(FormatParseError, match="'when': missing"):
        strict.deserialize(b'{"price": 1, "id": 7}')
    writer = JsonRowSerializationSchema.builder().with_type_info(row_type).build()
    assert writer.serialize((7, decimal.Decimal("1.50"), datetime.date(2026, 1, 2))) == (
        b'{"id":7,"price":"1.50","when":"2026-01-02"}')


@pytest.mark.parametrize("message, field", [
    (b"{not json", "(record)"),
    (b"[1, 2]", "(record)"),
    (b'{"id": "seven"}', "id"),
    (b'{"id": 99999999999999999999}', "id"),
    (b'{"id": 1, "when": "yesterday"}', "when"),
])
def test_malformed_json_names_the_field_or_is_skipped_and_counted(message, field):
    row_type = Types.ROW_NAMED(["id", "when"], [Types.LONG(), Types.SQL_DATE()])
    reader = JsonRowDeserializationSchema.builder().type_info(row_type).build()
    with pytest.raises(FormatParseError) as failed:
        reader.deserialize(message)
    assert failed.value.field == field
    lenient = (JsonRowDeserializationSchema.builder().type_info(row_type)
               .ignore_parse_errors().build())
    assert lenient.deserialize(message) is None
    assert lenient.deserialize(b'{"id": 1}') is not None
    assert lenient.skipped_records == 1


@pytest.mark.parametrize("line, field", [
    (b"1,2,3\n", "(record)"),
    (b"x,true\n", "id"),
    (b"1,maybe\n", "ok"),
    (b'1,"true\n', "(record)"),
])
def test_malformed_csv_names_the_field_or_is_skipped_and_counted(line, field):
    row_type = Types.ROW_NAMED(["id", "ok"], [Types.INT(), Types.BOOLEAN()])
    reader = CsvRowDeserializationSchema.Builder(row_type).build()
    with pytest.raises(FormatParseError) as failed:
        reader.deserialize(line)
    assert failed.value.field == field
    lenient = CsvRowDeserializationSchema.Builder(row_type).set_ignore_parse_errors(True).build()
    assert lenient.deserialize(line) is None
    assert lenient.skipped_records == 1


def test_schemas_reject_types_they_cannot_hold():
    with pytest.raises(TypeError, match="row type"):
        JsonRowSerializationSchema.builder().with_type_info(Types.STRING())
    with pytest.raises(TypeError, match="in CSV"):
        CsvRowSerializationSchema.Builder(
            Types.ROW_NAMED(["m"], [Types.MAP(Types.STRING(), Types.INT())])).build()
    with pytest.raises(ValueError, match="type_info"):
        JsonRowDeserializationSchema.builder().build()
