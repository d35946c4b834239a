"""Packing the job's own files on the driver (``usercode.job_files``)."""

from __future__ import annotations

import sys
import types
import zipfile
from pathlib import Path

import pytest

from flintlock.common.config import Configuration
from flintlock.datastream import StreamExecutionEnvironment
from flintlock.usercode import job_files
from flintlock.usercode.job_files import JobFilesError


def _config(*files: str, ship_directory: bool = False) -> Configuration:
    config = Configuration().set_string("python.files", ",".join(files))
    config.set_string("flintlock.python.ship-job-directory", str(ship_directory).lower())
    return config


def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_a_directory_is_packed_without_caches_and_environments(tmp_path):
    lib = _tree(tmp_path / "lib", {
        "helper.py": "X = 1\n", "pkg/__init__.py": "", "pkg/data.txt": "data\n",
        "__pycache__/helper.cpython-311.pyc": "", ".git/HEAD": "ref\n",
        "venv/pyvenv.cfg": "home = /usr\n", "venv/lib/site.py": "",
        ".browser/chrome": "binary", ".idea/workspace.xml": "",
    })
    packed = job_files.pack(_config(str(lib)))
    (entry,) = packed.files
    with zipfile.ZipFile(entry.staged_path) as archive:
        assert sorted(archive.namelist()) == ["helper.py", "pkg/__init__.py", "pkg/data.txt"]
    assert entry.name.startswith(f"flintlock-{entry.digest[:20]}-lib") and "lib" in entry.origin


def test_equal_content_packs_to_one_name_and_a_change_to_another(tmp_path):
    lib = _tree(tmp_path / "lib", {"helper.py": "X = 1\n"})
    first = job_files.pack(_config(str(lib))).files[0]
    assert job_files.pack(_config(str(lib))).files[0].name == first.name
    (lib / "helper.py").write_text("X = 2\n")
    assert job_files.pack(_config(str(lib))).files[0].name != first.name


def test_a_file_a_zip_and_a_wheel_travel(tmp_path):
    single = _tree(tmp_path, {"single.py": "Y = 2\n"}) / "single.py"
    zipped = tmp_path / "z.zip"
    with zipfile.ZipFile(zipped, "w") as archive:
        archive.writestr("zmod.py", "Z = 3\n")
    packed = job_files.pack(_config(str(single), str(zipped)))
    assert len(packed.files) == 2
    with zipfile.ZipFile(packed.files[0].staged_path) as archive:
        assert archive.namelist() == ["single.py"]
    assert Path(packed.files[1].staged_path).read_bytes() == zipped.read_bytes()


def test_what_cannot_be_shipped_is_a_clear_error(tmp_path):
    with pytest.raises(JobFilesError, match="does not exist"):
        job_files.pack(_config(str(tmp_path / "missing")))
    broken = tmp_path / "broken.zip"
    broken.write_bytes(b"not a zip")
    with pytest.raises(JobFilesError, match="not a valid zip"):
        job_files.pack(_config(str(broken)))


def test_covers_names_the_job_files_provide(tmp_path):
    lib = _tree(tmp_path / "lib", {"helper.py": "", "pkg/__init__.py": "", "pkg/sub.py": ""})
    zipped = tmp_path / "z.zip"
    with zipfile.ZipFile(zipped, "w") as archive:
        archive.writestr("zmod.py", "")
    packed = job_files.pack(_config(str(lib), str(zipped)))
    for name, covered in (("helper", True), ("pkg", True), ("pkg.sub", True),
                          ("zmod", True), ("pkg.other", False), ("elsewhere", False),
                          ("__main__", False)):
        assert packed.covers(types.ModuleType(name)) is covered, name


def test_the_job_directory_is_mains_or_above_its_package(tmp_path, monkeypatch):
    job = _tree(tmp_path / "proj", {"jobs/__init__.py": "", "jobs/run.py": ""})
    main = types.ModuleType("__main__")
    main.__file__ = str(job / "jobs" / "run.py")
    monkeypatch.setitem(sys.modules, "__main__", main)
    config = _config(ship_directory=True)
    assert job_files.job_directory(config) == str(job / "jobs")  # python jobs/run.py
    main.__spec__ = types.SimpleNamespace(name="jobs.run")  # python -m jobs.run
    assert job_files.job_directory(config) == str(job)
    assert job_files.job_directory(_config(ship_directory=False)) is None
    main.__file__ = str(Path(sys.prefix) / "bin" / "pytest")  # a tool, not the user's job
    main.__spec__ = None
    assert job_files.job_directory(config) is None


def test_add_python_file_appends_to_python_files(tmp_path):
    env = StreamExecutionEnvironment.get_execution_environment()
    a = _tree(tmp_path / "a", {"m.py": ""})
    b = _tree(tmp_path, {"b.py": ""}) / "b.py"
    env.add_python_file(str(a))
    env.add_python_file(str(b))
    env.add_python_file(str(a))
    assert job_files.python_files(env.get_configuration()) == [str(a), str(b)]


def test_an_unchanged_source_is_not_read_again_and_a_changed_one_is(tmp_path, monkeypatch):
    lib = _tree(tmp_path / "lib", {"helper.py": "X = 1\n", "data.txt": "abc\n"})
    first = job_files.pack(_config(str(lib))).files[0]
    reads: list[str] = []
    real_open = open

    def counting_open(path, mode="r", *args, **kwargs):
        if "b" in mode and str(path).startswith(str(lib)):
            reads.append(str(path))
        return real_open(path, mode, *args, **kwargs)

    monkeypatch.setattr("builtins.open", counting_open)
    again = job_files.pack(_config(str(lib))).files[0]
    assert again.digest == first.digest and not reads  # known by its fingerprint
    (lib / "helper.py").write_text("X = 22\n")  # a new size (and time)
    changed = job_files.pack(_config(str(lib))).files[0]
    assert changed.digest != first.digest and reads
