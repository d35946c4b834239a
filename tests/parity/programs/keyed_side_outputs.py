"""Side outputs from a ``KeyedProcessFunction`` with keyed state, two tags of different declared
types, and a side output consumed across a keyed exchange (alerts counted per sensor).

The main output, each side output and the per-sensor alert counts go to print sinks with
their own identifiers; parallelism 1, and the harness compares sorted lines since the sinks
interleave.
"""

from pyflink.common import Types
from pyflink.datastream import OutputTag, StreamExecutionEnvironment
from pyflink.datastream.functions import KeyedProcessFunction, RuntimeContext
from pyflink.datastream.state import ValueStateDescriptor

ALERTS = OutputTag("alerts", Types.TUPLE([Types.STRING(), Types.INT()]))
FIRST_SEEN = OutputTag("first-seen", Types.STRING())

READINGS = [("s1", 20), ("s2", 95), ("s1", 99), ("s3", 10), ("s2", 97), ("s1", 50),
            ("s2", 40), ("s1", 91)]


class Monitor(KeyedProcessFunction):

    def open(self, runtime_context: RuntimeContext):
        self.count = runtime_context.get_state(ValueStateDescriptor("count", Types.INT()))

    def process_element(self, value, ctx: 'KeyedProcessFunction.Context'):
        count = (self.count.value() or 0) + 1
        self.count.update(count)
        if count == 1:
            yield FIRST_SEEN, f"first reading of {ctx.get_current_key()}: {value[1]}"
        if value[1] > 90:
            yield ALERTS, (value[0], value[1])
        yield f"{value[0]} reading #{count}: {value[1]}"


def keyed_side_outputs():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)

    readings = env.from_collection(READINGS,
                                   type_info=Types.TUPLE([Types.STRING(), Types.INT()]))
    monitored = readings.key_by(lambda reading: reading[0]) \
        .process(Monitor(), output_type=Types.STRING())

    monitored.print("main")
    monitored.get_side_output(FIRST_SEEN).print("first")
    monitored.get_side_output(ALERTS) \
        .map(lambda alert: (alert[0], 1), output_type=Types.TUPLE([Types.STRING(), Types.INT()])) \
        .key_by(lambda alert: alert[0]) \
        .sum(1) \
        .map(lambda total: f"{total[0]} alerts so far: {total[1]}", output_type=Types.STRING()) \
        .print("alert-count")
    env.execute("keyed_side_outputs")


if __name__ == "__main__":
    keyed_side_outputs()
