"""A finished job leaves nothing behind in a long-lived process (a notebook, a service that
submits job after job, this test suite): once the caller drops its handle, the JobManager, the
TaskManagers, their network buffer pools, the job graph and the job's functions are garbage
(docs/known-issues.md, "Memory of a long-lived process running many jobs").

Each test runs one small job on TaskManager threads, keeps only weak references to what the
job made, drops every strong one, and collects: a module-level registry, a cache, a thread, a
logging handler or a class attribute that kept any of them would leave its reference alive.
"""

import gc
import weakref

import pytest

import flintlock.datastream.stream_execution_environment as environment
from flintlock.common.job_status import JobStatus
from flintlock.datastream.functions import MapFunction
from flintlock.testing.environments import local_environment
from flintlock.testing.executor import ThreadExecutor


class Tagged(MapFunction):
    """A map function object, so the test can hold a weak reference to the one it built."""

    def map(self, value):
        return value % 5, 1


class Failing(MapFunction):
    def map(self, value):
        if value == 300:
            raise ValueError("the job fails on purpose")
        return value % 5, 1


def _run(monkeypatch, tmp_path, function, status):
    """Runs a keyed job over ``function`` to ``status``; weak references to what it made."""
    executor = ThreadExecutor()
    monkeypatch.setattr(environment, "load_executor", lambda: executor)
    env = local_environment(tmp_path, 2)
    env.enable_checkpointing(50)
    (env.from_collection(list(range(1000))).map(function).key_by(lambda pair: pair[0])
     .reduce(lambda a, b: (a[0], a[1] + b[1])).print())
    client = env.execute_async("finished job memory")
    if status is JobStatus.FINISHED:
        client.wait(60)
    else:
        with pytest.raises(Exception, match="on purpose"):
            client.wait(60)
    assert client.join(60), "the JobManager thread did not end"
    assert client.jm.get_status() is status
    task_managers = [tm for launcher in executor.launchers for attempt in launcher.attempts
                     for tm in attempt.task_managers]
    assert task_managers, "no TaskManager ran"
    refs = {"JobManager": weakref.ref(client.jm), "job graph": weakref.ref(client.jm.job_graph),
            "function": weakref.ref(function), "environment": weakref.ref(env)}
    for i, tm in enumerate(task_managers):
        refs[f"TaskManager {i}"] = weakref.ref(tm)
        refs[f"network pool {i}"] = weakref.ref(tm._pool)
    return refs


def _alive_after_collection(refs):
    gc.collect()
    return sorted(name for name, ref in refs.items() if ref() is not None)


def test_a_finished_jobs_objects_are_garbage_once_dropped(monkeypatch, tmp_path, capsys):
    refs = _run(monkeypatch, tmp_path, Tagged(), JobStatus.FINISHED)
    monkeypatch.undo()  # the patched executor lookup held the executor
    assert _alive_after_collection(refs) == []
    assert "(4," in capsys.readouterr().out  # the job did run and print


def test_a_failed_jobs_objects_are_garbage_once_dropped(monkeypatch, tmp_path):
    refs = _run(monkeypatch, tmp_path, Failing(), JobStatus.FAILED)
    monkeypatch.undo()
    assert _alive_after_collection(refs) == []
