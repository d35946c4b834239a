"""Start-up: where the seconds from ``execute()`` to the first record go (issue #20).

Side by side, each run in a fresh interpreter, interleaved (the order rotates every round):

* ``jvm``: ``java -version`` alone, then PySpark's gateway launch alone (``spark-submit`` → the
  driver JVM with its py4j server, no SparkContext yet) — the floor under any session;
* ``bare``: ``SparkSession.builder.master("local[2]").getOrCreate()`` with Spark's defaults plus
  one two-task barrier stage (``rdd.barrier().mapPartitions(...).collect()``), timed from
  before ``import pyspark``;
* ``tuned``: the same stage in the session flintlock builds for itself
  (``flintlock.spark.session.build_embedded_context``), except that its Python workers fork
  from PySpark's own daemon, not from ``flintlock.spark.daemon`` (which imports flintlock's
  TaskManager first, flintlock's cost), on the path flintlock gives its daemon (the installed
  PySpark, not Spark's zip of it: ``startup_daemon/tuned_daemon.py``): Spark's part of a
  flintlock job;
* ``flintlock``: a 1,000-record job (``NumberSequenceSource`` → ``map`` →
  ``execute_and_collect``, parallelism 2), timed from the ``execute_and_collect`` call to the
  first record and to the last. Its phases come from flintlock's DEBUG log records (session
  started, job graph pickled, barrier stage submitted, TaskManager registered, deploying,
  task RUNNING), the ``TaskManagerStarted`` report (worker-side: process forked, entry called,
  main unpickled, connected to the JM) and the map's first call (worker-side).

flintlock's own part is ``flintlock`` (first record) minus ``tuned``, per round, then the
median. Both also report the CPU seconds each process spent until the first record (``cpu:``
keys: driver Python, driver JVM, Spark's Python daemon, its workers), which a loaded machine
changes far less than the wall times. An untimed ``tuned`` run comes first, so that the
embedded session's class-data archive exists (``flintlock.spark.class_data``: the first JVM
writes it at exit).
``--bytecode-cache DIR`` runs every child with ``PYTHONPYCACHEPREFIX=DIR``, compiled
beforehand (the standard library, site-packages and flintlock): what an installed flintlock
costs where ``PYTHONDONTWRITEBYTECODE`` keeps an editable checkout from caching bytecode.
``--java-options OPTS`` adds ``tuned+java`` and ``flintlock+java``: the same two children
with ``OPTS`` appended to the driver JVM's options (``spark.driver.extraJavaOptions``), for
A/B pairs of a JVM setting (write ``--java-options=-Xint``: argparse takes a value that starts
with ``-`` only after ``=``); ``--variant-conf KEY=VALUE`` (repeatable) adds the same two kinds
with that flintlock or Spark setting (alone or with ``--java-options``). ``--baseline DIR``
adds ``tuned@DIRNAME`` and ``flintlock@DIRNAME``: the same two children run against another
source tree (e.g. ``git archive`` of an older commit, which may lack the phase log records)
in the same rounds, for before/after pairs; it may be given more than once (one pair of kinds
per tree).

    .venv/bin/python benchmarks/startup.py [--rounds 5] [--records 1000] [--only KIND ...]
                                           [--baseline DIR] [--bytecode-cache DIR]
                                           [--json FILE] [--java-options OPTS]
                                           [--variant-conf KEY=VALUE ...]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

RESULT = "STARTUP-RESULT "
TUNED_DAEMON = "tuned_daemon"  # in startup_daemon/, on the tuned child's PYTHONPATH
TUNED_DAEMON_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "startup_daemon")
KINDS = ("jvm", "bare", "tuned", "flintlock")
BASELINE = "@"  # kind@NAME: the kind run against the --baseline tree named NAME
JAVA = "+java"  # the same child with --java-options added to the driver JVM's options
JAVA_ENV = "STARTUP_JAVA_OPTIONS"
CONF_ENV = "STARTUP_VARIANT_CONF"  # JSON: the settings of --variant-conf, in the +java child
_LOGGERS = ("flintlock.spark.session", "flintlock.spark.launcher", "flintlock.runtime.jobmanager")


# -- children ---------------------------------------------------------------------------------


def _one(partition: Any) -> Any:
    yield 1


def child_jvm() -> dict[str, float]:
    started = time.time()
    subprocess.run(["java", "-version"], capture_output=True, check=True)
    java = time.time() - started
    from pyspark import SparkConf
    from pyspark.java_gateway import launch_gateway

    started = time.time()
    gateway = launch_gateway(SparkConf().setMaster("local[2]"))  # type: ignore[no-untyped-call]
    launched = time.time() - started
    gateway.shutdown()
    return {"java -version": java, "gateway": launched}


def child_bare() -> dict[str, float]:
    started = time.time()
    from pyspark.sql import SparkSession

    session = SparkSession.builder.master("local[2]").getOrCreate()
    with_session = time.time()
    session.sparkContext.parallelize(range(2), 2).barrier().mapPartitions(_one).collect()
    ended = time.time()
    return {"session": with_session - started, "stage": ended - with_session,
            "total": ended - started}


def _java_options() -> dict[str, str]:
    """The settings of a ``+java`` child: ``--variant-conf``'s, and ``--java-options`` as
    ``spark.driver.extraJavaOptions``."""
    settings: dict[str, str] = json.loads(os.environ.get(CONF_ENV) or "{}")
    options = os.environ.get(JAVA_ENV)
    return {**settings, "spark.driver.extraJavaOptions": options} if options else settings


def child_tuned() -> dict[str, float]:
    started = time.time()
    from flintlock.common.config import Configuration

    try:
        from flintlock.spark.session import build_embedded_context as build
    except ImportError:  # a baseline from before the embedded session was a SparkContext
        from flintlock.spark.session import build_embedded_session as build  # type: ignore
    built = build(Configuration({"spark.python.daemon.module": TUNED_DAEMON,
                                 **_java_options()}), 2)
    sc = getattr(built, "sparkContext", built)
    with_session = time.time()
    sc.parallelize(range(2), 2).barrier().mapPartitions(_one).collect()
    ended = time.time()
    return {"session": with_session - started, "stage": ended - with_session,
            "total": ended - started, **_cpu_by_process()}


def _cpu_by_process() -> dict[str, float]:
    """CPU seconds (user + system) spent so far by this driver, the driver JVM (with the
    launcher JVM that Spark's scripts ran and waited for), Spark's Python daemon and its
    workers: the load-independent side of start-up (``cpu:`` keys)."""
    import psutil

    def spent(process: psutil.Process, reaped: bool = False) -> float:
        times = process.cpu_times()
        extra = times.children_user + times.children_system if reaped else 0.0
        return float(times.user + times.system + extra)

    me = psutil.Process()
    totals = {"cpu: driver python": spent(me), "cpu: driver JVM": 0.0,
              "cpu: Python daemon": 0.0, "cpu: Python workers": 0.0}
    for process in me.children(recursive=True):
        try:
            if "java" in process.name():
                totals["cpu: driver JVM"] += spent(process, reaped=True)
            elif "java" in psutil.Process(process.ppid()).name():  # the JVM started it
                totals["cpu: Python daemon"] += spent(process)
            else:  # forked from the daemon
                totals["cpu: Python workers"] += spent(process)
        except psutil.Error:  # ended meanwhile
            continue
    totals["cpu: all"] = sum(totals.values())
    return totals


class FirstCall:
    """A map that writes ``time.time()`` of its first call in each process to ``path``."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.seen = False

    def __call__(self, value: int) -> int:
        if not self.seen:
            self.seen = True
            with open(self.path, "a") as handle:
                handle.write(f"{time.time()!r}\n")
        return value


class _Recorder(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def child_flintlock(records: int) -> dict[str, float]:
    from flintlock.common import WatermarkStrategy
    from flintlock.datastream import StreamExecutionEnvironment
    from flintlock.datastream.connectors import NumberSequenceSource

    recorder = _Recorder()
    for name in _LOGGERS:
        logger = logging.getLogger(name)
        logger.setLevel(logging.DEBUG)
        logger.addHandler(recorder)
    stamps = tempfile.mktemp(prefix="flintlock-startup-")
    from flintlock.common.config import Configuration

    env = StreamExecutionEnvironment.get_execution_environment(Configuration(_java_options()))
    env.set_parallelism(2)
    stream = env.from_source(NumberSequenceSource(0, records - 1),
                             WatermarkStrategy.no_watermarks(), "numbers").map(FirstCall(stamps))
    started = time.time()
    iterator = iter(stream.execute_and_collect())
    first = next(iterator)
    first_at = time.time()
    cpu = _cpu_by_process()
    count = 1 + sum(1 for _ in iterator)
    ended = time.time()
    assert count == records and isinstance(first, int), (count, first)
    with open(stamps) as handle:
        emitted = min(float(line) for line in handle if line.strip())
    os.unlink(stamps)
    phases = _phases(recorder.records, started)
    phases.update({"first record emitted (worker)": emitted - started,
                   "first record at the driver": first_at - started, "end": ended - started,
                   **cpu})
    return phases


def _phases(records: list[logging.LogRecord], started: float) -> dict[str, float]:
    """Seconds after ``started`` of each start-up step (the last TM or task to get there)."""
    found: dict[str, list[float]] = {}

    def at(name: str, when: float | None) -> None:
        if when is not None:
            found.setdefault(name, []).append(when - started)

    for record in records:
        text = str(record.msg)
        if text.startswith("embedded Spark session"):
            at("session started", record.created)
        elif "job graph pickled" in text:
            at("job graph pickled", record.created)
        elif "submitting the barrier stage" in text:
            at("barrier stage submitted", record.created)
        elif "TaskManager %d started" in text:
            times = [None if t is None else float(t)  # type: ignore[arg-type]
                     for t in tuple(record.args or ())[2:]]
            for name, when in zip(("TM process forked (worker)", "TM entry called (worker)",
                                   "TM main unpickled (worker)",
                                   "TM connected to the JM (worker)"), times, strict=True):
                at(name, when)
        elif "TaskManager %d registered" in text:
            at("TM registered", record.created)
        elif "deploying" in text:
            at("deployment sent", record.created)
        elif "task %s is %s" in text and record.args and record.args[-1] == "RUNNING":  # type: ignore[index]
            at("tasks RUNNING", record.created)
    return {name: max(times) for name, times in found.items()}


# -- the driver of the rounds -----------------------------------------------------------------


def _compile_bytecode(cache: str, trees: list[str]) -> None:
    """Bytecode for everything the children import, under the prefix ``cache``."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = cache
    import sysconfig

    paths = [sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["purelib"], *trees]
    subprocess.run([sys.executable, "-m", "compileall", "-q", "-j", "0", *paths], env=env,
                   stdout=subprocess.DEVNULL, check=False)


def _run_child(kind: str, records: int, baselines: dict[str, str],
               bytecode: str | None, variant: dict[str, str] | None = None,
               ) -> dict[str, float] | None:
    env = dict(os.environ)
    kind, with_java, _ = kind.partition(JAVA)
    if with_java:
        env.update(variant or {})
    env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    env.setdefault("PYSPARK_PYTHON", sys.executable)
    if bytecode:
        env["PYTHONPYCACHEPREFIX"] = bytecode
    kind, _, tree = kind.partition(BASELINE)
    if tree:
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (baselines[tree], env.get("PYTHONPATH")) if p)
    if kind == "tuned":
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (env.get("PYTHONPATH"), TUNED_DAEMON_DIR) if p)
    command = [sys.executable, os.path.abspath(__file__), "--child", kind,
               "--records", str(records)]
    done = subprocess.run(command, env=env, cwd=tempfile.gettempdir(), capture_output=True,
                          text=True)
    for line in done.stdout.splitlines():
        if RESULT in line:
            result: dict[str, float] = json.loads(line.split(RESULT, 1)[1])
            return result
    sys.stderr.write(f"{kind} failed ({done.returncode}):\n{done.stderr[-3000:]}\n")
    return None


def _headline(result: dict[str, float]) -> float:
    for key in ("first record at the driver", "total", "gateway"):
        if key in result:
            return result[key]
    return float("nan")


def _median(values: list[float]) -> str:
    return f"{statistics.median(values):6.2f}" if values else "     -"


def _report(results: dict[str, list[dict[str, float]]], own: dict[str, list[float]]) -> None:
    for kind, runs in results.items():
        if not runs:
            continue
        print(f"\n{kind} ({len(runs)} runs): median s [min .. max]")
        keys = sorted({key for run in runs for key in run},
                      key=lambda key: statistics.median(r[key] for r in runs if key in r))
        for key in keys:
            values = [run[key] for run in runs if key in run]
            print(f"  {key:34} {_median(values)}  [{min(values):.2f} .. {max(values):.2f}]")
    for suffix, values in own.items():
        print(f"\nflintlock{suffix}'s own part (first record - tuned{suffix} total, per round): "
              f"median {statistics.median(values):.2f} s  {[round(x, 2) for x in values]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--records", type=int, default=1000)
    parser.add_argument("--only", nargs="*", choices=KINDS)
    parser.add_argument("--baseline", action="append", default=[],
                        help="another source tree to run tuned and flintlock of (repeatable)")
    parser.add_argument("--bytecode-cache", help="run with bytecode compiled under this prefix")
    parser.add_argument("--json", help="also write every run's figures to this file")
    parser.add_argument("--java-options", help="adds tuned+java and flintlock+java: the same "
                        "children with these driver JVM options added, in the same rounds")
    parser.add_argument("--variant-conf", action="append", default=[], metavar="KEY=VALUE",
                        help="adds tuned+java and flintlock+java with this setting (repeatable)")
    parser.add_argument("--child", choices=KINDS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        children: dict[str, Callable[[], dict[str, float]]] = {
            "jvm": child_jvm, "bare": child_bare, "tuned": child_tuned,
            "flintlock": lambda: child_flintlock(args.records)}
        print(RESULT + json.dumps(children[args.child]()), flush=True)
        return
    if args.bytecode_cache:
        here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        _compile_bytecode(args.bytecode_cache, [os.path.join(here, "flintlock"),
                                                *args.baseline])
    kinds = list(args.only or KINDS)
    baselines = {os.path.basename(os.path.normpath(tree)): tree for tree in args.baseline}
    kinds += [kind + BASELINE + name for name in baselines for kind in list(kinds)
              if kind in ("tuned", "flintlock")]
    variant = {JAVA_ENV: args.java_options or "", CONF_ENV: json.dumps(
        dict(setting.split("=", 1) for setting in args.variant_conf))}
    if args.java_options or args.variant_conf:
        kinds += [kind + JAVA for kind in kinds if kind in ("tuned", "flintlock")]
    results: dict[str, list[dict[str, float]]] = {kind: [] for kind in kinds}
    own: dict[str, list[float]] = {}
    # Untimed: where no class-data archive exists yet, this run's JVM writes it at exit.
    # Also the first to probe and cache the driver's launch command (flintlock.spark.gateway).
    for warm_up in ("tuned", *(f"tuned{BASELINE}{name}" for name in baselines),
                    *((f"tuned{JAVA}",) if args.java_options or args.variant_conf else ())):
        _run_child(warm_up, args.records, baselines, args.bytecode_cache, variant)
    for round_number in range(args.rounds):
        shift = round_number % len(kinds)
        order = kinds[shift:] + kinds[:shift]
        this_round: dict[str, dict[str, float]] = {}
        for kind in order:
            result = _run_child(kind, args.records, baselines, args.bytecode_cache, variant)
            if result is not None:
                this_round[kind] = result
                results[kind].append(result)
        for suffix in ("", *(BASELINE + name for name in baselines), JAVA):
            if f"flintlock{suffix}" in this_round and f"tuned{suffix}" in this_round:
                own.setdefault(suffix, []).append(
                    this_round[f"flintlock{suffix}"]["first record at the driver"]
                    - this_round[f"tuned{suffix}"]["total"])
        print(f"round {round_number + 1}: " + ", ".join(
            f"{kind} {_headline(result):.2f} s" for kind, result in this_round.items()),
            flush=True)
    _report(results, own)
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"results": results, "own": own}, handle, indent=1)


if __name__ == "__main__":
    main()
