"""The stream graph: building, reading, default partitioners and validation rules."""

from __future__ import annotations

import pickle

import pytest

from flintlock.graph.errors import (
    DuplicateUidError,
    ForwardPartitioningError,
    GraphCycleError,
    InvalidEdgeError,
    InvalidNodeError,
    ParallelismError,
    UnknownNodeError,
)
from flintlock.graph.stream_graph import (
    ChainingStrategy,
    Partitioner,
    PartitionerKind,
    StreamGraph,
    default_max_parallelism,
)


def _key(value: object) -> object:
    return value


def _pick(key: object, n: int) -> int:
    return 0


def pipeline(*parallelisms: int | None) -> StreamGraph:
    """source -> op1 -> op2 ... with the given parallelisms (first is the source)."""
    graph = StreamGraph()
    previous = graph.add_node("src", "S", parallelism=parallelisms[0], is_source=True)
    for index, parallelism in enumerate(parallelisms[1:], start=1):
        node = graph.add_node(f"op{index}", f"O{index}", parallelism=parallelism)
        graph.add_edge(previous.id, node.id)
        previous = node
    return graph


class TestPartitioner:
    def test_helper_constructors_give_their_kind(self) -> None:
        assert Partitioner.forward().kind is PartitionerKind.FORWARD
        assert Partitioner.rebalance().kind is PartitionerKind.REBALANCE
        assert Partitioner.rescale().kind is PartitionerKind.RESCALE
        assert Partitioner.broadcast().kind is PartitionerKind.BROADCAST
        assert Partitioner.shuffle().kind is PartitionerKind.SHUFFLE
        assert Partitioner.global_().kind is PartitionerKind.GLOBAL
        hashed = Partitioner.hash(_key)
        assert (hashed.kind, hashed.key_selector, hashed.custom) == (
            PartitionerKind.HASH, _key, None)

    def test_custom_is_a_constructor_on_the_class_and_the_function_on_instances(self) -> None:
        custom = Partitioner.custom(_pick, _key)
        assert custom.kind is PartitionerKind.CUSTOM
        assert custom.custom is _pick
        assert custom.key_selector is _key
        assert Partitioner.forward().custom is None
        assert Partitioner.custom_partition(_pick, _key) == custom

    def test_only_forward_and_rescale_are_pointwise(self) -> None:
        pointwise = {kind for kind in PartitionerKind
                     if Partitioner(kind, *_args_for(kind)).is_pointwise}
        assert pointwise == {PartitionerKind.FORWARD, PartitionerKind.RESCALE}

    def test_missing_or_extra_functions_are_rejected(self) -> None:
        with pytest.raises(ValueError):
            Partitioner(PartitionerKind.HASH)
        with pytest.raises(ValueError):
            Partitioner(PartitionerKind.REBALANCE, key_selector=_key)
        with pytest.raises(ValueError):
            Partitioner(PartitionerKind.HASH, key_selector=_key, custom=_pick)

    def test_prints_like_flink_and_pickles(self) -> None:
        assert str(Partitioner.hash(_key)) == "HASH"
        assert pickle.loads(pickle.dumps(Partitioner.hash(_key))).key_selector is _key


def _args_for(kind: PartitionerKind) -> tuple[object, ...]:
    if kind is PartitionerKind.HASH:
        return (_key,)
    if kind is PartitionerKind.CUSTOM:
        return (_key, _pick)
    return ()


