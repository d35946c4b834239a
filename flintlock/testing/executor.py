"""Runs jobs with TaskManagers as threads of the test process (see ``launchers``).

``ThreadExecutor`` is a ``PipelineExecutor``; ``use_thread_executor(monkeypatch)`` makes
``env.execute()`` and friends use it instead of Spark, for fast integration tests of
everything below the Spark launcher.
"""

from __future__ import annotations

from typing import Any

from flintlock.common.config import Configuration
from flintlock.runtime.executor import PipelineExecutor
from flintlock.testing.launchers import ThreadLauncher


class ThreadExecutor(PipelineExecutor):
    """``slots``: the slots the launcher says the cluster has (None: as many as a job needs)."""

    def __init__(self, slots: int | None = None) -> None:
        self.launchers: list[ThreadLauncher] = []
        self.slots = slots

    def create_launcher(self, configuration: Configuration, slots_needed: int) -> ThreadLauncher:
        launcher = ThreadLauncher(self.slots)
        self.launchers.append(launcher)
        return launcher


def use_thread_executor(monkeypatch: Any, slots: int | None = None) -> ThreadExecutor:
    """Patches the DataStream API's executor lookup for the duration of a test."""
    import flintlock.datastream.stream_execution_environment as environment

    executor = ThreadExecutor(slots)
    monkeypatch.setattr(environment, "load_executor", lambda: executor)
    return executor
