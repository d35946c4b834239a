"""Slot sharing and the allocation of slots to TaskManagers."""

from __future__ import annotations

import pickle
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flintlock.common.config import Configuration
from flintlock.graph.errors import InsufficientSlotsError
from flintlock.graph.execution_graph import build_execution_graph
from flintlock.graph.job_graph import JobGraph, build_job_graph
from flintlock.graph.scheduling import (
    SlotLocation,
    plan_allocation,
    plan_allocation_for,
    slots_needed,
    slots_per_group,
)
from flintlock.graph.stream_graph import Partitioner, StreamGraph


def _key(value: object) -> object:
    return value


def keyed_job(sink_group: str = "default") -> JobGraph:
    """source(2) -> map(2) -hash-> reduce(3) -> sink(1, group ``sink_group``)."""
    graph = StreamGraph()
    src = graph.add_node("src", None, is_source=True, parallelism=2)
    mapper = graph.add_node("map", None, parallelism=2)
    reduce = graph.add_node("reduce", None, parallelism=3)
    sink = graph.add_node("sink", None, parallelism=1, slot_sharing_group=sink_group)
    graph.add_edge(src.id, mapper.id)
    graph.add_edge(mapper.id, reduce.id, Partitioner.hash(_key))
    graph.add_edge(reduce.id, sink.id)
    return build_job_graph(graph)


class TestSlotsNeeded:
    def test_one_group_needs_its_largest_parallelism(self) -> None:
        assert slots_needed(keyed_job()) == 3

    def test_groups_add_up(self) -> None:
        job = keyed_job("sinks")
        assert slots_per_group(job) == {"default": 3, "sinks": 1}
        assert slots_needed(job) == 4


class TestPlan:
    def test_same_index_shares_a_slot_and_slots_pack_onto_task_managers(self) -> None:
        job = keyed_job("sinks")
        source, reduce, sink = job.vertices
        execution = build_execution_graph(job)
        plan = plan_allocation(execution, slots_per_task_manager=2)
        assert plan.num_task_managers == 2 and plan.slots_needed == 4
        first, second = plan.task_managers
        assert [(s.sharing_group, s.subtask_index) for s in first.slots] == [
            ("default", 0), ("default", 1)]
        assert [(s.sharing_group, s.subtask_index) for s in second.slots] == [
            ("default", 2), ("sinks", 0)]
        assert [(v.job_vertex_id, v.subtask_index) for v in first.slots[1].subtasks] == [
            (source.id, 1), (reduce.id, 1)]
        assert [(v.job_vertex_id, v.subtask_index) for v in second.slots[0].subtasks] == [
            (reduce.id, 2)]
        sink_subtask = execution.subtasks(sink.id)[0]
        assert plan.location_of(sink_subtask) == SlotLocation(1, 1)
        assert plan.is_local(execution.subtasks(reduce.id)[2], sink_subtask)
        assert not plan.is_local(execution.subtasks(source.id)[0], sink_subtask)
        assert first.subtasks == first.slots[0].subtasks + first.slots[1].subtasks

    def test_one_slot_per_task_manager_by_default(self) -> None:
        execution = build_execution_graph(keyed_job())
        plan = plan_allocation_for(execution, Configuration())
        assert plan.num_task_managers == 3
        assert all(len(tm.slots) == 1 for tm in plan.task_managers)
        configured = Configuration({"taskmanager.numberOfTaskSlots": 4})
        assert plan_allocation_for(execution, configured).num_task_managers == 1

    def test_not_enough_slots_names_needed_and_available(self) -> None:
        execution = build_execution_graph(keyed_job("sinks"))
        with pytest.raises(InsufficientSlotsError) as caught:
            plan_allocation(execution, 1, available_slots=3)
        error = caught.value
        assert (error.slots_needed, error.slots_available) == (4, 3)
        assert str(error).startswith("the job needs 4 slots but only 3 are available")
        assert "'sinks' needs 1" in str(error)
        assert str(pickle.loads(pickle.dumps(error))) == str(error)
        assert plan_allocation(execution, 1, available_slots=4).slots_needed == 4

    def test_a_task_manager_needs_a_slot(self) -> None:
        with pytest.raises(ValueError):
            plan_allocation(build_execution_graph(keyed_job()), 0)


@st.composite
def random_jobs(draw: st.DrawFn) -> JobGraph:
    graph = StreamGraph(chaining_enabled=draw(st.booleans()))
    for index in range(draw(st.integers(1, 6))):
        group = draw(st.sampled_from(["default", "a", "b"]))
        parallelism = draw(st.integers(1, 5))
        if index == 0 or draw(st.integers(0, 3)) == 0:
            graph.add_node(f"n{index}", None, is_source=True, parallelism=parallelism,
                           slot_sharing_group=group)
            continue
        node = graph.add_node(f"n{index}", None, parallelism=parallelism,
                              slot_sharing_group=group)
        graph.add_edge(draw(st.integers(1, index)), node.id)
    return build_job_graph(graph)


@settings(max_examples=200, deadline=None)
@given(random_jobs(), st.integers(1, 4))
def test_every_subtask_in_exactly_one_slot_respecting_sharing_groups(
    job: JobGraph, per_tm: int
) -> None:
    execution = build_execution_graph(job)
    plan = plan_allocation(execution, per_tm)
    placed = Counter(v for tm in plan.task_managers for slot in tm.slots for v in slot.subtasks)
    assert placed == Counter(execution.vertices)
    group_of = {v.id: v.slot_sharing_group for v in job.vertices}
    for tm in plan.task_managers:
        assert 1 <= len(tm.slots) <= per_tm
        for slot in tm.slots:
            assert slot.location.task_manager == tm.index
            assert {group_of[v.job_vertex_id] for v in slot.subtasks} == {slot.sharing_group}
            assert {v.subtask_index for v in slot.subtasks} == {slot.subtask_index}
            assert len({v.job_vertex_id for v in slot.subtasks}) == len(slot.subtasks)
            assert all(plan.location_of(v) == slot.location for v in slot.subtasks)
    assert plan.slots_needed == slots_needed(job)
    assert plan.num_task_managers == -(-slots_needed(job) // per_tm)


def test_graphs_and_plan_survive_cloudpickle() -> None:
    import cloudpickle

    job = keyed_job("sinks")
    execution = build_execution_graph(job)
    plan = plan_allocation(execution, 2)
    job_copy, execution_copy, plan_copy = pickle.loads(cloudpickle.dumps((job, execution, plan)))
    assert [v.name for v in job_copy.vertices] == [v.name for v in job.vertices]
    assert execution_copy.partitions == execution.partitions
    assert plan_copy.locations == plan.locations
    assert job_copy.vertices[1].inputs[0].partitioner.key_selector(7) == 7
