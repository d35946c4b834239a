"""Event time inside operators: timestamps kept per output, the timestamp assigner and its
periodic watermarks, idleness, and event-time timers of keyed process functions."""

import pytest

from flintlock.common.operator_spec import OperatorKind, OperatorSpec
from flintlock.common.time import Duration
from flintlock.common.watermark_strategy import TimestampAssigner, WatermarkStrategy
from flintlock.datastream.functions import (
    KeyedProcessFunction,
    TimeDomain,
    wrap_filter,
    wrap_flat_map,
    wrap_map,
)
from flintlock.runtime.network.event_time import MAX_WATERMARK, NO_TIMESTAMP, TimestampedBatch
from flintlock.runtime.state.heap import HeapKeyedStateBackend
from flintlock.runtime.state.keygroups import KeyGroupRange
from flintlock.runtime.tasks.operator import TaskEnvironment
from flintlock.runtime.tasks.watermarks import InvalidTimestampError
from flintlock.testing.operators import (
    ManualTimers,
    MemoryStateWriter,
    open_operator,
)


def _run(spec, keyed=False, timers=None, interval=200, backend=None):
    if keyed and backend is None:
        backend = HeapKeyedStateBackend(KeyGroupRange(0, 127), 128)
    return open_operator(
        spec, timers=timers or ManualTimers(), keyed_backend=backend,
        key_selectors=(lambda v: v[0],) if keyed else (),
        environment=TaskEnvironment(auto_watermark_interval_ms=interval))


class Second(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return value[1]


def test_map_filter_and_flat_map_keep_each_records_timestamp():
    batch = TimestampedBatch([("a", 1), ("b", 2), ("c", 3)], [10, 20, 30])
    mapper, out = _run(OperatorSpec(OperatorKind.MAP, function=wrap_map(lambda v: v[0])))
    mapper.process_batch(batch)
    assert out.records() == [("a", 10), ("b", 20), ("c", 30)]
    kept, out = _run(OperatorSpec(OperatorKind.FILTER, function=wrap_filter(lambda v: v[1] != 2)))
    kept.process_batch(batch)
    assert out.records() == [(("a", 1), 10), (("c", 3), 30)]
    flat, out = _run(OperatorSpec(OperatorKind.FLAT_MAP,
                                  function=wrap_flat_map(lambda v: [v[0]] * v[1])))
    flat.process_batch(batch)
    assert out.records() == [("a", 10), ("b", 20), ("b", 20), ("c", 30), ("c", 30), ("c", 30)]


def test_a_plain_batch_stays_plain():
    mapper, out = _run(OperatorSpec(OperatorKind.MAP, function=wrap_map(str)))
    mapper.process_batch([1, 2])
    assert out.records() == [("1", NO_TIMESTAMP), ("2", NO_TIMESTAMP)]


def test_the_assigner_stamps_records_and_emits_periodic_bounded_watermarks():
    timers = ManualTimers()
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_millis(5)) \
        .with_timestamp_assigner(Second())
    operator, out = _run(OperatorSpec(OperatorKind.TIMESTAMPS, watermark_strategy=strategy),
                         timers=timers, interval=100)
    operator.process_batch([("a", 100), ("b", 120), ("c", 110)])
    assert out.records() == [(("a", 100), 100), (("b", 120), 120), (("c", 110), 110)]
    assert out.watermarks() == []
    timers.advance(100)
    assert out.watermarks() == [114]  # largest 120 - 5 - 1
    timers.advance(100)
    assert out.watermarks() == [114]  # nothing new: not emitted again
    operator.process_batch([("d", 200)])
    timers.advance(100)
    assert out.watermarks() == [114, 194]


def test_upstream_watermarks_are_dropped_but_the_maximum_ends_event_time():
    timers = ManualTimers()
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(Second())
    operator, out = _run(OperatorSpec(OperatorKind.TIMESTAMPS, watermark_strategy=strategy),
                         timers=timers)
    operator.process_batch([("a", 50)])
    operator.process_watermark(1_000)
    assert out.watermarks() == []
    operator.process_watermark(MAX_WATERMARK)
    assert out.watermarks() == [MAX_WATERMARK]  # the maximum alone: it subsumes 49, as in Flink
    timers.advance(1_000)
    assert out.watermarks() == [MAX_WATERMARK]  # periodic emission stopped


