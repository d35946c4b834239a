"""Parquet: rows of every supported field type written by the bulk writer and read back by
the FileSource reader are the same rows, also across a restore mid-file (property-based);
values that do not fit a column raise FormatParseError naming it."""

import datetime
import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flintlock.common.typeinfo import Types
from flintlock.common.types import Row
from flintlock.datastream.connectors._file_source import FileSplit
from flintlock.datastream.formats.parquet import (
    FormatParseError,
    ParquetBulkWriterFactory,
    ParquetBulkWriters,
    ParquetColumnarRowInputFormat,
)


def _ints(bits):
    return st.integers(-(1 << (bits - 1)), (1 << (bits - 1)) - 1)


def _row(names, values):
    row = Row(*values)
    row.set_field_names(names)
    return row


FIELDS = [
    ("flag", Types.BOOLEAN(), st.booleans()),
    ("i8", Types.BYTE(), _ints(8)),
    ("i16", Types.SHORT(), _ints(16)),
    ("i32", Types.INT(), _ints(32)),
    ("i64", Types.LONG(), _ints(64)),
    ("f", Types.FLOAT(), st.floats(width=32, allow_nan=False)),
    ("d", Types.DOUBLE(), st.floats(allow_nan=False)),
    ("s", Types.STRING(), st.text()),
    ("day", Types.SQL_DATE(), st.dates()),
    ("t", Types.SQL_TIME(), st.times()),
    ("ts", Types.SQL_TIMESTAMP(), st.datetimes(min_value=datetime.datetime(1700, 1, 1))),
    ("ints", Types.LIST(Types.INT()), st.lists(st.one_of(st.none(), _ints(32)))),
    ("inner", Types.ROW_NAMED(["x", "y"], [Types.LONG(), Types.STRING()]),
     st.tuples(st.one_of(st.none(), _ints(64)), st.one_of(st.none(), st.text()))
     .map(lambda xy: _row(["x", "y"], list(xy)))),
    ("m", Types.MAP(Types.STRING(), Types.LONG()), st.dictionaries(st.text(), _ints(64))),
]
ROW = Types.ROW_NAMED([n for n, _, _ in FIELDS], [t for _, t, _ in FIELDS])
rows = st.tuples(*(st.one_of(st.none(), s) for _, _, s in FIELDS)).map(
    lambda values: _row(ROW.get_field_names(), list(values)))


def _write(path, batches, row_group_size=3):
    factory = ParquetBulkWriterFactory(ROW, row_group_size=row_group_size)  # reads cross groups
    with open(path, "wb") as stream:
        writer = factory.create(stream)
        for batch in batches:
            writer.add_elements(batch)
        writer.finish()


def _read(path, budget=2, restore_after=None):
    """Every row, in polls of ``budget``; after ``restore_after`` polls a new reader restored
    from the snapshot reads on (mid-file, mid-row-group)."""
    reader = ParquetColumnarRowInputFormat(ROW).create_split_reader()
    reader.add_splits([FileSplit(str(path))])
    reader.notify_no_more_splits()
    got = []
    for polls in range(10_000):
        if polls == restore_after:
            state = pickle.loads(pickle.dumps(reader.snapshot_state(1)))
            reader.close()
            reader = ParquetColumnarRowInputFormat(ROW).create_split_reader()
            reader.restore(state)
            reader.notify_no_more_splits()
        records, finished = reader.poll(budget)
        got.extend(records)
        if finished:
            break
    reader.close()
    return got


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(rows, max_size=4), max_size=4), st.integers(0, 8))
def test_parquet_round_trips_every_field_type(tmp_path_factory, batches, restore_after):
    path = tmp_path_factory.mktemp("pq") / "part.parquet"
    _write(path, batches)
    expected = [row for batch in batches for row in batch]
    got = _read(path, restore_after=restore_after)
    assert [list(r) for r in got] == [list(r) for r in expected]
    assert all(r.get_field_names() == ROW.get_field_names() for r in got)


def test_a_value_that_does_not_fit_its_column_names_it(tmp_path):
    factory = ParquetBulkWriters.for_row_type(Types.ROW_NAMED(["id"], [Types.INT()]))
    with open(tmp_path / "x.parquet", "wb") as stream:
        writer = factory.create(stream)
        writer.add_elements([(1,), ("two",)])
        with pytest.raises(FormatParseError, match="'id'"):
            writer.finish()
        writer.discard()
