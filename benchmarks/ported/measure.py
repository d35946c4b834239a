"""Runs one measurement of the ported-jobs suite and checks its result.

``measure`` starts ``benchmarks/ported/child.py`` in fresh interpreters (two side by side for a
Bytewax cluster of two processes, on free loopback ports), waits for them, reads their
``RESULT`` lines and their records, and checks the canonical result against what the job
must give (``results.check_expected``); comparing with the bare loop is the caller's part.
A child that fails raises ``ChildFailedError`` with the end of its output. Each measurement
gets its own temporary directory under ``root``, removed afterwards. Called by
``benchmarks/ported_jobs.py`` on its main thread.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Any

from benchmarks.ported import results
from benchmarks.ported.child import RESULT

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHILD_TIMEOUT_S = 1_800


@dataclass(frozen=True, slots=True)
class Config:
    """One configuration compared: an engine, its child options, how many processes."""

    name: str
    engine: str
    args: tuple[str, ...] = ()
    processes: int = 1


class ChildFailedError(Exception):
    """A measurement's interpreter exited with an error."""

    def __init__(self, what: str, status: int, output: str) -> None:
        super().__init__(what, status, output)
        self.what, self.status, self.output = what, status, output

    def __str__(self) -> str:
        return f"{self.what} exited with status {self.status}:\n{self.output}"


def _free_ports(count: int) -> list[int]:
    sockets = [socket.socket() for _ in range(count)]
    for sock in sockets:
        sock.bind(("127.0.0.1", 0))
    ports = [sock.getsockname()[1] for sock in sockets]
    for sock in sockets:
        sock.close()
    return ports


def _environment() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    env.setdefault("PYSPARK_PYTHON", sys.executable)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [ROOT, env.get("PYTHONPATH")]))
    return env


def _listening(port: int) -> bool:
    """Whether a socket of this machine listens on ``port`` (``/proc/net/tcp``, IPv4)."""
    with open("/proc/net/tcp") as table:
        return any(fields[1].endswith(f":{port:04X}") and fields[3] == "0A"
                   for fields in (line.split() for line in table.readlines()[1:]))


def _launch(argvs: list[list[str]], workdir: str, what: str, first_listens_on: int = 0
            ) -> list[dict[str, Any]]:
    """Runs the children side by side; their ``RESULT`` lines, or ``ChildFailedError``.

    With ``first_listens_on``, the others start once the first child listens on that port:
    a Bytewax process that finds its peer not yet listening retries only after a second,
    which would add a random second to some runs."""
    logs = [open(os.path.join(workdir, f"child-{i}.log"), "w+") for i in range(len(argvs))]
    procs: list[subprocess.Popen[bytes]] = []
    try:
        for index, (argv, log) in enumerate(zip(argvs, logs, strict=True)):
            if index == 1 and first_listens_on:
                deadline = time.monotonic() + 60
                while not _listening(first_listens_on) and procs[0].poll() is None \
                        and time.monotonic() < deadline:
                    time.sleep(0.005)
            procs.append(subprocess.Popen(argv, cwd=ROOT, env=_environment(), stdout=log,
                                          stderr=subprocess.STDOUT))
        statuses = [proc.wait(CHILD_TIMEOUT_S) for proc in procs]
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    outputs = []
    for log in logs:
        log.seek(0)
        outputs.append(log.read())
        log.close()
    for status, output in zip(statuses, outputs, strict=True):
        if status:
            raise ChildFailedError(what, status, output[-4000:])
    return [json.loads(line[len(RESULT):]) for output in outputs
            for line in output.splitlines() if line.startswith(RESULT)]


def measure(config: Config, job: str, n: int, text_dir: str, root: str) -> dict[str, Any]:
    """One run of ``config`` on ``job`` with ``n`` records: times, and the checked result."""
    workdir = tempfile.mkdtemp(dir=root)
    what = f"{job} {config.name} n={n:,}"
    try:
        argv = [sys.executable, "-m", "benchmarks.ported.child", config.engine, job,
                "--records", str(n), "--workdir", workdir, "--text", text_dir, *config.args]
        ports = _free_ports(config.processes) if config.processes > 1 else [0]
        addresses = ";".join(f"127.0.0.1:{port}" for port in ports)
        argvs = [[*argv, "--process-id", str(i), "--addresses", addresses]
                 for i in range(config.processes)] if config.processes > 1 else [argv]
        reports = _launch(argvs, workdir, what, ports[0])
        result = results.canonical(job, _items(job, workdir))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    results.check_expected(job, config.name, n, result)
    started = min(r["started"] for r in reports)
    firsts = [r["started"] + r["first_s"] for r in reports if r["first_s"] is not None]
    return {"job": job, "config": config.name, "records": n,
            "wall_s": max(r["ended"] for r in reports) - started,
            "first_s": min(firsts) - started if firsts else None,
            "digest": results.digest(result)}


def _items(job: str, workdir: str) -> list[Any]:
    if job == "word_count":
        return results.read_lines(os.path.join(workdir, "out"))
    items: list[Any] = []
    for name in sorted(os.listdir(workdir)):
        if name.startswith("items-"):
            with open(os.path.join(workdir, name), "rb") as handle:
                items.extend(pickle.load(handle))
    return items


def spark_baseline(root: str) -> dict[str, Any]:
    workdir = tempfile.mkdtemp(dir=root)
    try:
        argv = [sys.executable, "-m", "benchmarks.ported.child", "spark-baseline"]
        (figures,) = _launch([argv], workdir, "spark baseline")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return {"job": None, "config": "spark-baseline", "records": 0, "first_s": None, **figures}
