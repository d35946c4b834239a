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


def _as_dict(row):
    record = dict(zip(NAMES, row, strict=True))
    record["inner"] = dict(zip(["x", "label"], record["inner"], strict=True))
    return record


def _read_file(path, schema, budget, restore_after):
    """Every record of an Avro file through AvroInputFormat's reader, in polls of ``budget``;
    after ``restore_after`` polls a new reader restored from the snapshot reads on."""
    import pickle

    from flintlock.datastream.connectors._file_source import FileSplit
    from flintlock.datastream.formats.avro import AvroInputFormat, AvroSchema

    input_format = AvroInputFormat(str(path), AvroSchema.parse_string(schema))
    reader = input_format.create_split_reader()
    reader.add_splits([FileSplit(str(path))])
    reader.notify_no_more_splits()
    got = []
    for polls in range(10_000):
        if polls == restore_after:
            state = pickle.loads(pickle.dumps(reader.snapshot_state(1)))
            reader.close()
            reader = input_format.create_split_reader()
            reader.restore(state)
            reader.notify_no_more_splits()
        records, finished = reader.poll(budget)
        got.extend(records)
        if finished:
            break
    reader.close()
    return got


@settings(max_examples=60, deadline=None)
@given(st.lists(rows, max_size=12), st.integers(1, 3), st.integers(0, 8),
       st.sampled_from([1, 200, 16000]))
def test_avro_files_read_every_type_across_a_restore(tmp_path_factory, batch, budget,
                                                      restore_after, sync_interval):
    import fastavro

    path = tmp_path_factory.mktemp("avro") / "part.avro"
    records = [_as_dict(row) for row in batch]
    with open(path, "wb") as out:  # small sync intervals: many blocks, some skipped whole
        fastavro.writer(out, fastavro.parse_schema(json.loads(SCHEMA)), records,
                        sync_interval=sync_interval)
    assert _read_file(path, SCHEMA, budget, restore_after) == records


def test_an_avro_file_that_cannot_be_read_names_the_file_and_record(tmp_path):
    import fastavro

    from flintlock.datastream.formats.avro import AvroFileError

    schema = json.dumps({"type": "record", "name": "R", "fields": [
        {"name": "id", "type": "long"}]})
    other = json.dumps({"type": "record", "name": "R", "fields": [
        {"name": "id", "type": "string"}]})
    path = tmp_path / "x.avro"
    path.write_bytes(b"id\n1\n")
    with pytest.raises(AvroFileError, match=f"{path} at record 0: not a readable Avro file"):
        _read_file(path, schema, 10, None)
    with open(path, "wb") as out:
        fastavro.writer(out, fastavro.parse_schema(json.loads(schema)),
                        [{"id": i} for i in range(5)])
    with pytest.raises(AvroFileError, match="at record 0"):  # the schemas do not resolve
        _read_file(path, other, 10, None)
    data = path.read_bytes()
    path.write_bytes(data[:-20])  # the last block cut short
    with pytest.raises(AvroFileError, match=str(path)):
        _read_file(path, schema, 10, None)
