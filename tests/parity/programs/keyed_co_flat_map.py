"""Keyed state in a ``CoFlatMapFunction`` over two streams connected and keyed by the same key
(``connect(...).key_by(k1, k2).flat_map(...)``): per account, the function adds up debits from
one stream and credits from the other, and reports the balance once it has seen all of the
account's movements (the program knows how many there are), so the output does not depend on
how the two inputs interleave. Parallelism 2; collected and printed sorted.
"""

from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.functions import CoFlatMapFunction, RuntimeContext
from pyflink.datastream.state import ValueStateDescriptor

DEBITS = [("acc1", 30), ("acc2", 5), ("acc1", 20), ("acc3", 70), ("acc2", 15)]
CREDITS = [("acc2", 100), ("acc1", 40), ("acc3", 60), ("acc1", 25), ("acc3", 20)]
MOVEMENTS = {account: sum(1 for a, _ in DEBITS + CREDITS if a == account)
             for account, _ in DEBITS + CREDITS}


class Balance(CoFlatMapFunction):

    def open(self, runtime_context: RuntimeContext):
        self.balance = runtime_context.get_state(ValueStateDescriptor("balance", Types.LONG()))
        self.seen = runtime_context.get_state(ValueStateDescriptor("seen", Types.INT()))

    def _apply(self, account, amount):
        balance = (self.balance.value() or 0) + amount
        seen = (self.seen.value() or 0) + 1
        self.balance.update(balance)
        self.seen.update(seen)
        if seen == MOVEMENTS[account]:
            yield f"{account}: balance {balance} after {seen} movements"

    def flat_map1(self, value):
        yield from self._apply(value[0], -value[1])

    def flat_map2(self, value):
        yield from self._apply(value[0], value[1])


def keyed_co_flat_map():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)

    movement = Types.TUPLE([Types.STRING(), Types.INT()])
    debits = env.from_collection(DEBITS, type_info=movement)
    credits = env.from_collection(CREDITS, type_info=movement)
    balances = debits.connect(credits) \
        .key_by(lambda debit: debit[0], lambda credit: credit[0]) \
        .flat_map(Balance(), output_type=Types.STRING())

    with balances.execute_and_collect("keyed_co_flat_map") as results:
        for line in sorted(results):
            print(line)


if __name__ == "__main__":
    keyed_co_flat_map()
