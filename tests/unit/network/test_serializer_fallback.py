"""Records whose class exists only in the job's code still cross the network."""

import pickle
import pickletools
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


def test_ordinary_batches_stay_plain_pickle_without_a_memo():
    records = [(1, "a"), {"k": [1.5]}, (1, "a")]
    data = bytes(PickleBatchSerializer().dumps(records))
    assert pickle.loads(data) == records
    assert b"cloudpickle" not in data
    opcodes = {op.name for op, _, _ in pickletools.genops(data)}
    assert "MEMOIZE" not in opcodes  # fast mode: no memo table on either side
    assert len(data) < len(pickle.dumps(records, 5))


def test_a_cyclic_record_is_pickled_with_the_memo():
    cyclic: list[object] = [1]
    cyclic.append(cyclic)
    [back, tail] = pickle.loads(PickleBatchSerializer().dumps([cyclic, (2, "b")]))
    assert back[0] == 1 and back[1] is back
    assert tail == (2, "b")


def test_two_references_to_one_object_arrive_as_two_equal_objects():
    shared = [1, 2]
    [(left, right)] = pickle.loads(PickleBatchSerializer().dumps([(shared, shared)]))
    assert left == right == shared


def test_a_writer_whose_pool_is_destroyed_mid_batch_never_recycles_a_buffer_twice():
    import pytest

    from flintlock.common.ids import IntermediateDataSetId, ResultPartitionId, SubtaskIndex
    from flintlock.runtime.network.buffer import NetworkBufferPool
    from flintlock.runtime.network.channel_selector import ForwardSelector
    from flintlock.runtime.network.partition import ResultPartition, ResultPartitionType
    from flintlock.runtime.network.writer import RecordWriter

    network = NetworkBufferPool(8, 4096)
    partition = ResultPartition(
        ResultPartitionId(IntermediateDataSetId("ds"), SubtaskIndex(0)),
        ResultPartitionType.PIPELINED_BOUNDED, 1, network.create_buffer_pool(1, 2))
    writer = RecordWriter(partition, ForwardSelector(), buffer_timeout_ms=-1)
    writer.emit_batch([b"x" * 1000])
    writer.flush_all()
    writer.emit_batch([b"x" * 1000] * 4)
    partition.fail(RuntimeError("cancelled"))  # destroys the pool
    with pytest.raises(Exception):  # noqa: B017 - whichever typed error the pool raises
        writer.emit_batch([b"y" * 3000] * 8)
        writer.flush_all()
    writer.close(flush=False)  # closing must then not recycle a buffer twice
