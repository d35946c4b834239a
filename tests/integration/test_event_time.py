"""Event time through real jobs (TaskManagers as threads of this process): timestamps from a
watermark strategy, periodic watermarks across a keyed network exchange, event-time timers
and the timestamps of their outputs, the end of a bounded input, and a crash + restore from
a checkpoint in the middle of the stream (timers are keyed state: each fires exactly once).

The sources hold half their input at a gate until a timer fired (a periodic watermark crossed
the exchange while the stream ran) or a checkpoint completed, so the second half always meets a
running stream, however loaded the machine.
"""

import pytest

from flintlock.common import Duration, Types, WatermarkStrategy
from flintlock.common.watermark_strategy import TimestampAssigner
from flintlock.datastream import (
    CheckpointingMode,
    KeyedProcessFunction,
    ProcessFunction,
    StreamExecutionEnvironment,
)
from flintlock.datastream.state import MapStateDescriptor
from flintlock.testing.environments import local_environment
from flintlock.testing.faults import RaiseOnce
from flintlock.testing.files import completed_checkpoints
from flintlock.testing.gates import FileGate, GatedNumberSequenceSource, gated_records, open_when
from flintlock.testing.recording import Recording

MIN_LONG = -(2**63)
KEYS = 5
HALF = 1500
FIRED = Recording("event_time.fired")  # every timer that fired: (key, time, ...)


def _readings(n):
    """(key, timestamp, value): timestamps rise by 10 with a jitter below 20 (out of order by
    less than 30 ms, well inside the 50 ms bound, so no reading is ever late)."""
    return [(f"k{i % KEYS}", i * 10 + (i * 7919) % 20, i) for i in range(n)]


def _expected(readings):
    """Per key and timer time T (each reading's timestamp + 10, once per key and T): the sum
    of the key's values with a timestamp at or before T."""
    out = set()
    for key in {r[0] for r in readings}:
        mine = [r for r in readings if r[0] == key]
        for timer in {ts + 10 for _, ts, _ in mine}:
            out.add((key, timer, sum(v for _, ts, v in mine if ts <= timer), timer))
    return out


class ByTimestamp(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return value[1]


class SumAtTimer(KeyedProcessFunction):
    """Keeps the key's values by timestamp; a timer 10 ms after each reading emits the sum
    of the values at or before it (and records that it fired). Notes the largest watermark it
    saw with a record."""

    def open(self, runtime_context):
        self.values = runtime_context.get_map_state(
            MapStateDescriptor("values", Types.LONG(), Types.LONG()))

    def process_element(self, value, ctx):
        assert ctx.timestamp() == value[1]
        previous = self.values.get(value[1]) or 0
        self.values.put(value[1], previous + value[2])
        ctx.timer_service().register_event_time_timer(value[1] + 10)
        if ctx.timer_service().current_watermark() > MIN_LONG:
            yield ("watermark seen", ctx.timer_service().current_watermark())

    def on_timer(self, timestamp, ctx):
        total = sum(v for ts, v in self.values.items() if ts <= timestamp)
        FIRED.append((ctx.get_current_key(), timestamp))
        yield (ctx.get_current_key(), timestamp, total)


class WithTimestamp(ProcessFunction):
    """Behind a network exchange: each record with the timestamp it arrived with."""

    def process_element(self, value, ctx):
        yield (*value, ctx.timestamp())


def _job(stream, before_keying=None):
    if before_keying is not None:
        stream = stream.map(before_keying)
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_millis(50)) \
        .with_timestamp_assigner(ByTimestamp())
    return stream.assign_timestamps_and_watermarks(strategy).set_parallelism(1) \
        .key_by(lambda r: r[0]).process(SumAtTimer()).set_parallelism(2) \
        .process(WithTimestamp()).set_parallelism(1)


def _split(out):
    seen = [row for row in out if row[0] == "watermark seen"]
    fired = [row for row in out if row[0] != "watermark seen"]
    return seen, fired


def test_event_time_timers_fire_once_each_with_their_timestamp_across_an_exchange(
        executor, tmp_path):
    env = StreamExecutionEnvironment.get_execution_environment()
    env.get_config().set_auto_watermark_interval(10)
    readings = _readings(3000)
    # the second half waits until a periodic watermark made a timer fire mid-stream
    gate = FileGate(tmp_path / "gate")
    opener = open_when(gate, lambda: FIRED)
    held = gated_records(env, gate, readings, before_gate=HALF)
    out = list(_job(held).execute_and_collect())
    opener.join(60)
    seen, fired = _split(out)
    assert sorted(fired) == sorted(_expected(readings))
    assert len(fired) == len(set(fired))
    assert seen, "no periodic watermark reached the keyed operator while the stream ran"


