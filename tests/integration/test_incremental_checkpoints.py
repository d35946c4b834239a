"""Incremental RocksDB checkpoints end to end (TaskManagers as threads): exactly-once output
across a crash, restored from an incremental checkpoint that references earlier uploads, and a
restore of a retained incremental checkpoint at another parallelism."""

import collections
import glob
import os

import pytest

from flintlock.common import WatermarkStrategy
from flintlock.common.job_status import JobStatus
from flintlock.datastream.connectors import Source
from flintlock.runtime.state.rocksdb import RocksDBKeyedStateBackend
from flintlock.runtime.state.rocksdb_incremental import UploadLedger
from flintlock.testing.environments import local_environment
from flintlock.testing.files import completed_checkpoints
from flintlock.testing.gates import FileGate, open_when
from flintlock.testing.waiting import wait_until


@pytest.fixture
def spies(monkeypatch):
    """Counts restores that adopted an incremental checkpoint's database whole, and SST files
    a checkpoint referenced instead of uploading them again."""
    counts = collections.Counter()
    adopt, reusable = RocksDBKeyedStateBackend._adopt, UploadLedger.reusable

    def spy_adopt(self, handles, read_state):
        adopted = adopt(self, handles, read_state)
        counts["adopted"] += adopted
        return adopted

    def spy_reusable(self, name, size, shared_uri):
        found = reusable(self, name, size, shared_uri)
        counts["referenced"] += found is not None
        return found

    monkeypatch.setattr(RocksDBKeyedStateBackend, "_adopt", spy_adopt)
    monkeypatch.setattr(UploadLedger, "reusable", spy_reusable)
    return counts


def _env(directory, parallelism=2, **conf):
    return local_environment(directory, parallelism, restart_attempts=3, options={
        "state.backend.type": "rocksdb",
        "state.backend.local-dir": str(directory / "rocksdb"),
        "execution.checkpointing.incremental": "true",
        **conf,
    })


class PacedSource(Source):
    """Emits ``range(n)`` as stripes ``(next, step)``: subtask i of p starts with the stripe
    (i, p), ten records per poll. With a ``gate``, numbers from ``n // 2`` on wait until it
    opens (the readers idle: checkpoints go on). The stripes are the checkpointed state, so a
    restore at another parallelism (``resumed``: start with no stripe of one's own) continues
    exactly where it stopped."""

    def __init__(self, n, resumed=False, gate=None):
        self.n, self.resumed, self.gate = n, resumed, gate

    def is_bounded(self):
        return True

    def create_reader(self, subtask_index, parallelism):
        stripes = [] if self.resumed else [(subtask_index, parallelism)]
        return _PacedReader(stripes, self.n, self.gate)


class _PacedReader:
    def __init__(self, stripes, n, gate):
        self.stripes, self.n, self.gate = stripes, n, gate

    def restore(self, state):
        if state:
            self.stripes = [tuple(stripe) for stripe in state]

    def poll(self, max_records):
        held = self.gate is not None and not self.gate.is_open()
        limit = self.n // 2 if held else self.n
        records, stripes = [], []
        for start, step in self.stripes:
            taken = list(range(start, limit, step))[:10]
            records.extend(taken)
            following = taken[-1] + step if taken else start
            if following < self.n:
                stripes.append((following, step))
        self.stripes = stripes
        if held and stripes and not records:
            self.gate.arrive()
        return records, not stripes

    def snapshot_state(self, checkpoint_id):
        return list(self.stripes)


class CrashAfterCheckpoints:
    """Passes records through; raises once (marker file) at the first record from ``at`` on
    that sees checkpoint ``count`` completed."""

    def __init__(self, checkpoint_dir, marker, at, count):
        self.checkpoint_dir, self.marker, self.at, self.count = checkpoint_dir, marker, at, count

    def __call__(self, x):
        if x >= self.at and not os.path.exists(self.marker):
            if max(completed_checkpoints(self.checkpoint_dir), default=0) < self.count:
                return x
            open(self.marker, "w").close()
            raise RuntimeError("injected failure after incremental checkpoints")
        return x


def _checkpoint_id(metadata_path):
    return int(os.path.basename(os.path.dirname(metadata_path)).split("-")[1])


