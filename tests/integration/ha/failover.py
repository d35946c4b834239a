"""The JobManager-failover scenario, for the threads and the Spark tests: the driver program
(``driver.py``) killed with SIGKILL after its second completed checkpoint and started again
with the same high-availability cluster id (``kill_and_restart_the_driver``)."""

from __future__ import annotations

import collections
import glob
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from flintlock.testing.files import committed_lines
from flintlock.testing.gates import FileGate
from flintlock.testing.waiting import wait_until

DRIVER = Path(__file__).parent / "driver.py"
ROOT = Path(__file__).parents[3]
N = 4000
WAIT_S = 120.0


def _wait(condition, what, process=None):
    """Waits for ``condition``; fails at once if ``process`` (the driver) ended first."""

    def ready():
        assert process is None or process.poll() is None, f"the driver ended before {what}"
        return condition()

    wait_until(ready, WAIT_S, f"waited in vain for {what}")


def _driver(work: Path, launcher: str = "threads", n: int = N) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with open(work / "driver.log", "ab") as log:
        return subprocess.Popen([sys.executable, str(DRIVER), str(work), str(n), launcher],
                                env=env, stdout=subprocess.DEVNULL, stderr=log)


def _record(work: Path) -> dict:
    path = work / "ha" / "failover" / "job.json"
    return json.loads(path.read_text()) if path.exists() else {}


def _committed_checkpoints(work: Path, job_id: str) -> list[str]:
    return glob.glob(str(work / "chk" / job_id / "chk-*" / "_metadata.committed"))


def _expected(n: int = N) -> list[str]:
    counts = collections.Counter()
    lines = []
    for value in range(n):
        counts[value % 7] += 1
        lines.append(f"{value % 7} {counts[value % 7]}")
    return sorted(lines)


def kill_and_restart_the_driver(tmp_path: Path, launcher: str, n: int) -> None:
    """Runs the driver until its second checkpoint, SIGKILLs it, runs it again to the end;
    checks the job id, the recovery and the sink's output."""
    first = _driver(tmp_path, launcher, n)
    try:
        _wait(lambda: _record(tmp_path).get("job_id"), "the job record", first)
        job_id = _record(tmp_path)["job_id"]
        _wait(lambda: max(_record(tmp_path).get("completed_checkpoints") or [0]) >= 2
              and _committed_checkpoints(tmp_path, job_id), "a second completed checkpoint",
              first)
        assert not glob.glob(str(tmp_path / "result-*.json")), "the job ended before the kill"
        first.send_signal(signal.SIGKILL)
    finally:
        first.kill()
        first.wait(WAIT_S)
    assert first.returncode == -signal.SIGKILL
    second = _driver(tmp_path, launcher, n)
    FileGate(tmp_path / "gate").open()  # the source held at n // 2 until now
    try:
        assert second.wait(WAIT_S) == 0, (tmp_path / "driver.log").read_text()[-3000:]
    finally:
        second.kill()
    result = json.loads((tmp_path / f"result-{second.pid}.json").read_text())
    assert result["job_id"] == job_id and result["status"] == "FINISHED"
    assert result["restored"] is not None
    assert "job-recovered" in result["events"]
    assert _record(tmp_path)["status"] == "FINISHED"
    assert sorted(committed_lines(tmp_path / "out")) == _expected(n)
