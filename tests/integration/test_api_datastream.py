"""DataStream methods run end to end (TaskManagers as threads of this process, real RPC and
TCP): transformations, partitioning, operator settings, sinks and ``execute_and_collect``.

Expected results are computed in the test with plain Python, following PyFlink's documented
semantics. User functions that share state with the test are module-level classes.
"""

import collections
import itertools
import os
import threading

import pytest

from flintlock.common import Row, Types, WatermarkStrategy
from flintlock.common.config import Configuration
from flintlock.common.job_status import JobStatus
from flintlock.common.serialization import Encoder
from flintlock.datastream import (
    FilterFunction,
    FlatMapFunction,
    KeySelector,
    MapFunction,
    Partitioner,
    ProcessFunction,
)
from flintlock.datastream.connectors.file_system import (
    BucketAssigner,
    FileSink,
    OutputFileConfig,
)
from flintlock.datastream.connectors.number_seq import NumberSequenceSource
from flintlock.testing.environments import local_environment
from flintlock.testing.executor import ThreadExecutor

WAIT_S = 30.0
EVENTS: dict[str, threading.Event] = {}
LOCK = threading.Lock()


class RecordingExecutor(ThreadExecutor):
    """Remembers the slots each job asked for (``asked_slots``; ``slots`` is the cluster's
    size, None: any) and the handle of each job."""

    def __init__(self):
        super().__init__()
        self.asked_slots = []
        self.handles = []

    def create_launcher(self, configuration, slots_needed):
        self.asked_slots.append(slots_needed)
        return super().create_launcher(configuration, slots_needed)

    def _start(self, *args, **kwargs):
        handle = super()._start(*args, **kwargs)
        self.handles.append(handle)
        return handle


@pytest.fixture
def executor(monkeypatch):
    import flintlock.datastream.stream_execution_environment as environment

    EVENTS.clear()
    recording = RecordingExecutor()
    monkeypatch.setattr(environment, "load_executor", lambda: recording)
    return recording


def _env(tmp_path, parallelism=1):
    return local_environment(tmp_path, parallelism)


def _event(name):
    with LOCK:
        return EVENTS.setdefault(name, threading.Event())


def _vertex_names(executor):
    return [v.name for v in executor.handles[-1].jm.job_graph.vertices]


class WhereAmI(MapFunction):
    """Tags each record with the index of the subtask that saw it and the parallelism."""

    def open(self, runtime_context):
        self.index = runtime_context.get_index_of_this_subtask()
        self.parallelism = runtime_context.get_number_of_parallel_subtasks()

    def map(self, value):
        return (value, self.index, self.parallelism)


def _per_subtask(out):
    groups = collections.defaultdict(list)
    for value, index, _ in out:
        groups[index].append(value)
    return {index: sorted(values) for index, values in groups.items()}


# -- transformations --------------------------------------------------------------------------


class Square(MapFunction):
    def map(self, value):
        return value * value


class Words(FlatMapFunction):
    def flat_map(self, value):
        yield from value.split()


class Even(FilterFunction):
    def filter(self, value):
        return value % 2 == 0


def test_map_with_a_function_and_a_lambda(executor, tmp_path):
    env = _env(tmp_path, parallelism=2)
    data = list(range(-5, 20))
    out = (env.from_collection(data).map(Square()).map(lambda x: x + 1, Types.INT())
           .execute_and_collect())
    assert sorted(out) == sorted(x * x + 1 for x in data)


@pytest.mark.parametrize("splitter", [
    Words(),
    lambda line: line.split(),                   # returns a list
    lambda line: (w for w in line.split()),      # returns a generator
], ids=["generator-method", "list-lambda", "generator-lambda"])
def test_flat_map_yielding_or_returning(executor, tmp_path, splitter):
    lines = ["a b c", "", "d e", "f"]
    env = _env(tmp_path, parallelism=2)
    out = env.from_collection(lines).flat_map(splitter).execute_and_collect()
    assert sorted(out) == sorted(w for line in lines for w in line.split())


def test_flat_map_returning_none_emits_nothing(executor, tmp_path):
    env = _env(tmp_path)
    out = list(env.from_collection([1, 2, 3]).flat_map(
        lambda x: None if x == 2 else [x, x]).execute_and_collect())
    assert out == [1, 1, 3, 3]


