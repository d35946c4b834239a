"""DataStream operators and settings: the nodes, edges, partitioners, parallelism, chaining
flags, uids and slot sharing groups of the stream graph they build."""

from typing import Any

import pytest

from flintlock.common import Types
from flintlock.common.operator_spec import CollectSink, OperatorKind, PrintSink
from flintlock.datastream import (
    DataStream,
    FlatMapFunction,
    KeyedProcessFunction,
    MapFunction,
    ProcessFunction,
    SlotSharingGroup,
    StreamExecutionEnvironment,
)
from flintlock.datastream.connectors import Sink
from flintlock.datastream.errors import (
    InvalidOperatorSettingError,
    KeyedStreamRequiredError,
    NotAnOperatorError,
)
from flintlock.datastream.functions import FunctionTypeError
from flintlock.graph.stream_graph import ChainingStrategy, PartitionerKind, StreamGraph


def numbers(env: StreamExecutionEnvironment) -> DataStream:
    return env.from_collection([1, 2, 3], Types.INT())


def edge_kinds(graph: StreamGraph) -> list[tuple[int, int, Any, int]]:
    return [(edge.source_id, edge.target_id,
             edge.partitioner.kind if edge.partitioner else None, edge.input_index)
            for edge in graph.edges]


class Plus(MapFunction):
    def map(self, value: int) -> int:
        return value + 1


class Split(FlatMapFunction):
    def flat_map(self, value: str) -> Any:
        yield from value.split()


class Echo(ProcessFunction):
    def process_element(self, value: Any, ctx: Any) -> Any:
        yield value


def test_map_flat_map_filter_process_chain_into_a_line(env: StreamExecutionEnvironment) -> None:
    plus, split, echo = Plus(), Split(), Echo()
    (numbers(env).map(plus, Types.INT()).flat_map(split).filter(lambda v: v)
     .process(echo, Types.STRING()).print())
    graph = env.get_stream_graph()
    names = [node.name for node in graph.topological_order()]
    assert names == ["Collection Source", "Map", "FlatMap", "Filter", "Process",
                     "Print to Std. Out"]
    specs = [graph.node(node_id).operator for node_id in range(2, 6)]
    assert [spec.kind for spec in specs] == [OperatorKind.MAP, OperatorKind.FLAT_MAP,
                                             OperatorKind.FILTER, OperatorKind.PROCESS]
    assert specs[0].function is plus and specs[1].function is split
    assert specs[3].function is echo
    assert [spec.output_type for spec in specs] == [Types.INT(), None, None, Types.STRING()]
    assert not any(spec.keyed for spec in specs)
    assert edge_kinds(graph) == [(1, 2, None, 0), (2, 3, None, 0), (3, 4, None, 0),
                                 (4, 5, None, 0), (5, 6, None, 0)]
    assert all(graph.node(node_id).key_selectors == () for node_id in graph.nodes)


def test_lambdas_are_wrapped_into_function_objects(env: StreamExecutionEnvironment) -> None:
    double = lambda value: value * 2  # noqa: E731
    numbers(env).map(double).print()
    spec = env.get_stream_graph().node(2).operator
    assert isinstance(spec.function, MapFunction)
    assert spec.function.map is double


def test_types_flow_through(env: StreamExecutionEnvironment) -> None:
    stream = numbers(env)
    assert stream.get_type() == Types.INT()
    assert stream.filter(bool).get_type() == Types.INT()
    assert stream.map(str).get_type() == Types.PICKLED_BYTE_ARRAY()
    assert stream.map(str, Types.STRING()).get_type() == Types.STRING()
    assert stream.shuffle().get_type() == Types.INT()
    with pytest.raises(TypeError, match="TypeInformation"):
        stream.map(str, Types.STRING)  # type: ignore[arg-type]


def test_process_rejects_keyed_and_non_process_functions(env: StreamExecutionEnvironment
                                                         ) -> None:
    class Keyed(KeyedProcessFunction):
        def process_element(self, value: Any, ctx: Any) -> Any:
            return None

    with pytest.raises(KeyedStreamRequiredError, match="call key_by"):
        numbers(env).process(Keyed())
    with pytest.raises(FunctionTypeError):
        numbers(env).process(lambda value, ctx: [value])  # type: ignore[arg-type]


@pytest.mark.parametrize(("method", "kind"), [
    ("shuffle", PartitionerKind.SHUFFLE), ("rebalance", PartitionerKind.REBALANCE),
    ("rescale", PartitionerKind.RESCALE), ("forward", PartitionerKind.FORWARD),
    ("broadcast", PartitionerKind.BROADCAST), ("global_", PartitionerKind.GLOBAL),
])
def test_partitioning_sets_the_partitioner_of_the_next_edge(
        env: StreamExecutionEnvironment, method: str, kind: PartitionerKind) -> None:
    getattr(numbers(env), method)().map(str).print()
    graph = env.get_stream_graph()
    assert edge_kinds(graph)[0] == (1, 2, kind, 0)
    assert edge_kinds(graph)[1] == (2, 3, None, 0)
    assert len(graph.nodes) == 3


