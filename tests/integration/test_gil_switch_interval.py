"""A TaskManager sets the GIL switch interval from the job's shortest buffer timeout."""

import sys

import pytest

from flintlock.testing.environments import local_environment


@pytest.fixture
def python_default_interval():
    before = sys.getswitchinterval()
    sys.setswitchinterval(0.005)
    yield
    sys.setswitchinterval(before)


def test_a_default_job_leaves_the_interval_at_pythons_default(
        executor, tmp_path, python_default_interval):
    env = local_environment(tmp_path, parallelism=2)
    out = env.from_collection(list(range(10))).key_by(lambda x: x % 2).map(lambda x: x)
    assert sorted(out.execute_and_collect("default timeout")) == list(range(10))
    assert sys.getswitchinterval() == pytest.approx(0.005)


def test_an_operator_with_a_short_buffer_timeout_lowers_it(
        executor, tmp_path, python_default_interval):
    env = local_environment(tmp_path, parallelism=2)
    keyed = env.from_collection(list(range(10))).key_by(lambda x: x % 2)
    out = keyed.map(lambda x: x).set_buffer_timeout(2).key_by(lambda x: x).map(lambda x: x)
    assert sorted(out.execute_and_collect("short timeout")) == list(range(10))
    assert sys.getswitchinterval() == pytest.approx(0.0005)
