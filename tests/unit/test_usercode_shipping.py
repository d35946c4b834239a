"""The job's own modules travel by value (child-first), or not at all (parent-first)."""

import subprocess
import sys
import textwrap

from flintlock.common.config import Configuration
from flintlock.usercode.shipping import is_job_module, job_modules, shipped_by_value

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
        assert all(m in job_modules(config) for m in registered)
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
