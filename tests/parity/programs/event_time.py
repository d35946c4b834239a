"""Event time: timestamps from the records (``WatermarkStrategy.for_monotonous_timestamps``
with a ``TimestampAssigner``), a ``KeyedProcessFunction`` that sees ``ctx.timestamp()`` and
registers an event-time timer 10 ms after each reading, and ``on_timer`` reporting the key's
latest reading at or before the timer's time (kept in a ``MapState`` by timestamp).

Watermarks follow the timestamps, and the end of the bounded input brings the maximum
watermark, so every timer fires. When a timer fires depends on when periodic watermarks are
emitted (in a short run PyFlink fires them all at the end), so ``on_timer`` looks only at
readings up to the timer's time: the output depends on timestamps alone.
Parallelism 1 source; collected and printed sorted.
"""

from pyflink.common import Types, WatermarkStrategy
from pyflink.common.watermark_strategy import TimestampAssigner
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.functions import KeyedProcessFunction, RuntimeContext
from pyflink.datastream.state import MapStateDescriptor

READINGS = [("t1", 100, 20), ("t2", 103, 5), ("t1", 105, 21), ("t1", 130, 25),
            ("t2", 131, 6), ("t2", 150, 4), ("t1", 151, 19)]


class ReadingTimestamp(TimestampAssigner):

    def extract_timestamp(self, value, record_timestamp):
        return value[1]


class LatestAtTimer(KeyedProcessFunction):

    def open(self, runtime_context: RuntimeContext):
        self.readings = runtime_context.get_map_state(
            MapStateDescriptor("readings", Types.LONG(), Types.INT()))

    def process_element(self, value, ctx: 'KeyedProcessFunction.Context'):
        self.readings.put(ctx.timestamp(), value[2])
        ctx.timer_service().register_event_time_timer(ctx.timestamp() + 10)
        yield f"{value[0]} reading {value[2]} at {ctx.timestamp()}"

    def on_timer(self, timestamp: int, ctx: 'KeyedProcessFunction.OnTimerContext'):
        seen = max(ts for ts in self.readings.keys() if ts <= timestamp)
        yield (f"{ctx.get_current_key()} timer at {timestamp} ({ctx.time_domain()}): "
               f"latest reading by then {self.readings.get(seen)} at {seen}")


def event_time():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)

    readings = env.from_collection(
        READINGS, type_info=Types.TUPLE([Types.STRING(), Types.LONG(), Types.INT()]))
    stamped = readings.assign_timestamps_and_watermarks(
        WatermarkStrategy.for_monotonous_timestamps()
                         .with_timestamp_assigner(ReadingTimestamp()))
    reports = stamped.key_by(lambda reading: reading[0]) \
        .process(LatestAtTimer(), output_type=Types.STRING())

    with reports.execute_and_collect("event_time") as results:
        for line in sorted(results):
            print(line)


if __name__ == "__main__":
    event_time()
