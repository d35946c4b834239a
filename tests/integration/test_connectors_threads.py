"""Connector jobs end to end through the DataStream API, the JobManager (with the split
enumerators) and real TaskManagers hosted as threads.

A job that must fail or stop mid-stream reads from a gated source (``GatedSource``): each
reader holds part of its input until the test opens the gate, once a checkpoint completed or
output was committed, so the failure always lands between that and the end of the input."""

import glob
import os

import pytest
import redis

from flintlock.common import Duration, WatermarkStrategy
from flintlock.common.job_status import JobStatus
from flintlock.common.serialization import Encoder
from flintlock.datastream import CheckpointingMode
from flintlock.datastream.connectors.file_system import (
    BucketAssigner,
    FileSink,
    FileSource,
    OutputFileConfig,
    RollingPolicy,
    StreamFormat,
)
from flintlock.datastream.connectors.number_seq import NumberSequenceSource
from flintlock.datastream.connectors.redis import (
    DeliveryGuarantee,
    RedisStreamSink,
    RedisStreamSource,
)
from flintlock.testing.environments import local_environment
from flintlock.testing.faults import RaiseOnce, RaiseOnceAfter
from flintlock.testing.files import committed_lines, completed_checkpoints
from flintlock.testing.gates import (
    FileGate,
    GatedNumberSequenceSource,
    GatedSource,
    gated_numbers,
    open_when,
)
from flintlock.testing.recording import Recording
from flintlock.testing.waiting import poll_until, wait_until
from tests.unit.connectors.redis_server import redis_server

NEW_FILE_SEEN = Recording("connectors.new_file_seen")


def _env(tmp_path, parallelism=2, **conf):
    return local_environment(tmp_path, parallelism, restart_attempts=3, options=conf)


def _write_inputs(root, files=4, lines=500):
    expected = []
    root.mkdir(parents=True, exist_ok=True)
    for n in range(files):
        rows = [f"file{n} line{i} ü" for i in range(lines)]
        (root / f"in{n}.txt").write_text("".join(r + "\n" for r in rows), encoding="utf-8")
        expected.extend(rows)
    return expected


def _file_source(*paths):
    return FileSource.for_record_stream_format(StreamFormat.text_line_format(), *paths).build()


def _file_sink(path, part_size=4096):
    config = OutputFileConfig.builder().with_part_suffix(".txt").build()
    return (FileSink.for_row_format(str(path), Encoder.simple_string_encoder())
            .with_bucket_assigner(BucketAssigner.base_path_bucket_assigner())
            .with_rolling_policy(RollingPolicy.default_rolling_policy(part_size=part_size))
            .with_output_file_config(config)
            .build())


def test_number_sequence_at_parallelism_three(executor, tmp_path):
    env = _env(tmp_path, 3)
    numbers = env.from_source(NumberSequenceSource(1, 5000), WatermarkStrategy.no_watermarks(),
                              "numbers")
    assert sorted(numbers.execute_and_collect()) == list(range(1, 5001))


def test_number_sequence_restart_is_exactly_once(executor, tmp_path):
    env = _env(tmp_path)
    env.enable_checkpointing(30, CheckpointingMode.EXACTLY_ONCE)
    marker = tmp_path / "crashed"
    # each reader's second half (5000.. and 15000..) waits for a completed checkpoint; the
    # first number after the hold fails the job once
    gate = FileGate(tmp_path / "gate")
    opener = open_when(gate, lambda: completed_checkpoints(tmp_path / "chk"))
    numbers = gated_numbers(env, gate, 20_000, before_gate=5000)
    results = list(numbers.map(RaiseOnce(marker, 5000)).execute_and_collect())
    opener.join(60)
    assert marker.exists(), "the failure was never injected"
    assert sorted(results) == list(range(20_000))


