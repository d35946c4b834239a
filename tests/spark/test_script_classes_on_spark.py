"""The job script's own classes on embedded Spark (issue 27): a frozen dataclass key and
dataclass values in ``ValueState`` (PICKLED_BYTE_ARRAY, PyFlink's ``CountWithTimeoutFunction``)
and ``MapState``, all defined in the script (``__main__``, shipped by value), run as
``python script_classes_job.py``; checkpointed, the driver killed (SIGKILL to its whole
process group: Spark, workers and all), and run again restoring the latest checkpoint, on the
heap and the RocksDB backends (full and incremental checkpoints). The restored run must
continue every key's count and visits exactly where the checkpoint left them, to the end.

Before issue 27 the first run failed at once (``UnstableKeyError: ... __main__.Key defines its
own __eq__``), and with an importable key every checkpoint failed on pickling
``__main__.CountWithTimestamp``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from flintlock.testing.gates import FileGate
from flintlock.testing.waiting import wait_until

pytestmark = [pytest.mark.spark, pytest.mark.slow]
JOB = Path(__file__).with_name("script_classes_job.py")
REPO = Path(__file__).resolve().parents[2]
KEYS = {f"{user}/{region}" for user in ("ann", "bob", "cy") for region in ("eu", "us")}
PER_KEY = 100  # 600 numbers over six keys


def _start(work: Path, backend: str, restore_from: str | None, name: str):
    args = [sys.executable, str(JOB), str(work), backend, *([restore_from] if restore_from else [])]
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", PYTHONPATH=str(REPO))
    out = open(work / f"{name}.out", "w")
    err = open(work / f"{name}.err", "w")
    process = subprocess.Popen(args, stdout=out, stderr=err, cwd=work, env=env,
                               start_new_session=True)
    return process, out, err


def _committed(work: Path) -> list[int]:
    found = []
    for marker in work.glob("chk/*/chk-*/_metadata.committed"):
        found.append(int(marker.parent.name.removeprefix("chk-")))
    return sorted(found)


def _lines(work: Path, name: str) -> list[list]:
    text = (work / f"{name}.out").read_text()
    return [json.loads(line) for line in text.splitlines() if line.startswith("[")]


@pytest.mark.parametrize("backend", ["hashmap", "rocksdb", "rocksdb-incremental"])
def test_script_classes_survive_a_kill_and_a_restore(tmp_path, backend):
    gate = FileGate(tmp_path / "gate")
    first, out, err = _start(tmp_path, backend, None, "first")
    try:
        wait_until(lambda: gate.has_arrived() or first.poll() is not None, 300,
                   "the job never reached its gate")
        assert first.poll() is None, (tmp_path / "first.err").read_text()[-3000:]
        seen = _committed(tmp_path)
        wait_until(lambda: (len(_committed(tmp_path)) > 0
                   and _committed(tmp_path)[-1] >= (seen[-1] + 2 if seen else 2))
                   or first.poll() is not None, 300, "no checkpoint completed at the gate")
        assert first.poll() is None, (tmp_path / "first.err").read_text()[-3000:]
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(60)
        out.close()
        err.close()
    latest = _committed(tmp_path)[-1]
    (checkpoint,) = tmp_path.glob(f"chk/*/chk-{latest}")
    gate.open()
    second, out, err = _start(tmp_path, backend, str(checkpoint), "second")
    try:
        assert second.wait(600) == 0, (tmp_path / "second.err").read_text()[-3000:]
    finally:
        out.close()
        err.close()
    lines = _lines(tmp_path, "second")
    assert lines[-1][0] == "done"
    counts: dict[str, list[int]] = defaultdict(list)
    for kind, key, count, visits in lines:
        if kind == "count":
            assert visits == count, (key, count, visits)  # the map state went on as well
            counts[key].append(count)
    assert set(counts) == KEYS
    for key, values in counts.items():
        first_count = min(values)
        assert first_count > 1, f"{key}: the restored run started from nothing"
        assert sorted(values) == list(range(first_count, PER_KEY + 1)), key
