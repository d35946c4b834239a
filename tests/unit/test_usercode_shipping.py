"""The job's own modules travel by value (child-first), or not at all (parent-first)."""

import subprocess
import sys
import textwrap
from types import ModuleType

import pytest

from flintlock.common.config import Configuration
from flintlock.common.options import execution
from flintlock.usercode.shipping import (
    is_job_module,
    job_modules,
    matches_parent_first,
    parent_first_patterns,
    shipped_by_value,
)

PROBE = textwrap.dedent("""
    import pickle, sys
    import cloudpickle
    sys.path.insert(0, sys.argv[1])
    import helpers_for_shipping as helpers
    from flintlock.common.config import Configuration
    from flintlock.usercode.shipping import shipped_by_value
    config = Configuration({"classloader.resolve-order": sys.argv[2]})
    with shipped_by_value(config):
        data = cloudpickle.dumps(helpers.triple)
    sys.stdout.buffer.write(data)
""")


def _pickled_with(tmp_path, order):
    (tmp_path / "helpers_for_shipping.py").write_text("def triple(x):\n    return 3 * x\n")
    out = subprocess.run([sys.executable, "-c", PROBE, str(tmp_path), order],
                         capture_output=True, check=True)
    return out.stdout


def test_child_first_ships_a_module_the_task_manager_cannot_import(tmp_path):
    data = _pickled_with(tmp_path, "child-first")
    code = "import pickle, sys; f = pickle.loads(sys.stdin.buffer.read()); print(f(14))"
    out = subprocess.run([sys.executable, "-c", code], input=data, capture_output=True)
    assert out.stdout.strip() == b"42", out.stderr


def test_parent_first_leaves_it_to_the_task_manager(tmp_path):
    data = _pickled_with(tmp_path, "parent-first")
    code = "import pickle, sys; pickle.loads(sys.stdin.buffer.read())"
    out = subprocess.run([sys.executable, "-c", code], input=data, capture_output=True)
    assert b"helpers_for_shipping" in out.stderr


def test_installed_and_runtime_modules_are_not_job_modules():
    import json

    import cloudpickle

    import flintlock.runtime.jobmanager as jobmanager

    for module in (json, cloudpickle, jobmanager):
        assert not is_job_module(module)
    assert is_job_module(sys.modules[__name__])  # a test file is the job's own code
    assert not is_job_module(sys.modules[__name__], (__name__.split(".")[0],))  # parent-first


def test_registration_ends_with_the_block():
    import cloudpickle
    import pytest

    config = Configuration()
    with shipped_by_value(config) as registered:
        assert sys.modules[__name__] in registered
        # once, not once per module: in a whole-suite run every test module is a job module,
        # and each call walks all of sys.modules (quadratic: 36 s in the clean-clone run)
        modules = job_modules(config)
        assert all(m in modules for m in registered)
    with pytest.raises(ValueError):  # no longer registered
        cloudpickle.unregister_pickle_by_value(sys.modules[__name__])


def test_a_module_the_user_registered_stays_registered():
    import cloudpickle

    module = sys.modules[__name__]
    cloudpickle.register_pickle_by_value(module)
    try:
        with shipped_by_value(Configuration()) as registered:
            assert module not in registered
        assert module.__name__ in cloudpickle.list_registry_pickle_by_value()
    finally:
        cloudpickle.unregister_pickle_by_value(module)


def _fake_module(monkeypatch, tmp_path, name):
    """A module loaded from a file of the job (outside stdlib and site-packages)."""
    module = ModuleType(name)
    module.__file__ = str(tmp_path.joinpath(*name.split(".")).with_suffix(".py"))
    monkeypatch.setitem(sys.modules, name, module)
    return module


def test_the_classloader_keys_are_known_options():
    config = Configuration({
        "classloader.parent-first-patterns.default": "flintlock.;org.acme.",
        "classloader.parent-first-patterns.additional": "com.example.;other",
        "classloader.check-leaked-classloader": "false",
    })
    assert config.get(execution.CLASSLOADER_PARENT_FIRST_PATTERNS_DEFAULT) == [
        "flintlock.", "org.acme."]
    assert config.get(execution.CLASSLOADER_PARENT_FIRST_PATTERNS) == ["com.example.", "other"]
    assert config.get(execution.CLASSLOADER_CHECK_LEAKED) is False
    assert Configuration().get(execution.CLASSLOADER_CHECK_LEAKED) is True
    assert parent_first_patterns(config) == ("flintlock.", "org.acme.", "com.example.", "other")


def test_patterns_are_plain_prefixes_of_the_dotted_name():
    assert matches_parent_first("org.example", ("org.example.",))  # the package itself
    assert matches_parent_first("org.example.sub", ("org.example.",))
    assert not matches_parent_first("org.examplefoo", ("org.example.",))
    assert not matches_parent_first("org", ("org.example.",))
    for name in ("org.example", "org.example.sub", "org.examplefoo"):  # Flink's startsWith
        assert matches_parent_first(name, ("org.example",))
    assert not matches_parent_first("org.example", ("",))


@pytest.mark.parametrize("pattern, kept_home", [
    ("acme.", {"acme", "acme.lib"}),
    ("acme", {"acme", "acme.lib", "acmefoo"}),
])
def test_additional_patterns_win_under_child_first(monkeypatch, tmp_path, pattern, kept_home):
    names = {"acme", "acme.lib", "acmefoo"}
    for name in names:
        _fake_module(monkeypatch, tmp_path, name)
    config = Configuration({"classloader.resolve-order": "child-first",
                            "classloader.parent-first-patterns.additional": pattern})
    shipped = {m.__name__ for m in job_modules(config)} & names
    assert shipped == names - kept_home


def test_default_patterns_win_under_child_first(monkeypatch, tmp_path):
    # A job-side file whose name falls under a default pattern is never shipped by value.
    names = {"pyspark.shadow", "cloudpickle.shadow", "pysparkx", "acme.lib"}
    for name in names:
        _fake_module(monkeypatch, tmp_path, name)
    config = Configuration({"classloader.resolve-order": "child-first"})
    assert {m.__name__ for m in job_modules(config)} & names == {"pysparkx", "acme.lib"}
    config = config.merged({"classloader.parent-first-patterns.default": "acme."})
    assert {m.__name__ for m in job_modules(config)} & names == {
        "pyspark.shadow", "cloudpickle.shadow", "pysparkx"}


def test_the_standard_library_and_flintlock_stay_parent_first_without_default_patterns(
        monkeypatch, tmp_path):
    import json

    import flintlock.runtime.jobmanager as jobmanager

    flintlock_file = _fake_module(monkeypatch, tmp_path, "flintlock.not_installed")
    stdlib_named = _fake_module(monkeypatch, tmp_path, "email.not_installed")
    config = Configuration({"classloader.parent-first-patterns.default": ""})
    shipped = job_modules(config)
    assert not {json, jobmanager, flintlock_file, stdlib_named} & set(shipped)
    assert sys.modules[__name__] in shipped