def test_idleness_marks_the_output_idle_until_the_next_record():
    timers = ManualTimers()
    strategy = WatermarkStrategy.for_monotonous_timestamps() \
        .with_timestamp_assigner(Second()).with_idleness(Duration.of_millis(300))
    operator, out = _run(OperatorSpec(OperatorKind.TIMESTAMPS, watermark_strategy=strategy),
                         timers=timers, interval=100)
    operator.process_batch([("a", 10)])
    timers.advance(100)
    timers.advance(100)
    assert ("idle", True) not in out.events
    timers.advance(100)
    assert out.events[-1] == ("idle", True)
    operator.process_batch([("b", 20)])
    assert ("idle", False) in out.events
    timers.advance(100)
    assert out.watermarks()[-1] == 19


@pytest.mark.parametrize("bad", ["soon", True, 1.5, None])
def test_an_assigner_returning_no_int_is_a_typed_error(bad):
    class Bad(TimestampAssigner):
        def extract_timestamp(self, value, record_timestamp):
            return value[1] if value[0] == "ok" else bad

    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(Bad())
    operator, _ = _run(OperatorSpec(OperatorKind.TIMESTAMPS, watermark_strategy=strategy))
    with pytest.raises(InvalidTimestampError, match="must return an int"):
        operator.process_batch([("ok", 1), ("a", 1), ("ok", 2)])


def test_an_assigner_may_return_an_int_subclass():
    import enum

    class Millis(enum.IntEnum):
        TEN = 10

    class Enumerated(TimestampAssigner):
        def extract_timestamp(self, value, record_timestamp):
            return Millis.TEN if value[0] == "enum" else value[1]

    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(
        Enumerated())
    operator, out = _run(OperatorSpec(OperatorKind.TIMESTAMPS, watermark_strategy=strategy))
    operator.process_batch([("a", 5), ("enum", 0)])
    assert [timestamp for _, timestamp in out.records()] == [5, 10]


class Timed(KeyedProcessFunction):
    """Registers an event-time timer 10 after each record and reports what fires."""

    def process_element(self, value, ctx):
        ctx.timer_service().register_event_time_timer(ctx.timestamp() + 10)
        if value[1] == "delete":
            ctx.timer_service().delete_event_time_timer(ctx.timestamp() + 10)
        yield f"{value[0]}@{ctx.timestamp()} wm={ctx.timer_service().current_watermark()}"

    def on_timer(self, timestamp, ctx):
        assert ctx.time_domain() is TimeDomain.EVENT_TIME
        yield f"{ctx.get_current_key()} timer {timestamp} ts={ctx.timestamp()}"


def _keyed_process(backend=None):
    spec = OperatorSpec(OperatorKind.KEYED_PROCESS, function=Timed(), keyed=True)
    return _run(spec, keyed=True, backend=backend)


def test_event_time_timers_fire_when_the_watermark_passes_them_in_time_order():
    operator, out = _keyed_process()
    operator.process_batch(TimestampedBatch([("a", ""), ("b", ""), ("a", "")], [100, 95, 130]))
    operator.process_watermark(105)
    operator.process_watermark(110)
    assert out.events[3:] == [
        ("record", "b timer 105 ts=105", 105), ("watermark", 105),
        ("record", "a timer 110 ts=110", 110), ("watermark", 110)]
    operator.process_batch(TimestampedBatch([("b", "")], [200]))
    assert out.records()[-1] == ("b@200 wm=110", 200)
    operator.process_watermark(MAX_WATERMARK)
    assert [r for r, _ in out.records()[-2:]] == ["a timer 140 ts=140", "b timer 210 ts=210"]


def test_a_deleted_event_time_timer_does_not_fire():
    operator, out = _keyed_process()
    operator.process_batch(TimestampedBatch([("a", "delete")], [100]))
    operator.process_watermark(MAX_WATERMARK)
    assert [r for r, _ in out.records()] == ["a@100 wm=-9223372036854775808"]


def test_event_time_timers_are_keyed_state_and_survive_a_restore():
    operator, _ = _keyed_process()
    operator.process_batch(TimestampedBatch([("a", ""), ("b", "")], [100, 200]))
    files = MemoryStateWriter()
    handle = operator.context.keyed_backend.snapshot().write(files, "keyed")
    restored = HeapKeyedStateBackend(KeyGroupRange(0, 127), 128)
    restored.restore([handle], lambda h: files.files[h.uri.split("//")[1]])
    operator, out = _keyed_process(backend=restored)
    operator.process_watermark(150)
    assert out.records() == [("a timer 110 ts=110", 110)]
    operator.process_watermark(MAX_WATERMARK)
    assert out.records()[-1] == ("b timer 210 ts=210", 210)
