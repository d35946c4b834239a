"""Two keyed streams joined in a ``KeyedCoProcessFunction`` with state on both sides.

Orders and customer profiles arrive on two streams keyed by customer id. An order waits in a
``ListState`` until the customer's profile has arrived; a profile is kept in a ``ValueState``
and releases the waiting orders. Whichever side comes first, each order is emitted exactly once
with its customer's name, so the output does not depend on how the two inputs interleave.
Parallelism 2; results collected and printed sorted.
"""

from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.functions import KeyedCoProcessFunction, RuntimeContext
from pyflink.datastream.state import ListStateDescriptor, ValueStateDescriptor

ORDERS = [(101, "c1", 30), (102, "c2", 12), (103, "c1", 8), (104, "c3", 50), (105, "c9", 1),
          (106, "c2", 40), (107, "c3", 5), (108, "c1", 17)]

CUSTOMERS = [("c3", "Noor"), ("c1", "Ines"), ("c2", "Tomas"), ("c4", "Yuki")]


class EnrichOrders(KeyedCoProcessFunction):

    def open(self, runtime_context: RuntimeContext):
        self.name = runtime_context.get_state(ValueStateDescriptor("name", Types.STRING()))
        self.waiting = runtime_context.get_list_state(
            ListStateDescriptor("waiting", Types.TUPLE([Types.INT(), Types.INT()])))

    def process_element1(self, value, ctx: 'KeyedCoProcessFunction.Context'):
        order_id, _, amount = value
        name = self.name.value()
        if name is None:
            self.waiting.add((order_id, amount))
        else:
            yield f"order {order_id}: {name} ({ctx.get_current_key()}) pays {amount}"

    def process_element2(self, value, ctx: 'KeyedCoProcessFunction.Context'):
        self.name.update(value[1])
        for order_id, amount in self.waiting.get():
            yield f"order {order_id}: {value[1]} ({ctx.get_current_key()}) pays {amount}"
        self.waiting.clear()


def connected_join():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)

    orders = env.from_collection(
        ORDERS, type_info=Types.TUPLE([Types.INT(), Types.STRING(), Types.INT()]))
    customers = env.from_collection(
        CUSTOMERS, type_info=Types.TUPLE([Types.STRING(), Types.STRING()]))
    enriched = orders.connect(customers) \
        .key_by(lambda order: order[1], lambda customer: customer[0]) \
        .process(EnrichOrders(), output_type=Types.STRING())

    with enriched.execute_and_collect("connected_join") as results:
        for line in sorted(results):
            print(line)


if __name__ == "__main__":
    connected_join()
