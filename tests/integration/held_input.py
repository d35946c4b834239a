"""A failure that always lands mid-job, for the file-format sink tests: the job's numbers come
from a ``GatedNumberSequenceSource`` that holds each reader after a share of them; while it
holds, checkpoints complete and part files are committed; then the test opens the gate, and the
records after it meet a failure that waits for a committed file (``RaiseOnceAfter`` /
``ExitOnceAfter`` on the part files' or the checkpoints' pattern). No slowdown decides whether
the failure comes before the end of the input: the gate does."""

from __future__ import annotations

import glob
import os
from typing import Any

from flintlock.common.job_status import JobStatus
from flintlock.testing.gates import FileGate, gated_numbers
from flintlock.testing.waiting import wait_until


def held_numbers(env: Any, gate_dir: str | os.PathLike[str], count: int) -> tuple[Any, FileGate]:
    """The numbers ``0..count-1``, a quarter of them (per reader) before the gate."""
    gate = FileGate(gate_dir)
    return gated_numbers(env, gate, count, before_gate=count // 4), gate


def run_failing_after_a_commit(env: Any, gate: FileGate, committed: str | os.PathLike[str],
                               job_name: str, timeout_s: float = 120.0) -> None:
    """Runs the job until it finishes: waits for the gate and for a file matching
    ``committed`` while the input is held, then opens the gate."""
    client = env.execute_async(job_name)
    try:
        gate.wait_arrived(timeout_s)
        wait_until(lambda: bool(glob.glob(os.fspath(committed))), timeout_s,
                   f"nothing matched {committed} while the input was held")
        gate.open()
        assert client.jm.wait_for_status({JobStatus.FINISHED}, timeout_s)
    finally:
        client.cancel()
        client.join(timeout_s)
