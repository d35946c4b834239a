"""User functions end to end (TaskManagers as threads of this process): ``open`` and
``close`` once per subtask for every function kind, what the RuntimeContext tells a function
about where it runs, and plain callables wherever PyFlink accepts them.
"""

import collections

from flintlock.datastream import (
    CoFlatMapFunction,
    CoMapFunction,
    CoProcessFunction,
    FilterFunction,
    FlatMapFunction,
    KeyedCoProcessFunction,
    KeyedProcessFunction,
    MapFunction,
    ProcessFunction,
    ReduceFunction,
)
from flintlock.testing.environments import local_environment
from flintlock.testing.recording import Recording

CALLS = Recording("process_functions.calls")  # ("open" or "close", label, subtask index)


def _env(tmp_path, parallelism=3):
    return local_environment(tmp_path, parallelism)


class Lifecycle:
    """Mixin: records open/close per (label, subtask); records seen while open are checked."""

    label = ""

    def open(self, runtime_context):
        self.index = runtime_context.get_index_of_this_subtask()
        self.is_open = True
        CALLS.append(("open", self.label, self.index))

    def close(self):
        self.is_open = False
        CALLS.append(("close", self.label, self.index))

    def check(self):
        assert self.is_open, f"{self.label}: a record before open() or after close()"


class LMap(Lifecycle, MapFunction):
    label = "map"

    def map(self, value):
        self.check()
        return value


class LFlatMap(Lifecycle, FlatMapFunction):
    label = "flat_map"

    def flat_map(self, value):
        self.check()
        yield value


class LFilter(Lifecycle, FilterFunction):
    label = "filter"

    def filter(self, value):
        self.check()
        return True


class LProcess(Lifecycle, ProcessFunction):
    label = "process"

    def process_element(self, value, ctx):
        self.check()
        yield value


class LKeyedProcess(Lifecycle, KeyedProcessFunction):
    label = "keyed_process"

    def process_element(self, value, ctx):
        self.check()
        yield value


class LReduce(Lifecycle, ReduceFunction):
    label = "reduce"

    def reduce(self, value1, value2):
        self.check()
        return value2


class LCoMap(Lifecycle, CoMapFunction):
    label = "co_map"

    def map1(self, value):
        self.check()
        return value

    def map2(self, value):
        self.check()
        return value


class LCoFlatMap(Lifecycle, CoFlatMapFunction):
    label = "co_flat_map"

    def flat_map1(self, value):
        self.check()
        return [value]

    def flat_map2(self, value):
        self.check()
        return [value]


class LCoProcess(Lifecycle, CoProcessFunction):
    label = "co_process"

    def process_element1(self, value, ctx):
        self.check()
        yield value

    def process_element2(self, value, ctx):
        self.check()
        yield value


class LKeyedCoProcess(Lifecycle, KeyedCoProcessFunction):
    label = "keyed_co_process"

    def process_element1(self, value, ctx):
        self.check()
        yield value

    def process_element2(self, value, ctx):
        self.check()
        yield value


def test_open_and_close_once_per_subtask_for_every_function_kind(executor, tmp_path):
    env = _env(tmp_path)
    data = list(range(60))
    stream = (env.from_collection(data).rebalance().map(LMap()).flat_map(LFlatMap())
              .filter(LFilter()).process(LProcess())
              .key_by(lambda x: x % 7).process(LKeyedProcess())
              .key_by(lambda x: x % 7).reduce(LReduce()))
    other = env.from_collection([-1, -2]).rebalance()
    stream = stream.connect(other).map(LCoMap()).connect(other).flat_map(LCoFlatMap())
    stream = stream.connect(other).process(LCoProcess())
    stream = (stream.connect(other).key_by(lambda x: x % 7, lambda x: x % 7)
              .process(LKeyedCoProcess()))
    out = list(stream.execute_and_collect())
    assert len(out) == len(data) + 4 * 2
    labels = ["map", "flat_map", "filter", "process", "keyed_process", "reduce", "co_map",
              "co_flat_map", "co_process", "keyed_co_process"]
    calls = CALLS.items()
    counts = collections.Counter(calls)
    expected = {(call, label, index): 1 for call in ("open", "close") for label in labels
                for index in range(3)}
    assert dict(counts) == expected
    for label in labels:  # each subtask opens before it closes
        for index in range(3):
            assert calls.index(("open", label, index)) < calls.index(("close", label, index))


class Context(MapFunction):
    def open(self, runtime_context):
        self.info = (runtime_context.get_index_of_this_subtask(),
                     runtime_context.get_number_of_parallel_subtasks(),
                     runtime_context.get_task_name(),
                     runtime_context.get_task_name_with_subtasks(),
                     runtime_context.get_attempt_number())

    def map(self, value):
        return self.info


def test_runtime_context_describes_the_subtask(executor, tmp_path):
    env = _env(tmp_path, parallelism=1)
    out = set(env.from_collection(list(range(40))).rebalance().map(Context()).name("ctx")
              .set_parallelism(4).execute_and_collect())
    assert {index for index, *_ in out} == {0, 1, 2, 3}
    for index, parallelism, task, with_subtasks, attempt in out:
        assert parallelism == 4
        assert "ctx" in task
        assert with_subtasks == f"{task} ({index + 1}/4)"
        assert attempt == 0


def test_chained_functions_share_the_task_name(executor, tmp_path):
    env = _env(tmp_path, parallelism=1)
    out = set(env.from_collection([1, 2]).map(lambda x: x).name("first")
              .map(Context()).name("second").execute_and_collect())
    assert len(out) == 1
    task = next(iter(out))[2]
    assert "first" in task and "second" in task


def test_plain_callables_wherever_pyflink_takes_them(executor, tmp_path):
    env = _env(tmp_path, parallelism=2)
    data = list(range(30))
    out = list(env.from_collection(data)
               .map(lambda x: x + 1)
               .flat_map(lambda x: [x, -x])
               .filter(lambda x: x > 0)
               .partition_custom(lambda key, n: key % n, lambda x: x)
               .map(lambda x: (x % 3, x))
               .key_by(lambda p: p[0])
               .reduce(lambda a, b: (a[0], a[1] + b[1]))
               .execute_and_collect())
    final = {}
    for key, total in out:
        final[key] = max(total, final.get(key, 0))
    totals = collections.defaultdict(int)
    for x in data:
        totals[(x + 1) % 3] += x + 1
    assert final == dict(totals)
    assert len(out) == len(data)


def _double(x):
    return 2 * x


def test_module_functions_and_bound_methods_as_callables(executor, tmp_path):
    env = _env(tmp_path, parallelism=2)
    seen = {3, 4}
    out = list(env.from_collection([1, 2, 3]).map(_double).filter(seen.__contains__)
               .execute_and_collect())
    assert sorted(out) == [4]
