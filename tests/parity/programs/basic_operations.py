"""The basic DataStream operations, one small job each: map, flat_map, filter, key_by + reduce,
union, and connect with a ``CoMapFunction`` and a ``CoFlatMapFunction``.

Orders of a small shop flow through each job. Jobs whose output order is defined (one source,
parallelism 1) print through the print sink; jobs that merge two sources collect their results
with ``execute_and_collect`` and print them sorted, since the interleaving of two inputs is not
defined. Every job's output is preceded by a header line printed by the program.
"""

import json

from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.functions import (
    CoFlatMapFunction,
    CoMapFunction,
    FilterFunction,
    FlatMapFunction,
    MapFunction,
    ReduceFunction,
)

ORDERS = [
    '{"id": 1, "customer": "ada", "items": ["tea", "cake"], "total": 7.5}',
    '{"id": 2, "customer": "bob", "items": ["coffee"], "total": 3.0}',
    '{"id": 3, "customer": "ada", "items": ["coffee", "scone", "jam"], "total": 9.25}',
    '{"id": 4, "customer": "cy", "items": [], "total": 0.0}',
    '{"id": 5, "customer": "bob", "items": ["tea"], "total": 2.5}',
]

RETURNS = [(2, "bob"), (5, "bob")]


class ParseOrder(MapFunction):

    def map(self, value):
        order = json.loads(value)
        return order["id"], order["customer"], order["items"], order["total"]


class SplitItems(FlatMapFunction):

    def flat_map(self, value):
        order_id, customer, items, _ = value
        for item in items:
            yield order_id, customer, item


class BigOrders(FilterFunction):

    def __init__(self, threshold):
        self.threshold = threshold

    def filter(self, value):
        return value[3] >= self.threshold


class AddTotals(ReduceFunction):

    def reduce(self, value1, value2):
        return value1[0], value1[1] + value2[1], value1[2] + value2[2]


class Tag(CoMapFunction):

    def map1(self, value):
        return f"order {value[0]} by {value[1]}"

    def map2(self, value):
        return f"return of order {value[0]} by {value[1]}"


class Explode(CoFlatMapFunction):

    def flat_map1(self, value):
        for item in value[2]:
            yield f"+{item}"

    def flat_map2(self, value):
        yield f"-order{value[0]}"
        yield f"-customer:{value[1]}"


def orders(env):
    return env.from_collection(ORDERS, type_info=Types.STRING()).map(ParseOrder())


def run_printed(title, env, stream):
    print(title)
    stream.print()
    env.execute(title)


def run_collected(title, stream):
    print(title)
    with stream.execute_and_collect(title) as results:
        for line in sorted(str(result) for result in results):
            print(line)


def basic_operations():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)

    run_printed("== map", env, orders(env).map(lambda o: (o[0], o[1].upper(), len(o[2]))))
    run_printed("== flat_map", env, orders(env).flat_map(SplitItems()))
    run_printed("== filter", env, orders(env).filter(BigOrders(5.0)).map(lambda o: o[0]))
    run_printed("== key_by + reduce", env,
                orders(env).map(lambda o: (o[1], 1, o[3]))
                           .key_by(lambda t: t[0])
                           .reduce(AddTotals()))

    returns = env.from_collection(RETURNS)
    run_collected("== union", orders(env).map(lambda o: (o[0], o[1])).union(returns))
    run_collected("== connect + CoMapFunction", orders(env).connect(returns).map(Tag()))
    run_collected("== connect + CoFlatMapFunction",
                  orders(env).connect(returns).flat_map(Explode()))


if __name__ == "__main__":
    basic_operations()
