"""The Spark application a job runs in, and how many TaskManagers it can run at once.

``context_for_job`` returns a ``SparkContext``: flintlock runs barrier stages and needs
nothing of Spark SQL. It uses the active session's context when there is one (a notebook, a
user who built their own SparkSession), else the process's active SparkContext; under
``spark-submit`` (which picks the master, deploy mode and resources) it creates the context
spark-submit configured, overriding nothing; otherwise it builds the *embedded session* (a
SparkContext alone: a SparkSession on top costs another 0.8 s of JVM start-up, and a user
who wants one gets it around this context with ``SparkSession.builder.getOrCreate()``):
``local[N]`` with N = slots needed (or ``flintlock.spark.master``), driver bound to 127.0.0.1,
Spark UI and console progress bar off unless ``flintlock.spark.ui.enabled``, log level WARN,
and this interpreter for the Python workers (``PYSPARK_PYTHON``, which PySpark reads when the
context starts, unless already set; also ``spark.pyspark.python``) so they import the same
flintlock and cloudpickle. The driver JVM starts fast (``spark.driver.extraJavaOptions``):
Spark's classes from a class-data-sharing archive (``class_data``) and only the C1 JIT
compiler (``-XX:TieredStopAtLevel=1``: the driver schedules and never runs records, so C2's
peak speed is not worth its start-up CPU); options the user sets under that key come after
these, so they win. Python workers fork from ``flintlock.spark.daemon``, which has the
TaskManager's modules imported already. Every ``spark.*`` key of the flintlock configuration
is passed to the builder (and may override all of these). Before the first Py4J call, PySpark's
NumPy argument converters are guarded (``py4j_converters``): unguarded, the first call imports
pandas and PyArrow into the driver (about 1 CPU-s of start-up). With
``flintlock.spark.direct-launch`` (default false until measured end to end), the driver JVM
starts from the command Spark's launcher computed for an earlier session (``gateway``), not
through ``spark-submit``'s scripts and launcher JVM.
Building a context costs seconds (a JVM starts), so a context is reused for as long as the
process lives; only an embedded ``local[N]`` context that is too small, and runs no Spark job
at the moment, is replaced (a busy one is kept; the capacity check then fails).

Slots (DESIGN.md §6): a barrier stage needs all of its tasks running at once, and Spark keeps
retrying a barrier stage that does not fit (every 15 s, 40 times) instead of failing, so
``check_capacity`` fails fast with ``InsufficientSlotsError``. Available slots are read with
``SparkContext.maxNumConcurrentTasks(default resource profile)`` through Py4J: the very
number Spark's own barrier check uses (executor cores / ``spark.task.cpus`` summed over
registered executors; N for ``local[N]``). When that call is unavailable the fallback is the
master URL for ``local[...]`` and ``defaultParallelism // spark.task.cpus`` otherwise.
Executors of a cluster register after the session starts, so ``wait_for_slots`` polls
(bounded) before giving up.

Thread ownership: Spark's objects are thread-safe for these calls; this module keeps no
state of its own (the context cache is Spark's: ``getOrCreate``).
"""

from __future__ import annotations

import logging
import os
import re
import sys
import time

from pyspark import SparkConf, SparkContext
from pyspark.sql import SparkSession

from flintlock.common.config import Configuration
from flintlock.common.options.cluster import (
    JM_ADDRESS,
    SPARK_CACHE_DIR,
    SPARK_CLASS_DATA_SHARING,
    SPARK_DIRECT_LAUNCH,
    SPARK_MASTER,
    SPARK_UI,
)
from flintlock.common.options.execution import NAME
from flintlock.spark import class_data, gateway
from flintlock.spark.errors import BarrierModeUnsupportedError, InsufficientSlotsError
from flintlock.spark.py4j_converters import guard_numpy_converters

LOG = logging.getLogger(__name__)
LOOPBACK = "127.0.0.1"
EMBEDDED_APP_NAME = "flintlock"
_EMBEDDED_MARK = "spark.flintlock.embedded"
_NOISY_LOGGERS = (
    "org.apache.spark.executor.Executor",
    "org.apache.spark.scheduler.TaskSetManager",
)
_DYNAMIC_ALLOCATION = "spark.dynamicAllocation.enabled"
_DRIVER_JAVA_OPTIONS = "spark.driver.extraJavaOptions"
_FAST_START_JAVA_OPTIONS = ("-XX:TieredStopAtLevel=1",)
_LOCAL = re.compile(r"^local(?:\[(\d+|\*)(?:,\s*\d+)?\])?$")
_LOCAL_CLUSTER = re.compile(r"^local-cluster\[\s*(\d+)\s*,\s*(\d+)\s*,\s*\d+\s*\]$")


def active_context() -> SparkContext | None:
    """The context of this thread's SparkSession, else the process's SparkContext, else None."""
    session = SparkSession.getActiveSession()
    if session is not None:
        return session.sparkContext
    return SparkContext._active_spark_context


