"""A throwaway Spark standalone cluster on 127.0.0.1, for tests that must cross executors.

``StandaloneCluster`` starts one master and N workers (1 core each by default) from the
pyspark package's own ``bin/spark-class``, on free loopback ports, with logs and work
directories under one temporary directory; ``start`` waits (bounded) until the master answers
(a worker that finds no master retries only 5-15 s later), then starts the workers and waits
until the master's JSON status lists every worker ALIVE; ``stop`` ends every process it
started (each daemon runs in its own process group, so executors and their Python workers go
with it).

    with StandaloneCluster(workers=2) as cluster:
        config.set("flintlock.spark.master", cluster.master_url)

It finds pyspark without importing it (only ``flintlock.spark`` imports pyspark) and needs
Java, as pyspark itself does.

Thread ownership: one test thread starts and stops a cluster; nothing here is shared.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

from flintlock.spark.errors import ClusterStartError

LOOPBACK = "127.0.0.1"
MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"


def spark_home() -> Path:
    """The directory of the installed pyspark package (it is a complete SPARK_HOME)."""
    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        raise ClusterStartError("pyspark is not installed")
    return Path(next(iter(spec.submodule_search_locations)))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((LOOPBACK, 0))
        return int(sock.getsockname()[1])


class StandaloneCluster:
    """A master and ``workers`` workers; see the module doc."""

    def __init__(
        self,
        workers: int = 2,
        cores_per_worker: int = 1,
        worker_memory: str = "1g",
        daemon_memory: str = "256m",
        start_timeout_s: float = 120.0,
    ) -> None:
        self.workers = workers
        self.cores_per_worker = cores_per_worker
        self.worker_memory = worker_memory
        self.start_timeout_s = start_timeout_s
        self.base_dir = Path(tempfile.mkdtemp(prefix="flintlock-spark-cluster-"))
        self.master_port = free_port()
        self.master_ui_port = free_port()
        self._daemon_memory = daemon_memory
        self._processes: dict[str, subprocess.Popen[bytes]] = {}

    @property
    def master_url(self) -> str:
        return f"spark://{LOOPBACK}:{self.master_port}"

    @property
    def status_url(self) -> str:
        return f"http://{LOOPBACK}:{self.master_ui_port}/json/"

    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        conf_dir = self.base_dir / "conf"
        conf_dir.mkdir(exist_ok=True)
        env.update(
            SPARK_HOME=str(spark_home()),
            SPARK_LOCAL_IP=LOOPBACK,
            SPARK_CONF_DIR=str(conf_dir),
            SPARK_DAEMON_MEMORY=self._daemon_memory,
            SPARK_LOG_DIR=str(self.base_dir / "logs"),
            SPARK_NO_DAEMONIZE="1",
        )
        return env

    def _spawn(self, name: str, args: list[str]) -> None:
        spark_class = spark_home() / "bin" / "spark-class"
        log = open(self.base_dir / f"{name}.log", "wb")
        try:
            process = subprocess.Popen(
                [str(spark_class), *args], env=self._env(), stdout=log,
                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
            )
        finally:
            log.close()
        self._processes[name] = process

    def start(self) -> StandaloneCluster:
        """Start the master and the workers; wait until every worker is ALIVE."""
        try:
            self._spawn("master", [MASTER_CLASS, "--host", LOOPBACK, "--port",
                                   str(self.master_port), "--webui-port",
                                   str(self.master_ui_port)])
            # A worker that finds no master yet retries only 5-15 s later (Spark's fuzzed
            # initial registration interval): start the workers once the master answers.
            self._wait_until(self.master_answers, "the master did not answer")
            for index in range(self.workers):
                work_dir = self.base_dir / f"worker-{index}"
                work_dir.mkdir()
                self._spawn(f"worker-{index}", [
                    WORKER_CLASS, "--host", LOOPBACK, "--cores", str(self.cores_per_worker),
                    "--memory", self.worker_memory, "--work-dir", str(work_dir),
                    "--webui-port", str(free_port()), self.master_url,
                ])
            self._wait_until(lambda: self.alive_workers() >= self.workers,
                             f"not all {self.workers} workers registered")
        except BaseException:
            self.stop()
            raise
        return self

    def _status(self) -> dict[str, object] | None:
        try:
            with urllib.request.urlopen(self.status_url, timeout=2) as response:
                status: dict[str, object] = json.load(response)
        except (OSError, urllib.error.URLError, ValueError):
            return None
        return status

    def master_answers(self) -> bool:
        """Whether the master's JSON status answers (its RPC endpoint is up by then)."""
        return self._status() is not None

    def alive_workers(self) -> int:
        workers = (self._status() or {}).get("workers", [])
        assert isinstance(workers, list)
        return sum(1 for worker in workers if worker.get("state") == "ALIVE")

    def _wait_until(self, done: Callable[[], bool], failure: str) -> None:
        deadline = time.monotonic() + self.start_timeout_s
        while time.monotonic() < deadline:
            exited = [name for name, p in self._processes.items() if p.poll() is not None]
            if exited:
                raise ClusterStartError(f"{exited} exited; logs in {self.base_dir}")
            if done():
                return
            time.sleep(0.2)
        raise ClusterStartError(
            f"{failure} within {self.start_timeout_s:g} s ({self.alive_workers()} of "
            f"{self.workers} workers registered); logs in {self.base_dir}"
        )

    def stop(self, keep_logs: bool = False) -> None:
        """Stop workers, then the master (SIGTERM to each process group, then SIGKILL)."""
        for process in reversed(list(self._processes.values())):
            _stop_group(process)
        self._processes.clear()
        if not keep_logs:
            shutil.rmtree(self.base_dir, ignore_errors=True)

    def __enter__(self) -> StandaloneCluster:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop(keep_logs=exc is not None)


def _stop_group(process: subprocess.Popen[bytes], grace_s: float = 15.0) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            pass
        try:
            process.wait(grace_s)
            return
        except subprocess.TimeoutExpired:
            continue