def test_file_to_file_without_checkpointing_commits_at_the_end(executor, tmp_path):
    expected = _write_inputs(tmp_path / "in", files=3, lines=200)
    env = _env(tmp_path)
    lines = env.from_source(_file_source(str(tmp_path / "in")),
                            WatermarkStrategy.no_watermarks(), "files")
    lines.sink_to(_file_sink(tmp_path / "out"))
    env.execute("copy")
    assert sorted(committed_lines(tmp_path / "out")) == sorted(expected)


def test_file_to_file_restart_in_the_middle_is_exactly_once(executor, tmp_path):
    expected = _write_inputs(tmp_path / "in", files=4, lines=1500)
    env = _env(tmp_path)
    env.enable_checkpointing(30, CheckpointingMode.EXACTLY_ONCE)
    marker = tmp_path / "crashed"
    committed = str(tmp_path / "out" / "part-*")
    # each reader holds after 1500 lines until output was committed; a line after that fails
    # the job once
    gate = FileGate(tmp_path / "gate")
    opener = open_when(gate, lambda: glob.glob(committed))
    source = GatedSource(_file_source(str(tmp_path / "in")), gate, before_gate=1500)
    lines = env.from_source(source, WatermarkStrategy.no_watermarks(), "files")
    lines.map(RaiseOnceAfter(marker, committed, delay_s=0.0)) \
        .sink_to(_file_sink(tmp_path / "out"))
    env.execute("copy with a crash")
    opener.join(60)
    assert marker.exists(), "the failure was never injected"
    assert len(executor.launchers[-1].attempts) >= 2
    committed = committed_lines(tmp_path / "out")
    assert sorted(committed) == sorted(expected)
    assert all(name.endswith(".txt") for name in os.listdir(tmp_path / "out")
               if not name.startswith("."))


class SignalNewFile:
    def __init__(self, text):
        self.text = text

    def __call__(self, value):
        if value == self.text:
            NEW_FILE_SEEN.append(value)
        return value


def test_continuous_file_source_picks_up_a_file_added_while_running(executor, tmp_path):
    source_dir = tmp_path / "watched"
    _write_inputs(source_dir, files=1, lines=3)
    env = _env(tmp_path, 1)
    source = (FileSource.for_record_stream_format(StreamFormat.text_line_format(),
                                                  str(source_dir))
              .monitor_continuously(Duration.of_millis(50)).build())
    lines = env.from_source(source, WatermarkStrategy.no_watermarks(), "watched")
    lines.map(SignalNewFile("late arrival")).sink_to(_file_sink(tmp_path / "out"))
    env.enable_checkpointing(30)
    client = env.execute_async("watch")
    try:
        (source_dir / ".late.tmp").write_text("late arrival\n")
        os.rename(source_dir / ".late.tmp", source_dir / "late.txt")
        assert NEW_FILE_SEEN.wait_for_length(1, 30), "the new file was never read"
        assert poll_until(lambda: "late arrival" in committed_lines(tmp_path / "out")), \
            "the line of the new file was never committed"
    finally:
        client.cancel()
        client.join(30)


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory):
    with redis_server(tmp_path_factory.mktemp("redis")) as url:
        yield url


@pytest.mark.parametrize("guarantee", [DeliveryGuarantee.AT_LEAST_ONCE,
                                       DeliveryGuarantee.EXACTLY_ONCE])
