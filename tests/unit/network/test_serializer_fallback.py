"""Records whose class exists only in the job's code still cross the network."""

import pickle
import subprocess
import sys

from flintlock.runtime.network.serialization import PickleBatchSerializer


def _class_nobody_can_import():
    # as a TaskManager sees a class that came by value with the job (its module is not
    # importable there)
    namespace = {}
    exec("class Event:\n    def __init__(self, n):\n        self.n = n\n", namespace)
    cls = namespace["Event"]
    cls.__module__ = "job_module_not_installed_here"
    return cls


def test_a_batch_plain_pickle_cannot_handle_goes_by_value():
    event = _class_nobody_can_import()
    serializer = PickleBatchSerializer()
    data = serializer.dumps([event(1), event(2)])
    code = ("import pickle, sys; batch = pickle.loads(sys.stdin.buffer.read()); "
            "print([e.n for e in batch])")
    out = subprocess.run([sys.executable, "-c", code], input=data, capture_output=True)
    assert out.stdout.strip() == b"[1, 2]", out.stderr


def test_ordinary_batches_stay_plain_pickle():
    data = PickleBatchSerializer().dumps([(1, "a"), {"k": [1.5]}])
    assert data == pickle.dumps([(1, "a"), {"k": [1.5]}], 5)
