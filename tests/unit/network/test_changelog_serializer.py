"""The Table planner's edge serializer: rows with kinds survive the exchange as they were, any
reader decodes its chunks, and a batch of other records falls back to a plain pickle."""

import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flintlock.common.types import Row, RowKind, row_of
from flintlock.runtime.network.changelog_serializer import (
    ChangelogRowSerializer,
    rows_from,
    rows_from_columns_of,
    stamped_run_from_columns,
)
from flintlock.runtime.network.event_time import RunDetectingSerializer, StampedRun
from flintlock.runtime.network.serialization import (
    CorruptChannelDataError,
    PickleBatchSerializer,
)

values = st.one_of(st.none(), st.integers(), st.text(max_size=5), st.floats(allow_nan=False))
rows = st.lists(st.tuples(st.sampled_from(list(RowKind)), st.lists(values, max_size=4)),
                max_size=20)


@given(rows)
def test_rows_round_trip_through_any_reader(batch):
    records = [row_of(list(v), kind) for kind, v in batch]
    chunk = ChangelogRowSerializer().dumps(records)
    decoded = PickleBatchSerializer().loads(chunk)  # the generic reader
    assert [(r.get_row_kind(), list(r)) for r in decoded] == [
        (kind, list(v)) for kind, v in batch]
    assert all(type(r) is Row for r in decoded)


def test_other_records_fall_back_to_a_plain_pickle():
    records = [row_of([1]), StampedRun([row_of([2])], [5])]
    decoded = PickleBatchSerializer().loads(ChangelogRowSerializer().dumps(records))
    assert decoded[0] == row_of([1]) and decoded[1].timestamps == [5]
    named = Row(a=1)
    assert PickleBatchSerializer().loads(ChangelogRowSerializer().dumps([named])) == [named]


def test_the_chunk_is_smaller_than_pickled_rows():
    records = [row_of([i, "x"], RowKind.UPDATE_AFTER) for i in range(1000)]
    assert len(ChangelogRowSerializer().dumps(records)) < len(
        PickleBatchSerializer().dumps(records))


def test_a_corrupt_batch_is_a_typed_error():
    with pytest.raises(CorruptChannelDataError):
        rows_from(b"\x00\x01", [[1]])
    with pytest.raises(CorruptChannelDataError):
        rows_from(b"\x09", [[1]])
    with pytest.raises(CorruptChannelDataError):
        pickle.loads(pickle.dumps(_Bad()))


class _Bad:
    def __reduce__(self):
        return (rows_from, (b"\x00", [[1], [2]]))


def test_rows_of_one_width_go_as_columns_and_others_as_value_lists():
    same = [row_of([i, "x"], RowKind.UPDATE_AFTER) for i in range(3)]
    assert b"rows_from_columns_of" in bytes(ChangelogRowSerializer().dumps(same))
    mixed = [row_of([1]), row_of([1, 2], RowKind.DELETE)]
    chunk = ChangelogRowSerializer().dumps(mixed)
    assert b"rows_from_columns_of" not in bytes(chunk)
    assert [(r.get_row_kind(), list(r)) for r in PickleBatchSerializer().loads(chunk)] == [
        (RowKind.INSERT, [1]), (RowKind.DELETE, [1, 2])]


def test_a_corrupt_column_batch_is_a_typed_error():
    with pytest.raises(CorruptChannelDataError):
        rows_from_columns_of(b"\x00\x01", [[1]])
    with pytest.raises(CorruptChannelDataError):
        rows_from_columns_of(b"\x09", [[1]])


@given(st.lists(st.tuples(st.sampled_from(list(RowKind)), st.integers(), st.text(max_size=3)),
                max_size=20),
       st.lists(st.integers(min_value=-(2**63), max_value=2**63 - 1), min_size=20, max_size=20))
def test_an_event_time_run_of_rows_goes_as_columns_and_comes_back_as_its_run(batch, times):
    run = StampedRun([row_of([i, s], kind) for kind, i, s in batch], times[:len(batch)])
    chunk = ChangelogRowSerializer().dumps([row_of([0]), run])
    decoded = RunDetectingSerializer().loads(chunk)
    assert decoded[0] == row_of([0]) and type(decoded[1]) is StampedRun
    assert [(r.get_row_kind(), list(r)) for r in decoded[1].values] == [
        (kind, [i, s]) for kind, i, s in batch]
    assert all(type(r) is Row for r in decoded[1].values)
    assert decoded[1].timestamps == times[:len(batch)]
    if batch:  # not a pickle of each row
        assert b"stamped_run_from_columns" in bytes(chunk)


def test_a_run_of_rows_of_several_widths_falls_back_to_a_plain_pickle():
    run = StampedRun([row_of([1]), row_of([1, 2])], [3, 4])
    decoded = PickleBatchSerializer().loads(ChangelogRowSerializer().dumps([run]))
    assert decoded[0].values == run.values and decoded[0].timestamps == [3, 4]


def test_a_run_with_a_timestamp_missing_is_a_typed_error():
    with pytest.raises(CorruptChannelDataError):
        stamped_run_from_columns(b"\x00\x00", [[1, 2]], [5])
