"""The Avro row format: rows of a schema with every Avro type round-trip (property-based),
and malformed datums or rows raise FormatParseError."""

import datetime
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flintlock.common.types import Row
from flintlock.datastream.formats.avro import (
    AvroRowDeserializationSchema,
    AvroRowSerializationSchema,
    FormatParseError,
)

SCHEMA = json.dumps({"type": "record", "name": "Everything", "fields": [
    {"name": "flag", "type": "boolean"},
    {"name": "i", "type": "int"},
    {"name": "l", "type": "long"},
    {"name": "f", "type": "float"},
    {"name": "d", "type": "double"},
    {"name": "s", "type": "string"},
    {"name": "raw", "type": "bytes"},
    {"name": "maybe", "type": ["null", "string"]},
    {"name": "longs", "type": {"type": "array", "items": "long"}},
    {"name": "scores", "type": {"type": "map", "values": "double"}},
    {"name": "inner", "type": {"type": "record", "name": "Inner", "fields": [
        {"name": "x", "type": "int"}, {"name": "label", "type": ["null", "string"]}]}},
    {"name": "day", "type": {"type": "int", "logicalType": "date"}},
    {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
    {"name": "price", "type": {"type": "bytes", "logicalType": "decimal", "precision": 12,
                               "scale": 3}},
]})
NAMES = ["flag", "i", "l", "f", "d", "s", "raw", "maybe", "longs", "scores", "inner", "day",
         "at", "price"]


def _row(names, values):
    row = Row(*values)
    row.set_field_names(names)
    return row


finite = st.floats(allow_nan=False)
rows = st.tuples(
    st.booleans(), st.integers(-(2**31), 2**31 - 1), st.integers(-(2**63), 2**63 - 1),
    st.floats(width=32, allow_nan=False), finite, st.text(), st.binary(),
    st.one_of(st.none(), st.text()), st.lists(st.integers(-(2**63), 2**63 - 1)),
    st.dictionaries(st.text(), finite),
    st.tuples(st.integers(-(2**31), 2**31 - 1), st.one_of(st.none(), st.text()))
    .map(lambda t: _row(["x", "label"], list(t))),
    st.dates(min_value=datetime.date(1, 1, 2)),
    st.datetimes(min_value=datetime.datetime(1970, 1, 1), timezones=st.just(datetime.UTC))
    .map(lambda t: t.replace(microsecond=t.microsecond // 1000 * 1000)),
    st.decimals(min_value=-(10**8), max_value=10**8, places=3),
).map(lambda values: _row(NAMES, list(values)))


@settings(max_examples=150, deadline=None)
@given(rows)
def test_avro_round_trips_every_type(row):
    writer = AvroRowSerializationSchema(avro_schema_string=SCHEMA)
    reader = AvroRowDeserializationSchema(avro_schema_string=SCHEMA)
    back = reader.deserialize(writer.serialize(row))
    assert back.get_field_names() == NAMES
    assert list(back) == list(row)


def test_malformed_avro_raises_a_typed_error():
    schema = json.dumps({"type": "record", "name": "R", "fields": [
        {"name": "id", "type": "long"}, {"name": "name", "type": "string"}]})
    writer = AvroRowSerializationSchema(avro_schema_string=schema)
    reader = AvroRowDeserializationSchema(avro_schema_string=schema)
    good = writer.serialize((7, "seven"))
    assert list(reader.deserialize(good)) == [7, "seven"]
    with pytest.raises(FormatParseError, match="not an Avro datum"):
        reader.deserialize(good[:-2])
    with pytest.raises(FormatParseError, match="bytes left"):
        reader.deserialize(good + b"\x00")
    with pytest.raises(FormatParseError, match="does not fit"):
        writer.serialize(("seven", 7))
    with pytest.raises(ValueError, match="record schema"):
        AvroRowSerializationSchema(avro_schema_string='"long"')
    with pytest.raises(ValueError, match="invalid Avro schema"):
        AvroRowDeserializationSchema(avro_schema_string=json.dumps(
            {"type": "record", "name": "R", "fields": [{"name": "x", "type": "nothing"}]}))


def test_rows_without_the_schema_s_names_are_written_field_by_field():
    schema = json.dumps({"type": "record", "name": "Outer", "fields": [
        {"name": "id", "type": "long"},
        {"name": "inner", "type": ["null", {"type": "record", "name": "In", "fields": [
            {"name": "x", "type": "int"}]}]},
        {"name": "more", "type": ["null", {"type": "array", "items": "In"}]}]})
    writer = AvroRowSerializationSchema(avro_schema_string=schema)
    reader = AvroRowDeserializationSchema(avro_schema_string=schema)
    back = reader.deserialize(writer.serialize(Row(1, Row(2), [Row(3), (4,)])))
    assert back == _row(["id", "inner", "more"],
                        [1, _row(["x"], [2]), [_row(["x"], [3]), _row(["x"], [4])]])
    assert reader.deserialize(writer.serialize((5, None, None))) == _row(
        ["id", "inner", "more"], [5, None, None])
    with pytest.raises(FormatParseError, match="2 fields, the schema has 1"):
        writer.serialize((1, (2, 3), None))
