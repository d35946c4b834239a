"""Unaligned checkpoints on embedded Spark: TaskManagers in Spark's Python workers, data over
TCP. A keyed running count under backpressure (a slow operator after the keyed reduce) with
unaligned checkpoints every 100 ms crashes mid-stream; after the restart from the latest
checkpoint (channel state included) the output must equal the failure-free one exactly."""

from __future__ import annotations

import collections
import sys
import time

import cloudpickle
import pytest

from flintlock.common import WatermarkStrategy
from flintlock.common.config import Configuration
from flintlock.datastream import CheckpointingMode, StreamExecutionEnvironment
from flintlock.datastream.connectors.number_seq import NumberSequenceSource
from flintlock.testing.faults import RaiseOnce

pytestmark = [pytest.mark.spark, pytest.mark.slow]
cloudpickle.register_pickle_by_value(sys.modules[__name__])

N = 2000
KEYS = 5


def _pad(x):
    return (x % KEYS, 1, f"{x:02000d}")  # distinct strings: about 2 KB each on the wire


def _count(a, b):
    return (a[0], a[1] + b[1], a[2])


def _slow_key_and_count(record):
    time.sleep(0.001)  # the backpressure that puts in-flight data into unaligned checkpoints
    return (record[0], record[1])


def test_unaligned_checkpoints_with_a_crash_are_exactly_once_on_spark(tmp_path):
    config = Configuration().set_string("execution.checkpointing.dir", str(tmp_path / "chk"))
    settings = {
        "restart-strategy.type": "fixed-delay",
        "restart-strategy.fixed-delay.delay": "100 ms",
        "restart-strategy.fixed-delay.attempts": "2",
        "execution.checkpointing.unaligned.enabled": "true",
        "execution.buffer-timeout": "5 ms",
    }
    for key, value in settings.items():
        config.set_string(key, value)
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(2)
    env.enable_checkpointing(100, CheckpointingMode.EXACTLY_ONCE)
    marker = tmp_path / "crashed"
    results = list(
        env.from_source(NumberSequenceSource(0, N - 1), WatermarkStrategy.no_watermarks(),
                        "numbers")
        .map(_pad)
        .key_by(lambda r: r[0])
        .reduce(_count)
        .map(_slow_key_and_count)
        .map(RaiseOnce(marker, (0, N // KEYS // 2)))
        .execute_and_collect()
    )
    assert marker.exists(), "the failure was never injected"
    per_key = collections.Counter(x % KEYS for x in range(N))
    expected = sorted((k, i) for k, count in per_key.items() for i in range(1, count + 1))
    assert sorted(results) == expected
