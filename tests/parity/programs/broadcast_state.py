"""Broadcast state: a stream of rules is broadcast with a ``MapStateDescriptor`` and connected
to a stream of events; a ``BroadcastProcessFunction`` stores each rule in broadcast state on
every parallel instance.

The output is kept independent of how the two inputs interleave: each instance reports every
rule it stores with the number of rules it holds then (the rules arrive in order on every
instance), and events are passed through tagged, without reading rules. Parallelism 2, so
every rule line appears twice; collected and printed sorted.
"""

from pyflink.common import Types
from pyflink.datastream import BroadcastProcessFunction, StreamExecutionEnvironment
from pyflink.datastream.state import MapStateDescriptor

RULES = MapStateDescriptor("rules", Types.STRING(), Types.INT())


class StoreRules(BroadcastProcessFunction):

    def process_element(self, value, ctx: 'BroadcastProcessFunction.ReadOnlyContext'):
        yield f"event {value}"

    def process_broadcast_element(self, value, ctx: 'BroadcastProcessFunction.Context'):
        rules = ctx.get_broadcast_state(RULES)
        rules.put(value[0], value[1])
        yield f"rule {value[0]}>{value[1]} stored; rules held: {len(list(rules.keys()))}"


def broadcast_state():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)

    rules = env.from_collection([("cpu", 90), ("disk", 80), ("cpu", 95)],
                                type_info=Types.TUPLE([Types.STRING(), Types.INT()]))
    events = env.from_collection(["cpu=97", "disk=10"], type_info=Types.STRING())
    tagged = events.connect(rules.broadcast(RULES)) \
        .process(StoreRules(), output_type=Types.STRING())

    with tagged.execute_and_collect("broadcast_state") as results:
        for line in sorted(results):
            print(line)


if __name__ == "__main__":
    broadcast_state()
