"""Fixtures for DataStream API tests: an environment that reads no configuration file, and a
fake executor module standing in for the Spark runtime."""

import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from flintlock.common import CloseableIterator, Configuration, JobExecutionResult
from flintlock.datastream import StreamExecutionEnvironment
from flintlock.datastream.stream_execution_environment import EXECUTOR_MODULE


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> StreamExecutionEnvironment:
    monkeypatch.setenv("FLINTLOCK_CONF_DIR", str(tmp_path))
    return StreamExecutionEnvironment.get_execution_environment()


class ListIterator(CloseableIterator):
    def __init__(self, items: list[Any]) -> None:
        self._items = iter(items)
        self.closed = False

    def __next__(self) -> Any:
        return next(self._items)

    def close(self) -> None:
        self.closed = True


class FakeExecutor:
    """Records every submission; returns canned results."""

    calls: list[tuple[str, Any, Configuration, str, tuple[Any, ...]]] = []
    collected: list[Any] = []
    iterators: list[ListIterator] = []

    def execute(self, graph: Any, configuration: Configuration, job_name: str) -> Any:
        self.calls.append(("execute", graph, configuration, job_name, ()))
        return JobExecutionResult("job-1", 42)

    def execute_async(self, graph: Any, configuration: Configuration, job_name: str) -> Any:
        self.calls.append(("execute_async", graph, configuration, job_name, ()))
        return "client"

    def execute_and_collect(self, graph: Any, configuration: Configuration, job_name: str,
                            collect_id: str) -> ListIterator:
        self.calls.append(("collect", graph, configuration, job_name, (collect_id,)))
        iterator = ListIterator(list(self.collected))
        self.iterators.append(iterator)
        return iterator


@pytest.fixture
def fake_executor(monkeypatch: pytest.MonkeyPatch) -> Iterator[type[FakeExecutor]]:
    module = types.ModuleType(EXECUTOR_MODULE)
    module.SparkExecutor = FakeExecutor  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, EXECUTOR_MODULE, module)
    FakeExecutor.calls = []
    FakeExecutor.collected = []
    FakeExecutor.iterators = []
    yield FakeExecutor


@pytest.fixture
def no_runtime(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the executor module unimportable, whatever exists on disk."""
    monkeypatch.setitem(sys.modules, EXECUTOR_MODULE, None)
