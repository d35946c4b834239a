"""CompletedCheckpointStore.recover and a damaged newest checkpoint (issue 16): a fallback to
the older one is recorded, or refused with the error naming the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from flintlock.runtime.checkpoint.store import CompletedCheckpointStore
from flintlock.runtime.state.handles import CorruptStateError
from tests.unit.checkpoint.file_states import make_checkpoint, make_storage


def _three_with_the_newest_damaged(tmp_path: Path) -> tuple[str, Path]:
    storage = make_storage(tmp_path)
    store = CompletedCheckpointStore(3, storage.job_dir)
    for n in (1, 2, 3):
        store.add(make_checkpoint(storage, n))
    newest = Path(store.checkpoints[-1].metadata_path)
    newest.write_bytes(newest.read_bytes()[:-3])
    return storage.job_dir, newest


def test_a_fallback_is_recorded_with_the_damaged_file_and_what_is_restored(
        tmp_path: Path) -> None:
    job_dir, newest = _three_with_the_newest_damaged(tmp_path)
    recovered = CompletedCheckpointStore.recover(job_dir, num_retained=3)
    latest = recovered.latest()
    assert latest is not None and latest.checkpoint_id == 2
    [fallback] = recovered.fallbacks
    assert (fallback.checkpoint_id, fallback.restored_id) == (3, 2)
    assert fallback.error.uri == str(newest)
    assert str(newest) in str(fallback) and "restoring checkpoint 2" in str(fallback)


def test_without_fallback_the_damaged_newest_checkpoint_is_an_error(tmp_path: Path) -> None:
    job_dir, newest = _three_with_the_newest_damaged(tmp_path)
    with pytest.raises(CorruptStateError) as damaged:
        CompletedCheckpointStore.recover(job_dir, num_retained=3, fallback=False)
    assert damaged.value.uri == str(newest)


def test_a_damaged_older_checkpoint_is_no_fallback(tmp_path: Path) -> None:
    storage = make_storage(tmp_path)
    store = CompletedCheckpointStore(2, storage.job_dir)
    store.add(make_checkpoint(storage, 1))
    store.add(make_checkpoint(storage, 2))
    oldest = Path(store.checkpoints[0].metadata_path)
    oldest.write_bytes(b"garbage")
    recovered = CompletedCheckpointStore.recover(storage.job_dir, num_retained=2, fallback=False)
    assert [c.checkpoint_id for c in recovered.checkpoints] == [2]
    assert recovered.fallbacks == ()


def test_every_checkpoint_damaged_falls_back_to_a_fresh_start(tmp_path: Path) -> None:
    storage = make_storage(tmp_path)
    store = CompletedCheckpointStore(1, storage.job_dir)
    store.add(make_checkpoint(storage, 1))
    Path(store.checkpoints[0].metadata_path).write_bytes(b"garbage")
    recovered = CompletedCheckpointStore.recover(storage.job_dir)
    assert recovered.latest() is None and recovered.highest_checkpoint_id == 1
    assert [(f.checkpoint_id, f.restored_id) for f in recovered.fallbacks] == [(1, None)]
    assert "a fresh start" in str(recovered.fallbacks[0])
