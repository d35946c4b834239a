"""Keyed state in a ``KeyedProcessFunction``: a ``ValueState`` running total per account and a
``ReducingState`` holding the largest single payment, with a (long) state TTL configured.

Parallelism 2: payments are spread over two subtasks by account. Each account's updates stay
in order, but two subtasks interleave, so the program collects the results and prints them
sorted.
"""

from pyflink.common import Time, Types
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.functions import KeyedProcessFunction, RuntimeContext
from pyflink.datastream.state import ReducingStateDescriptor, StateTtlConfig, ValueStateDescriptor

PAYMENTS = [
    ("alice", 120), ("bob", 30), ("carol", 75), ("alice", 20), ("bob", 55),
    ("alice", 310), ("dave", 5), ("carol", 25), ("bob", 5), ("alice", 1),
    ("erin", 400), ("dave", 95), ("carol", 100), ("erin", 1), ("bob", 60),
]


class RunningTotal(KeyedProcessFunction):

    def __init__(self):
        self.total = None
        self.largest = None

    def open(self, runtime_context: RuntimeContext):
        ttl = StateTtlConfig.new_builder(Time.hours(1)) \
            .set_update_type(StateTtlConfig.UpdateType.OnCreateAndWrite) \
            .build()
        total_descriptor = ValueStateDescriptor("total", Types.LONG())
        total_descriptor.enable_time_to_live(ttl)
        self.total = runtime_context.get_state(total_descriptor)
        self.largest = runtime_context.get_reducing_state(
            ReducingStateDescriptor("largest", lambda a, b: max(a, b), Types.LONG()))

    def process_element(self, value, ctx: 'KeyedProcessFunction.Context'):
        current = self.total.value()
        if current is None:
            current = 0
        current += value[1]
        self.total.update(current)
        self.largest.add(value[1])
        yield ctx.get_current_key(), current, self.largest.get()


def state_access():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)

    payments = env.from_collection(PAYMENTS,
                                   type_info=Types.TUPLE([Types.STRING(), Types.LONG()]))
    totals = payments.key_by(lambda payment: payment[0]) \
        .process(RunningTotal(),
                 output_type=Types.TUPLE([Types.STRING(), Types.LONG(), Types.LONG()]))

    with totals.execute_and_collect("state_access") as results:
        for account, total, largest in sorted(results):
            print(f"{account}: total={total} largest={largest}")


if __name__ == "__main__":
    state_access()
