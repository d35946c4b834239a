"""``SlotSharingGroup``: PyFlink's named slot sharing group; ``MemorySize``.

flintlock places subtasks by slot sharing group name only; the resources (CPU cores, memory)
are recorded but not used for placement — Spark decides the resources of its tasks. Immutable.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any


@dataclass(frozen=True, order=True)
class MemorySize:
    """An amount of memory in bytes (Flink's ``MemorySize``), for the resource settings."""

    bytes_size: int

    def __post_init__(self) -> None:
        if isinstance(self.bytes_size, bool) or not isinstance(self.bytes_size, int) or (
                self.bytes_size < 0):
            raise ValueError(f"a memory size is a non-negative int of bytes, "
                             f"got {self.bytes_size!r}")

    @staticmethod
    def of_mebi_bytes(mebi_bytes: int) -> MemorySize:
        return MemorySize(mebi_bytes << 20)

    def get_bytes(self) -> int:
        return self.bytes_size

    def get_kibi_bytes(self) -> int:
        return self.bytes_size >> 10

    def get_mebi_bytes(self) -> int:
        return self.bytes_size >> 20

    def get_gibi_bytes(self) -> int:
        return self.bytes_size >> 30

    def get_tebi_bytes(self) -> int:
        return self.bytes_size >> 40

    def __str__(self) -> str:
        return f"{self.bytes_size} bytes"


@dataclass(frozen=True)
class SlotSharingGroup:
    name: str
    resources: dict[str, Any] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"a slot sharing group needs a non-empty name, got {self.name!r}")

    def get_name(self) -> str:
        return self.name

    @staticmethod
    def builder(name: str) -> SlotSharingGroup.Builder:
        return SlotSharingGroup.Builder(SlotSharingGroup(name))

    class Builder:
        """Records resource settings (unused by flintlock's placement, see the module)."""

        def __init__(self, group: SlotSharingGroup) -> None:
            self._group = group

        def _with(self, key: str, value: Any) -> SlotSharingGroup.Builder:
            self._group = replace(self._group, resources={**self._group.resources, key: value})
            return self

        def set_cpu_cores(self, cpu_cores: float) -> SlotSharingGroup.Builder:
            return self._with("cpu_cores", cpu_cores)

        def set_task_heap_memory(self, task_heap_memory: Any) -> SlotSharingGroup.Builder:
            return self._with("task_heap_memory", task_heap_memory)

        def set_task_heap_memory_mb(self, task_heap_memory_mb: int) -> SlotSharingGroup.Builder:
            return self._with("task_heap_memory_mb", task_heap_memory_mb)

        def set_task_off_heap_memory(self, task_off_heap_memory: Any
                                     ) -> SlotSharingGroup.Builder:
            return self._with("task_off_heap_memory", task_off_heap_memory)

        def set_task_off_heap_memory_mb(self, task_off_heap_memory_mb: int
                                        ) -> SlotSharingGroup.Builder:
            return self._with("task_off_heap_memory_mb", task_off_heap_memory_mb)

        def set_managed_memory(self, managed_memory: Any) -> SlotSharingGroup.Builder:
            return self._with("managed_memory", managed_memory)

        def set_managed_memory_mb(self, managed_memory_mb: int) -> SlotSharingGroup.Builder:
            return self._with("managed_memory_mb", managed_memory_mb)

        def set_external_resource(self, name: str, value: float) -> SlotSharingGroup.Builder:
            return self._with(f"external:{name}", value)

        def build(self) -> SlotSharingGroup:
            return self._group
