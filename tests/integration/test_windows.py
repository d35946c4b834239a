"""Windows through real jobs (TaskManagers as threads of this process): event-time tumbling,
sliding and session windows across a keyed exchange, count windows over the whole stream, late
data to a side output, and window contents and timers restored after a crash mid-stream.

The event-time jobs hold the second half of their readings at a gate until a window fired (a
watermark crossed the keyed exchange while the stream ran) or, in the crash test, until a
checkpoint completed: never a slowdown that a fast or loaded machine could outrun.
"""

import os
import time
from collections import defaultdict

from flintlock.common import Duration, Types, WatermarkStrategy
from flintlock.common.watermark_strategy import TimestampAssigner
from flintlock.datastream import (
    AggregateFunction,
    AllWindowFunction,
    CheckpointingMode,
    MapFunction,
    OutputTag,
    ProcessWindowFunction,
    StreamExecutionEnvironment,
    WindowFunction,
)
from flintlock.datastream.connectors import Source
from flintlock.datastream.window import (
    EventTimeSessionWindows,
    SlidingEventTimeWindows,
    TumblingEventTimeWindows,
)
from flintlock.testing.environments import local_environment
from flintlock.testing.faults import RaiseOnce
from flintlock.testing.files import completed_checkpoints
from flintlock.testing.gates import FileGate, gated_records, open_when
from flintlock.testing.recording import Recording

FIRED = Recording("windows.fired")  # per window result: whether the gate was open then


def _readings(n, keys=4):
    """(key, timestamp, value), timestamps rising by 7 with a jitter below 20 (inside the
    30 ms bound: nothing is late)."""
    return [(f"k{i % keys}", i * 7 + (i * 31) % 20, i) for i in range(n)]


class ByTimestamp(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return value[1]


def _stamped(stream, before=None):
    """Timestamped readings of ``stream`` (one source subtask), through ``before`` if given;
    the keyed operators after it run at the job's parallelism."""
    if before is not None:
        stream = stream.map(before).set_parallelism(1)
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_millis(30)) \
        .with_timestamp_assigner(ByTimestamp())
    return stream.assign_timestamps_and_watermarks(strategy).set_parallelism(1)


class NoteFired(MapFunction):
    """Passes window results on, recording for each whether ``gate`` was open."""

    def __init__(self, gate):
        self.gate = gate

    def map(self, value):
        FIRED.append(self.gate.is_open())
        return value


