"""Connector jobs on embedded Spark: the enumerators run in the driver's JobManager, readers
and writers in Spark's Python workers; a worker killed in the middle of the job is restarted
and the output is still exactly once. Each reader holds half its input at a gate until output
was committed or a checkpoint completed, so the kill always lands before the end."""

from __future__ import annotations

import glob
import sys

import cloudpickle
import pytest
import redis

from flintlock.common import WatermarkStrategy
from flintlock.common.config import Configuration
from flintlock.common.serialization import Encoder
from flintlock.datastream import StreamExecutionEnvironment
from flintlock.datastream.connectors.file_system import (
    BucketAssigner,
    FileSink,
    FileSource,
    RollingPolicy,
    StreamFormat,
)
from flintlock.datastream.connectors.redis import (
    DeliveryGuarantee,
    RedisStreamSink,
    RedisStreamSource,
)
from flintlock.testing.faults import ExitOnceAfter
from flintlock.testing.files import committed_lines, completed_checkpoints
from flintlock.testing.gates import FileGate, GatedSource, open_when
from tests.unit.connectors.redis_server import redis_server

pytestmark = [pytest.mark.spark, pytest.mark.slow]
cloudpickle.register_pickle_by_value(sys.modules[__name__])


def _env(tmp_path, parallelism=2):
    config = Configuration().set_string("execution.checkpointing.dir", str(tmp_path / "chk"))
    config.set_string("restart-strategy.type", "fixed-delay")
    config.set_string("restart-strategy.fixed-delay.delay", "100 ms")
    config.set_string("restart-strategy.fixed-delay.attempts", "2")
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(parallelism)
    env.enable_checkpointing(100)
    return env


def test_file_to_file_with_a_killed_task_manager_is_exactly_once(tmp_path):
    expected = []
    (tmp_path / "in").mkdir()
    for n in range(4):
        rows = [f"file{n} line{i}" for i in range(2000)]
        (tmp_path / "in" / f"{n}.txt").write_text("".join(r + "\n" for r in rows))
        expected.extend(rows)
    env = _env(tmp_path)
    source = FileSource.for_record_stream_format(StreamFormat.text_line_format(),
                                                 str(tmp_path / "in")).build()
    sink = (FileSink.for_row_format(str(tmp_path / "out"), Encoder.simple_string_encoder())
            .with_bucket_assigner(BucketAssigner.base_path_bucket_assigner())
            .with_rolling_policy(RollingPolicy.default_rolling_policy(part_size=8192))
            .build())
    marker = tmp_path / "died"
    committed = str(tmp_path / "out" / "part-*")
    gate = FileGate(tmp_path / "gate")
    opener = open_when(gate, lambda: glob.glob(committed))
    exit_after = ExitOnceAfter(marker, committed, delay_s=0.0)
    env.from_source(GatedSource(source, gate, 2000), WatermarkStrategy.no_watermarks(),
                    "files").map(exit_after).sink_to(sink)
    env.execute("files on spark")
    opener.join(60)
    assert marker.exists(), "the TaskManager was never killed"
    assert sorted(committed_lines(tmp_path / "out")) == sorted(expected)


def test_redis_to_redis_exactly_once_on_spark(tmp_path):
    with redis_server(tmp_path / "redis") as url:
        client = redis.Redis.from_url(url, decode_responses=True)
        expected = []
        for stream in ("a", "b"):
            pipe = client.pipeline(transaction=False)
            for i in range(3000):
                pipe.xadd(stream, {"value": f"{stream}{i}"})
                expected.append(f"{stream}{i}")
            pipe.execute()
        env = _env(tmp_path)
        source = (RedisStreamSource.builder().set_url(url).set_streams("a", "b").set_bounded()
                  .set_value_field("value").build())
        sink = (RedisStreamSink.builder().set_url(url).set_stream("out")
                .set_delivery_guarantee(DeliveryGuarantee.EXACTLY_ONCE).build())
        marker = tmp_path / "died"
        exit_after = ExitOnceAfter(
            marker, tmp_path / "chk" / "*" / "chk-*" / "_metadata", delay_s=0.0)
        gate = FileGate(tmp_path / "gate")
        opener = open_when(gate, lambda: completed_checkpoints(tmp_path / "chk"))
        env.from_source(GatedSource(source, gate, 1500), WatermarkStrategy.no_watermarks(),
                        "redis").map(exit_after).sink_to(sink)
        env.execute("redis on spark")
        opener.join(60)
        written = [fields["value"] for _, fields in client.xrange("out")]
        client.close()
    assert marker.exists(), "the TaskManager was never killed"
    assert sorted(written) == sorted(expected)