def test_filter_with_a_function_and_a_lambda(executor, tmp_path):
    env = _env(tmp_path, parallelism=2)
    data = list(range(50))
    out = (env.from_collection(data).filter(Even()).filter(lambda x: x % 3 == 0)
           .execute_and_collect())
    assert sorted(out) == [x for x in data if x % 6 == 0]


class Describe(ProcessFunction):
    """Emits two records per input and reads the context."""

    def open(self, runtime_context):
        self.index = runtime_context.get_index_of_this_subtask()

    def process_element(self, value, ctx):
        service = ctx.timer_service()
        now = service.current_processing_time()
        yield (value, ctx.timestamp(), isinstance(now, int) and now > 0)
        yield (value, "copy", self.index)


def test_process_function_emits_what_it_yields_and_sees_its_context(executor, tmp_path):
    env = _env(tmp_path)
    out = list(env.from_collection([1, 2]).process(Describe()).execute_and_collect())
    # a record without a timestamp: ctx.timestamp() is Long.MIN_VALUE, as real PyFlink gives
    # (tests/parity/expected/context_timestamps.txt)
    no_timestamp = -(2**63)
    assert out == [(1, no_timestamp, True), (1, "copy", 0), (2, no_timestamp, True),
                   (2, "copy", 0)]


def test_key_by_sends_each_key_to_one_subtask(executor, tmp_path):
    env = _env(tmp_path, parallelism=3)
    data = [(f"k{i % 11}", i) for i in range(200)]
    out = list(env.from_collection(data).key_by(lambda p: p[0]).map(WhereAmI())
               .execute_and_collect())
    assert sorted(v for v, _, _ in out) == sorted(data)
    subtasks = collections.defaultdict(set)
    for (key, _), index, _ in out:
        subtasks[key].add(index)
    assert all(len(indexes) == 1 for indexes in subtasks.values())


class FirstField(KeySelector):
    def get_key(self, value):
        return value[0]


def test_key_by_with_a_key_selector_object(executor, tmp_path):
    env = _env(tmp_path, parallelism=2)
    data = [("a", 1), ("b", 2), ("a", 3)]
    out = env.from_collection(data).key_by(FirstField()).reduce(
        lambda x, y: (x[0], x[1] + y[1])).execute_and_collect()
    assert sorted(out) == [("a", 1), ("a", 4), ("b", 2)]


def test_union_of_several_streams(executor, tmp_path):
    env = _env(tmp_path, parallelism=2)
    a = env.from_collection([1, 2, 3])
    b = env.from_collection([10, 20])
    c = env.from_collection([100]).map(lambda x: x + 1)
    d = env.from_source(NumberSequenceSource(1000, 1004), WatermarkStrategy.no_watermarks(),
                        "numbers")
    out = a.union(b, c, d).map(lambda x: -x).execute_and_collect()
    assert sorted(out) == sorted(-x for x in [1, 2, 3, 10, 20, 101, *range(1000, 1005)])


def test_union_with_itself_duplicates_records(executor, tmp_path):
    env = _env(tmp_path)
    a = env.from_collection(["x", "y"])
    assert sorted(a.union(a).execute_and_collect()) == ["x", "x", "y", "y"]


# -- partitioning ------------------------------------------------------------------------------


def test_shuffle_delivers_every_record_once(executor, tmp_path):
    env = _env(tmp_path, parallelism=3)
    out = list(env.from_collection(list(range(300))).shuffle().map(WhereAmI())
               .execute_and_collect())
    assert sorted(v for v, _, _ in out) == list(range(300))
    assert {index for _, index, _ in out} == {0, 1, 2}


def test_rebalance_is_round_robin(executor, tmp_path):
    env = _env(tmp_path, parallelism=3)
    out = list(env.from_collection(list(range(30))).rebalance().map(WhereAmI())
               .execute_and_collect())
    groups = _per_subtask(out)
    assert sorted(v for values in groups.values() for v in values) == list(range(30))
    assert sorted(len(values) for values in groups.values()) == [10, 10, 10]
    for values in groups.values():  # consecutive records of one sender differ by 3
        assert {b - a for a, b in itertools.pairwise(values)} == {3}


