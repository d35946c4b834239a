"""StreamExecutionEnvironment methods run end to end: every setting is checked by what a real
job (TaskManagers as threads of this process, real RPC and TCP) does with it, and every
result is compared with one computed independently in the test.

User functions are module-level classes so the TaskManager threads share this module's
state (events, lists) with the test.
"""

import glob
import os

import pytest

from flintlock.common import Row, Types, WatermarkStrategy
from flintlock.common.config import Configuration
from flintlock.common.job_execution_result import JobExecutionResult
from flintlock.common.job_status import JobStatus
from flintlock.datastream import (
    CheckpointingMode,
    ExternalizedCheckpointRetention,
    MapFunction,
)
from flintlock.datastream.connectors.file_system import FileSource, StreamFormat
from flintlock.datastream.connectors.number_seq import NumberSequenceSource
from flintlock.runtime.state.keygroups import assign_key_to_operator
from flintlock.testing.environments import local_environment
from flintlock.testing.gates import FileGate, gated_numbers, open_when
from flintlock.testing.recording import Recording
from flintlock.testing.waiting import poll_until

WAIT_S = 30.0


def _env(tmp_path, parallelism=1):
    return local_environment(tmp_path, parallelism)


def _recording(job, what):
    """What the functions of the buffer-timeout job ``job`` recorded about ``what`` (emptied
    by the executor fixture before each test)."""
    return Recording(f"environment.{job}.{what}")


class WhereAmI(MapFunction):
    """Tags each record with (subtask index, parallelism, max parallelism)."""

    def open(self, runtime_context):
        self.where = (runtime_context.get_index_of_this_subtask(),
                      runtime_context.get_number_of_parallel_subtasks(),
                      runtime_context.get_max_number_of_parallel_subtasks())

    def map(self, value):
        return (value, *self.where)


# -- parallelism ------------------------------------------------------------------------------


def test_set_parallelism_runs_that_many_subtasks(executor, tmp_path):
    env = _env(tmp_path, parallelism=3)
    assert env.get_parallelism() == 3
    out = list(env.from_collection(list(range(30))).rebalance().map(WhereAmI())
               .execute_and_collect())
    assert sorted(v for v, *_ in out) == list(range(30))
    assert {index for _, index, _, _ in out} == {0, 1, 2}
    assert {parallelism for _, _, parallelism, _ in out} == {3}


def test_set_max_parallelism_sets_the_key_groups_keys_are_routed_by(executor, tmp_path):
    env = _env(tmp_path, parallelism=3)
    env.set_max_parallelism(7)
    assert env.get_max_parallelism() == 7
    keys = [f"k{i}" for i in range(40)]
    out = list(env.from_collection(keys).key_by(lambda k: k).map(WhereAmI())
               .execute_and_collect())
    assert sorted(k for k, *_ in out) == sorted(keys)
    for key, index, parallelism, max_parallelism in out:
        assert (parallelism, max_parallelism) == (3, 7)
        assert index == assign_key_to_operator(key, 7, 3)


# -- buffer timeout ----------------------------------------------------------------------------


class WaitAtLast(MapFunction):
    """Upstream: counts records; at the last one waits (bounded) until the downstream has
    seen the first, and emits whether it did."""

    def __init__(self, name, last):
        self.name = name
        self.last = last

    def map(self, value):
        _recording(self.name, "up").append(value)
        if value == self.last:
            return (value, _recording(self.name, "arrived").wait_for_length(1, WAIT_S))
        return (value, None)


class NoteArrival(MapFunction):
    """Downstream: on the first record, notes how many the upstream had processed."""

    def __init__(self, name):
        self.name = name
        self.first = True

    def map(self, value):
        if self.first:
            self.first = False
            _recording(self.name, "first").append(len(_recording(self.name, "up")))
            _recording(self.name, "arrived").append(True)
        return value


def _timeout_job(env, name, n):
    return (env.from_collection(list(range(n))).map(WaitAtLast(name, n - 1))
            .map(NoteArrival(name)).disable_chaining())


@pytest.mark.parametrize("timeout_ms", [0, 20])
def test_buffer_timeout_0_or_n_sends_records_before_the_input_ends(executor, tmp_path,
                                                                   timeout_ms):
    env = _env(tmp_path)
    env.set_buffer_timeout(timeout_ms)
    assert env.get_buffer_timeout() == timeout_ms
    n = 300  # several source batches: the first leaves before the last is mapped
    out = list(_timeout_job(env, "t", n).execute_and_collect())
    assert sorted(v for v, _ in out) == list(range(n))
    assert dict(out)[n - 1] is True, "the downstream saw nothing before the upstream ended"


