"""Slot assignment: which subtask runs in which slot of which TaskManager.

Slot sharing as in Flink: within one slot sharing group, the subtasks with the same subtask
index share one slot, so one slot can run a whole pipeline slice (source 0, map 0, sink 0) and
a group needs as many slots as its largest parallelism. Different groups never share a slot.
Slots needed = sum over the groups of the largest parallelism in the group.

Slots are numbered group by group (groups in the order their first vertex appears in the
topological order, then by subtask index) and packed onto TaskManagers in that order,
``taskmanager.numberOfTaskSlots`` per TaskManager: TM 0 gets the first slots, TM 1 the next,
and so on; the last TM may have fewer slots than the others. On Spark every TaskManager is one
barrier-stage task, so ``AllocationPlan.num_task_managers`` is the width of that stage.

Laws (tested with hypothesis): every subtask is in exactly one slot; a slot holds subtasks of
one sharing group only, at most one per job vertex, all with the same subtask index; no TM has
more than ``slots_per_task_manager`` slots.

Pure data; computed on the driver, read by the deployer.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from flintlock.common.config import Configuration
from flintlock.common.options.cluster import NUM_TASK_SLOTS
from flintlock.graph.errors import InsufficientSlotsError
from flintlock.graph.execution_graph import ExecutionGraph, ExecutionVertex
from flintlock.graph.job_graph import JobGraph


@dataclass(frozen=True, slots=True, order=True)
class SlotLocation:
    """Slot ``slot_index`` of TaskManager ``task_manager``."""

    task_manager: int
    slot_index: int


@dataclass(frozen=True, slots=True)
class SharedSlot:
    """One slot and the subtasks it runs (index ``subtask_index`` of its group's vertices)."""

    location: SlotLocation
    sharing_group: str
    subtask_index: int
    subtasks: tuple[ExecutionVertex, ...]


@dataclass(frozen=True, slots=True)
class TaskManagerPlan:
    """The slots of one TaskManager."""

    index: int
    slots: tuple[SharedSlot, ...]

    @property
    def subtasks(self) -> tuple[ExecutionVertex, ...]:
        return tuple(subtask for slot in self.slots for subtask in slot.subtasks)


@dataclass(frozen=True)
class AllocationPlan:
    """TaskManager index -> slots -> subtasks, for one job attempt."""

    task_managers: tuple[TaskManagerPlan, ...]
    slots_per_task_manager: int
    locations: Mapping[ExecutionVertex, SlotLocation]

    @property
    def num_task_managers(self) -> int:
        return len(self.task_managers)

    @property
    def slots_needed(self) -> int:
        return sum(len(tm.slots) for tm in self.task_managers)

    def location_of(self, subtask: ExecutionVertex) -> SlotLocation:
        return self.locations[subtask]

    def task_manager_of(self, subtask: ExecutionVertex) -> int:
        return self.locations[subtask].task_manager

    def is_local(self, producer: ExecutionVertex, consumer: ExecutionVertex) -> bool:
        """Whether the two subtasks run in the same TaskManager (a local exchange)."""
        return self.task_manager_of(producer) == self.task_manager_of(consumer)


def slots_per_group(job_graph: JobGraph) -> dict[str, int]:
    """Slot sharing group -> slots it needs (its largest parallelism), in first-use order."""
    needed: dict[str, int] = {}
    for vertex in job_graph.vertices:
        group = vertex.slot_sharing_group
        needed[group] = max(needed.get(group, 0), vertex.parallelism)
    return needed


def slots_needed(job_graph: JobGraph) -> int:
    """Slots the job needs with slot sharing: sum over groups of the largest parallelism."""
    return sum(slots_per_group(job_graph).values())


def plan_allocation(
    execution_graph: ExecutionGraph,
    slots_per_task_manager: int,
    available_slots: int | None = None,
) -> AllocationPlan:
    """Assign every subtask to a shared slot and every slot to a TaskManager.

    Raises ``InsufficientSlotsError`` when ``available_slots`` is given and smaller than the
    slots needed.
    """
    if slots_per_task_manager < 1:
        raise ValueError("a TaskManager has at least one slot")
    job_graph = execution_graph.job_graph
    needed = slots_needed(job_graph)
    if available_slots is not None and needed > available_slots:
        raise InsufficientSlotsError(needed, available_slots, _group_detail(job_graph))
    members = _slot_members(execution_graph)
    task_managers: list[list[SharedSlot]] = []
    locations: dict[ExecutionVertex, SlotLocation] = {}
    for position, ((group, index), subtasks) in enumerate(members.items()):
        location = SlotLocation(*divmod(position, slots_per_task_manager))
        if location.slot_index == 0:
            task_managers.append([])
        task_managers[-1].append(SharedSlot(location, group, index, tuple(subtasks)))
        locations.update((subtask, location) for subtask in subtasks)
    return AllocationPlan(
        tuple(TaskManagerPlan(i, tuple(slots)) for i, slots in enumerate(task_managers)),
        slots_per_task_manager, locations,
    )


def plan_allocation_for(
    execution_graph: ExecutionGraph, configuration: Configuration,
    available_slots: int | None = None,
) -> AllocationPlan:
    """``plan_allocation`` with ``taskmanager.numberOfTaskSlots`` from ``configuration``."""
    return plan_allocation(execution_graph, configuration.get(NUM_TASK_SLOTS), available_slots)


def _slot_members(execution_graph: ExecutionGraph) -> dict[tuple[str, int], list[ExecutionVertex]]:
    """(sharing group, subtask index) -> subtasks, ordered group by group, then by index."""
    job_graph = execution_graph.job_graph
    members: dict[tuple[str, int], list[ExecutionVertex]] = {
        (group, index): [] for group, count in slots_per_group(job_graph).items()
        for index in range(count)
    }
    group_of = {vertex.id: vertex.slot_sharing_group for vertex in job_graph.vertices}
    for subtask in execution_graph.vertices:
        members[group_of[subtask.job_vertex_id], subtask.subtask_index].append(subtask)
    return members


def _group_detail(job_graph: JobGraph) -> str:
    return "slot sharing groups: " + ", ".join(
        f"{group!r} needs {count}" for group, count in slots_per_group(job_graph).items())