def test_without_a_watermark_strategy_event_time_timers_fire_at_the_end_of_input(executor):
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    out = list(env.from_collection([("a", 1), ("b", 2), ("a", 3)])
               .key_by(lambda r: r[0]).process(_FlushAtEnd())
               .process(WithTimestamp()).set_parallelism(1).execute_and_collect())
    assert sorted(out) == [("a", [1, 3], 500, 500), ("b", [2], 500, 500)]


class _FlushAtEnd(KeyedProcessFunction):
    def open(self, runtime_context):
        self.values = runtime_context.get_map_state(
            MapStateDescriptor("v", Types.INT(), Types.INT()))

    def process_element(self, value, ctx):
        assert ctx.timestamp() == MIN_LONG
        self.values.put(value[1], value[1])
        ctx.timer_service().register_event_time_timer(500)

    def on_timer(self, timestamp, ctx):
        yield (ctx.get_current_key(), sorted(self.values.keys()), timestamp)


@pytest.mark.parametrize("unaligned", [False, True], ids=["aligned", "unaligned"])
def test_event_time_timers_survive_a_crash_and_restore_exactly_once(executor, tmp_path,
                                                                    unaligned):
    env = local_environment(tmp_path, restart_attempts=3, restart_delay="20 ms")
    env.get_config().set_auto_watermark_interval(10)
    env.enable_checkpointing(30, CheckpointingMode.EXACTLY_ONCE)
    if unaligned:  # in-flight timestamped records become channel state, and are replayed
        env.get_checkpoint_config().enable_unaligned_checkpoints()
    marker = tmp_path / "crashed"
    readings = _readings(3000)
    # the second half waits for a completed checkpoint; its first reading fails the job once
    gate = FileGate(tmp_path / "gate")
    opener = open_when(gate, lambda: completed_checkpoints(tmp_path / "chk"))
    held = gated_records(env, gate, readings, before_gate=HALF)
    crash = RaiseOnce(marker, readings[HALF])
    out = list(_job(held, before_keying=crash).execute_and_collect())
    opener.join(60)
    assert marker.exists(), "the failure was never injected"
    _, fired = _split(out)
    assert sorted(fired) == sorted(_expected(readings))


class TenTimes(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return value * 10


class CountAtTimer(KeyedProcessFunction):
    """Per parity class: a timer at each multiple of 1000 ms reached counts the numbers with a
    timestamp at or before it (and records that it fired, and whether ``gate`` was open)."""

    def __init__(self, gate):
        self.gate = gate

    def open(self, runtime_context):
        self.stamps = runtime_context.get_map_state(
            MapStateDescriptor("stamps", Types.LONG(), Types.LONG()))

    def process_element(self, value, ctx):
        self.stamps.put(ctx.timestamp(), value)
        ctx.timer_service().register_event_time_timer((ctx.timestamp() // 1000 + 1) * 1000)

    def on_timer(self, timestamp, ctx):
        FIRED.append((ctx.get_current_key(), timestamp, self.gate.is_open()))
        yield (ctx.get_current_key(), timestamp,
               sum(1 for ts in self.stamps.keys() if ts <= timestamp))


def test_from_source_honours_the_watermark_strategy_at_parallelism_two(executor, tmp_path):
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    env.get_config().set_auto_watermark_interval(5)
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(TenTimes())
    # each reader holds half its numbers until a periodic watermark made a timer fire: timers
    # that fire mid-stream count only what came before them
    gate = FileGate(tmp_path / "gate")
    opener = open_when(gate, lambda: FIRED)
    source = GatedNumberSequenceSource(0, 1999, gate, before_gate=500)
    numbers = env.from_source(source, strategy, "numbers")
    out = list(numbers.key_by(lambda n: n % 2).process(CountAtTimer(gate)).execute_and_collect())
    opener.join(60)
    assert not FIRED.items()[0][2], "no timer fired while half the input was held"
    expected = [(key, timer, sum(1 for n in range(2000) if n % 2 == key and n * 10 <= timer))
                for key in (0, 1) for timer in range(1000, 20_001, 1000)]
    assert sorted(out) == sorted(expected)
