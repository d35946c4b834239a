"""``AggregatingState`` with an ``AggregateFunction`` (running average per sensor), a function's
``open``/``close`` lifecycle, and ``execute_and_collect`` with a ``limit``.

``Average`` keeps ``(sum, count)`` as its accumulator; a ``KeyedProcessFunction`` adds each
reading to the key's aggregating state and emits the running average. Parallelism 1, so the
output comes in input order; the first run collects only the first four results
(``limit=4``), the second all of them.
"""

from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.functions import AggregateFunction, KeyedProcessFunction, RuntimeContext
from pyflink.datastream.state import AggregatingStateDescriptor

READINGS = [("s1", 10.0), ("s2", 4.0), ("s1", 20.0), ("s1", 0.0), ("s2", 8.0), ("s3", 1.5),
            ("s2", 6.0), ("s1", 10.0)]


class Average(AggregateFunction):

    def create_accumulator(self):
        return 0.0, 0

    def add(self, value, accumulator):
        return accumulator[0] + value, accumulator[1] + 1

    def get_result(self, accumulator):
        return accumulator[0] / accumulator[1]

    def merge(self, acc_a, acc_b):
        return acc_a[0] + acc_b[0], acc_a[1] + acc_b[1]


class RunningAverage(KeyedProcessFunction):

    def __init__(self):
        self.average = None
        self.opened = False

    def open(self, runtime_context: RuntimeContext):
        self.average = runtime_context.get_aggregating_state(AggregatingStateDescriptor(
            "average", Average(), Types.TUPLE([Types.DOUBLE(), Types.LONG()])))
        self.opened = True

    def process_element(self, value, ctx: 'KeyedProcessFunction.Context'):
        self.average.add(value[1])
        yield f"{ctx.get_current_key()} average {self.average.get():.3f} (opened: {self.opened})"

    def close(self):
        self.average = None


def aggregating_state():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)

    def averages():
        readings = env.from_collection(
            READINGS, type_info=Types.TUPLE([Types.STRING(), Types.DOUBLE()]))
        return readings.key_by(lambda reading: reading[0]) \
            .process(RunningAverage(), output_type=Types.STRING())

    first = averages().execute_and_collect("first four", limit=4)
    print(f"limit=4 gives a {type(first).__name__} of {len(first)}")
    for line in first:
        print(line)
    print("all:")
    with averages().execute_and_collect("all") as results:
        for line in results:
            print(line)


if __name__ == "__main__":
    aggregating_state()
