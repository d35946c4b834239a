"""CSV files (CsvSchema, CsvReaderFormat, CsvBulkWriters): rows of every column type written
by the bulk writer are read back by the FileSource reader, also across a restore mid-file
(property-based); headers, comments and null values; a record that does not fit raises
CsvFileParseError naming the file, the byte offset and the field."""

import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flintlock.common.typeinfo import Types
from flintlock.common.types import Row
from flintlock.datastream.connectors._file_source import FileSplit
from flintlock.datastream.formats.csv import (
    CsvBulkWriters,
    CsvFileParseError,
    CsvReaderFormat,
    CsvSchema,
    FormatParseError,
)


def _ints(bits):
    return st.integers(-(1 << (bits - 1)), (1 << (bits - 1)) - 1)


TEXT = st.text(st.characters(blacklist_categories=("Cs",)))  # any text UTF-8 can hold
FIELDS = [
    ("s", Types.STRING(), TEXT),
    ("flag", Types.BOOLEAN(), st.booleans()),
    ("i8", Types.BYTE(), _ints(8)),
    ("i16", Types.SHORT(), _ints(16)),
    ("i32", Types.INT(), _ints(32)),
    ("i64", Types.LONG(), _ints(64)),
    ("big", Types.BIG_INT(), st.integers(-(10**30), 10**30)),
    ("f", Types.FLOAT(), st.floats(width=32, allow_nan=False, allow_infinity=False)),
    ("d", Types.DOUBLE(), st.floats(allow_nan=False, allow_infinity=False)),
    ("dec", Types.BIG_DEC(), st.decimals(allow_nan=False, allow_infinity=False)),
    ("ints", None, st.lists(_ints(64), min_size=1)),
    ("words", None, st.lists(TEXT.filter(lambda t: "|" not in t), min_size=1).filter(
        lambda words: words != [""])),
]


def _schema(**options):
    builder = CsvSchema.builder().add_string_column("s").add_boolean_column("flag")
    for name, type_info, _ in FIELDS[2:10]:
        builder.add_number_column(name, number_type=type_info)
    builder.add_array_column("ints", element_type=Types.LONG())
    builder.add_array_column("words", separator="|")
    for option, value in options.items():
        getattr(builder, option)(*value)
    return builder.build()


NAMES = [name for name, _, _ in FIELDS]


def _row(values, names=NAMES):
    row = Row(*values)
    row.set_field_names(names)
    return row


# A STRING column is never null without a null value (its empty text is the empty string).
rows = st.tuples(TEXT, *(st.one_of(st.none(), s) for _, _, s in FIELDS[1:])).map(
    lambda values: _row(list(values)))


def _write(path, schema, batches):
    with open(path, "wb") as stream:
        writer = CsvBulkWriters.for_schema(schema).create(stream)
        for batch in batches:
            writer.add_elements(batch)
        writer.finish()


def _read(path, schema, budget=2, restore_after=None):
    """Every row of the file, in polls of ``budget``; after ``restore_after`` polls the reader
    is snapshotted and a new one restored from the snapshot reads on."""
    reader = CsvReaderFormat.for_schema(schema).create_split_reader()
    reader.add_splits([FileSplit(str(path))])
    reader.notify_no_more_splits()
    got = []
    for polls in range(10_000):
        if polls == restore_after:
            state = pickle.loads(pickle.dumps(reader.snapshot_state(1)))
            reader.close()
            reader = CsvReaderFormat.for_schema(schema).create_split_reader()
            reader.restore(state)
            reader.notify_no_more_splits()
        records, finished = reader.poll(budget)
        got.extend(records)
        if finished:
            break
    reader.close()
    return got


@settings(max_examples=80, deadline=None)
@given(st.lists(st.lists(rows, max_size=4), max_size=4), st.integers(0, 6),
       st.sampled_from([{}, {"set_use_header": ()},
                        {"set_column_separator": (";",), "set_quote_char": ("'",)},
                        {"set_null_value": ("NULL",), "set_line_separator": ("\r\n",)}]))
