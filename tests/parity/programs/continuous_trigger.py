"""A tumbling event-time window with ``ContinuousEventTimeTrigger`` (an older revision of
PyFlink's tumbling-window example used one): the window fires every interval of event time
and once more at its end, each time with everything it holds so far.

Periodic watermarks are made rare (``set_auto_watermark_interval``), so the only watermark is
the maximum one at the end of the bounded input, and every firing happens then, in timer
order: the output depends on the timestamps alone. Parallelism 1; printed by the print sink.
"""

from pyflink.common import Time, Types, WatermarkStrategy
from pyflink.common.watermark_strategy import TimestampAssigner
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.window import ContinuousEventTimeTrigger, TumblingEventTimeWindows

EVENTS = [("a", 1, 1), ("b", 2, 10), ("a", 3, 2), ("a", 8, 3), ("b", 9, 20),
          ("a", 14, 4), ("b", 17, 30), ("a", 21, 5)]


class SecondField(TimestampAssigner):

    def extract_timestamp(self, value, record_timestamp):
        return value[1]


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    env.get_config().set_auto_watermark_interval(3600000)
    events = env.from_collection(
        EVENTS, type_info=Types.TUPLE([Types.STRING(), Types.LONG(), Types.INT()]))
    events.assign_timestamps_and_watermarks(
        WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(SecondField())) \
        .key_by(lambda e: e[0], key_type=Types.STRING()) \
        .window(TumblingEventTimeWindows.of(Time.milliseconds(10))) \
        .trigger(ContinuousEventTimeTrigger.of(Time.milliseconds(4))) \
        .reduce(lambda x, y: (x[0], max(x[1], y[1]), x[2] + y[2]),
                output_type=Types.TUPLE([Types.STRING(), Types.LONG(), Types.INT()])) \
        .print()
    env.execute("continuous event-time trigger")


if __name__ == "__main__":
    main()