def test_rescale_sends_each_upstream_subtask_to_its_own_downstream_subtasks(executor, tmp_path):
    env = _env(tmp_path, parallelism=2)
    numbers = env.from_source(NumberSequenceSource(1, 100), WatermarkStrategy.no_watermarks(),
                              "numbers")  # split i (1..50, 51..100) goes to subtask i
    out = list(numbers.rescale().map(WhereAmI()).set_parallelism(4).execute_and_collect())
    groups = _per_subtask(out)
    assert sorted(groups) == [0, 1, 2, 3]
    assert sorted(groups[0] + groups[1]) == list(range(1, 51))
    assert sorted(groups[2] + groups[3]) == list(range(51, 101))
    assert [len(groups[i]) for i in range(4)] == [25, 25, 25, 25]


def test_forward_keeps_records_on_the_same_subtask_index(executor, tmp_path):
    env = _env(tmp_path, parallelism=2)
    numbers = env.from_source(NumberSequenceSource(1, 100), WatermarkStrategy.no_watermarks(),
                              "numbers")
    out = list(numbers.forward().map(WhereAmI()).disable_chaining().execute_and_collect())
    assert _per_subtask(out) == {0: list(range(1, 51)), 1: list(range(51, 101))}


def test_broadcast_sends_every_record_to_every_subtask(executor, tmp_path):
    env = _env(tmp_path, parallelism=3)
    data = ["a", "b", "c", "d", "e"]
    out = list(env.from_collection(data).broadcast().map(WhereAmI()).execute_and_collect())
    assert _per_subtask(out) == {0: data, 1: data, 2: data}


def test_global_sends_every_record_to_the_first_subtask(executor, tmp_path):
    env = _env(tmp_path, parallelism=3)
    out = list(env.from_collection(list(range(20))).global_().map(WhereAmI())
               .execute_and_collect())
    assert _per_subtask(out) == {0: list(range(20))}


class ByModulo(Partitioner):
    def partition(self, key, num_partitions):
        return key % num_partitions


@pytest.mark.parametrize("partitioner", [ByModulo(), lambda key, n: (key * 7) % n],
                         ids=["object", "lambda"])
def test_partition_custom_puts_records_on_the_chosen_subtask(executor, tmp_path, partitioner):
    env = _env(tmp_path, parallelism=3)
    data = [(i, f"v{i}") for i in range(30)]
    out = list(env.from_collection(data).partition_custom(partitioner, lambda r: r[0])
               .map(WhereAmI()).execute_and_collect())
    assert sorted(v for v, _, _ in out) == data
    choose = partitioner.partition if isinstance(partitioner, Partitioner) else partitioner
    for (key, _), index, parallelism in out:
        assert parallelism == 3
        assert index == choose(key, 3)


# -- operator settings -------------------------------------------------------------------------


def test_operator_set_parallelism_and_max_parallelism(executor, tmp_path):
    env = _env(tmp_path, parallelism=1)

    class MaxParallelism(MapFunction):
        def open(self, runtime_context):
            self.max = runtime_context.get_max_number_of_parallel_subtasks()

        def map(self, value):
            return self.max

    out = list(env.from_collection(list(range(12))).key_by(lambda x: x % 4)
               .map(WhereAmI()).set_parallelism(3).set_max_parallelism(5)
               .map(lambda r: r[2]).set_parallelism(2)
               .key_by(lambda x: x).map(MaxParallelism()).set_max_parallelism(9)
               .execute_and_collect())
    assert out == [9] * 12
    stream = env.from_collection([1]).map(WhereAmI()).set_parallelism(2).set_max_parallelism(5)
    stream2 = stream.key_by(lambda r: r[0]).map(MaxParallelism()).set_max_parallelism(5)
    assert list(stream2.execute_and_collect()) == [5]


def test_operator_set_parallelism_is_what_the_subtasks_see(executor, tmp_path):
    env = _env(tmp_path, parallelism=1)
    out = list(env.from_collection(list(range(40))).rebalance().map(WhereAmI())
               .set_parallelism(4).execute_and_collect())
    assert {p for _, _, p in out} == {4}
    assert {i for _, i, _ in out} == {0, 1, 2, 3}


