"""Integration tests run their jobs on TaskManager threads of the test process."""

import pytest

from flintlock.testing.executor import use_thread_executor


@pytest.fixture
def executor(monkeypatch):
    """Thread TaskManagers for ``env.execute()``; a module may override this fixture to reset
    its own recorders first (and then call ``use_thread_executor`` itself)."""
    return use_thread_executor(monkeypatch)
