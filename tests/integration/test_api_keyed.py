"""KeyedStream methods run end to end (TaskManagers as threads of this process): ``reduce``,
the aggregations by position and by field name, ``process`` with a KeyedProcessFunction and
processing-time timers, and keyed ``map``/``flat_map``/``filter`` with keyed state.

Expected results follow PyFlink's semantics and are computed here with plain Python:
``sum``/``min``/``max`` replace one field of the key's *first* record with the running
aggregate; ``min_by``/``max_by`` keep the whole record holding the extreme (the first one on
ties); every keyed reduction emits its running value after each record.
"""

import collections

import pytest

from flintlock.common import Row, Types
from flintlock.datastream import (
    FilterFunction,
    FlatMapFunction,
    KeyedProcessFunction,
    MapFunction,
    ReduceFunction,
    TimeDomain,
)
from flintlock.datastream.state import ListStateDescriptor, ValueStateDescriptor
from flintlock.testing.environments import local_environment
from flintlock.testing.recording import HoldUntilRecorded, Recording

# The keys whose timers fired. An end-of-input record held until the timers fired
# (HoldUntilRecorded) keeps the job's input open while they are due: processing-time timers
# still pending at the end of input are dropped, as in Flink.
FIRED = Recording("keyed.fired")


def _env(tmp_path, parallelism=2):
    return local_environment(tmp_path, parallelism)


def _per_key(records, key):
    """Records grouped by key, each group in input order."""
    groups = collections.defaultdict(list)
    for record in records:
        groups[key(record)].append(record)
    return groups


def _running(records, key, step):
    """The running values a keyed reduction emits: per key, acc = step(acc, record)."""
    out = []
    for group in _per_key(records, key).values():
        acc = None
        for record in group:
            acc = record if acc is None else step(acc, record)
            out.append(acc)
    return out


def _by_key_in_order(out, key):
    """Output grouped by key; within a key, order is the key's input order (one subtask)."""
    return {k: v for k, v in _per_key(out, key).items()}


DATA = [("a", 3, "x1"), ("b", 5, "y1"), ("a", 1, "x2"), ("a", 7, "x3"), ("b", 5, "y2"),
        ("c", 2, "z1"), ("b", 9, "y3"), ("a", 1, "x4"), ("c", 0, "z2"), ("b", 4, "y4")]
TUPLE_TYPE = Types.TUPLE([Types.STRING(), Types.INT(), Types.STRING()])


def _set(record, position, value):
    fields = list(record)
    fields[position] = value
    return tuple(fields)


EXPECTED_STEPS = {
    "sum": lambda acc, r: _set(acc, 1, acc[1] + r[1]),
    "min": lambda acc, r: _set(acc, 1, min(acc[1], r[1])),
    "max": lambda acc, r: _set(acc, 1, max(acc[1], r[1])),
    "min_by": lambda acc, r: r if r[1] < acc[1] else acc,
    "max_by": lambda acc, r: r if r[1] > acc[1] else acc,
}


class Add(ReduceFunction):
    def reduce(self, value1, value2):
        return (value1[0], value1[1] + value2[1], value1[2] + value2[2])


@pytest.mark.parametrize("reducer", [Add(), lambda a, b: (a[0], a[1] + b[1], a[2] + b[2])],
                         ids=["object", "lambda"])
def test_reduce_emits_the_running_value_per_key(executor, tmp_path, reducer):
    env = _env(tmp_path)
    out = list(env.from_collection(DATA, TUPLE_TYPE).key_by(lambda r: r[0]).reduce(reducer)
               .execute_and_collect())
    expected = _running(DATA, lambda r: r[0], lambda a, b: (a[0], a[1] + b[1], a[2] + b[2]))
    assert _by_key_in_order(out, lambda r: r[0]) == _by_key_in_order(expected, lambda r: r[0])


@pytest.mark.parametrize("aggregation", ["sum", "min", "max", "min_by", "max_by"])
def test_aggregation_by_position(executor, tmp_path, aggregation):
    env = _env(tmp_path)
    keyed = env.from_collection(DATA, TUPLE_TYPE).key_by(lambda r: r[0])
    out = list(getattr(keyed, aggregation)(1).execute_and_collect())
    expected = _running(DATA, lambda r: r[0], EXPECTED_STEPS[aggregation])
    assert _by_key_in_order(out, lambda r: r[0]) == _by_key_in_order(expected, lambda r: r[0])