class TestBuilding:
    def test_ids_are_assigned_in_order_and_sources_take_no_inputs(self) -> None:
        graph = StreamGraph("job")
        src = graph.add_node("src", "S", is_source=True)
        op = graph.add_node("map", "M", parallelism=3, uid="m", chaining=ChainingStrategy.HEAD)
        assert (src.id, op.id) == (1, 2)
        assert (src.num_inputs, op.num_inputs) == (0, 1)
        assert (op.parallelism, op.uid, op.chaining) == (3, "m", ChainingStrategy.HEAD)
        assert list(graph.nodes) == [1, 2]
        assert graph.job_name == "job"

    def test_edges_are_readable_from_both_ends(self) -> None:
        graph = StreamGraph()
        a = graph.add_node("a", None, is_source=True)
        b = graph.add_node("b", None, is_source=True)
        join = graph.add_node("join", None, num_inputs=2, key_selectors=(_key, _key))
        sink = graph.add_node("sink", None)
        e1 = graph.add_edge(a.id, join.id, Partitioner.hash(_key), 0)
        e2 = graph.add_edge(b.id, join.id, Partitioner.hash(_key), 1)
        e3 = graph.add_edge(join.id, sink.id)
        assert graph.in_edges(join.id) == [e1, e2]
        assert graph.out_edges(join.id) == [e3]
        assert graph.edges == (e1, e2, e3)
        assert [n.name for n in graph.sources()] == ["a", "b"]
        assert [n.name for n in graph.sinks()] == ["sink"]

    def test_bad_edges_are_rejected(self) -> None:
        graph = StreamGraph()
        src = graph.add_node("src", None, is_source=True)
        op = graph.add_node("op", None)
        with pytest.raises(InvalidEdgeError, match="source has no inputs"):
            graph.add_edge(op.id, src.id)
        with pytest.raises(InvalidEdgeError, match="input index 1"):
            graph.add_edge(src.id, op.id, input_index=1)
        with pytest.raises(InvalidEdgeError):
            graph.add_edge(op.id, op.id)
        with pytest.raises(UnknownNodeError):
            graph.add_edge(src.id, 99)

    def test_bad_node_shapes_are_rejected(self) -> None:
        graph = StreamGraph()
        with pytest.raises(InvalidNodeError):
            graph.add_node("src", None, is_source=True, num_inputs=1)
        with pytest.raises(InvalidNodeError):
            graph.add_node("op", None, num_inputs=3)
        with pytest.raises(InvalidNodeError, match="2 key selectors for 1 input"):
            graph.add_node("op", None, key_selectors=(_key, _key))

    def test_default_partitioner_is_forward_for_equal_parallelism_else_rebalance(self) -> None:
        graph = pipeline(2, 2, 3)
        first, second = graph.edges
        assert graph.resolved_partitioner(first).kind is PartitionerKind.FORWARD
        assert graph.resolved_partitioner(second).kind is PartitionerKind.REBALANCE
        unset = pipeline(None, 4)
        assert unset.resolved_partitioner(unset.edges[0], 3).kind is PartitionerKind.REBALANCE
        unset.default_parallelism = 4
        assert unset.resolved_partitioner(unset.edges[0]).kind is PartitionerKind.FORWARD

    def test_topological_order_breaks_ties_by_id(self) -> None:
        graph = StreamGraph()
        s1 = graph.add_node("s1", None, is_source=True)
        s2 = graph.add_node("s2", None, is_source=True)
        late = graph.add_node("late", None)
        early = graph.add_node("early", None)
        graph.add_edge(s2.id, early.id)
        graph.add_edge(early.id, late.id)
        graph.add_edge(s1.id, late.id)
        assert [n.name for n in graph.topological_order()] == ["s1", "s2", "early", "late"]


class TestMaxParallelism:
    @pytest.mark.parametrize(("parallelism", "expected"), [
        (1, 128), (85, 128), (86, 256), (100, 256), (1000, 2048), (30000, 32768)])
    def test_derived_like_flink(self, parallelism: int, expected: int) -> None:
        assert default_max_parallelism(parallelism) == expected

    def test_operator_beats_job_beats_derived(self) -> None:
        graph = pipeline(2, 2)
        assert graph.max_parallelism_of(1) == 128
        graph.max_parallelism = 64
        assert graph.max_parallelism_of(1) == 64
        graph.nodes[1].max_parallelism = 16
        assert graph.max_parallelism_of(1) == 16
        assert graph.max_parallelism_of(2) == 64