def launched_by_spark_submit() -> bool:
    """Whether this driver was started by ``spark-submit`` (its PythonRunner hands the JVM
    gateway over through these variables)."""
    return "PYSPARK_GATEWAY_PORT" in os.environ and "PYSPARK_GATEWAY_SECRET" in os.environ


def embedded_default_parallelism(config: Configuration) -> int | None:
    """The parallelism of a job that sets none on the embedded session: the machine's cores,
    as PyFlink's local execution does (``local[*]``); None where a cluster chose the resources
    (``flintlock.spark.master``, ``spark-submit``, a context the user created), which keep
    Flink's ``parallelism.default``."""
    if config.get(SPARK_MASTER) or launched_by_spark_submit():
        return None
    sc = active_context()
    if sc is not None and not _is_embedded(sc):
        return None
    return os.cpu_count() or 1


def _embedded_master(config: Configuration, slots_needed: int) -> str:
    return config.get(SPARK_MASTER) or f"local[{max(1, slots_needed)}]"


def _is_embedded(sc: SparkContext) -> bool:
    return sc.getConf().get(_EMBEDDED_MARK) == "true"


def _is_idle(sc: SparkContext) -> bool:
    return not sc.statusTracker().getActiveJobsIds()


def build_embedded_context(config: Configuration, slots_needed: int) -> SparkContext:
    """A new SparkContext configured for running flintlock on this machine (see module doc)."""
    started = time.monotonic()
    guard_numpy_converters()
    os.environ.setdefault("SPARK_LOCAL_IP", LOOPBACK)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    ui = str(config.get(SPARK_UI)).lower()
    conf = SparkConf().setAppName(EMBEDDED_APP_NAME).setMaster(
        _embedded_master(config, slots_needed)).setAll([
            ("spark.driver.host", LOOPBACK), ("spark.driver.bindAddress", LOOPBACK),
            ("spark.ui.enabled", ui), ("spark.ui.showConsoleProgress", ui),
            ("spark.pyspark.python", sys.executable),
            ("spark.pyspark.driver.python", sys.executable),
            ("spark.python.daemon.module", "flintlock.spark.daemon"),
            (_EMBEDDED_MARK, "true"),
        ])
    conf.setAll([(key, str(value)) for key, value in config.raw_items().items()
                 if key.startswith("spark.")])
    conf.set(_DRIVER_JAVA_OPTIONS, driver_java_options(config))
    if config.get(SPARK_DIRECT_LAUNCH) and SparkContext._gateway is None:
        _start_driver_directly(conf, config)
    sc = SparkContext.getOrCreate(conf)
    sc.setLogLevel("WARN")
    _quiet_task_failure_logs(sc)
    LOG.debug("embedded Spark session %s started in %.2f s", sc.master,
              time.monotonic() - started)
    return sc


def _start_driver_directly(conf: SparkConf, config: Configuration) -> None:
    """The driver JVM from the cached launch command (``gateway``), made the gateway PySpark's
    context uses; where that is unsupported or fails, PySpark launches it instead."""
    try:
        from pyspark.find_spark_home import _find_spark_home

        spark_home = _find_spark_home()
    except (OSError, SystemExit) as exc:  # _find_spark_home exits when it finds nothing
        LOG.debug("driver JVM through spark-submit: %s", exc)
        return
    settings = conf.getAll()
    cache_dir = config.get(SPARK_CACHE_DIR) or class_data.default_cache_dir()
    command = gateway.driver_command(spark_home, settings, os.environ, cache_dir)
    if command is None:
        return
    try:
        started = gateway.start_driver(command, settings, spark_home)
    except (OSError, gateway.DriverStartFailed) as exc:  # PySpark's launch reports its own
        LOG.warning("the driver JVM did not start from the cached command (%s); starting it "
                    "through spark-submit", exc)
        return
    SparkContext._ensure_initialized(gateway=started)


def driver_java_options(config: Configuration) -> str:
    """The embedded session's ``spark.driver.extraJavaOptions``: flintlock's, then the
    user's (see module doc)."""
    options = list(_FAST_START_JAVA_OPTIONS)
    if config.get(SPARK_CLASS_DATA_SHARING):
        options += _class_data_plan(config).java_options
    users = config.raw_items().get(_DRIVER_JAVA_OPTIONS)
    if users:
        options.append(str(users))
    return " ".join(options)


def _class_data_plan(config: Configuration) -> class_data.ArchivePlan:
    java = class_data.find_java()
    if java is None:
        return class_data.NO_ARCHIVE
    try:
        from pyspark.find_spark_home import _find_spark_home

        spark_home = _find_spark_home()
        key = class_data.archive_key(
            java, spark_home, str(config.raw_items().get("spark.driver.extraClassPath", "")))
    except (OSError, SystemExit) as exc:  # _find_spark_home exits when it finds nothing
        LOG.debug("no class-data sharing: %s", exc)
        return class_data.NO_ARCHIVE
    directory = os.path.join(config.get(SPARK_CACHE_DIR) or class_data.default_cache_dir(), "cds")
    plan = class_data.plan_archive(directory, key)
    LOG.debug("class-data sharing for the driver JVM: %s %s", plan.use.value, plan.path or "")
    return plan