ROW_TYPE = Types.ROW_NAMED(["word", "n", "tag"], [Types.STRING(), Types.INT(), Types.STRING()])
ROWS = [Row(word=w, n=n, tag=t) for w, n, t in DATA]


@pytest.mark.parametrize("aggregation", ["sum", "min", "max", "min_by", "max_by"])
def test_aggregation_by_field_name_on_rows(executor, tmp_path, aggregation):
    env = _env(tmp_path)
    keyed = env.from_collection(ROWS, ROW_TYPE).key_by(lambda r: r.word)
    out = list(getattr(keyed, aggregation)("n").execute_and_collect())
    assert all(isinstance(r, Row) for r in out)
    expected = [Row(word=w, n=n, tag=t) for w, n, t in
                _running(DATA, lambda r: r[0], EXPECTED_STEPS[aggregation])]
    assert _by_key_in_order(out, lambda r: r.word) == _by_key_in_order(expected, lambda r: r.word)
    assert {tuple(r.as_dict()) for r in out} == {("word", "n", "tag")}


def test_sum_of_plain_numbers_and_position_zero_default(executor, tmp_path):
    env = _env(tmp_path)
    data = [1, 2, 3, 4, 5, 6]
    out = list(env.from_collection(data).key_by(lambda x: x % 2).sum().execute_and_collect())
    assert sorted(out) == sorted([1, 4, 9, 2, 6, 12])  # odd: 1, 1+3, 1+3+5; even likewise


def test_max_by_keeps_the_first_record_on_ties(executor, tmp_path):
    env = _env(tmp_path, parallelism=1)
    data = [("k", 5, "first"), ("k", 5, "second"), ("k", 2, "third")]
    out = list(env.from_collection(data, TUPLE_TYPE).key_by(lambda r: r[0]).max_by(1)
               .execute_and_collect())
    assert out == [("k", 5, "first")] * 3


# -- process with a KeyedProcessFunction ----------------------------------------------------


class TimerPerKey(KeyedProcessFunction):
    """Echoes each element with its key; registers one processing-time timer per key (on the
    key's first element) at now + 20 ms; ``on_timer`` reports what it sees."""

    def open(self, runtime_context):
        self.registered = runtime_context.get_state(ValueStateDescriptor("t", Types.LONG()))

    def process_element(self, value, ctx):
        key, n = value
        if key == "end":
            return
        yield ("element", ctx.get_current_key(), n, ctx.timestamp())
        if self.registered.value() is None:
            at = ctx.timer_service().current_processing_time() + 20
            self.registered.update(at)
            ctx.timer_service().register_processing_time_timer(at)

    def on_timer(self, timestamp, ctx):
        yield ("timer", ctx.get_current_key(), timestamp == self.registered.value(),
               ctx.timestamp() == timestamp, ctx.time_domain() is TimeDomain.PROCESSING_TIME)
        FIRED.append(ctx.get_current_key())


def test_keyed_process_function_timers_fire_per_key(executor, tmp_path):
    env = _env(tmp_path)
    data = [("a", 1), ("b", 2), ("a", 3), ("c", 4), ("b", 5)]
    elements = env.from_collection(data)
    end = env.from_collection([("end", 0)]).map(HoldUntilRecorded(FIRED, 3))
    out = list(elements.union(end).key_by(lambda r: r[0]).process(TimerPerKey())
               .execute_and_collect())
    assert sorted(r for r in out if r[0] == "element") == sorted(
        ("element", k, n, -(2**63)) for k, n in data)  # no timestamp: Long.MIN_VALUE
    assert sorted(r for r in out if r[0] == "timer") == [
        ("timer", k, True, True, True) for k in ["a", "b", "c"]]
    assert sorted(FIRED) == ["a", "b", "c"]


class DeleteTimer(KeyedProcessFunction):
    """Registers two timers per element of key "a"; deletes the first; both "a" and "b"
    register one; only the kept ones fire."""

    def process_element(self, value, ctx):
        service = ctx.timer_service()
        now = service.current_processing_time()
        if value[0] == "end":
            return
        service.register_processing_time_timer(now + 10)
        if value[0] == "a":
            service.register_processing_time_timer(now + 15)
            service.delete_processing_time_timer(now + 10)

    def on_timer(self, timestamp, ctx):
        yield ctx.get_current_key()
        FIRED.append(ctx.get_current_key())