@pytest.mark.slow
def test_exactly_once_across_a_crash_restored_from_an_incremental_checkpoint(
        executor, spies, tmp_path):
    n = 4000
    env = _env(tmp_path)
    env.enable_checkpointing(50)
    marker = str(tmp_path / "crashed")
    gate = FileGate(tmp_path / "gate")  # the second half waits for three checkpoints
    opener = open_when(gate, lambda: max(completed_checkpoints(tmp_path / "chk"), default=0) >= 3)
    results = list(
        env.from_source(PacedSource(n, gate=gate), WatermarkStrategy.no_watermarks(), "paced")
        .map(CrashAfterCheckpoints(str(tmp_path / "chk"), marker, n // 2, 3))
        .map(lambda x: (x % 11, 1))
        .key_by(lambda p: p[0])
        .reduce(lambda a, b: (a[0], a[1] + b[1]))
        .execute_and_collect())
    opener.join(60)
    assert os.path.exists(marker), "the failure was never injected"
    per_key = collections.Counter(x % 11 for x in range(n))
    expected = sorted((key, i) for key, n_k in per_key.items() for i in range(1, n_k + 1))
    assert sorted(results) == expected
    assert len(executor.launchers[-1].attempts) >= 2
    assert spies["referenced"] > 0, "no checkpoint built on an earlier one"
    assert spies["adopted"] >= 1, "the restore did not come from an incremental checkpoint"


def _counting_job(env, source):
    return (env.from_source(source, WatermarkStrategy.no_watermarks(), "paced").uid("paced")
            .map(lambda x: (x % 13, 1)).uid("pair")
            .key_by(lambda p: p[0]).reduce(lambda a, b: (a[0], a[1] + b[1])).uid("count"))


@pytest.mark.slow
def test_a_retained_incremental_checkpoint_restores_at_another_parallelism(
        executor, spies, monkeypatch, tmp_path):
    from flintlock.runtime.state import rocksdb_incremental

    read_groups = collections.Counter()
    blocks = rocksdb_incremental.incremental_blocks

    def spy_blocks(handle, owned, read_state, scratch_dir=None):
        read_groups["restores"] += 1
        yield from blocks(handle, owned, read_state, scratch_dir)

    monkeypatch.setattr(rocksdb_incremental, "incremental_blocks", spy_blocks)
    n = 30000
    first = _env(tmp_path / "first", parallelism=2, **{
        "execution.checkpointing.externalized-checkpoint-retention": "retain-on-cancellation",
        "execution.checkpointing.num-retained": "2"})
    first.enable_checkpointing(100)
    gate = FileGate(tmp_path / "gate")  # never opened: the first job holds its second half
    _counting_job(first, PacedSource(n, gate=gate)).filter(lambda p: False).print()
    client = first.execute_async("first part")
    assert client.jm.wait_until_running(60)
    pattern = str(tmp_path / "first" / "chk" / "*" / "chk-*" / "_metadata")
    wait_until(lambda: max(completed_checkpoints(tmp_path / "first" / "chk"), default=0) >= 3,
               60, "the first job completed fewer than three checkpoints")
    client.cancel()
    assert client.jm.wait_for_status({JobStatus.CANCELED}, 60)
    retained = sorted(glob.glob(pattern), key=_checkpoint_id)
    assert len(retained) == 2, retained
    checkpoint_dir = os.path.dirname(retained[-1])
    assert glob.glob(os.path.join(os.path.dirname(checkpoint_dir), "shared", "*.sst"))
    assert spies["referenced"] > 0, "no checkpoint of the first job built on an earlier one"

    second = _env(tmp_path / "second", parallelism=3,
                  **{"execution.state-recovery.path": checkpoint_dir})
    final = {}
    for key, count in _counting_job(second, PacedSource(n, resumed=True)).execute_and_collect():
        final[key] = max(count, final.get(key, 0))
    # counts restored at the checkpoint plus the records after it: every record exactly once
    assert final == dict(collections.Counter(x % 13 for x in range(n)))
    assert read_groups["restores"] > 0, "the rescaled restore did not read incremental state"
    assert os.path.exists(os.path.join(checkpoint_dir, "_metadata"))  # not the second job's