def test_buffer_timeout_minus_one_sends_only_full_buffers(executor, tmp_path):
    env = _env(tmp_path)
    env.set_buffer_timeout(-1)
    n = 300  # 300 small ints fit in one buffer: nothing leaves before the end of input
    _recording("m", "arrived").append(True)  # the upstream need not wait
    out = list(_timeout_job(env, "m", n).execute_and_collect())
    assert sorted(v for v, _ in out) == list(range(n))
    assert _recording("m", "first") == [n]


# -- checkpointing -----------------------------------------------------------------------------


N_HELD = 20_000


def test_enable_checkpointing_takes_checkpoints_at_the_interval(executor, tmp_path):
    env = _env(tmp_path)
    env.enable_checkpointing(20, CheckpointingMode.AT_LEAST_ONCE)
    config = env.get_checkpoint_config()
    assert config.is_checkpointing_enabled()
    assert config.get_checkpoint_interval() == 20
    assert config.get_checkpointing_mode() is CheckpointingMode.AT_LEAST_ONCE
    pattern = str(tmp_path / "chk" / "*" / "chk-*" / "_metadata")
    gate = FileGate(tmp_path / "gate")
    seen = set()  # the job holds half its input until 3 checkpoints completed
    opener = open_when(gate, lambda: seen.update(glob.glob(pattern)) or len(seen) >= 3, WAIT_S)
    out = list(gated_numbers(env, gate, N_HELD, before_gate=N_HELD // 2).execute_and_collect())
    opener.join(WAIT_S)
    assert sorted(out) == list(range(N_HELD))
    assert len(seen) >= 3


def test_configure_num_retained_keeps_that_many_completed_checkpoints(executor, tmp_path):
    env = _env(tmp_path)
    env.configure(Configuration().set_string("execution.checkpointing.num-retained", "2")
                  .set_string("execution.checkpointing.interval", "20 ms")
                  .set_string("execution.checkpointing.externalized-checkpoint-retention",
                              "retain-on-cancellation"))
    assert env.get_checkpoint_interval() == 20
    _held_job(env, tmp_path, "n")
    client = env.execute_async("retained")
    pattern = str(tmp_path / "chk" / client.get_job_id() / "chk-*" / "_metadata")
    assert len(_wait_for_checkpoints(pattern, 4)) >= 4
    client.cancel()
    assert client.jm.wait_for_status({JobStatus.CANCELED}, WAIT_S)
    assert len(glob.glob(pattern)) == 2


def _wait_for_checkpoints(pattern, count):
    """The completed checkpoints seen while polling until ``count`` were seen (bounded)."""
    seen = set()
    poll_until(lambda: seen.update(glob.glob(pattern)) or len(seen) >= count, WAIT_S)
    return seen


def _held_job(env, tmp_path, name, n=100_000):
    """A job whose source holds after its first number until the returned gate opens."""
    gate = FileGate(tmp_path / f"gate-{name}")
    gated_numbers(env, gate, n).print()
    return gate


@pytest.mark.parametrize("retention, kept", [
    (ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION, True),
    (ExternalizedCheckpointRetention.DELETE_ON_CANCELLATION, False),
])
def test_externalized_checkpoint_retention_decides_what_a_cancel_leaves(
        executor, tmp_path, retention, kept):
    env = _env(tmp_path)
    env.enable_checkpointing(20)
    env.get_checkpoint_config().set_externalized_checkpoint_retention(retention)
    _held_job(env, tmp_path, "r")
    client = env.execute_async("retention")
    pattern = str(tmp_path / "chk" / client.get_job_id() / "chk-*" / "_metadata")
    assert _wait_for_checkpoints(pattern, 1), "no checkpoint completed"
    client.cancel()
    assert client.jm.wait_for_status({JobStatus.CANCELED}, WAIT_S)
    assert client.join(WAIT_S)
    assert bool(glob.glob(pattern)) is kept


# -- sources -----------------------------------------------------------------------------------


def test_from_collection_with_a_row_type_converts_tuples_to_rows(executor, tmp_path):
    env = _env(tmp_path)
    row_type = Types.ROW_NAMED(["name", "n"], [Types.STRING(), Types.INT()])
    stream = env.from_collection([("a", 1), ("b", 2)], type_info=row_type)
    out = list(stream.map(lambda r: (r.name, r["n"] + 1, type(r).__name__))
               .execute_and_collect())
    assert sorted(out) == [("a", 2, "Row"), ("b", 3, "Row")]


def test_from_collection_keeps_the_order_of_its_elements(executor, tmp_path):
    env = _env(tmp_path)
    elements = [5, 3, 9, 1, 7] * 20
    assert list(env.from_collection(elements, Types.INT()).execute_and_collect()) == elements


def test_from_collection_with_row_type_yields_named_rows(executor, tmp_path):
    env = _env(tmp_path)
    row_type = Types.ROW_NAMED(["word", "count"], [Types.STRING(), Types.LONG()])
    out = list(env.from_collection([("x", 1)], row_type).execute_and_collect())
    assert out == [Row(word="x", count=1)]


def test_from_source_number_sequence_is_inclusive_at_both_ends(executor, tmp_path):
    env = _env(tmp_path, parallelism=2)
    numbers = env.from_source(NumberSequenceSource(1, 100), WatermarkStrategy.no_watermarks(),
                              "numbers")
    assert sorted(numbers.execute_and_collect()) == list(range(1, 101))


def test_from_source_file_source_reads_every_line(executor, tmp_path):
    lines = [f"line {i} ü" for i in range(50)]
    data = tmp_path / "in.txt"
    data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    env = _env(tmp_path, parallelism=2)
    source = FileSource.for_record_stream_format(StreamFormat.text_line_format(),
                                                 str(data)).build()
    stream = env.from_source(source, WatermarkStrategy.no_watermarks(), "file")
    assert sorted(stream.execute_and_collect()) == sorted(lines)


# -- execute, execute_async --------------------------------------------------------------------


def test_execute_returns_the_job_execution_result(executor, tmp_path):
    env = _env(tmp_path)
    env.from_collection([1, 2, 3]).map(lambda x: x * 2).print()
    result = env.execute("a named job")
    assert isinstance(result, JobExecutionResult)
    tm = executor.launchers[-1].attempts[0].task_managers[0]
    assert result.get_job_id() == tm.payload.job_id
    assert isinstance(result.get_net_runtime(), int) and result.get_net_runtime() >= 0


def test_execute_async_job_name_status_and_result(executor, tmp_path):
    env = _env(tmp_path)
    gate = _held_job(env, tmp_path, "a", n=200)
    client = env.execute_async("async job")
    assert client.jm.job_graph.name == "async job"
    assert client.get_job_id() == client.jm.job_id
    gate.wait_arrived(WAIT_S)
    assert client.get_job_status().result() is JobStatus.RUNNING
    gate.open()
    result = client.get_job_execution_result().result(WAIT_S)
    assert result.get_job_id() == client.get_job_id()
    assert client.get_job_status().result() is JobStatus.FINISHED


def test_execute_async_cancel(executor, tmp_path):
    env = _env(tmp_path)
    gate = _held_job(env, tmp_path, "c")
    client = env.execute_async("to cancel")
    gate.wait_arrived(WAIT_S)
    client.cancel().result(WAIT_S)
    assert client.jm.wait_for_status({JobStatus.CANCELED}, WAIT_S)
    assert client.get_job_status().result() is JobStatus.CANCELED


def test_trigger_savepoint_keeps_the_job_running(executor, tmp_path):
    env = _env(tmp_path)
    env.enable_checkpointing(1000)
    gate = _held_job(env, tmp_path, "s")
    client = env.execute_async("savepoint")
    gate.wait_arrived(WAIT_S)
    assert client.jm.wait_until_running(WAIT_S)
    path = client.trigger_savepoint(str(tmp_path / "sp")).result(WAIT_S)
    assert os.path.exists(os.path.join(path, "_metadata"))
    assert path.startswith(str(tmp_path / "sp"))
    assert client.get_job_status().result() is JobStatus.RUNNING
    client.cancel()
    assert client.jm.wait_for_status({JobStatus.CANCELED}, WAIT_S)


def test_stop_with_savepoint_finishes_the_job(executor, tmp_path):
    env = _env(tmp_path)
    env.enable_checkpointing(1000)
    gate = _held_job(env, tmp_path, "w")
    client = env.execute_async("stop")
    gate.wait_arrived(WAIT_S)
    assert client.jm.wait_until_running(WAIT_S)
    path = client.stop_with_savepoint(savepoint_directory=str(tmp_path / "sp")).result(WAIT_S)
    gate.open()
    assert os.path.exists(os.path.join(path, "_metadata"))
    assert client.jm.wait_for_status({JobStatus.FINISHED}, WAIT_S)
    assert client.get_job_status().result() is JobStatus.FINISHED
