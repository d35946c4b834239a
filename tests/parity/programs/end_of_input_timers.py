"""Event-time timers in a job without timestamps or watermarks: a bounded source ends with the
maximum watermark, so every event-time timer registered so far fires once the input is
exhausted — the usual way to flush per-key state at the end of a bounded stream. Processing-
time timers still pending at that point do not fire.

A ``KeyedProcessFunction`` buffers each key's values in a ``ListState``, registers an
event-time timer at 1000 (the same one for every element of a key: timers are unique per key
and time) and a processing-time timer an hour ahead, and emits the buffered values, with the
timer's timestamp and time domain, when a timer fires. Parallelism 2; collected and sorted.
"""

from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.functions import KeyedProcessFunction, RuntimeContext
from pyflink.datastream.state import ListStateDescriptor

ONE_HOUR_MS = 60 * 60 * 1000


class FlushAtEnd(KeyedProcessFunction):

    def open(self, runtime_context: RuntimeContext):
        self.buffer = runtime_context.get_list_state(ListStateDescriptor("buffer", Types.INT()))

    def process_element(self, value, ctx: 'KeyedProcessFunction.Context'):
        self.buffer.add(value[1])
        ctx.timer_service().register_event_time_timer(1000)
        ctx.timer_service().register_processing_time_timer(
            ctx.timer_service().current_processing_time() + ONE_HOUR_MS)

    def on_timer(self, timestamp: int, ctx: 'KeyedProcessFunction.OnTimerContext'):
        values = sorted(self.buffer.get())
        self.buffer.clear()
        domain = "event time" if timestamp == 1000 else "processing time"
        yield (f"{ctx.get_current_key()}: {values} at {timestamp} ({domain}, "
               f"{ctx.time_domain()}, ctx.timestamp()={ctx.timestamp()})")


def end_of_input_timers():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)

    pairs = env.from_collection([("a", 3), ("b", 1), ("a", 1), ("c", 7), ("b", 2), ("a", 2)],
                                type_info=Types.TUPLE([Types.STRING(), Types.INT()]))
    flushed = pairs.key_by(lambda pair: pair[0]) \
        .process(FlushAtEnd(), output_type=Types.STRING())

    with flushed.execute_and_collect("end_of_input_timers") as results:
        for line in sorted(results):
            print(line)


if __name__ == "__main__":
    end_of_input_timers()