def _quiet_task_failure_logs(sc: SparkContext) -> None:
    """A failed TaskManager makes the executor and the task scheduler log the whole JVM
    trace; flintlock translates that failure into a typed error (launcher.py), so in the
    embedded session those two loggers only report fatal errors."""
    try:
        jvm = sc._jvm
        level = jvm.org.apache.logging.log4j.Level.FATAL  # type: ignore[union-attr]
        configurator = jvm.org.apache.logging.log4j.core.config.Configurator  # type: ignore[union-attr]
        for logger in _NOISY_LOGGERS:
            configurator.setLevel(logger, level)
    except Exception as exc:
        LOG.debug("could not quieten Spark's task failure logs: %s", exc)


def context_for_job(config: Configuration, slots_needed: int) -> SparkContext:
    """The active context, or the embedded one sized for ``slots_needed`` (see module doc)."""
    guard_numpy_converters()
    sc = active_context()
    if sc is None and launched_by_spark_submit() and not config.get(SPARK_MASTER):
        # spark-submit chose the master, deploy mode and resources: use them as they are.
        sc = SparkContext.getOrCreate(SparkConf().setAppName(config.get(NAME) or "flintlock"))
    if sc is None:
        return build_embedded_context(config, slots_needed)
    if _is_embedded(sc) and available_slots(sc) < slots_needed:
        if _LOCAL.match(str(sc.master)) and _is_idle(sc):
            LOG.info("replacing the embedded %s session: %d slots needed", sc.master,
                     slots_needed)
            sc.stop()
            return build_embedded_context(config, slots_needed)
    return sc


def _task_cpus(sc: SparkContext) -> int:
    return max(1, int(sc.getConf().get("spark.task.cpus", "1") or "1"))


def _slots_from_master(sc: SparkContext) -> int | None:
    master = str(sc.master)
    local = _LOCAL.match(master)
    if local:
        cores = local.group(1)
        count = (os.cpu_count() or 1) if cores == "*" else int(cores or 1)
        return count // _task_cpus(sc)
    cluster = _LOCAL_CLUSTER.match(master)
    if cluster:
        return int(cluster.group(1)) * int(cluster.group(2)) // _task_cpus(sc)
    return None


def available_slots(sc: SparkContext) -> int:
    """How many barrier tasks Spark can run at once right now (see module doc)."""
    try:
        jsc = sc._jsc.sc()
        profile = jsc.resourceProfileManager().defaultResourceProfile()
        return int(jsc.maxNumConcurrentTasks(profile))
    except Exception as exc:
        LOG.debug("maxNumConcurrentTasks unavailable (%s); estimating slots", exc)
    from_master = _slots_from_master(sc)
    if from_master is not None:
        return from_master
    return int(sc.defaultParallelism) // _task_cpus(sc)


def check_capacity(sc: SparkContext, needed: int) -> None:
    """Raise ``BarrierModeUnsupportedError`` if the application cannot run a barrier stage
    at all, and ``InsufficientSlotsError`` unless ``needed`` tasks can run at once."""
    dynamic = str(sc.getConf().get(_DYNAMIC_ALLOCATION, "false") or "false").strip().lower()
    if dynamic == "true" and not _LOCAL.match(str(sc.master)):  # Spark ignores it locally
        raise BarrierModeUnsupportedError(_DYNAMIC_ALLOCATION, dynamic)
    available = available_slots(sc)
    if available < needed:
        raise InsufficientSlotsError(needed, available, str(sc.master))


def wait_for_slots(sc: SparkContext, needed: int, timeout_s: float) -> None:
    """Poll until ``needed`` slots are available (executors still registering), at most
    ``timeout_s``; then ``check_capacity`` decides."""
    deadline = time.monotonic() + timeout_s
    while available_slots(sc) < needed and time.monotonic() < deadline:
        time.sleep(min(0.2, max(0.0, deadline - time.monotonic())))
    check_capacity(sc, needed)


def jobmanager_address(config: Configuration, sc: SparkContext, bound_host: str) -> str:
    """The host TaskManagers dial to reach the JM's RPC endpoint bound on ``bound_host``:
    ``jobmanager.rpc.address`` if set; else the bound host, unless it is a wildcard, in which
    case ``spark.driver.host`` (the address executors already use to reach the driver)."""
    configured = config.get(JM_ADDRESS)
    if configured:
        return str(configured)
    if bound_host not in ("0.0.0.0", "::", ""):
        return bound_host
    return str(sc.getConf().get("spark.driver.host") or LOOPBACK)