def _windows_mid_stream(env, tmp_path, readings, window):
    """The output of ``window`` (keyed, timestamped readings → window results), the second
    half of the readings held at a gate until a window fired; checks one did while they were
    held, so windows fired mid-stream and not only at the end of the input."""
    gate = FileGate(tmp_path / "gate")
    opener = open_when(gate, lambda: FIRED)
    held = gated_records(env, gate, readings, before_gate=len(readings) // 2)
    keyed = _stamped(held).key_by(lambda r: r[0])
    out = list(window(keyed).map(NoteFired(gate)).execute_and_collect())
    opener.join(60)
    assert not FIRED.items()[0], "no window fired while half the input was held"
    return out


def _tumbling_model(readings, size):
    sums = defaultdict(int)
    for key, ts, value in readings:
        sums[(key, ts - ts % size)] += value
    return sorted((key, start, total) for (key, start), total in sums.items())


class Label(WindowFunction):
    def apply(self, key, window, inputs):
        for total in inputs:
            yield (key, window.start, total[2])


def _sum(a, b):
    return (a[0], a[1], a[2] + b[2])


def test_tumbling_event_time_windows_across_a_keyed_exchange(executor, tmp_path):
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    env.get_config().set_auto_watermark_interval(10)
    readings = _readings(2000)
    out = _windows_mid_stream(env, tmp_path, readings, lambda keyed: keyed.window(
        TumblingEventTimeWindows.of(Duration.of_millis(100))).reduce(
        _sum, window_function=Label()))
    assert sorted(out) == _tumbling_model(readings, 100)


class Mean(AggregateFunction):
    def create_accumulator(self):
        return (0, 0)

    def add(self, value, accumulator):
        return (accumulator[0] + value[2], accumulator[1] + 1)

    def get_result(self, accumulator):
        return accumulator[0] / accumulator[1]

    def merge(self, a, b):
        return (a[0] + b[0], a[1] + b[1])


class WithWindow(ProcessWindowFunction):
    def process(self, key, context, elements):
        for mean in elements:
            yield (key, context.window().start, context.window().end, mean)


def test_sliding_windows_aggregate_with_a_process_window_function(executor, tmp_path):
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    env.get_config().set_auto_watermark_interval(10)
    readings = _readings(800)
    sliding = SlidingEventTimeWindows.of(Duration.of_millis(100), Duration.of_millis(50))
    out = _windows_mid_stream(env, tmp_path, readings, lambda keyed: keyed.window(
        sliding).aggregate(Mean(), window_function=WithWindow()))
    expected = defaultdict(list)
    for key, ts, value in readings:
        last = ts - ts % 50
        for start in (last, last - 50):
            expected[(key, start)].append(value)
    assert sorted(out) == sorted((key, start, start + 100, sum(v) / len(v))
                                 for (key, start), v in expected.items())


def test_session_windows_merge_across_a_keyed_exchange(executor, tmp_path):
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    env.get_config().set_auto_watermark_interval(5)
    # per key: bursts of timestamps 3 apart, bursts 100 apart, out of order within a burst
    readings = [(f"k{key}", burst * 100 + (step * 7) % 10 * 3 + key, 1)
                for burst in range(20) for key in range(3) for step in range(10)]
    out = _windows_mid_stream(env, tmp_path, readings, lambda keyed: keyed.window(
        EventTimeSessionWindows.with_gap(Duration.of_millis(20))).reduce(
        _sum, window_function=Label()))
    assert sorted(out) == sorted((f"k{key}", burst * 100 + key, 10)
                                 for burst in range(20) for key in range(3))


def test_count_windows_over_the_whole_stream(executor):
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    numbers = env.from_collection(list(range(10))).rebalance().map(lambda n: n)
    tumbling = list(numbers.count_window_all(4).reduce(lambda a, b: a + b)
                    .execute_and_collect())
    assert len(tumbling) == 2  # two full windows of 4; the last 2 elements are dropped
    assert 0 + 1 + 2 + 3 + 4 + 5 + 6 + 7 <= sum(tumbling) <= 2 + 3 + 4 + 5 + 6 + 7 + 8 + 9
    numbers = env.from_collection(list(range(7)))
    sliding = list(numbers.count_window_all(3, 2).apply(_AllValues()).execute_and_collect())
    assert sliding == [[0, 1], [1, 2, 3], [3, 4, 5]]


class _AllValues(AllWindowFunction):
    def apply(self, window, inputs):
        yield list(inputs)


class LateAfterMarker(Source):
    """One record, emitted only once ``marker`` exists; idle until then."""

    def __init__(self, marker, record):
        self.marker = str(marker)
        self.record = record

    def create_reader(self, subtask_index, parallelism):
        return _LateReader(self.marker, self.record if subtask_index == 0 else None)


class _LateReader:
    def __init__(self, marker, record):
        self.marker = marker
        self.record = record
        self.deadline = time.monotonic() + 20

    def restore(self, state):
        pass

    def poll(self, max_records):
        if self.record is None:
            return [], True
        if not os.path.exists(self.marker) and time.monotonic() < self.deadline:
            return [], False
        record, self.record = self.record, None
        return [record], True

    def snapshot_state(self, checkpoint_id):
        return []


class MarkWhenFired(MapFunction):
    def __init__(self, marker):
        self.marker = str(marker)

    def map(self, value):
        open(self.marker, "w").close()
        return value


def test_late_data_goes_to_the_side_output(executor, tmp_path):
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    env.get_config().set_auto_watermark_interval(5)
    marker = tmp_path / "fired"
    on_time = env.from_collection([("a", 10, 1), ("a", 20, 2), ("a", 500, 3)])
    late_strategy = WatermarkStrategy.for_monotonous_timestamps() \
        .with_timestamp_assigner(ByTimestamp()).with_idleness(Duration.of_millis(20))
    late = env.from_source(LateAfterMarker(marker, ("a", 30, 99)), late_strategy, "late")
    stamped = on_time.assign_timestamps_and_watermarks(
        WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(ByTimestamp()))
    tag = OutputTag("late", Types.PICKLED_BYTE_ARRAY())
    windowed = stamped.union(late).key_by(lambda r: r[0]) \
        .window(TumblingEventTimeWindows.of(Duration.of_millis(100))) \
        .side_output_late_data(tag).reduce(_sum, window_function=Label())
    fired = windowed.map(MarkWhenFired(marker))
    results = list(fired.union(windowed.get_side_output(tag).map(lambda r: ("late", r)))
                   .execute_and_collect())
    assert sorted(results, key=str) == sorted(
        [("a", 0, 3), ("a", 500, 3), ("late", ("a", 30, 99))], key=str)


def test_window_contents_and_timers_survive_a_crash_and_restore(executor, tmp_path):
    env = local_environment(tmp_path, 2, restart_attempts=3, restart_delay="20 ms",
                            options={"state.backend.type": "rocksdb"})
    env.get_config().set_auto_watermark_interval(10)
    env.enable_checkpointing(30, CheckpointingMode.EXACTLY_ONCE)
    marker = tmp_path / "crashed"
    readings = _readings(3000)
    # the second half waits for a completed checkpoint; its first reading fails the job once
    gate = FileGate(tmp_path / "gate")
    opener = open_when(gate, lambda: completed_checkpoints(tmp_path / "chk"))
    held = gated_records(env, gate, readings, before_gate=1500)
    crash = RaiseOnce(marker, readings[1500])
    out = list(_stamped(held, before=crash).key_by(lambda r: r[0])
               .window(TumblingEventTimeWindows.of(Duration.of_millis(500)))
               .apply(_Sum()).execute_and_collect())
    opener.join(60)
    assert marker.exists(), "the failure was never injected"
    assert sorted(out) == _tumbling_model(readings, 500)


class _Sum(WindowFunction):
    def apply(self, key, window, inputs):
        yield (key, window.start, sum(r[2] for r in inputs))
