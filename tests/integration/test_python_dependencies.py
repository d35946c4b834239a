"""set_python_requirements / add_python_archive through the public API, on TaskManager
threads (the same TaskManager code as on Spark; tests/spark covers separate processes)."""

from __future__ import annotations

import importlib
import os
import sys

import pytest

from flintlock.testing.environments import local_environment
from flintlock.testing.packages import build_wheel, build_zip


def _package(tmp_path, name):
    cache = tmp_path / "wheels"
    cache.mkdir()
    build_wheel(str(cache), name, "2.0", "def scale(x):\n    return x * 10\n")
    requirements = tmp_path / "requirements.txt"
    requirements.write_text(f"{name}==2.0\n")
    return requirements, cache


def _causes(error: BaseException | None) -> list[str]:
    """The messages of ``error`` and its chain of causes."""
    chain = []
    while error is not None:
        chain.append(f"{type(error).__name__}: {error}")
        error = error.__cause__
    return chain


def test_a_job_imports_a_package_from_its_requirements(executor, tmp_path):
    name = f"fl_req_it_{os.getpid()}"
    requirements, cache = _package(tmp_path, name)
    with pytest.raises(ImportError):
        importlib.import_module(name)
    env = local_environment(tmp_path, parallelism=2, options={
        "flintlock.python.dependencies-dir": str(tmp_path / "deps")})
    env.set_python_requirements(str(requirements), str(cache))

    def scaled(x):
        return importlib.import_module(name).scale(x)

    out = sorted(env.from_collection(list(range(20))).map(scaled)
                 .execute_and_collect("requirements"))
    assert out == [x * 10 for x in range(20)]
    sys.modules.pop(name, None)
    assert not any(name in entry for entry in sys.path if "requirements-" in entry)


def test_a_requirement_pip_cannot_install_fails_the_job_with_pip_output(executor, tmp_path):
    name = f"fl_req_missing_{os.getpid()}"
    requirements, cache = _package(tmp_path, name)
    requirements.write_text("not-in-the-cache==1.0\n")
    env = local_environment(tmp_path, options={
        "flintlock.python.dependencies-dir": str(tmp_path / "deps")})
    env.set_python_requirements(str(requirements), str(cache))
    env.from_collection([1, 2, 3]).map(lambda x: x).print()
    with pytest.raises(Exception) as failure:
        env.execute("uninstallable")
    chain = _causes(failure.value)
    assert any("not-in-the-cache" in text for text in chain), chain


def test_archives_on_task_manager_threads_are_refused_with_a_clear_error(executor, tmp_path):
    archive = build_zip(str(tmp_path / "data.zip"), {"a.txt": b"a"})
    env = local_environment(tmp_path, options={
        "flintlock.python.dependencies-dir": str(tmp_path / "deps")})
    env.add_python_archive(archive, "data")
    env.from_collection([1]).map(lambda x: x).print()
    with pytest.raises(Exception) as failure:
        env.execute("archives on threads")
    chain = _causes(failure.value)
    assert any("share one process" in text for text in chain), chain


def test_environment_methods_check_their_paths(tmp_path):
    env = local_environment(tmp_path)
    with pytest.raises(FileNotFoundError):
        env.set_python_requirements(str(tmp_path / "missing.txt"))
    (tmp_path / "r.txt").write_text("x\n")
    with pytest.raises(FileNotFoundError):
        env.set_python_requirements(str(tmp_path / "r.txt"), str(tmp_path / "no-dir"))
    with pytest.raises(FileNotFoundError):
        env.add_python_archive(str(tmp_path / "missing.zip"))
    archive = build_zip(str(tmp_path / "a.zip"), {"x": b"x"})
    env.add_python_archive(archive)
    env.add_python_archive(archive, "second")
    assert env.get_configuration().get_string("python.archives", "") == \
        f"{archive};{archive}#second"
