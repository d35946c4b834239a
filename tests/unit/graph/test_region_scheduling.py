"""Region-by-region scheduling of BATCH jobs (issue 29): facts in, deployments out."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flintlock.graph.errors import InsufficientSlotsError
from flintlock.graph.execution_graph import ExecutionGraph, ExecutionVertex, build_execution_graph
from flintlock.graph.job_graph import build_job_graph
from flintlock.graph.region_scheduling import (
    DeployRegion,
    RegionScheduler,
    RegionState,
    RegionStateError,
    ReleaseResults,
    allocation_of,
    create_region_scheduler,
    region_graph,
    slot_pool,
)
from flintlock.graph.scheduling import SlotLocation, slots_needed
from flintlock.graph.stream_graph import Partitioner, StreamGraph


def _key(value: object) -> object:
    return value


def batch_job(src: int = 4, agg: int = 4, sink: int = 1) -> ExecutionGraph:
    """source(src) -hash-> agg(agg) -rebalance-> sink(sink), all exchanges BLOCKING."""
    graph = StreamGraph(runtime_mode="batch", chaining_enabled=False)
    a = graph.add_node("src", None, is_source=True, parallelism=src)
    b = graph.add_node("agg", None, parallelism=agg)
    c = graph.add_node("sink", None, parallelism=sink)
    graph.add_edge(a.id, b.id, Partitioner.hash(_key))
    graph.add_edge(b.id, c.id, Partitioner.rebalance())
    return build_execution_graph(build_job_graph(graph))


def names(graph: ExecutionGraph, vertices: object) -> list[str]:
    by_id = {v.id: v.name.removeprefix("Source: ") for v in graph.job_graph.vertices}
    return sorted(f"{by_id[v.job_vertex_id]}{v.subtask_index}" for v in vertices)  # type: ignore[attr-defined]


def deployed(graph: ExecutionGraph, actions: list) -> list[str]:
    return names(graph, [v for action in actions if isinstance(action, DeployRegion)
                         for v in action.locations])


def released(graph: ExecutionGraph, scheduler: RegionScheduler, actions: list) -> list[str]:
    return names(graph, [v for action in actions if isinstance(action, ReleaseResults)
                         for v in scheduler.graph.regions[action.region]])


def vertex(graph: ExecutionGraph, name: str, index: int) -> ExecutionVertex:
    job_vertex = next(v for v in graph.job_graph.vertices
                      if v.name.removeprefix("Source: ") == name)
    return graph.subtasks(job_vertex.id)[index]


def test_every_blocking_subtask_is_a_region_of_one_slot() -> None:
    graph = batch_job()
    regions = region_graph(graph)
    assert len(regions.regions) == 9
    assert regions.widest == 1
    assert slots_needed(graph.job_graph) == 4  # deploying everything at once


def test_two_slots_run_a_job_of_four_region_by_region() -> None:
    graph = batch_job()
    scheduler = create_region_scheduler(graph, 1, available_slots=2)
    first = scheduler.start()
    assert deployed(graph, first) == ["src0", "src1"]
    assert {loc for action in first for loc in action.locations.values()} == {
        SlotLocation(0, 0), SlotLocation(1, 0)}
    assert deployed(graph, scheduler.subtask_finished(vertex(graph, "src", 0))) == ["src2"]
    assert deployed(graph, scheduler.subtask_finished(vertex(graph, "src", 1))) == ["src3"]
    assert scheduler.subtask_finished(vertex(graph, "src", 2)) == []  # agg reads every source
    assert deployed(graph, scheduler.subtask_finished(vertex(graph, "src", 3))) == [
        "agg0", "agg1"]
    for i in range(3):
        assert released(graph, scheduler, scheduler.subtask_finished(vertex(graph, "agg", i))) == []
    last = scheduler.subtask_finished(vertex(graph, "agg", 3))
    # every reader of the sources' results finished: their spill files can go
    assert released(graph, scheduler, last) == ["src0", "src1", "src2", "src3"]
    assert scheduler.states[-1] is RegionState.DEPLOYED  # the sink, once every agg finished
    assert not scheduler.all_finished
    scheduler.subtask_finished(vertex(graph, "sink", 0))
    assert scheduler.all_finished


def test_locations_of_finished_producers_stay_known() -> None:
    graph = batch_job(2, 1, 1)
    scheduler = create_region_scheduler(graph, 1, available_slots=1)
    scheduler.start()
    scheduler.subtask_finished(vertex(graph, "src", 0))
    scheduler.subtask_finished(vertex(graph, "src", 1))
    assert set(scheduler.locations) == {vertex(graph, "src", 0), vertex(graph, "src", 1),
                                        vertex(graph, "agg", 0)}


def test_a_pool_smaller_than_the_widest_region_is_refused() -> None:
    graph = StreamGraph(runtime_mode="batch", chaining_enabled=False)
    a = graph.add_node("src", None, is_source=True, parallelism=3)
    b = graph.add_node("map", None, parallelism=3)
    graph.add_edge(a.id, b.id, Partitioner.rebalance())
    streaming_like = build_execution_graph(build_job_graph(graph))
    # all-to-all BLOCKING: regions of one subtask; fits in one slot
    assert region_graph(streaming_like).widest == 1
    piped = StreamGraph(chaining_enabled=False)
    a = piped.add_node("src", None, is_source=True, parallelism=3)
    b = piped.add_node("map", None, parallelism=3)
    piped.add_edge(a.id, b.id, Partitioner.rebalance())
    one_region = build_execution_graph(build_job_graph(piped))
    with pytest.raises(InsufficientSlotsError, match="needs 3 slots but only 2") as info:
        create_region_scheduler(one_region, 1, available_slots=2)
    assert "widest pipelined region" in str(info.value)


def test_the_pool_is_what_the_cluster_offers_at_most_what_is_useful() -> None:
    graph = batch_job()
    regions = region_graph(graph)
    assert len(slot_pool(graph, regions, 2, None)) == 4
    assert len(slot_pool(graph, regions, 2, 100)) == 4
    assert slot_pool(graph, regions, 2, 3) == (
        SlotLocation(0, 0), SlotLocation(0, 1), SlotLocation(1, 0))


def test_a_failure_restarts_its_region_and_the_deployed_regions_reading_it() -> None:
    graph = batch_job(2, 2, 1)
    scheduler = create_region_scheduler(graph, 1, available_slots=2)
    scheduler.start()
    scheduler.subtask_finished(vertex(graph, "src", 0))
    scheduler.subtask_finished(vertex(graph, "src", 1))
    agg0 = vertex(graph, "agg", 0)
    regions = scheduler.to_restart(agg0)
    assert names(graph, scheduler.subtasks(regions)) == ["agg0"]
    again = scheduler.restarted(regions)
    assert deployed(graph, again) == ["agg0"]  # its sources stay FINISHED: not deployed again
    assert scheduler.states[:2] == [RegionState.FINISHED] * 2


def test_a_finished_region_is_never_restarted_by_the_scheduler() -> None:
    # a -BLOCKING-> c: a finished, c deployed; a restart of a finished region is illegal
    graph = StreamGraph(runtime_mode="batch", chaining_enabled=False)
    a = graph.add_node("a", None, is_source=True)
    c = graph.add_node("c", None)
    graph.add_edge(a.id, c.id)
    execution = build_execution_graph(build_job_graph(graph))
    scheduler = RegionScheduler(region_graph(execution), [SlotLocation(0, 0), SlotLocation(0, 1)])
    scheduler.start()
    scheduler.subtask_finished(vertex(execution, "a", 0))
    assert scheduler.states == [RegionState.FINISHED, RegionState.DEPLOYED]
    with pytest.raises(RegionStateError, match="FINISHED to CREATED"):
        scheduler.restarted(scheduler.to_restart(vertex(execution, "a", 0)))


def test_allocation_plan_names_every_located_subtask() -> None:
    graph = batch_job(2, 1, 1)
    scheduler = create_region_scheduler(graph, 2, available_slots=2)
    first = scheduler.start()
    plan = allocation_of(scheduler.locations, first[0].locations, scheduler.graph.groups, 2, 1)
    assert plan.num_task_managers == 1
    assert names(graph, plan.task_managers[0].subtasks) == ["src0"]
    assert set(plan.locations) == {vertex(graph, "src", 0), vertex(graph, "src", 1)}


@settings(max_examples=60, deadline=None)
@given(src=st.integers(1, 4), agg=st.integers(1, 4), sink=st.integers(1, 3),
       slots=st.integers(1, 5), order=st.randoms(use_true_random=False))
def test_every_region_runs_once_and_never_beyond_the_pool(src, agg, sink, slots, order) -> None:
    graph = batch_job(src, agg, sink)
    scheduler = create_region_scheduler(graph, 1, available_slots=slots)
    running: set[ExecutionVertex] = set()
    started: list[ExecutionVertex] = []
    released_regions: list[int] = []
    for action in scheduler.start():
        running |= set(action.locations)
        started += list(action.locations)
    while running:
        done = order.choice(sorted(running))
        running.discard(done)
        for action in scheduler.subtask_finished(done):
            if isinstance(action, ReleaseResults):
                readers = scheduler.graph.consumers(action.region)
                assert all(scheduler.states[r] is RegionState.FINISHED for r in readers)
                released_regions.append(action.region)
                continue
            running |= set(action.locations)
            started += list(action.locations)
        used = {scheduler.locations[v] for v in running}
        assert len(used) == len(running) <= slots  # one slot each, never beyond the pool
    assert sorted(started) == sorted(graph.vertices)
    assert scheduler.all_finished
    producers = [i for i in range(len(scheduler.graph.regions)) if scheduler.graph.consumers(i)]
    assert sorted(released_regions) == producers  # each producer's results released once
