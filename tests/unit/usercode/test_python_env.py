"""The job's Python dependencies: collected on the driver, installed and unpacked on hosts."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import tarfile
import threading

import pytest

from flintlock.common.config import Configuration
from flintlock.testing.packages import build_tar, build_wheel, build_zip
from flintlock.usercode import python_env
from flintlock.usercode.python_env import (
    PythonDependencyError,
    PythonRequirementsError,
    collect_dependencies,
    prepare_environment,
)


@pytest.fixture
def offline(tmp_path):
    """A requirements file naming one package and a cache directory holding its wheel."""
    cache = tmp_path / "cache"
    cache.mkdir()
    name = f"fl_dep_{os.getpid()}_{abs(hash(str(tmp_path))) % 10**8}"
    build_wheel(str(cache), name, "1.0", "ANSWER = 42\n")
    requirements = tmp_path / "requirements.txt"
    requirements.write_text(f"{name}==1.0\n")
    return name, requirements, cache


def _config(tmp_path, **options):
    config = Configuration().set_string("flintlock.python.dependencies-dir",
                                        str(tmp_path / "deps"))
    for key, value in options.items():
        config.set_string(key, value)
    return config


def _forget(module: str) -> None:
    sys.modules.pop(module, None)


def test_nothing_configured_ships_nothing(tmp_path):
    assert collect_dependencies(Configuration()) is None
    prepared = prepare_environment(None, _config(tmp_path), owns_process=True)
    assert prepared.paths == [] and prepared.working_dir is None


def test_requirements_install_offline_from_the_cache_and_leave_sys_path_on_close(
        tmp_path, offline):
    name, requirements, cache = offline
    config = _config(tmp_path, **{"python.requirements": f"{requirements}#{cache}"})
    deps = collect_dependencies(config)
    assert deps is not None and deps.requirements == requirements.read_bytes()
    assert [n for n, _ in deps.cached_packages] == [f"{name}-1.0-py3-none-any.whl"]
    prepared = prepare_environment(deps, config, owns_process=False)
    try:
        assert importlib.import_module(name).ANSWER == 42
        [site] = prepared.paths
        assert site in sys.path and site.startswith(str(tmp_path / "deps"))
    finally:
        prepared.close()
        _forget(name)
    assert site not in sys.path


def test_a_second_preparation_on_the_host_reuses_the_install(tmp_path, offline, monkeypatch):
    _, requirements, cache = offline
    config = _config(tmp_path, **{"python.requirements": f"{requirements}#{cache}"})
    deps = collect_dependencies(config)
    prepare_environment(deps, config, owns_process=False).close()
    calls = []
    monkeypatch.setattr(python_env.subprocess, "run",
                        lambda *a, **k: calls.append(a) or pytest.fail("pip ran again"))
    prepared = prepare_environment(deps, config, owns_process=False)
    prepared.close()
    assert calls == []


def test_concurrent_task_managers_install_once(tmp_path, offline, monkeypatch):
    _name, requirements, cache = offline
    config = _config(tmp_path, **{"python.requirements": f"{requirements}#{cache}"})
    deps = collect_dependencies(config)
    real_run = subprocess.run
    runs = []

    def counting_run(*args, **kwargs):
        runs.append(args)
        return real_run(*args, **kwargs)

    monkeypatch.setattr(python_env.subprocess, "run", counting_run)
    prepared, errors = [], []

    def prepare():
        try:
            prepared.append(prepare_environment(deps, config, owns_process=False))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=prepare) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    for env in prepared:
        env.close()
    assert errors == [] and len(prepared) == 3 and len(runs) == 1


def test_changed_requirements_install_into_a_new_directory(tmp_path, offline):
    name, requirements, cache = offline
    config = _config(tmp_path, **{"python.requirements": f"{requirements}#{cache}"})
    first = collect_dependencies(config)
    requirements.write_text(f"{name}>=1.0\n")
    second = collect_dependencies(config)
    assert first is not None and second is not None
    assert first.requirements_digest != second.requirements_digest


def test_adding_an_archive_keeps_the_requirements_install(tmp_path, offline):
    _, requirements, cache = offline
    config = _config(tmp_path, **{"python.requirements": f"{requirements}#{cache}"})
    alone = collect_dependencies(config)
    config.set_string("python.archives", build_zip(str(tmp_path / "d.zip"), {"a": b"a"}))
    with_archive = collect_dependencies(config)
    assert alone is not None and with_archive is not None
    assert alone.requirements_digest == with_archive.requirements_digest
    assert alone.archives_digest != with_archive.archives_digest


def test_a_failing_install_reports_pip_output_and_leaves_nothing_half_done(tmp_path, offline):
    _name, requirements, cache = offline
    requirements.write_text("no-such-package-anywhere==9.9\n")
    config = _config(tmp_path, **{"python.requirements": f"{requirements}#{cache}"})
    deps = collect_dependencies(config)
    with pytest.raises(PythonRequirementsError, match="no-such-package-anywhere"):
        prepare_environment(deps, config, owns_process=False)
    assert not [entry for entry in os.listdir(tmp_path / "deps")
                if entry.startswith("requirements-") and not entry.endswith(".lock")]


@pytest.mark.parametrize("spec, message", [
    ("{tmp}/missing.txt", "cannot be read"),
    ("{req}#{tmp}/no-cache-dir", "cache directory"),
])
def test_missing_requirement_files_are_clear_errors(tmp_path, offline, spec, message):
    _, requirements, _ = offline
    config = Configuration().set_string(
        "python.requirements", spec.format(tmp=tmp_path, req=requirements))
    with pytest.raises(PythonDependencyError, match=message):
        collect_dependencies(config)


def test_archives_unpack_into_their_targets_and_become_the_working_directory(tmp_path):
    data_zip = build_zip(str(tmp_path / "data.zip"), {"values.txt": b"1\n2\n3\n"})
    code_tar = build_tar(str(tmp_path / "code.tar.gz"), {"lib/helper.py": b"VALUE = 1\n"})
    config = _config(tmp_path, **{"python.archives": f"{data_zip}#data;{code_tar}"})
    deps = collect_dependencies(config)
    assert deps is not None
    assert [(a.name, a.target_dir) for a in deps.archives] == [
        ("data.zip", "data"), ("code.tar.gz", "code.tar.gz")]
    before = os.getcwd()
    prepared = prepare_environment(deps, config, owns_process=True)
    try:
        assert os.getcwd() == prepared.working_dir
        with open("data/values.txt") as handle:
            assert handle.read().split() == ["1", "2", "3"]
        with open("code.tar.gz/lib/helper.py") as handle:
            assert handle.read() == "VALUE = 1\n"
        assert prepared.paths == []  # archives hold files, not importable code
    finally:
        prepared.close()
    assert os.getcwd() == before


def test_archives_need_task_managers_that_own_their_process(tmp_path):
    data_zip = build_zip(str(tmp_path / "data.zip"), {"values.txt": b"1\n"})
    config = _config(tmp_path, **{"python.archives": data_zip})
    with pytest.raises(PythonDependencyError, match="share one process"):
        prepare_environment(collect_dependencies(config), config, owns_process=False)


@pytest.mark.parametrize("members", [
    {"../escaped.txt": b"x"},
    {"/etc/absolute.txt": b"x"},
])
def test_archive_members_outside_the_target_are_refused(tmp_path, members):
    archive = build_zip(str(tmp_path / "evil.zip"), members)
    config = _config(tmp_path, **{"python.archives": archive})
    with pytest.raises(PythonDependencyError, match="outside its directory"):
        prepare_environment(collect_dependencies(config), config, owns_process=True)
    assert not (tmp_path / "escaped.txt").exists()


def test_links_in_a_tar_archive_are_refused(tmp_path):
    path = tmp_path / "links.tar"
    with tarfile.open(path, "w") as archive:
        link = tarfile.TarInfo("passwd")
        link.type = tarfile.SYMTYPE
        link.linkname = "/etc/passwd"
        archive.addfile(link)
    config = _config(tmp_path, **{"python.archives": str(path)})
    with pytest.raises(PythonDependencyError, match="link"):
        prepare_environment(collect_dependencies(config), config, owns_process=True)


def test_a_corrupt_archive_is_a_clear_error(tmp_path):
    path = tmp_path / "broken.zip"
    path.write_bytes(b"this is not a zip file")
    config = _config(tmp_path, **{"python.archives": str(path)})
    with pytest.raises(PythonDependencyError, match="not a valid zip"):
        prepare_environment(collect_dependencies(config), config, owns_process=True)


@pytest.mark.parametrize("spec, message", [
    ("{tmp}/notes.txt", "not a zip or tar archive"),
    ("{tmp}/data.zip#../up", "relative path"),
    ("{tmp}/data.zip#x;{tmp}/data.zip#x", "same directory"),
])
def test_bad_archive_options_are_clear_errors(tmp_path, spec, message):
    build_zip(str(tmp_path / "data.zip"), {"a": b"a"})
    (tmp_path / "notes.txt").write_text("hi")
    config = Configuration().set_string("python.archives", spec.format(tmp=tmp_path))
    with pytest.raises(PythonDependencyError, match=message):
        collect_dependencies(config)


def test_dependencies_too_large_to_ship_are_refused_at_submission(tmp_path, monkeypatch):
    archive = build_zip(str(tmp_path / "big.zip"), {"blob": os.urandom(4096)})
    monkeypatch.setattr(python_env, "MAX_SHIPPED_BYTES", 1024)
    config = Configuration().set_string("python.archives", archive)
    with pytest.raises(PythonDependencyError, match=r"spark\.archives"):
        collect_dependencies(config)
