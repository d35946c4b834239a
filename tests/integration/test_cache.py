"""``DataStream.cache()`` in BATCH mode (TaskManagers as threads): later jobs of the
environment read the stored records instead of computing the stream again — counted by a
function upstream of the cache that appends a line to a file per call — ``invalidate()``
makes the next job compute it again, ``close()`` drops the stored records, and STREAMING
mode is refused."""

from __future__ import annotations

import os

import pytest

from flintlock.datastream import MapFunction, RuntimeExecutionMode
from flintlock.datastream.cache import CacheRequiresBatchModeError
from flintlock.testing.environments import local_environment


class CountingSquare(MapFunction):
    """Squares, appending one line per call to ``path`` (shared by every subtask)."""

    def __init__(self, path):
        self.path = str(path)

    def map(self, value):
        with open(self.path, "a") as file:
            file.write(f"{value}\n")
        return value * value


def _calls(path):
    return len(path.read_text().splitlines()) if path.exists() else 0


def _batch_env(tmp_path, parallelism=2):
    env = local_environment(tmp_path, parallelism)
    env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    return env


def test_later_jobs_read_the_cached_records_without_computing_them_again(executor, tmp_path):
    env = _batch_env(tmp_path)
    calls = tmp_path / "calls"
    squares = env.from_collection(list(range(20))).map(CountingSquare(calls)).cache()
    first = sorted(squares.map(lambda v: v + 1).execute_and_collect())
    assert first == [v * v + 1 for v in range(20)]
    assert _calls(calls) == 20
    second = sorted(squares.filter(lambda v: v % 2 == 0).execute_and_collect())
    assert second == [v * v for v in range(20) if v % 2 == 0]
    third = sorted(squares.execute_and_collect())
    assert third == [v * v for v in range(20)]
    assert _calls(calls) == 20, "a later job computed the cached stream again"


def test_invalidate_makes_the_next_job_compute_the_stream_again(executor, tmp_path):
    env = _batch_env(tmp_path)
    calls = tmp_path / "calls"
    squares = env.from_collection(list(range(5))).map(CountingSquare(calls)).cache()
    assert sorted(squares.execute_and_collect()) == [0, 1, 4, 9, 16]
    squares.invalidate()
    assert sorted(squares.execute_and_collect()) == [0, 1, 4, 9, 16]
    assert _calls(calls) == 10
    assert sorted(squares.execute_and_collect()) == [0, 1, 4, 9, 16]
    assert _calls(calls) == 10


def test_close_drops_the_stored_records(executor, tmp_path):
    env = _batch_env(tmp_path, 1)
    squares = env.from_collection([1, 2, 3]).map(lambda v: v * v).cache()
    assert list(squares.execute_and_collect()) == [1, 4, 9]
    directory = squares._transformation.cached.result.directory
    assert os.listdir(directory)
    env.close()
    assert not os.path.exists(directory)


def test_cache_in_streaming_mode_is_refused(tmp_path):
    env = local_environment(tmp_path, 1)
    with pytest.raises(CacheRequiresBatchModeError, match="BATCH"):
        env.from_collection([1]).cache()
