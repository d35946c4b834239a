"""Region-by-region scheduling of a BATCH job: which pipelined region runs in which slots,
when, and which regions a failure restarts (Flink's ``PipelinedRegionSchedulingStrategy`` and
``RestartPipelinedRegionFailoverStrategy``).

A pipelined region (``regions``) is the unit of scheduling. Its subtasks exchange PIPELINED
data among themselves, so they run together; it reads the BLOCKING results of other regions,
which are complete (spilled by their producers, ``network.blocking``) before it starts. So:

* a region is *ready* when every region whose BLOCKING output it reads has FINISHED;
* a ready region is deployed as soon as the slots it needs are free: one slot per distinct
  (slot sharing group, subtask index) among its subtasks, as slot sharing packs them;
* a region holds its slots until its last subtask FINISHED, then they go back to the pool;
* a FINISHED region's BLOCKING results are released (``ReleaseResults``) once every region
  reading them FINISHED too: nothing can read them again (a finished region never restarts).

A BATCH job therefore needs only the slots of its widest region (``RegionGraph.widest``), not
the sum over all of them; the pool is what the cluster offers, at most what deploying
everything at once would take.

Failover: a failed subtask restarts its own region, plus every region that consumes it
(transitively, through BLOCKING results) and was already deployed — their input is being
rewritten. Regions upstream are left alone: the BLOCKING results of a FINISHED region are
still in its producers' spill files and are read again by the restarted consumers.

Region states: CREATED -> DEPLOYED -> FINISHED; DEPLOYED -> CREATED on a restart (the
JobManager calls ``restarted`` once every subtask of the restarting regions has ended, which
frees their slots). Any other move raises ``RegionStateError``.

An I/O-free core (STYLE.md §2): facts in, ``DeployRegion`` and ``ReleaseResults`` actions
out, tested with event lists. Owned by the JobManager thread.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from flintlock.common.ids import JobVertexId
from flintlock.graph.errors import GraphError, InsufficientSlotsError
from flintlock.graph.execution_graph import ExecutionGraph, ExecutionVertex
from flintlock.graph.regions import pipelined_regions
from flintlock.graph.scheduling import (
    AllocationPlan,
    SharedSlot,
    SlotLocation,
    TaskManagerPlan,
    slots_needed,
)

SlotKey = tuple[str, int]
"""(slot sharing group, subtask index): the subtasks of one region with the same key share a
slot."""


class RegionStateError(GraphError):
    """A region was moved between states in an order the scheduler does not allow."""

    def __init__(self, region: int, state: str, target: str) -> None:
        super().__init__(region, state, target)
        self.region, self.state, self.target = region, state, target

    def __str__(self) -> str:
        return f"pipelined region {self.region} cannot go from {self.state} to {self.target}"


class RegionState(enum.Enum):
    CREATED = "CREATED"
    DEPLOYED = "DEPLOYED"
    FINISHED = "FINISHED"


_MOVES = {
    RegionState.CREATED: {RegionState.DEPLOYED},
    RegionState.DEPLOYED: {RegionState.FINISHED, RegionState.CREATED},
    RegionState.FINISHED: set(),
}


@dataclass(frozen=True)
class RegionGraph:
    """The pipelined regions of an execution graph and the BLOCKING links between them.

    ``inputs[i]``: the regions whose BLOCKING results region ``i`` reads; ``slot_keys[i]``: the
    slots region ``i`` needs. Regions are in the topological order of ``pipelined_regions``.
    """

    regions: tuple[frozenset[ExecutionVertex], ...]
    inputs: tuple[frozenset[int], ...]
    slot_keys: tuple[tuple[SlotKey, ...], ...]
    region_index: Mapping[ExecutionVertex, int]
    groups: Mapping[JobVertexId, str]
    """The slot sharing group of every job vertex."""

    def slot_key(self, vertex: ExecutionVertex) -> SlotKey:
        return self.groups[vertex.job_vertex_id], int(vertex.subtask_index)

    @property
    def widest(self) -> int:
        """Slots of the widest region: what the job needs at the least."""
        return max((len(keys) for keys in self.slot_keys), default=0)

    def consumers(self, region: int) -> frozenset[int]:
        return frozenset(i for i, inputs in enumerate(self.inputs) if region in inputs)

    def downstream(self, region: int) -> frozenset[int]:
        """Every region reading ``region``'s results, directly or through others."""
        found: set[int] = set()
        todo = [region]
        while todo:
            for consumer in self.consumers(todo.pop()):
                if consumer not in found:
                    found.add(consumer)
                    todo.append(consumer)
        return frozenset(found)


