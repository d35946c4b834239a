"""Window evictors in jobs (issue 27): the scenarios of ``EvictorsOracle.java`` run on
flintlock (TaskManagers as threads) print what Java Flink 2.3.0 printed (``expected.txt``,
written by ``generate_expected.py``; PyFlink 2.3.0 has no Python evictors, so the oracle is
Flink's Java API of the same release).

Count, delta, time (before and after the function, with and without timestamps) and a custom
evictor on keyed global and tumbling event-time windows, with a process window function, a
reduce and an aggregate; line by line, in order — except that where windows of different keys
fire on the same watermark (the tumbling scenarios), each key's lines are compared in order but
not their interleaving: Flink fires equal-time timers of different keys in the order of its
key-group timer heaps, flintlock's timer service in another (not an evictor matter).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from flintlock.common import Duration, Types, WatermarkStrategy
from flintlock.common.config import Configuration
from flintlock.common.watermark_strategy import TimestampAssigner
from flintlock.datastream import StreamExecutionEnvironment
from flintlock.datastream.functions import AggregateFunction, ProcessWindowFunction
from flintlock.datastream.window import (
    CountEvictor,
    CountTrigger,
    DeltaEvictor,
    Evictor,
    GlobalWindows,
    TimeEvictor,
    TumblingEventTimeWindows,
)
from flintlock.testing.executor import use_thread_executor

EXPECTED = Path(__file__).resolve().parent / "expected.txt"
KEYS = ["red", "blue", "red", "red", "blue", "red", "blue", "blue", "red", "blue", "red", "red",
        "blue", "red"]
VALUES = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7]
PAIR = Types.TUPLE([Types.STRING(), Types.INT()])


class ListElements(ProcessWindowFunction):
    def process(self, key, context, elements):
        yield f"{key} {[value for _, value in elements]}"


class OddsOutOldestGone(Evictor):
    def evict_before(self, elements, size, window, evictor_context):
        elements[:] = [e for e in elements if e.get_value()[1] % 2 == 0]

    def evict_after(self, elements, size, window, evictor_context):
        del elements[:1]


class CountAndSum(AggregateFunction):
    def create_accumulator(self):
        return 0, 0

    def add(self, value, accumulator):
        return accumulator[0] + 1, accumulator[1] + value[1]

    def get_result(self, accumulator):
        return f"n={accumulator[0]} sum={accumulator[1]}"

    def merge(self, a, b):
        return a[0] + b[0], a[1] + b[1]


class ThirdField(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return value[2]


def scores(env):
    return env.from_collection(list(zip(KEYS, VALUES, strict=True)), type_info=PAIR) \
        .key_by(lambda score: score[0], key_type=Types.STRING())


def timed_scores(env):
    timed = [(key, value, 2 * i) for i, (key, value) in enumerate(zip(KEYS, VALUES, strict=True))]
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(ThirdField())
    return env.from_collection(timed, type_info=Types.TUPLE(
        [Types.STRING(), Types.INT(), Types.LONG()])) \
        .assign_timestamps_and_watermarks(strategy) \
        .map(lambda t: (t[0], t[1]), output_type=PAIR) \
        .key_by(lambda score: score[0], key_type=Types.STRING())


def every_three(keyed):
    return keyed.window(GlobalWindows.create()).trigger(CountTrigger.of(3))


def tumbling_ten(keyed):
    return keyed.window(TumblingEventTimeWindows.of(Duration.of_millis(10)))


def as_line(pair):
    return f"{pair[0]} {pair[1]}"


def add(a, b):
    return a[0], a[1] + b[1]


SCENARIOS = [
    ("count evictor 2, every 3",
     lambda env: every_three(scores(env)).evictor(CountEvictor.of(2)).process(
         ListElements(), Types.STRING())),
    ("count evictor 2 after, every 3",
     lambda env: every_three(scores(env)).evictor(CountEvictor.of(2, True)).process(
         ListElements(), Types.STRING())),
    ("delta evictor 4, every 3",
     lambda env: every_three(scores(env)).evictor(
         DeltaEvictor.of(4.0, lambda a, b: abs(a[1] - b[1]))).process(
         ListElements(), Types.STRING())),
    ("custom evictor, every 3",
     lambda env: every_three(scores(env)).evictor(OddsOutOldestGone()).process(
         ListElements(), Types.STRING())),
    ("count evictor 1, every 3, reduce",
     lambda env: every_three(scores(env)).evictor(CountEvictor.of(1)).reduce(add).map(
         as_line, Types.STRING())),
    ("count evictor 0, every 3, aggregate",
     lambda env: every_three(scores(env)).evictor(CountEvictor.of(0)).aggregate(
         CountAndSum(), output_type=Types.STRING())),
    ("time evictor 3 ms, tumbling 10 ms",
     lambda env: tumbling_ten(timed_scores(env)).evictor(
         TimeEvictor.of(Duration.of_millis(3))).process(ListElements(), Types.STRING())),
    ("time evictor 3 ms after, tumbling 10 ms, sum",
     lambda env: tumbling_ten(timed_scores(env)).evictor(
         TimeEvictor.of(Duration.of_millis(3), True)).reduce(add).map(as_line, Types.STRING())),
    ("time evictor 1 ms, no timestamps, every 3",
     lambda env: every_three(scores(env)).evictor(TimeEvictor.of(Duration.of_millis(1))).process(
         ListElements(), Types.STRING())),
]


@pytest.fixture
def env(monkeypatch, tmp_path):
    use_thread_executor(monkeypatch)
    environment = StreamExecutionEnvironment.get_execution_environment(
        Configuration({"execution.checkpointing.dir": str(tmp_path)}))
    environment.set_parallelism(1)
    return environment


def by_scenario(lines):
    """{title: its lines}; a tumbling scenario's lines grouped by key, each key's in order."""
    scenarios, title = {}, None
    for line in lines:
        if line.startswith("== "):
            title = line[3:]
            scenarios[title] = []
        else:
            scenarios[title].append(line)
    for name in scenarios:
        if "tumbling" in name:
            scenarios[name].sort(key=lambda line: line.split()[0])
    return scenarios


def test_the_scenarios_print_what_java_flink_printed(env):
    lines = []
    for title, build in SCENARIOS:
        lines.append(f"== {title}")
        with build(env).execute_and_collect(title) as results:
            lines.extend(str(result) for result in results)
    expected = by_scenario(EXPECTED.read_text(encoding="utf-8").splitlines())
    assert list(expected) == [title for title, _ in SCENARIOS]
    assert by_scenario(lines) == expected


def test_evictor_takes_only_an_evictor(env):
    with pytest.raises(TypeError, match="Evictor"):
        every_three(scores(env)).evictor(lambda elements: None)