def test_partition_custom_carries_partitioner_and_key_selector(
        env: StreamExecutionEnvironment) -> None:
    by_parity = lambda key, partitions: key % partitions  # noqa: E731
    identity = lambda value: value  # noqa: E731
    numbers(env).partition_custom(by_parity, identity).print()
    partitioner = env.get_stream_graph().edges[0].partitioner
    assert partitioner is not None and partitioner.kind is PartitionerKind.CUSTOM
    assert partitioner.custom is by_parity and partitioner.key_selector is identity


def test_the_last_partitioning_call_wins(env: StreamExecutionEnvironment) -> None:
    numbers(env).shuffle().rebalance().print()
    assert edge_kinds(env.get_stream_graph())[0][2] is PartitionerKind.REBALANCE


def test_union_reads_every_input_with_its_partitioner(env: StreamExecutionEnvironment) -> None:
    first, second, third = numbers(env), numbers(env), numbers(env)
    first.union(second.rebalance(), third).map(str).print()
    graph = env.get_stream_graph()
    assert edge_kinds(graph)[:3] == [(1, 4, None, 0), (2, 4, PartitionerKind.REBALANCE, 0),
                                     (3, 4, None, 0)]


def test_settings_land_on_the_node(env: StreamExecutionEnvironment) -> None:
    (numbers(env).map(str).name("to text").uid("text-uid").set_parallelism(3)
     .set_max_parallelism(12).set_buffer_timeout(0).slot_sharing_group("red")
     .set_description("makes text").print())
    node = env.get_stream_graph().node(2)
    assert (node.name, node.uid, node.parallelism, node.max_parallelism,
            node.buffer_timeout_ms, node.slot_sharing_group) == (
        "to text", "text-uid", 3, 12, 0, "red")
    assert env.get_stream_graph().node(3).slot_sharing_group == "red"


def test_operator_buffer_timeout_minus_one_means_the_job_default(
        env: StreamExecutionEnvironment) -> None:
    numbers(env).map(str).set_buffer_timeout(5).set_buffer_timeout(-1).print()
    assert env.get_stream_graph().node(2).buffer_timeout_ms is None


def test_chaining_flags(env: StreamExecutionEnvironment) -> None:
    stream = numbers(env)
    stream.map(str).disable_chaining().print()
    stream.map(str).start_new_chain().print()
    stream.map(str).print()
    graph = env.get_stream_graph()
    assert [graph.node(node_id).chaining for node_id in (2, 4, 6)] == [
        ChainingStrategy.NEVER, ChainingStrategy.HEAD, ChainingStrategy.ALWAYS]
    assert graph.chaining_enabled
    env.disable_operator_chaining()
    assert not env.get_stream_graph().chaining_enabled


def test_slot_sharing_group_is_inherited_only_when_all_inputs_agree(
        env: StreamExecutionEnvironment) -> None:
    red = numbers(env).map(str).slot_sharing_group("red")
    blue = numbers(env).map(str).slot_sharing_group("blue")
    red.map(str).print()
    red.union(blue).map(str).print()
    graph = env.get_stream_graph()
    by_name = {node.id: node.slot_sharing_group for node in graph.nodes.values()}
    assert by_name == {1: "default", 2: "red", 3: "default", 4: "blue", 5: "red", 6: "red",
                       7: "default", 8: "default"}


def test_slot_sharing_group_objects_are_used_by_name(env: StreamExecutionEnvironment) -> None:
    group = SlotSharingGroup.builder("green").set_cpu_cores(1.0).set_task_heap_memory_mb(
        100).build()
    assert group.resources == {"cpu_cores": 1.0, "task_heap_memory_mb": 100}
    env.register_slot_sharing_group(group)
    numbers(env).map(str).slot_sharing_group(group).print()
    assert env.get_stream_graph().node(2).slot_sharing_group == "green"
    with pytest.raises(ValueError):
        SlotSharingGroup("")
    with pytest.raises(TypeError):
        env.register_slot_sharing_group("green")  # type: ignore[arg-type]


def test_get_name_and_name(env: StreamExecutionEnvironment) -> None:
    mapped = numbers(env).map(str)
    assert mapped.get_name() == "Map"
    assert mapped.name("renamed").get_name() == "renamed"
    assert mapped.get_execution_environment() is env


