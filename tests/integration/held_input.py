"""A failure that always lands mid-job, for the file-format sink tests: the job's numbers come
from a ``GatedNumberSequenceSource`` that holds each reader after a share of them; while it
holds, checkpoints complete and part files are committed; then the test opens the gate, and the
records after it meet a failure that waits for a committed file (``RaiseOnceAfter`` /
``ExitOnceAfter`` on the part files' or the checkpoints' pattern). No slowdown decides whether
the failure comes before the end of the input: the gate does.

The file-format *reader* tests hold their input the same way with files: a continuously
monitored directory gets the rest of its files only once a checkpoint has completed
(``collect_with_a_failure_midway``)."""

from __future__ import annotations

import glob
import os
import shutil
import threading
from collections.abc import Callable
from typing import Any

from flintlock.common.job_status import JobStatus
from flintlock.testing.gates import FileGate, gated_numbers
from flintlock.testing.waiting import poll_until, wait_until


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


def collect_with_a_failure_midway(stream: Any, count: int,
                                  checkpoints: str | os.PathLike[str],
                                  add_the_rest: Callable[[], None],
                                  timeout_s: float = 120.0) -> list[Any]:
    """The first ``count`` records of ``stream``, a job reading input the test holds back (a
    continuously monitored directory): a helper thread calls ``add_the_rest()`` once a
    checkpoint has completed (a file matches ``checkpoints``), so the records it adds meet a
    failure that waits for a checkpoint, however fast the first part was read. The job is
    cancelled once ``count`` records arrived."""
    stop = threading.Event()

    def feed() -> None:
        ready = poll_until(lambda: stop.is_set() or bool(glob.glob(os.fspath(checkpoints))),
                           timeout_s)
        if ready and not stop.is_set():
            add_the_rest()

    feeder = threading.Thread(target=feed, name="held-input feeder", daemon=True)
    feeder.start()
    try:
        records = stream.execute_and_collect(limit=count)
    finally:
        stop.set()
        feeder.join(timeout_s)
    return list(records)


def publish(source: str | os.PathLike[str], directory: str | os.PathLike[str]) -> None:
    """Moves a file into a monitored directory atomically (a hidden name, then a rename)."""
    name = os.path.basename(os.fspath(source))
    hidden = os.path.join(os.fspath(directory), f".{name}.tmp")
    shutil.copyfile(source, hidden)
    os.replace(hidden, os.path.join(os.fspath(directory), name))