class TestValidate:
    def test_a_good_graph_passes(self) -> None:
        pipeline(2, 2, 4).validate()

    def test_cycle_is_named(self) -> None:
        graph = pipeline(1, 1, 1, 1)
        graph.add_edge(4, 3)
        graph.add_edge(3, 2)
        with pytest.raises(GraphCycleError) as caught:
            graph.validate()
        names = caught.value.nodes
        assert names[0] == names[-1]
        assert set(names) <= {"'op1' (id 2)", "'op2' (id 3)", "'op3' (id 4)"}
        assert len(names) >= 3

    def test_cycle_downstream_of_which_more_nodes_hang(self) -> None:
        graph = pipeline(1, 1, 1, 1)
        graph.add_edge(3, 2)
        with pytest.raises(GraphCycleError) as caught:
            graph.topological_order()
        assert caught.value.nodes == ("'op2' (id 3)", "'op1' (id 2)", "'op2' (id 3)")

    def test_explicit_forward_across_parallelisms_names_both_operators(self) -> None:
        graph = StreamGraph()
        src = graph.add_node("numbers", None, is_source=True, parallelism=2)
        op = graph.add_node("Filter", None, parallelism=1)
        graph.add_edge(src.id, op.id, Partitioner.forward())
        with pytest.raises(ForwardPartitioningError) as caught:
            graph.validate()
        message = str(caught.value)
        assert "'numbers' (id 1) has parallelism 2" in message
        assert "'Filter' (id 2) has parallelism 1" in message
        assert pickle.loads(pickle.dumps(caught.value)).args == caught.value.args

    def test_forward_uses_the_given_default_parallelism(self) -> None:
        graph = StreamGraph()
        src = graph.add_node("src", None, is_source=True)
        op = graph.add_node("op", None, parallelism=3)
        graph.add_edge(src.id, op.id, Partitioner.forward())
        graph.validate(default_parallelism=3)
        with pytest.raises(ForwardPartitioningError):
            graph.validate(default_parallelism=2)

    def test_parallelism_above_max_parallelism(self) -> None:
        graph = pipeline(4, 2)
        graph.validate(max_parallelism=4)
        with pytest.raises(ParallelismError, match="may not exceed"):
            graph.validate(max_parallelism=3)
        graph.nodes[2].max_parallelism = 1
        with pytest.raises(ParallelismError) as caught:
            graph.validate()
        assert (caught.value.parallelism, caught.value.max_parallelism) == (2, 1)

    def test_max_parallelism_upper_bound_and_positive_parallelism(self) -> None:
        graph = pipeline(1, 1)
        graph.nodes[1].max_parallelism = 32769
        with pytest.raises(ParallelismError, match="between 1 and 32768"):
            graph.validate()
        zero = pipeline(0, 1)
        with pytest.raises(ParallelismError, match="at least 1"):
            zero.validate()

    def test_duplicate_uids(self) -> None:
        graph = pipeline(1, 1, 1)
        graph.nodes[1].uid = "x"
        graph.nodes[3].uid = "x"
        with pytest.raises(DuplicateUidError, match=r"'x' is used by both 'src' \(id 1\) and"):
            graph.validate()

    def test_non_source_without_input(self) -> None:
        graph = pipeline(1)
        graph.add_node("orphan", None)
        with pytest.raises(InvalidNodeError, match="input 0 of 1 is not connected"):
            graph.validate()

    def test_two_input_operator_with_one_input_unconnected(self) -> None:
        graph = pipeline(1)
        join = graph.add_node("join", None, num_inputs=2)
        graph.add_edge(1, join.id, input_index=0)
        with pytest.raises(InvalidNodeError, match="input 1 of 2 is not connected"):
            graph.validate()
        graph.add_edge(1, join.id, input_index=1)
        graph.validate()
