"""CSV files on thread TaskManagers: FileSink with CsvBulkWriters commits every row once
across a crash, and FileSource with CsvReaderFormat reads those part files back exactly once
across another crash."""

import os

from flintlock.common import Duration, WatermarkStrategy
from flintlock.common.typeinfo import Types
from flintlock.datastream import CheckpointingMode
from flintlock.datastream.connectors.file_system import (
    BucketAssigner,
    FileSink,
    FileSource,
    OutputFileConfig,
)
from flintlock.datastream.formats.csv import CsvBulkWriters, CsvReaderFormat, CsvSchema
from flintlock.testing.environments import local_environment
from flintlock.testing.faults import RaiseOnceAfter
from tests.integration.held_input import (
    collect_with_a_failure_midway,
    held_numbers,
    publish,
    run_failing_after_a_commit,
)

SCHEMA = (CsvSchema.builder().add_number_column("id").add_string_column("note")
          .add_array_column("parts", element_type=Types.INT()).set_use_header().build())


def to_row(n):
    note = f'line {n}\nwith "quotes", commas' if n % 9 == 0 else f"n{n}"
    return (n, note, [n % 3, n % 7])


def test_csv_files_written_and_read_back_exactly_once_across_crashes(executor, tmp_path):
    n, out = 6000, tmp_path / "out"
    env = local_environment(tmp_path / "write", 2, restart_attempts=3)
    env.enable_checkpointing(30, CheckpointingMode.EXACTLY_ONCE)
    marker = tmp_path / "crashed-writing"
    crash = RaiseOnceAfter(marker, out / "part-*", every=50)
    sink = (FileSink.for_bulk_format(str(out), CsvBulkWriters.for_schema(SCHEMA))
            .with_bucket_assigner(BucketAssigner.base_path_bucket_assigner())
            .with_output_file_config(OutputFileConfig.builder().with_part_suffix(".csv")
                                     .build())
            .build())
    numbers, gate = held_numbers(env, tmp_path / "gate", n)
    numbers.map(crash).map(to_row, output_type=SCHEMA.row_type).sink_to(sink)
    run_failing_after_a_commit(env, gate, out / "part-*", "csv files with a crash")
    assert marker.exists(), "the failure was never injected while writing"
    parts = [name for name in os.listdir(out) if name.endswith(".csv")]
    assert len(parts) > 2
    assert all((out / name).read_text().startswith("id,note,parts\n") for name in parts)

    # Read back from a monitored directory that gets all but one part only once a checkpoint
    # has completed, so a failure that waits for one always comes mid-input.
    watched = tmp_path / "in"
    watched.mkdir()
    publish(out / parts[0], watched)
    env = local_environment(tmp_path / "read", 2, restart_attempts=3)
    env.enable_checkpointing(30, CheckpointingMode.EXACTLY_ONCE)
    marker = tmp_path / "crashed-reading"
    checkpoint = tmp_path / "read" / "chk" / "*" / "chk-*" / "_metadata"
    crash = RaiseOnceAfter(marker, checkpoint, every=50)
    source = (FileSource.for_record_stream_format(CsvReaderFormat.for_schema(SCHEMA),
                                                  str(watched))
              .monitor_continuously(Duration.of_millis(20)).build())
    stream = env.from_source(source, WatermarkStrategy.no_watermarks(), "csv").map(crash)
    rows = collect_with_a_failure_midway(stream, n, checkpoint,
                                         lambda: [publish(out / p, watched) for p in parts[1:]])
    got = sorted((r["id"], r["note"], r["parts"]) for r in rows)
    assert marker.exists(), "the failure was never injected while reading"
    assert got == [to_row(i) for i in range(n)]