def test_deleted_timers_do_not_fire(executor, tmp_path):
    env = _env(tmp_path, parallelism=1)
    elements = env.from_collection([("a", 1), ("b", 2)])
    end = env.from_collection([("end", 0)]).map(HoldUntilRecorded(FIRED, 2))
    out = list(elements.union(end).key_by(lambda r: r[0]).process(DeleteTimer())
               .execute_and_collect())
    assert sorted(out) == ["a", "b"]


# -- keyed map / flat_map / filter with keyed state --------------------------------------------


class CountPerKey(MapFunction):
    def open(self, runtime_context):
        self.count = runtime_context.get_state(ValueStateDescriptor("count", Types.INT()))

    def map(self, value):
        count = (self.count.value() or 0) + 1
        self.count.update(count)
        return (value[0], count)


class EveryThird(FlatMapFunction):
    """Collects a key's values; every third one emits (and clears) the collected batch."""

    def open(self, runtime_context):
        self.seen = runtime_context.get_list_state(ListStateDescriptor("seen", Types.INT()))

    def flat_map(self, value):
        self.seen.add(value[1])
        values = list(self.seen.get())
        if len(values) == 3:
            self.seen.clear()
            yield (value[0], values)


class FirstOfKey(FilterFunction):
    def open(self, runtime_context):
        self.seen = runtime_context.get_state(ValueStateDescriptor("seen", Types.BOOLEAN()))

    def filter(self, value):
        if self.seen.value():
            return False
        self.seen.update(True)
        return True


KEYED_DATA = [(f"k{i % 4}", i) for i in range(40)]


def test_keyed_map_with_value_state_counts_per_key(executor, tmp_path):
    env = _env(tmp_path)
    out = list(env.from_collection(KEYED_DATA).key_by(lambda r: r[0]).map(CountPerKey())
               .execute_and_collect())
    assert _by_key_in_order(out, lambda r: r[0]) == {
        f"k{k}": [(f"k{k}", c) for c in range(1, 11)] for k in range(4)}


def test_keyed_flat_map_with_list_state(executor, tmp_path):
    env = _env(tmp_path)
    out = list(env.from_collection(KEYED_DATA).key_by(lambda r: r[0]).flat_map(EveryThird())
               .execute_and_collect())
    expected = []
    for key, group in _per_key(KEYED_DATA, lambda r: r[0]).items():
        values = [v for _, v in group]
        expected += [(key, values[i:i + 3]) for i in range(0, len(values) - 2, 3)]
    assert sorted(out) == sorted(expected)


def test_keyed_filter_with_state_keeps_each_keys_first_record(executor, tmp_path):
    env = _env(tmp_path)
    out = list(env.from_collection(KEYED_DATA).key_by(lambda r: r[0]).filter(FirstOfKey())
               .execute_and_collect())
    assert sorted(out) == [("k0", 0), ("k1", 1), ("k2", 2), ("k3", 3)]


def test_key_by_of_a_keyed_stream_rekeys(executor, tmp_path):
    env = _env(tmp_path)
    data = [(i % 3, i % 2, 1) for i in range(12)]
    out = list(env.from_collection(data).key_by(lambda r: r[0]).key_by(lambda r: r[1])
               .reduce(lambda a, b: (a[0], a[1], a[2] + b[2])).execute_and_collect())
    final = {}
    for _, k, n in out:
        final[k] = max(n, final.get(k, 0))
    assert final == {0: 6, 1: 6}


def test_keyed_state_is_scoped_to_the_key_not_the_subtask(executor, tmp_path):
    env = _env(tmp_path, parallelism=1)  # every key on one subtask: state must still split
    out = list(env.from_collection(KEYED_DATA).key_by(lambda r: r[0]).map(CountPerKey())
               .execute_and_collect())
    assert collections.Counter(k for k, _ in out) == {f"k{k}": 10 for k in range(4)}
    assert max(c for _, c in out) == 10


def test_many_keys_reduce(executor, tmp_path):
    env = _env(tmp_path, parallelism=3)
    data = [(i % 97, 1) for i in range(5000)]
    out = list(env.from_collection(data).key_by(lambda r: r[0])
               .reduce(lambda a, b: (a[0], a[1] + b[1])).execute_and_collect())
    final = {}
    for k, n in out:
        final[k] = max(n, final.get(k, 0))
    assert final == dict(collections.Counter(k for k, _ in data))
    assert len(out) == len(data)
