"""Event time on embedded Spark (issue 19, the one timer service): tumbling event-time windows
and a keyed process function's event-time timers, across a keyed exchange between TaskManager
processes, fire from the watermark as they do on threads."""

from __future__ import annotations

import sys
from collections import defaultdict
from typing import Any

import cloudpickle
import pytest

from flintlock.common import Duration, WatermarkStrategy
from flintlock.common.config import Configuration
from flintlock.common.watermark_strategy import TimestampAssigner
from flintlock.datastream import KeyedProcessFunction, StreamExecutionEnvironment
from flintlock.datastream.window import TumblingEventTimeWindows

pytestmark = [pytest.mark.spark, pytest.mark.slow]
cloudpickle.register_pickle_by_value(sys.modules[__name__])

N = 3_000
KEYS = 4
SIZE = 100


class ByTimestamp(TimestampAssigner):
    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        return int(value[1])


class EndOfSecond(KeyedProcessFunction):
    """One event-time timer per key and second, however many records register it."""

    def process_element(self, value: Any, ctx: Any) -> None:
        ctx.timer_service().register_event_time_timer(value[1] // 1_000 * 1_000 + 999)

    def on_timer(self, timestamp: int, ctx: Any) -> Any:
        yield ("timer", ctx.get_current_key(), timestamp)


def _sum(a: Any, b: Any) -> Any:
    return (a[0], a[1], a[2] + b[2])


def test_event_time_windows_and_timers_on_spark(tmp_path: Any) -> None:
    config = Configuration().set_string("execution.checkpointing.dir", str(tmp_path / "chk"))
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(2)
    readings = [(f"k{i % KEYS}", i + (i * 13) % 10, 1) for i in range(N)]
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_millis(20)) \
        .with_timestamp_assigner(ByTimestamp())
    stamped = env.from_collection(readings).assign_timestamps_and_watermarks(strategy)
    windows = (stamped.key_by(lambda r: r[0])
               .window(TumblingEventTimeWindows.of(Duration.of_millis(SIZE)))
               .reduce(_sum)
               .map(lambda r: ("window", r[0], r[2])))
    timers = stamped.key_by(lambda r: r[0]).process(EndOfSecond())
    results = list(windows.union(timers).execute_and_collect())

    sums: dict[tuple[str, int], int] = defaultdict(int)
    for key, ts, value in readings:
        sums[(key, ts - ts % SIZE)] += value
    assert sorted(r for r in results if r[0] == "window") == sorted(
        ("window", key, total) for (key, _), total in sums.items())
    expected_timers = {("timer", key, ts // 1_000 * 1_000 + 999) for key, ts, _ in readings}
    fired = [r for r in results if r[0] == "timer"]
    assert sorted(fired) == sorted(expected_timers)  # each once
