"""ConnectedStreams run end to end (TaskManagers as threads of this process): CoMapFunction,
CoFlatMapFunction, CoProcessFunction and KeyedCoProcessFunction (keyed state shared by both
inputs, processing-time timers), on plain and keyed connected streams.
"""

import collections

from flintlock.common import Types
from flintlock.datastream import (
    CoFlatMapFunction,
    CoMapFunction,
    CoProcessFunction,
    KeyedCoProcessFunction,
)
from flintlock.datastream.state import ListStateDescriptor, ValueStateDescriptor
from flintlock.testing.environments import local_environment
from flintlock.testing.recording import HoldUntilRecorded, Recording

FIRED = Recording("connected.fired")  # the keys whose timers fired


def _env(tmp_path, parallelism=2):
    return local_environment(tmp_path, parallelism)


class Tag(CoMapFunction):
    def map1(self, value):
        return f"left:{value}"

    def map2(self, value):
        return f"right:{value * 10}"


def test_co_map_applies_map1_and_map2_to_their_inputs(executor, tmp_path):
    env = _env(tmp_path)
    left = env.from_collection(["a", "b", "c"])
    right = env.from_collection([1, 2])
    out = left.connect(right).map(Tag(), Types.STRING()).execute_and_collect()
    assert sorted(out) == ["left:a", "left:b", "left:c", "right:10", "right:20"]


class Split(CoFlatMapFunction):
    def flat_map1(self, value):
        yield from value.split()

    def flat_map2(self, value):
        return [value] * value  # a list, or nothing for 0


def test_co_flat_map_yielding_and_returning(executor, tmp_path):
    env = _env(tmp_path)
    left = env.from_collection(["x y", "z"])
    right = env.from_collection([0, 2, 3])
    out = left.connect(right).flat_map(Split()).execute_and_collect()
    assert sorted(out, key=str) == sorted(["x", "y", "z", 2, 2, 3, 3, 3], key=str)


class SideCounter(CoProcessFunction):
    """Non-keyed: counts per input in the function object (one per subtask)."""

    def open(self, runtime_context):
        self.counts = [0, 0]

    def process_element1(self, value, ctx):
        self.counts[0] += 1
        yield ("1", value, ctx.timestamp())

    def process_element2(self, value, ctx):
        self.counts[1] += 1
        yield ("2", value, ctx.timer_service().current_processing_time() > 0)


def test_co_process_function(executor, tmp_path):
    env = _env(tmp_path, parallelism=1)
    out = list(env.from_collection([1, 2]).connect(env.from_collection(["a"]))
               .process(SideCounter()).execute_and_collect())
    no_timestamp = -(2**63)  # Long.MIN_VALUE: what PyFlink shows for a record without one
    assert sorted(out, key=str) == sorted(
        [("1", 1, no_timestamp), ("1", 2, no_timestamp), ("2", "a", True)], key=str)


class Join(KeyedCoProcessFunction):
    """Orders (input 1) and payments (input 2) keyed by order id, sharing one keyed state:
    whichever side comes first is stored; the other side completes the pair."""

    def open(self, runtime_context):
        self.order = runtime_context.get_state(ValueStateDescriptor("order", Types.STRING()))
        self.payments = runtime_context.get_list_state(
            ListStateDescriptor("payments", Types.INT()))

    def process_element1(self, value, ctx):
        assert ctx.get_current_key() == value[0]
        self.order.update(value[1])
        for amount in self.payments.get():
            yield (value[0], value[1], amount)
        self.payments.clear()

    def process_element2(self, value, ctx):
        assert ctx.get_current_key() == value[0]
        item = self.order.value()
        if item is None:
            self.payments.add(value[1])
        else:
            yield (value[0], item, value[1])


