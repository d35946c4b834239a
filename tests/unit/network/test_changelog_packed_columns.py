"""The changelog serializer's packed columns (issue 33): a column of TIMESTAMP, DATE, TIME or
DECIMAL values crosses the exchange as its class once and each value's constructor arguments,
and comes back equal, value for value (time zones and ``fold`` included); mixed columns go
as they were."""

import datetime
import decimal
import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flintlock.common.types import RowKind, row_of
from flintlock.runtime.network.changelog_serializer import ChangelogRowSerializer, column_from
from flintlock.runtime.network.event_time import StampedRun
from flintlock.runtime.network.serialization import (
    CorruptChannelDataError,
    PickleBatchSerializer,
)

_ZONES = st.sampled_from([None, datetime.UTC,
                          datetime.timezone(datetime.timedelta(hours=-5))])
_COLUMNS = st.one_of(
    st.lists(st.datetimes(timezones=_ZONES, allow_imaginary=True), min_size=1, max_size=8),
    st.lists(st.dates(), min_size=1, max_size=8),
    st.lists(st.times(timezones=_ZONES), min_size=1, max_size=8),
    st.lists(st.decimals(allow_nan=False), min_size=1, max_size=8),
    st.lists(st.one_of(st.none(), st.datetimes()), min_size=1, max_size=8),
)


def _exact(value):
    """What equality ignores: the type, ``fold``, a Decimal's exponent and sign of zero."""
    if isinstance(value, datetime.datetime | datetime.time):
        return (type(value), value.isoformat(), value.fold)
    return (type(value), str(value))


@given(_COLUMNS, st.integers())
def test_a_packed_column_comes_back_value_for_value(column, other):
    records = [row_of([other, value], RowKind.UPDATE_AFTER) for value in column]
    decoded = PickleBatchSerializer().loads(ChangelogRowSerializer().dumps(records))
    assert [r.get_row_kind() for r in decoded] == [RowKind.UPDATE_AFTER] * len(column)
    assert [_exact(r[1]) for r in decoded] == [_exact(v) for v in column]
    assert [r[0] for r in decoded] == [other] * len(column)


def test_the_class_is_written_once_per_column_not_once_per_value():
    moment = datetime.datetime(2015, 7, 15, 12, 0, 0, 123000)
    records = [row_of([i, moment + datetime.timedelta(seconds=i)]) for i in range(1000)]
    chunk = bytes(ChangelogRowSerializer().dumps(records))
    assert chunk.count(b"datetime") <= 2  # module and name, once
    assert bytes(PickleBatchSerializer().dumps(records)).count(b"datetime") >= 1000


def test_an_event_time_run_packs_its_columns_too():
    moment = datetime.datetime(2015, 7, 15)
    run = StampedRun([row_of([moment, decimal.Decimal("1.50")])] * 3, [1, 2, 3])
    chunk = bytes(ChangelogRowSerializer().dumps([run]))
    assert chunk.count(b"datetime") <= 2
    decoded = PickleBatchSerializer().loads(chunk)[-1]
    assert decoded.timestamps == [1, 2, 3]
    assert [list(r) for r in decoded.values] == [[moment, decimal.Decimal("1.50")]] * 3


def test_a_corrupt_packed_column_is_a_typed_error():
    with pytest.raises(CorruptChannelDataError):
        column_from(9, [(b"x",)])
    with pytest.raises(CorruptChannelDataError):
        column_from(0, [(b"not a datetime",)])
    with pytest.raises(CorruptChannelDataError):
        pickle.loads(pickle.dumps(column_from(0, [(1,)])))
