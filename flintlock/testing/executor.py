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
    def __init__(self) -> None:
        self.launchers: list[ThreadLauncher] = []

    def create_launcher(self, configuration: Configuration, slots_needed: int) -> ThreadLauncher:
        launcher = ThreadLauncher()
        self.launchers.append(launcher)
        return launcher


def use_thread_executor(monkeypatch: Any) -> ThreadExecutor:
    """Patches the DataStream API's executor lookup for the duration of a test."""
    import flintlock.datastream.stream_execution_environment as environment

    executor = ThreadExecutor()
    monkeypatch.setattr(environment, "load_executor", lambda: executor)
    return executor
