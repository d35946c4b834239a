"""Savepoints across versions (issue 14), on TaskManager threads.

* The v0 fixture (tests/fixtures/savepoints/v0-2026-11-25: pickled ``_metadata``, written by
  the code before the versioned format) restores: the job goes on from the state the
  savepoint holds (``expected.json``) — every key's count, recent values, parity counts and
  sum continue from their saved values, the sources from their saved offsets (exactly once:
  every count after the saved one appears once), and the timers saved fire at the end.
* A savepoint written now (format 2) restores in a flintlock whose checkpoint classes were
  all renamed (a renamed copy of the package, run in a fresh interpreter).
"""

from __future__ import annotations

import json
import shutil
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from flintlock.common.job_status import JobStatus
from flintlock.graph.operator_ids import uid_hash
from flintlock.runtime.checkpoint.metadata import resolve_savepoint
from flintlock.runtime.checkpoint.storage import read_state
from flintlock.runtime.state.format import decode_blocks, entries_of
from flintlock.runtime.state.keygroups import KeyGroupRange
from flintlock.runtime.state.snapshots import KeyGroupsStateHandle, TaskStateSnapshot
from flintlock.testing.environments import local_environment
from flintlock.testing.gates import FileGate
from tests.fixtures.savepoints import fixture_job
from tests.unit.checkpoint.renamed_classes import renamed_copy, run_renamed

V0 = Path(__file__).parents[1] / "fixtures" / "savepoints" / "v0-2026-11-25"


def _resume(tmp_path: Path, savepoint: str, parallelism: int) -> list[Any]:
    env = local_environment(tmp_path / "resumed", parallelism, options={
        "execution.state-recovery.path": savepoint})
    profile, sums = fixture_job.build(env)
    return _as_json(list(profile.union(sums).execute_and_collect()))


def _as_json(records: list[Any]) -> list[Any]:
    return json.loads(json.dumps(records))


def _check_resumed(records: list[Any], saved: dict[str, dict[str, Any]]) -> None:
    """``records`` continue the job from ``saved`` (per key: count, recent, parity, sum)."""
    final = fixture_job.expected_final()
    assert set(saved) == set(final)
    profiles, sums, timers = defaultdict(list), defaultdict(list), defaultdict(list)
    for record in records:
        if record[0] == "profile":
            profiles[record[1]].append(record)
        elif record[0] == "timer":
            timers[record[1]].append(record[2])
        else:
            sums[record[0]].append(record[1])
    for key, total in final.items():
        before = saved[key]
        counts = sorted(r[2] for r in profiles[key])
        assert counts == list(range(before["count"] + 1, total["count"] + 1)), key
        by_count = {r[2]: r for r in profiles[key]}
        _, _, _, recent, parity = by_count[before["count"] + 1]
        assert recent[:-1] == before["recent"][-2:], key
        assert sum(parity.values()) == before["count"] + 1
        assert all(parity.get(side, 0) >= n for side, n in before["parity"].items()), key
        last = by_count[total["count"]][4]
        assert last == {side: total[side] for side in ("even", "odd") if total[side]}, key
        assert len(sums[key]) == total["count"] - before["count"], key
        assert sums[key][-1] == total["sum"], key  # one subtask per key: in order
        assert sums[key][0] - before["sum"] in fixture_job.values_of(key), key
        assert timers[key] == [total["count"]], key


def _v0_saved() -> dict[str, dict[str, Any]]:
    keyed = json.loads((V0 / "expected.json").read_text())["keyed"]
    profile, reduced = keyed["profile"], keyed["sums"]["_flintlock_reduce"]
    return {key: {"count": count, "recent": profile["recent"][key],
                  "parity": profile["parity"][key], "sum": reduced[key][1]}
            for key, count in profile["count"].items()}


