"""The group aggregation's input as columns (issue 28): ``ColumnBatch`` stands for the list of
rows it holds wherever the input side uses a batch, ``ColumnDecodingSerializer`` decodes the
changelog serializer's column form to one (and nothing else), the channel state re-encodes it
as rows, and a GROUP BY job's aggregation gets its input as columns, with the same results."""

from __future__ import annotations

import pickle
from typing import Any

import pytest

from flintlock.common.column_batches import ColumnBatch
from flintlock.common.types import Row, RowKind, row_of
from flintlock.datastream.changelog.group_agg import GroupAggFunction
from flintlock.runtime.network.changelog_serializer import (
    ChangelogRowSerializer,
    ColumnDecodingSerializer,
)
from flintlock.runtime.network.event_time import StampedRun
from flintlock.runtime.network.serialization import CorruptChannelDataError
from flintlock.runtime.tasks.channel_state_io import CheckpointableDeserializer
from flintlock.table import EnvironmentSettings, TableEnvironment
from flintlock.testing.executor import use_thread_executor

KINDS = [RowKind.INSERT, RowKind.UPDATE_BEFORE, RowKind.UPDATE_AFTER, RowKind.DELETE]


def rows(count: int, start: int = 0) -> list[Row]:
    return [row_of([i % 3, i], KINDS[i % 4]) for i in range(start, start + count)]


def plain(records: Any) -> list[tuple[RowKind, list[Any]]]:
    return [(r.get_row_kind(), list(r)) for r in records]


def decoded(records: list[Any]) -> Any:
    return ColumnDecodingSerializer().loads(ChangelogRowSerializer().dumps(records))


def test_a_column_batch_is_the_list_of_rows_it_holds() -> None:
    batch = decoded(rows(7))
    assert type(batch) is ColumnBatch and len(batch) == 7 and batch
    assert plain(batch) == plain(rows(7))
    assert plain([batch[0], batch[-1]]) == plain([rows(7)[0], rows(7)[-1]])
    part = batch[2:5]
    assert type(part) is ColumnBatch and plain(part) == plain(rows(7)[2:5])
    assert not batch[7:]
    assert batch == rows(7) and pickle.loads(pickle.dumps(batch)) == rows(7)


def test_extending_keeps_columns_for_columns_and_rows_for_anything_else() -> None:
    batch = decoded(rows(4))
    batch.extend(decoded(rows(3, 4)))
    assert batch.columns is not None and plain(batch) == plain(rows(7))
    batch.extend([row_of(["x"], RowKind.INSERT)])
    assert batch.columns is None and len(batch) == 8
    assert plain(batch)[-1] == (RowKind.INSERT, ["x"]) and plain(batch[:7]) == plain(rows(7))
    assert pickle.loads(pickle.dumps(batch)) == batch.rows()


def test_the_column_decoder_changes_only_the_column_form() -> None:
    named = [Row(a=1)]
    assert decoded(named) == named and type(decoded(named)) is list
    reader = ColumnDecodingSerializer()
    run = reader.loads(ChangelogRowSerializer().dumps([StampedRun(rows(3), [1, 2, 3])]))
    assert type(run) is list and type(run[0]) is StampedRun and reader.saw_runs
    assert plain(run[0].values) == plain(rows(3))
    data = ChangelogRowSerializer().dumps(rows(3))
    assert type(pickle.loads(data)) is list  # the switch is off outside the decoder


def test_a_corrupt_column_batch_is_a_typed_error() -> None:
    from flintlock.runtime.network.changelog_serializer import _Batch, rows_from_columns_of

    for kinds, columns in ((b"\x00\x00", [[1]]), (b"\x09", [[1]])):
        data = pickle.dumps(_Batch(rows_from_columns_of, kinds, columns))
        with pytest.raises(CorruptChannelDataError):
            ColumnDecodingSerializer().loads(data)


def test_in_flight_columns_are_stored_as_rows_any_reader_reads() -> None:
    reader = CheckpointableDeserializer(ColumnDecodingSerializer())
    batch = decoded(rows(6))
    stored = reader.encode(batch[2:])
    assert plain(CheckpointableDeserializer().deserialize(stored)) == plain(rows(6)[2:])
    assert plain(reader.deserialize(stored)) == plain(rows(6)[2:])


def test_a_group_by_jobs_aggregation_reads_its_input_as_columns(
        monkeypatch: pytest.MonkeyPatch) -> None:
    use_thread_executor(monkeypatch)
    seen: set[type] = set()
    original = GroupAggFunction.process_batch

    def recording(self: GroupAggFunction, records: Any, access: Any) -> list[Any]:
        seen.add(type(records))
        return original(self, records, access)

    monkeypatch.setattr(GroupAggFunction, "process_batch", recording)
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.get_config().set("parallelism.default", "2")
    env.execute_sql(
        "CREATE TABLE src (id BIGINT) WITH ('connector' = 'datagen', "
        "'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '3000')")
    result = env.execute_sql("SELECT MOD(id, 7) AS k, COUNT(*) AS c, SUM(id) AS s FROM src "
                             "GROUP BY MOD(id, 7)")
    final: dict[int, tuple[int, int]] = {}
    for row in result.collect():
        if row.get_row_kind() in (RowKind.INSERT, RowKind.UPDATE_AFTER):
            final[row[0]] = (row[1], row[2])
    expected = {k: (sum(1 for i in range(1, 3001) if i % 7 == k),
                    sum(i for i in range(1, 3001) if i % 7 == k)) for k in range(7)}
    assert final == expected
    assert ColumnBatch in seen
