"""FileSink with Avro container files (AvroWriters.for_generic_record) on thread
TaskManagers: a crash mid-job still commits every record exactly once, and every committed
part is a complete Avro file (fastavro reads it)."""

import os

import fastavro
import pytest

from flintlock.datastream import CheckpointingMode
from flintlock.datastream.connectors.file_system import (
    BucketAssigner,
    FileSink,
    OutputFileConfig,
)
from flintlock.datastream.formats.avro import (
    AvroSchema,
    AvroWriters,
    FormatParseError,
    GenericRecordAvroTypeInfo,
)
from flintlock.testing.environments import local_environment
from flintlock.testing.faults import RaiseOnceAfter
from tests.integration.held_input import (
    collect_with_a_failure_midway,
    held_numbers,
    run_failing_after_a_commit,
)

SCHEMA = AvroSchema.parse_string("""
{"type": "record", "name": "Reading", "fields": [
    {"name": "id", "type": "long"},
    {"name": "sensor", "type": "string"},
    {"name": "value", "type": ["null", "double"]}]}
""")


def reading(n):
    return {"id": n, "sensor": f"s{n % 7}", "value": None if n % 11 == 0 else n / 8}


def test_avro_part_files_with_a_crash_hold_every_record_once(executor, tmp_path):
    n, out = 5000, tmp_path / "out"
    env = local_environment(tmp_path, 2, restart_attempts=3)
    env.enable_checkpointing(30, CheckpointingMode.EXACTLY_ONCE)
    marker = tmp_path / "crashed"
    crash = RaiseOnceAfter(marker, out / "part-*", every=50)
    sink = (FileSink.for_bulk_format(str(out), AvroWriters.for_generic_record(SCHEMA))
            .with_bucket_assigner(BucketAssigner.base_path_bucket_assigner())
            .with_output_file_config(OutputFileConfig.builder().with_part_suffix(".avro")
                                     .build())
            .build())
    numbers, gate = held_numbers(env, tmp_path / "gate", n)
    numbers.map(crash).map(reading, output_type=GenericRecordAvroTypeInfo(SCHEMA)).sink_to(sink)
    run_failing_after_a_commit(env, gate, out / "part-*", "avro files with a crash")
    assert marker.exists(), "the failure was never injected"
    records = []
    for name in sorted(os.listdir(out)):
        if not name.startswith((".", "_")):
            with open(out / name, "rb") as f:
                records.extend(fastavro.reader(f))
    assert sorted(records, key=lambda r: r["id"]) == [reading(i) for i in range(n)]


def test_a_record_that_does_not_fit_the_schema_is_a_typed_error(tmp_path):
    with open(tmp_path / "x.avro", "wb") as stream:
        writer = AvroWriters.for_generic_record(SCHEMA).create(stream)
        with pytest.raises(FormatParseError, match="does not fit"):
            writer.add_elements([{"id": "one", "sensor": "s", "value": None}])
    with pytest.raises(TypeError, match="AvroSchema"):
        AvroWriters.for_generic_record('{"type": "record"}')


def test_create_input_reads_avro_files_exactly_once_across_a_crash(executor, tmp_path):
    """PyFlink's ``env.create_input(AvroInputFormat(path, schema))`` over a directory of Avro
    files with many blocks, in a job that also reads numbers held at a gate: the gate opens
    once a checkpoint has completed, and the numbers then meet a failure that waits for one.
    The restore resumes the Avro reading from the checkpoint: every record once."""
    from flintlock.datastream.formats.avro import AvroInputFormat
    from flintlock.testing.gates import FileGate, gated_numbers

    (tmp_path / "in").mkdir()
    for f in range(3):
        with open(tmp_path / "in" / f"part-{f}.avro", "wb") as out:
            fastavro.writer(out, SCHEMA.parsed, [reading(i) for i in range(f * 3000,
                                                                           (f + 1) * 3000)],
                            sync_interval=2000)
    env = local_environment(tmp_path, 2, restart_attempts=3)
    env.enable_checkpointing(30, CheckpointingMode.EXACTLY_ONCE)
    marker, checkpoint = tmp_path / "crashed", tmp_path / "chk" / "*" / "chk-*" / "_metadata"
    crash = RaiseOnceAfter(marker, checkpoint, every=10)
    gate = FileGate(tmp_path / "gate")
    held = gated_numbers(env, gate, 200, before_gate=0).map(lambda n: ("held", n, None, None))
    records = (env.create_input(AvroInputFormat(str(tmp_path / "in"), SCHEMA))
               .map(lambda r: ("avro", r["id"], r["sensor"], r["value"])))
    stream = records.union(held).map(crash)
    got = collect_with_a_failure_midway(stream, 9000 + 200, checkpoint, gate.open)
    assert marker.exists(), "the failure was never injected"
    assert sorted(r[1:] for r in got if r[0] == "avro") == [
        (r["id"], r["sensor"], r["value"]) for r in map(reading, range(9000))]
    assert sorted(r[1] for r in got if r[0] == "held") == list(range(200))