class TaskName(MapFunction):
    def open(self, runtime_context):
        self.name = runtime_context.get_task_name()

    def map(self, value):
        return self.name


def test_name_appears_in_the_task_name(executor, tmp_path):
    env = _env(tmp_path)
    out = list(env.from_collection([1]).map(TaskName()).name("who am i")
               .execute_and_collect())
    assert len(out) == 1 and "who am i" in out[0]
    assert any("who am i" in name for name in _vertex_names(executor))


def test_disable_chaining_and_start_new_chain_split_the_chain(executor, tmp_path):
    env = _env(tmp_path)
    (env.from_collection(list(range(10)))
        .map(lambda x: x + 1).name("m1")
        .map(lambda x: x * 2).name("m2").start_new_chain()
        .map(lambda x: x - 3).name("m3")
        .map(lambda x: x * 5).name("m4").disable_chaining()
        .map(lambda x: x + 7).name("m5")
        .print().name("out"))
    client = env.execute_async("chains")
    client.get_job_execution_result().result(WAIT_S)
    names = [v.name for v in client.jm.job_graph.vertices]
    assert names == ["Source: Collection Source -> m1", "m2 -> m3", "m4", "m5 -> out"]


def test_chaining_settings_do_not_change_results(executor, tmp_path):
    env = _env(tmp_path, parallelism=2)
    data = list(range(100))
    out = (env.from_collection(data).map(lambda x: x + 1).start_new_chain()
           .map(lambda x: x * 2).disable_chaining().filter(lambda x: x % 3)
           .execute_and_collect())
    assert sorted(out) == [y for y in ((x + 1) * 2 for x in data) if y % 3]


def test_slot_sharing_groups_results_unchanged_and_slots_as_expected(executor, tmp_path):
    env = _env(tmp_path, parallelism=2)
    data = list(range(100))
    out = (env.from_collection(data).map(lambda x: x + 1)
           .map(lambda x: x * 2).slot_sharing_group("heavy").set_parallelism(3)
           .execute_and_collect())
    assert sorted(out) == [(x + 1) * 2 for x in data]
    # default group: source (1) and first map (2); "heavy": the second map (3) and the
    # collect sink, which inherits its input's group
    assert executor.asked_slots[-1] == 2 + 3
    out = env.from_collection(data).map(lambda x: x + 1).map(lambda x: x * 2).set_parallelism(
        3).execute_and_collect()
    assert sorted(out) == [(x + 1) * 2 for x in data]
    assert executor.asked_slots[-1] == 3


# -- uid: state follows the operator across a changed job --------------------------------------


class Throttle(MapFunction):
    """5 ms a record until the named event is set (so batches stay small and checkpoint
    triggers are taken between them); sets ``started`` from record ``limit`` on."""

    def __init__(self, name, limit):
        self.name = name
        self.limit = limit

    def map(self, value):
        if value >= self.limit:
            _event(self.name + "/started").set()
        _event(self.name + "/release").wait(0.005)
        return value


def _counting_job(env, n, limit, extra_step):
    numbers = (env.from_collection(list(range(n))).uid("numbers")
               .map(Throttle("u", limit)).set_parallelism(1))  # chained: holds the source back
    if extra_step:
        numbers = numbers.filter(lambda x: True).name("an operator the first job lacked")
    return (numbers.key_by(lambda x: x % 5).map(lambda x: (x % 5, 1))
            .key_by(lambda p: p[0]).reduce(lambda a, b: (a[0], a[1] + b[1])).uid("counts"))