def test_redis_to_redis_with_a_crash_loses_nothing(executor, tmp_path, redis_url, guarantee):
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    client.flushdb()
    expected = []
    for stream in ("in-a", "in-b", "in-c"):
        pipe = client.pipeline(transaction=False)
        for i in range(2000):
            pipe.xadd(stream, {"value": f"{stream}:{i}"})
            expected.append(f"{stream}:{i}")
        pipe.execute()
    env = _env(tmp_path)
    env.enable_checkpointing(30, CheckpointingMode.EXACTLY_ONCE)
    source = (RedisStreamSource.builder().set_url(redis_url).set_streams("in-a", "in-b", "in-c")
              .set_bounded().set_value_field("value").build())
    sink = (RedisStreamSink.builder().set_url(redis_url).set_stream("out")
            .set_delivery_guarantee(guarantee).build())
    marker = tmp_path / "crashed"
    checkpoints = tmp_path / "chk" / "*" / "chk-*" / "_metadata"
    # each reader holds after 1000 entries until a checkpoint completed; an entry after that
    # fails the job once
    gate = FileGate(tmp_path / "gate")
    opener = open_when(gate, lambda: completed_checkpoints(tmp_path / "chk"))
    held = GatedSource(source, gate, before_gate=1000)
    crash = RaiseOnceAfter(marker, checkpoints, delay_s=0.0)
    env.from_source(held, WatermarkStrategy.no_watermarks(), "redis").map(crash).sink_to(sink)
    env.execute("redis copy with a crash")
    opener.join(60)
    assert marker.exists(), "the failure was never injected"
    written = [fields["value"] for _, fields in client.xrange("out")]
    client.close()
    if guarantee is DeliveryGuarantee.EXACTLY_ONCE:
        assert sorted(written) == sorted(expected)
    else:
        assert set(written) == set(expected)


def _sequence_to_files(env, n, out, gate):
    """Numbers 0..n-1 into committed files; each source reader holds after 1000 numbers until
    ``gate`` opens, so the job is mid-stream for as long as the test wants."""
    source = GatedNumberSequenceSource(0, n - 1, gate, before_gate=1000)
    numbers = env.from_source(source, WatermarkStrategy.no_watermarks(), "numbers")
    numbers.sink_to(_file_sink(out, part_size=2048))


@pytest.mark.slow
@pytest.mark.parametrize("new_parallelism", [3, 1])
def test_stop_with_savepoint_and_resume_at_another_parallelism_is_exactly_once(
        executor, tmp_path, new_parallelism):
    n, out = 30_000, tmp_path / "out"
    gate = FileGate(tmp_path / "gate")
    env = _env(tmp_path, parallelism=2)
    env.enable_checkpointing(30)
    _sequence_to_files(env, n, out, gate)
    client = env.execute_async("first part")
    gate.wait_arrived(60)  # a reader holds: the rest of the input waits for the gate
    wait_until(lambda: committed_lines(out), 60, "no checkpoint committed output mid-stream")
    assert client.jm.wait_until_running(60)
    path = client.stop_with_savepoint(savepoint_directory=str(tmp_path / "sp")).result(60)
    assert client.jm.wait_for_status({JobStatus.FINISHED}, 60)
    first_part = len(committed_lines(out))
    assert 0 < first_part < n

    gate.open()
    env2 = _env(tmp_path / "second", parallelism=new_parallelism,
                **{"execution.state-recovery.path": path})
    env2.enable_checkpointing(30)
    _sequence_to_files(env2, n, out, gate)
    env2.execute("second part")
    assert sorted(map(int, committed_lines(out))) == list(range(n))


def test_unbounded_redis_source_delivers_entries_added_while_running(executor, tmp_path,
                                                                   redis_url):
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    client.flushdb()
    client.xadd("live", {"value": "before"})
    env = _env(tmp_path, 1)
    env.enable_checkpointing(30)
    source = (RedisStreamSource.builder().set_url(redis_url).set_streams("live")
              .set_value_field("value").build())
    sink = RedisStreamSink.builder().set_url(redis_url).set_stream("echo").build()
    env.from_source(source, WatermarkStrategy.no_watermarks(), "live").sink_to(sink)
    client_job = env.execute_async("live")

    def echoed():
        return [fields["value"] for _, fields in client.xrange("echo")]

    try:
        assert poll_until(lambda: echoed() == ["before"])
        client.xadd("live", {"value": "during"})
        assert poll_until(lambda: echoed() == ["before", "during"])
        assert client_job.jm.wait_until_running(30)
    finally:
        client_job.cancel()
        client_job.join(30)
        client.close()
