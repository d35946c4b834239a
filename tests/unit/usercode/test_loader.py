"""The TaskManager's resolution of a job's imports (``usercode.loader``) and the retirement
of an ended job's code (``usercode.leaks``), in this process and, where the process's own
functions could be touched, in a subprocess."""

from __future__ import annotations

import importlib
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from flintlock.usercode.loader import CodeRoot, JobCodeLoader


def _module(root: Path, name: str, text: str) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return root


@pytest.fixture
def two_versions(tmp_path, monkeypatch):
    """An "installed" probe (on sys.path and already imported) and a shipped one."""
    installed = tmp_path / "installed"
    shipped = tmp_path / "shipped"
    name = f"fl_probe_{abs(hash(str(tmp_path))) % 10**8}"
    pattern = f"fl_pattern_{abs(hash(str(tmp_path))) % 10**8}"
    for root, which in ((installed, "installed"), (shipped, "shipped")):
        _module(root, f"{name}/__init__.py", f"VERSION = '{which}'\n")
        _module(root, f"{name}/sub.py", f"VERSION = '{which}'\n")
        _module(root, f"{pattern}.py", f"VERSION = '{which}'\n")
    _module(shipped, "colorsys.py", "SHIPPED = True\n")
    _module(shipped, "only_shipped_mod.py", "VERSION = 'shipped'\n")
    monkeypatch.syspath_prepend(str(installed))
    importlib.import_module(name)
    yield name, pattern, shipped
    for loaded in [m for m in sys.modules if m.startswith((name, pattern, "only_shipped_mod"))]:
        del sys.modules[loaded]


def _loader(shipped: Path, order: str, patterns: tuple[str, ...] = ()) -> JobCodeLoader:
    return JobCodeLoader("job-1", [CodeRoot(str(shipped), "add_python_file('lib')")], order,
                         patterns, check_leaked=False)


def test_child_first_shadows_a_loaded_module_and_restores_it_after(two_versions):
    name, pattern, shipped = two_versions
    installed = sys.modules[name]
    loader = _loader(shipped, "child-first")
    loader.open()
    try:
        assert importlib.import_module(name).VERSION == "shipped"
        assert importlib.import_module(f"{name}.sub").VERSION == "shipped"
        assert importlib.import_module(pattern).VERSION == "shipped"
        assert not hasattr(importlib.import_module("colorsys"), "SHIPPED")  # stdlib wins
    finally:
        loader.close()
    assert sys.modules[name] is installed
    assert f"{name}.sub" not in sys.modules and pattern not in sys.modules
    assert str(shipped) not in sys.path


@pytest.mark.parametrize("trailing_dot", [True, False])
def test_a_parent_first_pattern_wins_under_child_first(two_versions, trailing_dot):
    name, pattern, shipped = two_versions
    loader = _loader(shipped, "child-first", (pattern + "." if trailing_dot else pattern,))
    loader.open()
    try:
        assert importlib.import_module(pattern).VERSION == "installed"
        assert importlib.import_module(name).VERSION == "shipped"
    finally:
        loader.close()


def test_a_parent_first_module_the_process_lacks_comes_from_the_job(two_versions):
    _name, _pattern, shipped = two_versions
    loader = _loader(shipped, "child-first", ("only_shipped",))
    loader.open()
    try:
        assert importlib.import_module("only_shipped_mod").VERSION == "shipped"
    finally:
        loader.close()


def test_parent_first_prefers_the_process_and_falls_back_to_the_job(two_versions):
    name, pattern, shipped = two_versions
    loader = _loader(shipped, "parent-first")
    loader.open()
    try:
        assert importlib.import_module(name).VERSION == "installed"
        assert importlib.import_module(pattern).VERSION == "installed"
        assert importlib.import_module("only_shipped_mod").VERSION == "shipped"
    finally:
        loader.close()
    assert "only_shipped_mod" not in sys.modules


def test_an_import_error_says_where_it_looked(two_versions):
    _name, pattern, shipped = two_versions
    loader = _loader(shipped, "child-first", (pattern + ".",))
    loader.open()
    try:
        with pytest.raises(ModuleNotFoundError) as caught:
            importlib.import_module("fl_nowhere_to_be_found")
        loader.annotate(caught.value)
        loader.annotate(caught.value)  # once only
    finally:
        loader.close()
    notes = caught.value.__notes__
    assert len(notes) == 1
    lines = notes[0].splitlines()
    assert "job job-1" in lines[0] and "'fl_nowhere_to_be_found'" in lines[0]
    assert "classloader.resolve-order: child-first" in lines[0]
    assert lines[1].startswith(f"  1. {shipped}") and "add_python_file('lib')" in lines[1]
    assert any("the TaskManager's Python path" in line for line in lines[2:])
    assert "parent-first pattern" in loader.explain(pattern)


def test_an_import_error_in_a_cause_is_annotated(tmp_path):
    loader = JobCodeLoader("job-2", [], "parent-first", (), check_leaked=False)
    try:
        try:
            import fl_missing_for_the_cause  # noqa: F401
        except ImportError as missing:
            raise RuntimeError("user function failed") from missing
    except RuntimeError as error:
        loader.annotate(error)
        cause = error.__cause__
    assert cause is not None and "job job-2" in cause.__notes__[0]
    assert "shipped no files" in cause.__notes__[0]


_RETIRE = textwrap.dedent("""
    import sys, threading
    from flintlock.usercode.loader import CodeRoot, JobCodeLoader
    from flintlock.usercode.leaks import LeakedUserCodeError
    root = sys.argv[1]
    loader = JobCodeLoader("job-9", [CodeRoot(root, "test")], "child-first", (), True)
    loader.open()
    import stale
    callback = stale.make_callback()
    keep = stale.Keeper()
    retired = loader.close()
    assert "stale" not in sys.modules
    outcomes = []
    for call in (callback, keep.method, stale.function):
        try:
            call()
            outcomes.append("ran")
        except LeakedUserCodeError as exc:
            outcomes.append("retired" if "job job-9" in str(exc) else str(exc))
    import stale as fresh  # a new job may import the module again: a fresh copy
    outcomes.append(fresh.function())
    print(retired >= 3, outcomes)
""")


def test_an_ended_jobs_code_raises_and_a_fresh_import_works(tmp_path):
    _module(tmp_path, "stale.py", textwrap.dedent("""
        def function():
            return "fresh"
        def make_callback():
            captured = 1
            def callback():
                return captured
            return callback
        class Keeper:
            def method(self):
                return super().__repr__()
    """))
    done = subprocess.run([sys.executable, "-c", _RETIRE, str(tmp_path)], capture_output=True,
                          text=True, timeout=60, check=False, cwd=str(tmp_path))
    assert done.returncode == 0, done.stderr
    # the root is gone from sys.path after close, so the fresh import needs it back: the
    # script's cwd ('' on sys.path) provides it, as a new job's files would
    assert done.stdout.strip() == "True ['retired', 'retired', 'retired', 'fresh']"