def region_graph(graph: ExecutionGraph) -> RegionGraph:
    """The ``RegionGraph`` of ``graph``."""
    regions = pipelined_regions(graph)
    index = {vertex: i for i, region in enumerate(regions) for vertex in region}
    inputs: list[set[int]] = [set() for _ in regions]
    for partition in graph.partitions.values():
        if partition.partition_type.is_pipelined:
            continue
        producer = index[partition.producer]
        for consumer in partition.consumers:
            vertex = ExecutionVertex(partition.consumer_vertex, consumer.subtask,
                                     graph.job_graph.vertex(partition.consumer_vertex).parallelism)
            if index[vertex] != producer:
                inputs[index[vertex]].add(producer)
    group_of = {vertex.id: vertex.slot_sharing_group for vertex in graph.job_graph.vertices}
    slot_keys = tuple(
        tuple(sorted({(group_of[v.job_vertex_id], int(v.subtask_index)) for v in region}))
        for region in regions)
    return RegionGraph(regions, tuple(frozenset(i) for i in inputs), slot_keys, index, group_of)


def slot_pool(graph: ExecutionGraph, regions: RegionGraph, slots_per_task_manager: int,
              available_slots: int | None) -> tuple[SlotLocation, ...]:
    """The slots a BATCH attempt runs in: what the cluster offers (``available_slots``; None:
    unknown, take all that are useful), at most what deploying every region at once takes.
    Raises ``InsufficientSlotsError`` when even the widest region does not fit."""
    if slots_per_task_manager < 1:
        raise ValueError("a TaskManager has at least one slot")
    useful = max(1, slots_needed(graph.job_graph))
    if available_slots is not None and regions.widest > available_slots:
        raise InsufficientSlotsError(regions.widest, available_slots, (
            f"BATCH execution needs the slots of its widest pipelined region, "
            f"{regions.widest}"))
    count = useful if available_slots is None else min(useful, available_slots)
    return tuple(SlotLocation(*divmod(i, slots_per_task_manager)) for i in range(count))


@dataclass(frozen=True, slots=True)
class DeployRegion:
    """Deploy every subtask of ``region`` at its location."""

    region: int
    locations: Mapping[ExecutionVertex, SlotLocation]


@dataclass(frozen=True, slots=True)
class ReleaseResults:
    """Release the BLOCKING results ``region`` produced: every region reading them finished."""

    region: int


Action = DeployRegion | ReleaseResults