@pytest.mark.parametrize(("call", "match"), [
    (lambda s: s.set_parallelism(0), "parallelism 0"),
    (lambda s: s.set_parallelism(True), "parallelism True"),
    (lambda s: s.set_max_parallelism(40_000), "max parallelism 40000"),
    (lambda s: s.set_buffer_timeout(-2), "buffer timeout -2"),
    (lambda s: s.uid(""), "uid"),
    (lambda s: s.name(""), "name"),
    (lambda s: s.slot_sharing_group(3), "slot sharing group 3"),
])
def test_bad_settings_fail_naming_the_operator(env: StreamExecutionEnvironment, call: Any,
                                               match: str) -> None:
    with pytest.raises(InvalidOperatorSettingError, match=f"'Map': invalid {match}"):
        call(numbers(env).map(str))


def test_a_non_parallel_source_keeps_parallelism_one(env: StreamExecutionEnvironment) -> None:
    source = numbers(env)
    source.set_parallelism(1)
    with pytest.raises(InvalidOperatorSettingError, match="non-parallel"):
        source.set_parallelism(2)
    with pytest.raises(InvalidOperatorSettingError, match="non-parallel"):
        source.set_max_parallelism(4)


def test_force_non_parallel(env: StreamExecutionEnvironment) -> None:
    mapped = numbers(env).map(str).force_non_parallel()
    mapped.print()
    node = env.get_stream_graph().node(2)
    assert (node.parallelism, node.max_parallelism) == (1, 1)
    with pytest.raises(InvalidOperatorSettingError):
        mapped.set_parallelism(2)


@pytest.mark.parametrize("origin", ["shuffle", "rebalance", "union"])
@pytest.mark.parametrize("method", ["name", "uid", "set_parallelism", "disable_chaining",
                                    "get_name"])
def test_settings_on_a_stream_without_operator_are_rejected(
        env: StreamExecutionEnvironment, origin: str, method: str) -> None:
    stream = numbers(env)
    virtual = stream.union(numbers(env)) if origin == "union" else getattr(stream, origin)()
    arguments = {"name": ("x",), "uid": ("x",), "set_parallelism": (2,)}.get(method, ())
    with pytest.raises(NotAnOperatorError, match=rf"result of {origin}\(\)"):
        getattr(virtual, method)(*arguments)


def test_print_sink(env: StreamExecutionEnvironment) -> None:
    sink = numbers(env).print("numbers")
    sink.name("out").uid("out-uid").set_parallelism(2).disable_chaining()
    node = env.get_stream_graph().node(2)
    assert node.operator.kind is OperatorKind.SINK
    assert node.operator.sink == PrintSink("numbers")
    assert node.operator.output_type == Types.INT()
    assert (node.name, node.uid, node.parallelism, node.chaining) == (
        "out", "out-uid", 2, ChainingStrategy.NEVER)
    assert node.output_type is None


def test_sink_to_carries_the_sink(env: StreamExecutionEnvironment) -> None:
    class FileSink(Sink):
        pass

    sink = FileSink()
    numbers(env).sink_to(sink)
    node = env.get_stream_graph().node(2)
    assert node.operator.sink is sink and node.name == "FileSink"
    with pytest.raises(TypeError, match="Sink connector"):
        numbers(env).sink_to(print)  # type: ignore[arg-type]


def test_execute_and_collect_adds_a_collect_sink_and_runs(env: StreamExecutionEnvironment,
                                                          fake_executor: Any) -> None:
    fake_executor.collected = [1, 2, 3]
    stream = numbers(env).map(lambda v: v * 10)
    iterator = stream.execute_and_collect("collect job")
    assert list(iterator) == [1, 2, 3]
    ((_, graph, _, job_name, (collect_id,)),) = fake_executor.calls
    sink = graph.node(3)
    assert job_name == "collect job"
    assert sink.operator.sink == CollectSink(collect_id)
    assert sink.parallelism == 1


def test_execute_and_collect_with_limit_returns_a_list_and_closes(
        env: StreamExecutionEnvironment, fake_executor: Any) -> None:
    fake_executor.collected = [1, 2, 3]
    assert numbers(env).execute_and_collect(limit=2) == [1, 2]
    assert fake_executor.iterators[0].closed
    with pytest.raises(ValueError, match="positive"):
        numbers(env).execute_and_collect(limit=0)


def test_project_keeps_fields_of_a_tuple_stream(env: StreamExecutionEnvironment) -> None:
    rows = env.from_collection([(1, "a", 2.0)],
                               Types.TUPLE([Types.INT(), Types.STRING(), Types.DOUBLE()]))
    projected = rows.project(2, 0)
    projected.print()
    assert projected.get_type() == Types.TUPLE([Types.DOUBLE(), Types.INT()])
    spec = env.get_stream_graph().node(2).operator
    assert spec.kind is OperatorKind.MAP and spec.function.map((1, "a", 2.0)) == (2.0, 1)
    with pytest.raises(InvalidOperatorSettingError):
        rows.project(3)
    with pytest.raises(TypeError, match="TUPLE"):
        numbers(env).project(0)
