"""JobHighAvailability's configuration and damaged recovery data (issue 16)."""

from __future__ import annotations

import json

import pytest

from flintlock.common.config import Configuration
from flintlock.common.errors import ConfigurationError
from flintlock.runtime.checkpoint.storage import resolve
from flintlock.runtime.jobmanager.high_availability import (
    HighAvailabilityDataError,
    JobHighAvailability,
    JobRecord,
)
from flintlock.runtime.jobmanager.leadership import FileLease
from flintlock.testing.clock import ManualClock
from flintlock.testing.full_disk import FullDisk


def _ha(tmp_path):
    config = Configuration().set_string("high-availability.type", "filesystem")
    config.set_string("high-availability.storageDir", str(tmp_path / "ha"))
    config.set_string("high-availability.cluster-id", "c")
    config.set_string("high-availability.filesystem.lease-wait-timeout", "0 ms")
    ha = JobHighAvailability.from_config(config, ManualClock(1_000_000))
    assert ha is not None
    return ha


def test_without_ha_there_is_nothing_to_start():
    assert JobHighAvailability.from_config(Configuration(), ManualClock()) is None


def test_filesystem_ha_needs_a_storage_dir_and_a_plain_cluster_id(tmp_path):
    config = Configuration().set_string("high-availability.type", "filesystem")
    with pytest.raises(ConfigurationError, match=r"high-availability\.storageDir"):
        JobHighAvailability.from_config(config, ManualClock())
    config.set_string("high-availability.storageDir", str(tmp_path))
    config.set_string("high-availability.cluster-id", "a/b")
    with pytest.raises(ConfigurationError, match=r"high-availability\.cluster-id"):
        JobHighAvailability.from_config(config, ManualClock())


def test_a_damaged_job_record_is_an_error_naming_it_and_frees_the_lease(tmp_path):
    record = tmp_path / "ha" / "c" / "job.json"
    record.parent.mkdir(parents=True)
    record.write_text("{not json")
    ha = _ha(tmp_path)
    with pytest.raises(HighAvailabilityDataError) as damaged:
        ha.start(object(), lambda lost: None)  # type: ignore[arg-type]
    assert str(record) in str(damaged.value)
    _ha(tmp_path).lease.acquire(0)  # released: the next driver leads at once


def test_a_job_graph_that_is_not_the_recorded_one_is_refused(tmp_path):
    root = tmp_path / "ha" / "c"
    root.mkdir(parents=True)
    (root / "job.json").write_text(json.dumps({
        "version": 1, "job_id": "j1", "name": "n", "status": "RUNNING",
        "graph_sha256": "0" * 64, "completed_checkpoints": [3]}))
    (root / "jobgraph.pickle").write_bytes(b"something else")
    with pytest.raises(HighAvailabilityDataError, match=r"jobgraph\.pickle"):
        _ha(tmp_path).start(object(), lambda lost: None)  # type: ignore[arg-type]


def test_an_unwritable_ha_storage_does_not_stop_a_confirmed_commit(caplog):
    """The HA storage full while a checkpoint completes: the leadership is confirmed, so sinks
    may commit; the pointer that could not be written is logged and written with the next."""
    disk = FullDisk("fulldisk://ha-storage-full")
    clock = ManualClock(1_000_000)
    root = f"{disk.uri}/c"
    ha = JobHighAvailability(root, "c", FileLease(root, "c", 60_000, clock), 0)
    ha.record = JobRecord("j1", "n", "RUNNING", "0" * 64)
    ha.lease.acquire(0)
    disk.fill("all")
    ha.checkpoint_completed(7, retained=3)
    assert disk.refused_writes() == 1
    assert "could not record completed checkpoint 7" in caplog.text
    disk.free()
    ha.checkpoint_completed(8, retained=3)
    fs, path = resolve(f"{root}/job.json")
    assert json.loads(fs.cat_file(path))["completed_checkpoints"] == [7, 8]