def test_csv_files_round_trip_every_column_type_across_a_restore(tmp_path_factory, batches,
                                                                 restore_after, options):
    schema = _schema(**options)
    if "set_null_value" in options:  # a STRING can be null now, and "NULL" cannot be text
        batches = [[_row([None if r[0] == "NULL" else r[0], *list(r)[1:]]) for r in batch]
                   for batch in batches]
    path = tmp_path_factory.mktemp("csv") / "part.csv"
    _write(path, schema, batches)
    got = _read(path, schema, restore_after=restore_after)
    expected = [row for batch in batches for row in batch]
    assert [list(r) for r in got] == [list(r) for r in expected]
    assert all(r.get_field_names() == NAMES for r in got)
    assert schema.row_type.get_field_names() == NAMES


def test_headers_comments_blank_lines_and_skipped_first_rows(tmp_path):
    path = tmp_path / "in.csv"
    path.write_text("id,name\n# a comment\n1,a\n\n2,\"b\nc\"\r\n")
    base = CsvSchema.builder().add_number_column("id").add_string_column("name")
    expected = [[1, "a"], [2, "b\nc"]]
    with_header = base.set_use_header().set_strict_headers().set_allow_comments().build()
    assert [list(r) for r in _read(path, with_header, budget=1)] == expected
    skipping = (CsvSchema.builder().add_number_column("id").add_string_column("name")
                .set_skip_first_data_row().set_allow_comments().build())
    assert [list(r) for r in _read(path, skipping)] == expected
    renamed = (CsvSchema.builder().add_number_column("key").add_string_column("name")
               .set_use_header().set_strict_headers().build())
    with pytest.raises(CsvFileParseError, match="header"):
        _read(path, renamed)


def test_a_record_that_does_not_fit_names_the_file_offset_and_field(tmp_path):
    schema = CsvSchema.builder().add_number_column("id").add_string_column("name").build()
    path = tmp_path / "bad.csv"
    path.write_text("1,a\n2,b\nthree,c\n")
    with pytest.raises(CsvFileParseError) as failed:
        _read(path, schema)
    assert (failed.value.path, failed.value.offset, failed.value.field) == (str(path), 8, "id")
    assert f"{path} at byte 8: field 'id'" in str(failed.value)
    assert isinstance(failed.value, FormatParseError)
    copy = pickle.loads(pickle.dumps(failed.value))  # it crosses from executors to the driver
    assert (copy.path, copy.offset, copy.field, str(copy)) == (
        failed.value.path, 8, "id", str(failed.value))
    path.write_text("1,a\n2,b,extra\n")
    with pytest.raises(CsvFileParseError, match=r"at byte 4.*3 columns"):
        _read(path, schema)
    path.write_bytes(b"1,a\n2,\xff\n")
    with pytest.raises(CsvFileParseError, match=r"at byte 4.*not UTF-8"):
        _read(path, schema)


def test_schema_builder_refuses_what_csv_cannot_hold():
    with pytest.raises(TypeError, match="number_type"):
        CsvSchema.builder().add_number_column("x", number_type=Types.STRING())
    with pytest.raises(TypeError, match="scalars"):
        CsvSchema.builder().add_array_column("x", element_type=Types.LIST(Types.INT()))
    with pytest.raises(ValueError, match="single character"):
        CsvSchema.builder().set_column_separator("||")
    with pytest.raises(ValueError, match="at least one column"):
        CsvSchema.builder().build()
    with pytest.raises(TypeError, match="CsvSchema"):
        CsvReaderFormat.for_schema(Types.ROW_NAMED(["a"], [Types.INT()]))
    schema = CsvSchema.builder().add_number_column("id").build()
    with pytest.raises(FormatParseError, match="2 fields"), open("/dev/null", "wb") as sink:
        CsvBulkWriters.for_schema(schema).create(sink).add_elements([(1, 2)])
    assert len(schema) == 1 and "id" in str(schema)