def test_keyed_co_process_shares_keyed_state_across_both_inputs(executor, tmp_path):
    env = _env(tmp_path)
    orders = [(i, f"item{i}") for i in range(20)]
    payments = [(i % 20, 100 + i) for i in range(40)]
    out = list(env.from_collection(orders).connect(env.from_collection(payments))
               .key_by(lambda o: o[0], lambda p: p[0]).process(Join())
               .execute_and_collect())
    assert sorted(out) == sorted((o, f"item{o}", amount) for o, amount in payments)


def test_connect_two_keyed_streams_then_process(executor, tmp_path):
    env = _env(tmp_path)
    orders = env.from_collection([(i, f"item{i}") for i in range(5)]).key_by(lambda o: o[0])
    payments = env.from_collection([(i, i * 2) for i in range(5)]).key_by(lambda p: p[0])
    out = list(orders.connect(payments).process(Join()).execute_and_collect())
    assert sorted(out) == [(i, f"item{i}", i * 2) for i in range(5)]


class KeyedCount(CoMapFunction):
    """CoMap on keyed connected streams: keyed state counts both sides per key."""

    def open(self, runtime_context):
        self.count = runtime_context.get_state(ValueStateDescriptor("n", Types.INT()))

    def _bump(self, key):
        n = (self.count.value() or 0) + 1
        self.count.update(n)
        return (key, n)

    def map1(self, value):
        return self._bump(value)

    def map2(self, value):
        return self._bump(value[0])


def test_co_map_on_keyed_connected_streams_uses_keyed_state(executor, tmp_path):
    env = _env(tmp_path)
    left = env.from_collection(["a", "b", "a"])
    right = env.from_collection([("a", 1), ("b", 2), ("c", 3)])
    out = list(left.connect(right).key_by(lambda k: k, lambda r: r[0]).map(KeyedCount())
               .execute_and_collect())
    assert collections.Counter(k for k, _ in out) == {"a": 3, "b": 2, "c": 1}
    final = {}
    for key, n in out:
        final[key] = max(n, final.get(key, 0))
    assert final == {"a": 3, "b": 2, "c": 1}
    assert sorted(n for k, n in out if k == "a") == [1, 2, 3]


REQUESTS = Recording("connected.requests")  # the keys of the requests opened


class Timeout(KeyedCoProcessFunction):
    """Input 1 opens a request (key, delay) and sets a timer ``delay`` ms later; input 2
    answers it (deleting the timer); ``on_timer`` reports unanswered requests."""

    def open(self, runtime_context):
        self.deadline = runtime_context.get_state(ValueStateDescriptor("deadline", Types.LONG()))

    def process_element1(self, value, ctx):
        at = ctx.timer_service().current_processing_time() + value[1]
        self.deadline.update(at)
        ctx.timer_service().register_processing_time_timer(at)
        REQUESTS.append(value[0])

    def process_element2(self, value, ctx):
        if value[0] == "end":
            return
        at = self.deadline.value()
        ctx.timer_service().delete_processing_time_timer(at)
        self.deadline.clear()
        yield ("answered", ctx.get_current_key())

    def on_timer(self, timestamp, ctx):
        yield ("timed out", ctx.get_current_key(), timestamp == self.deadline.value())
        FIRED.append(ctx.get_current_key())


def test_keyed_co_process_timers(executor, tmp_path):
    env = _env(tmp_path)
    # r2's timer is far away and is deleted by its answer, which waits for all requests;
    # the end of input waits for r1's and r3's timers (pending processing-time timers are
    # dropped at the end of input, as in Flink)
    requests = env.from_collection([("r1", 20), ("r2", 600_000), ("r3", 20)])
    answers = env.from_collection([("r2", 1)]).map(HoldUntilRecorded(REQUESTS, 3)).union(
        env.from_collection([("end", 0)]).map(HoldUntilRecorded(FIRED, 2)))
    out = list(requests.connect(answers).key_by(lambda r: r[0], lambda a: a[0])
               .process(Timeout()).execute_and_collect())
    assert sorted(out) == [("answered", "r2"), ("timed out", "r1", True),
                           ("timed out", "r3", True)]