def test_uid_lets_state_be_restored_into_a_changed_job(executor, tmp_path):
    n = 2000
    env = _env(tmp_path, parallelism=2)
    env.enable_checkpointing(1000)
    _counting_job(env, n, 100, extra_step=False).print()
    client = env.execute_async("first")
    assert _event("u/started").wait(WAIT_S) and client.jm.wait_until_running(WAIT_S)
    path = client.stop_with_savepoint(savepoint_directory=str(tmp_path / "sp")).result(WAIT_S)
    _event("u/release").set()
    assert client.jm.wait_for_status({JobStatus.FINISHED}, WAIT_S)

    config = Configuration().set_string("execution.state-recovery.path", path)
    env2 = _env(tmp_path / "second", parallelism=2)
    env2.configure(config)
    out = list(_counting_job(env2, n, n, extra_step=True).execute_and_collect())
    assert 0 < len(out) < n  # the savepoint was taken in the middle of the input
    final = {}
    for key, count in out:
        final[key] = max(count, final.get(key, 0))
    assert final == {k: n // 5 for k in range(5)}


# -- sinks -------------------------------------------------------------------------------------


def test_print_at_parallelism_one_prints_the_values(executor, tmp_path, capfd):
    env = _env(tmp_path)
    env.from_collection([("a", 1), ("b", 2)]).print()
    env.execute("print")
    assert capfd.readouterr().out.splitlines() == ["('a', 1)", "('b', 2)"]


def test_print_prefixes_the_subtask_number_and_identifier(executor, tmp_path, capfd):
    env = _env(tmp_path, parallelism=2)
    data = list(range(10))
    stream = env.from_collection(data).key_by(lambda x: x % 2).map(lambda x: x)
    stream.print()
    stream.print("tag")
    env.execute("print")
    lines = capfd.readouterr().out.splitlines()
    plain = sorted(line for line in lines if not line.startswith("tag"))
    tagged = sorted(line for line in lines if line.startswith("tag"))
    prefixes = {line.split("> ")[0] for line in plain}
    assert prefixes <= {"1", "2"}
    assert sorted(int(line.split("> ")[1]) for line in plain) == data
    assert {line.split("> ")[0] for line in tagged} <= {"tag:1", "tag:2"}
    assert sorted(int(line.split("> ")[1]) for line in tagged) == data
    # the same record goes to the same subtask in both sinks (same keyed upstream)
    assert sorted(line.replace("tag:", "") for line in tagged) == plain


def test_print_of_rows_uses_the_row_kind_format(executor, tmp_path, capfd):
    env = _env(tmp_path)
    row_type = Types.ROW_NAMED(["w", "n"], [Types.STRING(), Types.INT()])
    env.from_collection([("a", 1)], row_type).print("rows")
    env.execute("print rows")
    # Java's Row.toString, as real PyFlink prints it (tests/parity/expected/print_formats.txt)
    assert capfd.readouterr().out.splitlines() == ["rows> +I[a,1]"]


def test_sink_to_a_file_sink(executor, tmp_path):
    env = _env(tmp_path, parallelism=2)
    out_dir = tmp_path / "out"
    sink = (FileSink.for_row_format(str(out_dir), Encoder.simple_string_encoder())
            .with_bucket_assigner(BucketAssigner.base_path_bucket_assigner())
            .with_output_file_config(OutputFileConfig.builder().with_part_suffix(".txt").build())
            .build())
    data = [f"row {i}" for i in range(100)]
    env.from_collection(data).map(lambda s: s.upper()).sink_to(sink)
    env.execute("file sink")
    lines = []
    for directory, _, names in os.walk(out_dir):
        for name in names:
            if not name.startswith("."):
                with open(os.path.join(directory, name), encoding="utf-8") as f:
                    lines.extend(f.read().splitlines())
    assert sorted(lines) == sorted(s.upper() for s in data)


def test_execute_and_collect_iterates_all_records(executor, tmp_path):
    env = _env(tmp_path)
    with env.from_collection([Row(1, "a"), Row(2, "b")]).execute_and_collect("it") as records:
        assert list(records) == [Row(1, "a"), Row(2, "b")]
    assert executor.handles[-1].jm.job_graph.name == "it"


def test_execute_and_collect_limit_stops_early_and_cancels_the_job(executor, tmp_path):
    env = _env(tmp_path)
    n = 100_000
    stream = env.from_collection(list(range(n))).map(Throttle("limit", 0))
    assert stream.execute_and_collect("limited", limit=5) == [0, 1, 2, 3, 4]
    jm = executor.handles[-1].jm
    assert jm.wait_for_status({JobStatus.CANCELED}, WAIT_S)
    assert executor.handles[-1].join(WAIT_S)