class RegionScheduler:
    """Decides when each region of one attempt is deployed and into which slots (see the
    module docstring). ``locations`` keeps where every subtask deployed so far runs,
    including finished producers whose results are still read."""

    def __init__(self, regions: RegionGraph, pool: Sequence[SlotLocation]) -> None:
        if regions.widest > len(pool):
            raise InsufficientSlotsError(regions.widest, len(pool),
                                         "the widest pipelined region does not fit the pool")
        self.graph = regions
        self.pool = tuple(sorted(pool))
        self.states = [RegionState.CREATED] * len(regions.regions)
        self._free = sorted(pool)
        self._held: dict[int, list[SlotLocation]] = {}
        self._unfinished: dict[int, set[ExecutionVertex]] = {}
        self.locations: dict[ExecutionVertex, SlotLocation] = {}

    # -- facts in ------------------------------------------------------------------------

    def start(self) -> list[DeployRegion]:
        """The regions to deploy first (those reading no BLOCKING result, as slots allow)."""
        return self._schedule()

    def subtask_finished(self, vertex: ExecutionVertex) -> list[Action]:
        """A subtask FINISHED; when it was its region's last, the region's slots are freed,
        the regions it made ready are deployed, and the results no one reads any more are
        released."""
        region = self.graph.region_index[vertex]
        unfinished = self._unfinished.get(region)
        if unfinished is None or vertex not in unfinished:
            return []
        unfinished.discard(vertex)
        if unfinished:
            return []
        self._move(region, RegionState.FINISHED)
        del self._unfinished[region]
        self._free = sorted(self._free + self._held.pop(region))
        return [*self._schedule(), *self._releasable(region)]

    def to_restart(self, vertex: ExecutionVertex) -> frozenset[int]:
        """The regions a failure of ``vertex`` restarts: its own, and the deployed regions
        consuming it."""
        region = self.graph.region_index[vertex]
        deployed = {i for i in self.graph.downstream(region)
                    if self.states[i] is RegionState.DEPLOYED}
        return frozenset({region} | deployed)

    def restarted(self, regions: Iterable[int]) -> list[DeployRegion]:
        """Every subtask of ``regions`` has ended (cancelled or failed): they go back to
        CREATED, their slots to the pool, and are deployed again as their inputs and the
        slots allow."""
        for region in sorted(regions):
            self._move(region, RegionState.CREATED)
            self._unfinished.pop(region, None)
            self._free = sorted(self._free + self._held.pop(region, []))
        return self._schedule()

    # -- reading -------------------------------------------------------------------------

    @property
    def num_task_managers(self) -> int:
        """TaskManagers the pool's slots are on."""
        return max((slot.task_manager for slot in self.pool), default=0) + 1

    @property
    def all_finished(self) -> bool:
        return all(state is RegionState.FINISHED for state in self.states)

    def subtasks(self, regions: Iterable[int]) -> frozenset[ExecutionVertex]:
        return frozenset(v for region in regions for v in self.graph.regions[region])

    # -- deciding ------------------------------------------------------------------------

    def _releasable(self, finished: int) -> list[ReleaseResults]:
        """The results of ``finished``'s inputs that every reader has now read (the results
        of ``finished`` itself are read from now on)."""
        return [ReleaseResults(region) for region in sorted(self.graph.inputs[finished])
                if all(self.states[reader] is RegionState.FINISHED
                       for reader in self.graph.consumers(region))]

    def _ready(self, region: int) -> bool:
        return self.states[region] is RegionState.CREATED and all(
            self.states[i] is RegionState.FINISHED for i in self.graph.inputs[region])

    def _schedule(self) -> list[DeployRegion]:
        deployments = []
        for region in range(len(self.graph.regions)):
            keys = self.graph.slot_keys[region]
            if not self._ready(region) or len(keys) > len(self._free):
                continue
            slots = dict(zip(keys, self._free[:len(keys)], strict=True))
            self._held[region] = self._free[:len(keys)]
            self._free = self._free[len(keys):]
            members = self.graph.regions[region]
            locations = {v: slots[self.graph.slot_key(v)] for v in members}
            self.locations.update(locations)
            self._unfinished[region] = set(members)
            self._move(region, RegionState.DEPLOYED)
            deployments.append(DeployRegion(region, locations))
        return deployments

    def _move(self, region: int, target: RegionState) -> None:
        state = self.states[region]
        if target not in _MOVES[state]:
            raise RegionStateError(region, state.value, target.value)
        self.states[region] = target


def create_region_scheduler(graph: ExecutionGraph, slots_per_task_manager: int,
                            available_slots: int | None) -> RegionScheduler:
    """The scheduler of one BATCH attempt over the slot pool the cluster allows."""
    regions = region_graph(graph)
    pool = slot_pool(graph, regions, slots_per_task_manager, available_slots)
    return RegionScheduler(regions, pool)


def allocation_of(
    locations: Mapping[ExecutionVertex, SlotLocation], subtasks: Iterable[ExecutionVertex],
    groups: Mapping[JobVertexId, str], slots_per_task_manager: int, num_task_managers: int,
) -> AllocationPlan:
    """An ``AllocationPlan`` whose TaskManagers list ``subtasks`` (what to deploy now, or all
    deployed so far) and whose ``locations`` name every located subtask (where consumers
    find the producers of what they read)."""
    per_slot: dict[SlotLocation, list[ExecutionVertex]] = {}
    for vertex in sorted(subtasks):
        per_slot.setdefault(locations[vertex], []).append(vertex)
    task_managers: list[list[SharedSlot]] = [[] for _ in range(num_task_managers)]
    for location, members in sorted(per_slot.items()):
        first = members[0]
        task_managers[location.task_manager].append(SharedSlot(
            location, groups[first.job_vertex_id], int(first.subtask_index), tuple(members)))
    return AllocationPlan(
        tuple(TaskManagerPlan(i, tuple(slots)) for i, slots in enumerate(task_managers)),
        slots_per_task_manager, dict(locations))