@pytest.mark.parametrize("parallelism", [2, 3])
def test_the_v0_fixture_restores_and_the_job_goes_on_from_its_state(
        executor: Any, tmp_path: Path, parallelism: int) -> None:
    copy = tmp_path / "v0"
    shutil.copytree(V0, copy)
    saved = _v0_saved()
    assert sum(s["count"] for s in saved.values()) == 1984  # what the fixture holds
    _check_resumed(_resume(tmp_path, str(copy), parallelism), saved)


def _stop_halfway(tmp_path: Path) -> str:
    """The fixture job stopped with a savepoint (written by this flintlock) while its number
    readers are held at a gate halfway."""
    gate = FileGate(tmp_path / "gate")
    env = local_environment(tmp_path / "first", 2, options={
        "state.storage.fs.memory-threshold": "64b"})
    env.enable_checkpointing(60_000)
    profile, sums = fixture_job.build(env, gate)
    profile.union(sums).filter(lambda record: False).print()
    client = env.execute_async("savepoint to be renamed")
    try:
        gate.wait_arrived()
        assert client.jm.wait_until_running(60)
        path: str = client.stop_with_savepoint(
            savepoint_directory=str(tmp_path / "sp")).result(60)
    finally:
        gate.open()
    assert client.jm.wait_for_status({JobStatus.FINISHED}, 60)
    assert client.join(60)
    return path


def _saved_state(path: str) -> dict[str, dict[str, Any]]:
    """Per key: count, recent and parity of ``profile``, sum of ``sums``, read from the
    savepoint at ``path``."""
    checkpoint = resolve_savepoint(path)
    tables: dict[str, dict[str, Any]] = defaultdict(dict)
    wanted = {uid_hash("profile"), uid_hash("sums")}
    for state in checkpoint.task_states.values():
        if not isinstance(state, TaskStateSnapshot):
            continue
        for operator_id, operator in state.subtask_states.items():
            handles = [h for h in operator.managed_keyed_state
                       if isinstance(h, KeyGroupsStateHandle)]
            if operator_id in wanted:
                for _, block in decode_blocks(handles, KeyGroupRange(0, 127), read_state):
                    for name, entries in block:
                        tables[name].update(entries_of(entries))
    return {key: {"count": count, "recent": list(tables["recent"][key]),
                  "parity": tables["parity"][key], "sum": tables["_flintlock_reduce"][key][1]}
            for key, count in tables["count"].items()}


RESUME_RENAMED = """
import json
import flintlock.datastream.stream_execution_environment as environment
import flintlock.runtime.checkpoint.completed as completed
from flintlock.testing.environments import local_environment
from flintlock.testing.gates import FileGate
from flintlock.testing.executor import ThreadExecutor
from tests.fixtures.savepoints import fixture_job

assert not hasattr(completed, "CompletedCheckpoint"), "the copy is not the renamed one"
environment.load_executor = ThreadExecutor
env = local_environment(WORK, 2, options={"execution.state-recovery.path": SAVEPOINT})
profile, sums = fixture_job.build(env)
print("RESULT " + json.dumps(list(profile.union(sums).execute_and_collect())))
"""


@pytest.mark.slow
def test_a_savepoint_written_now_restores_after_the_checkpoint_classes_were_renamed(
        executor: Any, tmp_path: Path) -> None:
    savepoint = _stop_halfway(tmp_path)
    assert (Path(savepoint) / "_metadata.committed").exists()
    moved = tmp_path / "moved-savepoint"  # and it may be moved, as a directory
    shutil.move(savepoint, moved)
    saved = _saved_state(str(moved))
    total = sum(fixture_job.expected_final()[key]["count"] for key in saved)
    assert 0 < sum(s["count"] for s in saved.values()) < total
    root = renamed_copy(tmp_path / "later")
    script = (f"WORK = {str(tmp_path / 'resumed')!r}\nSAVEPOINT = {str(moved)!r}\n"
              + RESUME_RENAMED)
    out = run_renamed(root, script)
    result = next(line for line in out.splitlines() if line.startswith("RESULT "))
    _check_resumed(json.loads(result[len("RESULT "):]), saved)
