"""Measures what starting TaskManagers on Spark costs: ``python -m flintlock.spark.startup_probe``.

Prints, for N TaskManagers (default 2, ``--task-managers``): the cold start of the embedded
session (JVM and SparkContext), the first barrier stage (Python workers forked, flintlock
imported, RPC connect and handshake, one call), and the median of further warm stages (reused
workers). The figures in docs/internals/spark.md come from this command. It is a measurement
tool, not part of the runtime; nothing imports it.
"""

from __future__ import annotations

import argparse
import statistics
import time

from flintlock.common.config import Configuration
from flintlock.runtime.auth import new_job_secret
from flintlock.runtime.rpc import MessageDispatcher, RpcServer
from flintlock.spark.bootstrap import TaskManagerContext
from flintlock.spark.launcher import AttemptReports, launch_task_managers, make_spec
from flintlock.spark.session import context_for_job


def idle_task_manager(context: TaskManagerContext) -> int:
    """A TaskManager that only connects, authenticates and reports that it finished."""
    return context.tm_index


def _timed_stage(sc: object, server: RpcServer, reports: AttemptReports, secret: bytes,
                 count: int, attempt: int) -> float:
    spec = make_spec("probe", attempt, count, server.address, secret, idle_task_manager)
    started = time.perf_counter()
    launch_task_managers(sc, spec, reports).wait(600)  # type: ignore[arg-type]
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task-managers", type=int, default=2)
    parser.add_argument("--warm-runs", type=int, default=5)
    args = parser.parse_args()
    started = time.perf_counter()
    sc = context_for_job(Configuration(), args.task_managers)
    cold = time.perf_counter() - started
    secret = new_job_secret()
    reports = AttemptReports()
    server = RpcServer(reports.install(MessageDispatcher()), secret)
    try:
        first = _timed_stage(sc, server, reports, secret, args.task_managers, 0)
        warm = [_timed_stage(sc, server, reports, secret, args.task_managers, attempt)
                for attempt in range(1, args.warm_runs + 1)]
    finally:
        server.close()
        sc.stop()
    print(f"task managers          {args.task_managers}")
    print(f"session cold start     {cold:7.2f} s")
    print(f"first barrier stage    {first:7.2f} s")
    print(f"warm barrier stage     {statistics.median(warm):7.2f} s (median of {len(warm)})")


if __name__ == "__main__":
    main()
