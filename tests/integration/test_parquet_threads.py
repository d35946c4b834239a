"""FileSink with the Parquet bulk format on thread TaskManagers: part files roll on every
checkpoint, a crash mid-job still commits every row exactly once, and each committed file is a
complete Parquet file (pyarrow reads it)."""

import datetime
import os

import pyarrow.parquet as pq
import pytest

from flintlock.common import WatermarkStrategy
from flintlock.common.typeinfo import Types
from flintlock.datastream import CheckpointingMode
from flintlock.datastream.connectors.file_system import (
    BucketAssigner,
    FileSink,
    OutputFileConfig,
    RollingPolicy,
)
from flintlock.datastream.formats.parquet import ParquetBulkWriters
from flintlock.testing.environments import local_environment
from flintlock.testing.faults import RaiseOnceAfter
from tests.integration.held_input import (
    collect_with_a_failure_midway,
    held_numbers,
    publish,
    run_failing_after_a_commit,
)

ROW = Types.ROW_NAMED(["id", "name", "day", "parts"],
                      [Types.LONG(), Types.STRING(), Types.SQL_DATE(), Types.LIST(Types.INT())])


def to_row(n):
    return (n, f"n{n}" if n % 5 else None, datetime.date(2026, 1, 1 + n % 28), [n % 3, n % 7])


def parquet_sink(path, factory=None):
    return (FileSink.for_bulk_format(str(path), factory or ParquetBulkWriters.for_row_type(ROW))
            .with_bucket_assigner(BucketAssigner.base_path_bucket_assigner())
            .with_output_file_config(OutputFileConfig.builder().with_part_suffix(".parquet")
                                     .build())
            .build())


def committed_rows(path):
    rows = []
    for name in sorted(os.listdir(path)):
        if not name.startswith((".", "_")):
            rows.extend(pq.read_table(os.path.join(path, name)).to_pylist())
    return rows


def test_parquet_part_files_with_a_crash_hold_every_row_once(executor, tmp_path):
    n = 6000
    env = local_environment(tmp_path, 2, restart_attempts=3)
    env.enable_checkpointing(30, CheckpointingMode.EXACTLY_ONCE)
    marker = tmp_path / "crashed"
    crash = RaiseOnceAfter(marker, tmp_path / "out" / "part-*", every=50)
    numbers, gate = held_numbers(env, tmp_path / "gate", n)
    numbers.map(crash).map(to_row, output_type=ROW).sink_to(parquet_sink(tmp_path / "out"))
    run_failing_after_a_commit(env, gate, tmp_path / "out" / "part-*", "parquet with a crash")
    assert marker.exists(), "the failure was never injected"
    rows = committed_rows(tmp_path / "out")
    expected = [to_row(i) for i in range(n)]
    assert sorted((r["id"], r["name"], r["day"], r["parts"]) for r in rows) == [
        (i, name, day, parts) for i, name, day, parts in expected]
    assert len([f for f in os.listdir(tmp_path / "out") if f.endswith(".parquet")]) > 2


def test_bulk_formats_only_roll_on_checkpoints():
    builder = FileSink.for_bulk_format("/tmp/x", ParquetBulkWriters.for_row_type(ROW))
    with pytest.raises(TypeError, match="on_checkpoint_rolling_policy"):
        builder.with_rolling_policy(RollingPolicy.default_rolling_policy())
    with pytest.raises(TypeError, match="bulk writer factory"):
        FileSink.for_bulk_format("/tmp/x", object())
    with pytest.raises(TypeError, match="BIG_DEC"):
        ParquetBulkWriters.for_row_type(Types.ROW_NAMED(["d"], [Types.BIG_DEC()]))


def test_file_source_reads_parquet_exactly_once_across_a_crash(executor, tmp_path):
    """Three multi-row-group files in a monitored directory, two of them put there only once
    a checkpoint has completed, so a failure that waits for one always comes mid-input."""
    import pyarrow as pa

    from flintlock.common import Duration
    from flintlock.datastream.connectors.file_system import FileSource
    from flintlock.datastream.formats.parquet import ParquetColumnarRowInputFormat

    staged, watched = tmp_path / "staged", tmp_path / "in"
    staged.mkdir()
    watched.mkdir()
    expected = []
    for f in range(3):
        ids = list(range(f * 4000, (f + 1) * 4000))
        table = pa.table({"id": ids, "name": [f"n{i}" for i in ids],
                          "unread": [0.5] * len(ids)})
        pq.write_table(table, staged / f"part-{f}.parquet", row_group_size=700)
        expected.extend((i, f"n{i}") for i in ids)
    publish(staged / "part-0.parquet", watched)
    row = Types.ROW_NAMED(["id", "name"], [Types.LONG(), Types.STRING()])
    env = local_environment(tmp_path, 2, restart_attempts=3)
    env.enable_checkpointing(30, CheckpointingMode.EXACTLY_ONCE)
    marker, checkpoint = tmp_path / "crashed", tmp_path / "chk" / "*" / "chk-*" / "_metadata"
    crash = RaiseOnceAfter(marker, checkpoint, every=50)
    source = (FileSource.for_bulk_file_format(ParquetColumnarRowInputFormat(row), str(watched))
              .monitor_continuously(Duration.of_millis(20)).build())
    stream = env.from_source(source, WatermarkStrategy.no_watermarks(), "parquet").map(crash)
    rows = collect_with_a_failure_midway(
        stream, len(expected), checkpoint,
        lambda: [publish(staged / f"part-{f}.parquet", watched) for f in (1, 2)])
    assert marker.exists(), "the failure was never injected"
    assert sorted((r["id"], r["name"]) for r in rows) == sorted(expected)


def test_a_file_that_is_not_parquet_or_lacks_a_column_is_a_typed_error(tmp_path):
    import pyarrow as pa

    from flintlock.datastream.connectors._file_source import FileSplit
    from flintlock.datastream.formats.parquet import (
        ParquetColumnarRowInputFormat,
        ParquetFileError,
        ParquetSchemaError,
    )

    (tmp_path / "bad.parquet").write_bytes(b"PAR1 but not really")
    pq.write_table(pa.table({"id": [1, 2]}), tmp_path / "narrow.parquet")
    row = Types.ROW_NAMED(["id", "name"], [Types.LONG(), Types.STRING()])
    for name, error, says in (("bad.parquet", ParquetFileError, "not a readable Parquet"),
                              ("narrow.parquet", ParquetSchemaError, "no column 'name'")):
        reader = ParquetColumnarRowInputFormat(row).create_split_reader()
        reader.add_splits([FileSplit(str(tmp_path / name))])
        with pytest.raises(error, match=says) as failed:
            reader.poll(10)
        assert failed.value.path == str(tmp_path / name)
        reader.close()
