"""The custom window assigner of PyFlink's window documentation ("Window Assigners"): a
tumbling assigner written against PyFlink's ``WindowAssigner`` with its signatures —
``get_default_trigger(self, env)`` and ``get_window_serializer`` returning a
``TimeWindowSerializer`` imported with ``TypeSerializer`` from ``pyflink.common.serializer`` —
used with the documentation's ``ProcessWindowFunction`` and ``WindowFunction``.

The assigner is the documentation's, line for line: ``is_event_time`` returns False whatever
the constructor was given, so each window's cleanup is a processing-time timer at the window's
end, an instant long past. PyFlink hands a bundle's timers to the JVM when the bundle ends, so
that cleanup comes after the watermark that fires the window; flintlock holds such a timer for
the end of its bundle as well (runtime/tasks/timer_service.py, docs/parity.md). The records'
timestamps come from the data (their first field, in ms). Parallelism 1; printed in the order
the windows fire.
"""

from collections.abc import Collection, Iterable

from pyflink.common import Types, WatermarkStrategy
from pyflink.common.serializer import TypeSerializer
from pyflink.common.watermark_strategy import TimestampAssigner
from pyflink.datastream import (
    ProcessWindowFunction,
    StreamExecutionEnvironment,
    Trigger,
    WindowAssigner,
    WindowFunction,
)
from pyflink.datastream.window import EventTimeTrigger, TimeWindow, TimeWindowSerializer


class TumblingEventWindowAssigner(WindowAssigner[tuple, TimeWindow]):

    def __init__(self, size: int, offset: int, is_event_time: bool):
        self._size = size
        self._offset = offset
        self._is_event_time = is_event_time

    def assign_windows(self,
                       element: tuple,
                       timestamp: int,
                       context: WindowAssigner.WindowAssignerContext) -> Collection[TimeWindow]:
        start = TimeWindow.get_window_start_with_offset(timestamp, self._offset, self._size)
        return [TimeWindow(start, start + self._size)]

    def get_default_trigger(self, env) -> Trigger[tuple, TimeWindow]:
        return EventTimeTrigger()

    def get_window_serializer(self) -> TypeSerializer[TimeWindow]:
        return TimeWindowSerializer()

    def is_event_time(self) -> bool:
        return False


class SumWindowProcessFunction(ProcessWindowFunction[tuple, tuple, str, TimeWindow]):

    def process(self,
                key: str,
                content: ProcessWindowFunction.Context,
                elements: Iterable[tuple]) -> Iterable[tuple]:
        result = 0
        for i in elements:
            result += i[0]
        window = content.window()
        return [(key, result, window.start, window.end)]

    def clear(self, context: ProcessWindowFunction.Context) -> None:
        pass


class SumWindowFunction(WindowFunction[tuple, tuple, str, TimeWindow]):

    def apply(self, key: str, window: TimeWindow, inputs: Iterable[tuple]):
        result = 0
        for i in inputs:
            result += i[0]
        return [(key, result)]


class FirstField(TimestampAssigner):

    def extract_timestamp(self, value, record_timestamp):
        return value[0]


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)

    def words():
        data_stream = env.from_collection([
            (1, 'hi'), (2, 'hello'), (3, 'hi'), (4, 'hello'), (5, 'hi'), (6, 'hello'),
            (12, 'hi'), (13, 'hello')],
            type_info=Types.TUPLE([Types.INT(), Types.STRING()]))
        return data_stream.assign_timestamps_and_watermarks(
            WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(FirstField()))

    print("process")
    words().key_by(lambda x: x[1], key_type=Types.STRING()) \
        .window(TumblingEventWindowAssigner(5, 0, True)) \
        .process(SumWindowProcessFunction(),
                 Types.TUPLE([Types.STRING(), Types.INT(), Types.LONG(), Types.LONG()])) \
        .print()
    env.execute("custom assigner, process")

    print("apply")
    words().key_by(lambda x: x[1], key_type=Types.STRING()) \
        .window(TumblingEventWindowAssigner(4, 1, True)) \
        .apply(SumWindowFunction(), Types.TUPLE([Types.STRING(), Types.INT()])) \
        .print()
    env.execute("custom assigner, apply")


if __name__ == "__main__":
    main()
