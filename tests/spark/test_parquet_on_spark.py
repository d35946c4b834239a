"""Parquet written by a flintlock job on embedded Spark (a TaskManager killed mid-job) is read
by Spark itself: ``spark.read.parquet`` on the sink's directory gives exactly the expected
rows, with the declared column types."""

from __future__ import annotations

import datetime
import sys

import cloudpickle
import pytest

from flintlock.common.config import Configuration
from flintlock.common.typeinfo import Types
from flintlock.datastream import StreamExecutionEnvironment
from flintlock.datastream.connectors.file_system import (
    BucketAssigner,
    FileSink,
    OutputFileConfig,
)
from flintlock.datastream.formats.parquet import ParquetBulkWriters
from flintlock.testing.faults import ExitOnceAfter
from tests.integration.held_input import held_numbers, run_failing_after_a_commit

pytestmark = [pytest.mark.spark, pytest.mark.slow]
cloudpickle.register_pickle_by_value(sys.modules[__name__])

ROW = Types.ROW_NAMED(["id", "name", "day", "score"],
                      [Types.LONG(), Types.STRING(), Types.SQL_DATE(), Types.DOUBLE()])
N = 20_000


def to_row(n):
    return (n, f"n{n}", datetime.date(2026, 1, 1) + datetime.timedelta(days=n % 300), n / 4)


def test_spark_reads_the_parquet_a_job_with_a_killed_task_manager_wrote(tmp_path):
    from pyspark.sql import SparkSession

    config = Configuration().set_string("execution.checkpointing.dir", str(tmp_path / "chk"))
    config.set_string("restart-strategy.type", "fixed-delay")
    config.set_string("restart-strategy.fixed-delay.delay", "100 ms")
    config.set_string("restart-strategy.fixed-delay.attempts", "2")
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(2)
    env.enable_checkpointing(100)
    sink = (FileSink.for_bulk_format(str(tmp_path / "out"), ParquetBulkWriters.for_row_type(ROW))
            .with_bucket_assigner(BucketAssigner.base_path_bucket_assigner())
            .with_output_file_config(OutputFileConfig.builder().with_part_suffix(".parquet")
                                     .build())
            .build())
    marker = tmp_path / "died"
    # A quarter of the numbers per reader pass before the gate; the test opens it once a part
    # file is committed, so the worker that ends its process then always meets a record.
    exit_after = ExitOnceAfter(marker, tmp_path / "out" / "part-*", every=50)
    numbers, gate = held_numbers(env, tmp_path / "gate", N)
    numbers.map(exit_after).map(to_row, output_type=ROW).sink_to(sink)
    run_failing_after_a_commit(env, gate, tmp_path / "out" / "part-*", "parquet on spark")
    assert marker.exists(), "the TaskManager was never killed"

    spark = SparkSession.builder.getOrCreate()
    frame = spark.read.parquet(str(tmp_path / "out"))
    assert [(f.name, f.dataType.simpleString()) for f in frame.schema.fields] == [
        ("id", "bigint"), ("name", "string"), ("day", "date"), ("score", "double")]
    rows = sorted(tuple(r) for r in frame.collect())
    assert rows == [to_row(n) for n in range(N)]
