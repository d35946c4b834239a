"""Code shipped by value keeps its file name and carries its source (issue 30)."""

from __future__ import annotations

import importlib.util
import linecache
import sys
import traceback

import cloudpickle

from flintlock.usercode import shipping  # importing it installs the reducer
from flintlock.usercode.code_filenames import is_user_source


def _load(tmp_path, name, text):
    path = tmp_path / f"{name}.py"
    path.write_text(text, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return path, module


def test_a_function_shipped_by_value_keeps_its_file_and_source_line(tmp_path):
    path, module = _load(tmp_path, "issue30_user_job", (
        "def parse(value):\n"
        "    return 10 // (value - 3)  # the user's line\n"))
    cloudpickle.register_pickle_by_value(module)
    try:
        payload = cloudpickle.dumps(module.parse)
    finally:
        cloudpickle.unregister_pickle_by_value(module)
        del sys.modules["issue30_user_job"]
    path.unlink()  # as on a worker where the script's path does not exist
    linecache.clearcache()
    rebuilt = cloudpickle.loads(payload)
    assert rebuilt.__code__.co_filename == str(path)
    try:
        rebuilt(3)
    except ZeroDivisionError as exc:
        text = "".join(traceback.format_exception(exc))
    assert f'File "{path}", line 2, in parse' in text
    assert "return 10 // (value - 3)  # the user's line" in text
    assert "<dynamic-code>" not in text


def test_runtime_and_library_files_carry_no_source():
    assert not is_user_source(traceback.__file__)
    assert not is_user_source(shipping.__file__)
    assert not is_user_source(cloudpickle.__file__)
    assert not is_user_source("<stdin>")
