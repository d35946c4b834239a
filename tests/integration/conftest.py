"""Integration tests run their jobs on TaskManager threads of the test process."""

import pytest

from flintlock.testing.executor import use_thread_executor
from flintlock.testing.recording import Recording


@pytest.fixture
def executor(monkeypatch):
    """Thread TaskManagers for ``env.execute()``, every ``Recording`` of the test kit emptied
    first; a module may override this fixture to patch more (then calling
    ``use_thread_executor`` itself)."""
    Recording.clear_all()
    return use_thread_executor(monkeypatch)
