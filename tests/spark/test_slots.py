"""Counting slots when Spark's own count is unavailable (no JVM: a stand-in context)."""

from __future__ import annotations

import os

import pytest

from flintlock.common.config import Configuration
from flintlock.spark.errors import BarrierModeUnsupportedError, InsufficientSlotsError
from flintlock.spark.session import available_slots, check_capacity, jobmanager_address


class StandInConf:
    def __init__(self, task_cpus: str | None, extra: dict[str, str] | None = None) -> None:
        self._task_cpus = task_cpus
        self._extra = extra or {}

    def get(self, key: str, default: str | None = None) -> str | None:
        if key == "spark.driver.host":
            return "10.0.0.5"
        if key in self._extra:
            return self._extra[key]
        return self._task_cpus if key == "spark.task.cpus" and self._task_cpus else default


class StandInContext:
    """Has no ``_jsc``, so ``available_slots`` must fall back to the master URL."""

    def __init__(self, master: str, task_cpus: str | None = None, parallelism: int = 2,
                 conf: dict[str, str] | None = None) -> None:
        self.master = master
        self.defaultParallelism = parallelism
        self._conf = StandInConf(task_cpus, conf)

    def getConf(self) -> StandInConf:
        return self._conf


@pytest.mark.parametrize(
    ("master", "task_cpus", "parallelism", "slots"),
    [
        ("local", None, 1, 1),
        ("local[3]", None, 3, 3),
        ("local[4]", "2", 4, 2),
        ("local[2, 3]", None, 2, 2),
        ("local[*]", None, 1, os.cpu_count() or 1),
        ("local-cluster[2, 3, 1024]", None, 6, 6),
        ("spark://127.0.0.1:7077", None, 8, 8),
        ("yarn", "2", 8, 4),
    ],
)
def test_fallback_slot_count(master: str, task_cpus: str | None, parallelism: int, slots: int):
    assert available_slots(StandInContext(master, task_cpus, parallelism)) == slots


def test_the_capacity_check_names_needed_and_available():
    check_capacity(StandInContext("local[2]"), 2)
    with pytest.raises(InsufficientSlotsError) as info:
        check_capacity(StandInContext("local[2]"), 5)
    assert (info.value.needed, info.value.available, info.value.master) == (5, 2, "local[2]")


def test_dynamic_allocation_is_refused_before_any_barrier_stage_is_submitted():
    check_capacity(StandInContext("yarn", conf={"spark.dynamicAllocation.enabled": "false"}), 2)
    context = StandInContext("yarn", conf={"spark.dynamicAllocation.enabled": "True"})
    with pytest.raises(BarrierModeUnsupportedError) as info:
        check_capacity(context, 2)
    assert "spark.dynamicAllocation.enabled=false" in str(info.value)
    # Spark ignores dynamic allocation with a local master, and so does the check.
    check_capacity(StandInContext("local[2]", conf={"spark.dynamicAllocation.enabled": "true"}), 2)


def test_task_managers_dial_the_configured_bound_or_driver_address():
    sc = StandInContext("spark://10.0.0.1:7077")
    configured = Configuration({"jobmanager.rpc.address": "jm.example"})
    assert jobmanager_address(configured, sc, "0.0.0.0") == "jm.example"
    assert jobmanager_address(Configuration(), sc, "127.0.0.1") == "127.0.0.1"
    assert jobmanager_address(Configuration(), sc, "0.0.0.0") == "10.0.0.5"
