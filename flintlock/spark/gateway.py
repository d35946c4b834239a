"""The embedded session's driver JVM started without Spark's launch scripts, from a cached command.

PySpark starts the driver JVM through ``bin/spark-submit``: a shell script that (without
``SPARK_HOME``) runs a Python interpreter to find Spark, sources ``load-spark-env.sh``, then
runs a first JVM, Spark's launcher (``org.apache.spark.launcher.Main``), only to compute the
driver's command line — classpath, heap, Java options, module flags — and ``exec``s it. On this
2-core machine that launcher JVM is 0.25 CPU-s and 0.3-1 s of wall time before the driver JVM
even starts (docs/benchmarks.md, issue 31), and for a given Spark, Java and driver settings
its answer never changes.

So the first embedded session on a machine runs the same steps once (``_probe``: the shell
lines of ``spark-submit``/``spark-class`` and the launcher itself) and keeps the answer under
``<flintlock.spark.cache-dir>/launch/<key>.json``: the driver's command up to and including
``org.apache.spark.deploy.SparkSubmit`` and what the scripts added to the environment
(``PYTHONHASHSEED``, ``SPARK_SCALA_VERSION``, ...). Later sessions start that command directly
with PySpark's own arguments (every Spark setting as ``--conf``, then ``pyspark-shell``) and
connect to it as PySpark does (``launch_gateway`` with the port and secret the JVM wrote).

The key hashes everything the launcher's answer depends on: the Java binary and Spark's jars
(``class_data.archive_key``), the files of Spark's conf directory, every ``SPARK_*``,
``JAVA_*``, ``HADOOP_*``, ``YARN_*`` and ``PYSPARK_*`` environment variable, and the
``spark.master``, ``spark.submit.*`` and ``spark.driver.*`` settings (heap, Java options,
classpath, library path: the only settings the launcher turns into the command line; the rest
it passes through as ``--conf``, as this module does). Where the scripts could do more than
that — a ``spark-env.sh`` (sourced into the JVM's environment), ``PYSPARK_SUBMIT_ARGS``,
``SPARK_PREPEND_CLASSES``, no ``jars`` directory, no ``bash`` — ``driver_command`` returns
None and PySpark launches as always. Nothing here makes start-up fail where PySpark's launch
would not: an unreadable cache or a failed probe means "launch as PySpark does" (DEBUG log).

Called on the thread that builds the embedded session, before any JVM exists in the process.
Concurrent processes may write the same cache entry; each write is atomic (``os.replace``).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from flintlock.spark import class_data

LOG = logging.getLogger(__name__)
SUBMIT_CLASS = "org.apache.spark.deploy.SparkSubmit"
CONNECT_TIMEOUT_S = 120.0
CACHE_FORMAT = "2"  # in the key: entries of an earlier format (or parser) are never read
_ENV_PREFIXES = ("SPARK_", "JAVA_", "HADOOP_", "YARN_", "PYSPARK_")
_DRIVER_SETTINGS = ("spark.master", "spark.submit.", "spark.driver.")
_UNSUPPORTED_ENV = ("PYSPARK_SUBMIT_ARGS", "PYSPARK_GATEWAY_PORT", "SPARK_PREPEND_CLASSES",
                    "SPARK_TESTING")
_SHELL_OWN = ("_", "SHLVL", "PWD", "OLDPWD")  # what bash itself sets: not the scripts' doing
# spark-submit's and spark-class's lines, minus what the checks above rule out: the driver's
# environment goes to the file named by $1, the launcher's answer to stdout.
_PROBE_SCRIPT = r"""
export PYTHONHASHSEED=0
. "$SPARK_HOME/bin/load-spark-env.sh"
env -0 > "$1"
shift
if [ -n "$JAVA_HOME" ]; then RUNNER="$JAVA_HOME/bin/java"; else RUNNER=java; fi
exec "$RUNNER" -Xmx128m $SPARK_LAUNCHER_OPTS -cp "$SPARK_HOME/jars/*" \
    org.apache.spark.launcher.Main org.apache.spark.deploy.SparkSubmit "$@"
"""


class DriverStartFailed(RuntimeError):
    """The directly started driver JVM ended, or never wrote its gateway's port."""


@dataclass(frozen=True, slots=True)
class DriverCommand:
    """The driver JVM's command up to SparkSubmit's class, and the environment it adds."""

    prefix: tuple[str, ...]
    environment: Mapping[str, str]

    def argv(self, settings: Sequence[tuple[str, str]]) -> list[str]:
        """The command with PySpark's arguments: each setting as ``--conf``, then the shell."""
        args = [arg for key, value in settings for arg in ("--conf", f"{key}={value}")]
        return [*self.prefix, *args, "pyspark-shell"]


def unsupported_reason(spark_home: str, environ: Mapping[str, str]) -> str | None:
    """Why the scripts could do more than the cached command (see module doc), or None."""
    for name in _UNSUPPORTED_ENV:
        if environ.get(name):
            return f"{name} is set"
    if sys.platform == "win32" or shutil.which("bash") is None:
        return "no bash"
    if not os.path.isdir(os.path.join(spark_home, "jars")):
        return "no jars directory"
    if os.path.exists(os.path.join(_conf_dir(spark_home, environ), "spark-env.sh")):
        return "a spark-env.sh"
    return None


def _conf_dir(spark_home: str, environ: Mapping[str, str]) -> str:
    return environ.get("SPARK_CONF_DIR") or os.path.join(spark_home, "conf")


def command_key(java: str, spark_home: str, settings: Sequence[tuple[str, str]],
                environ: Mapping[str, str]) -> str:
    """What the launcher's answer depends on, hashed (see module doc)."""
    digest = hashlib.sha256(f"format {CACHE_FORMAT}\0".encode())
    digest.update(class_data.archive_key(java, spark_home, "", environ).encode())
    conf_dir = _conf_dir(spark_home, environ)
    if os.path.isdir(conf_dir):
        for entry in sorted(os.scandir(conf_dir), key=lambda e: e.name):
            stat = entry.stat()
            digest.update(f"{entry.name}:{stat.st_size}:{stat.st_mtime_ns}\0".encode())
    for name in sorted(environ):
        if name.startswith(_ENV_PREFIXES):
            digest.update(f"{name}={environ[name]}\0".encode())
    for key, value in settings:
        if key.startswith(_DRIVER_SETTINGS):
            digest.update(f"{key}={value}\0".encode())
    return digest.hexdigest()[:24]


def parse_launcher_output(output: bytes) -> tuple[str, ...]:
    """The driver command's prefix from the launcher's answer: lines of messages, a line
    holding one NUL (where ``spark-class`` switches delimiters), then NUL-separated arguments."""
    _, marker, command = output.partition(b"\0\n")
    parts = tuple(part.decode() for part in (command if marker else output).split(b"\0")
                  if part)
    if SUBMIT_CLASS not in parts:
        raise ValueError(f"the launcher's answer names no {SUBMIT_CLASS}: {parts[:3]!r}")
    return parts[:parts.index(SUBMIT_CLASS) + 1]


def parse_environment(dump: bytes) -> dict[str, str]:
    """``env -0``'s output as a mapping."""
    pairs = (entry.decode().partition("=") for entry in dump.split(b"\0") if b"=" in entry)
    return {name: value for name, _, value in pairs}


def _probe(spark_home: str, settings: Sequence[tuple[str, str]],
           environ: Mapping[str, str]) -> DriverCommand:
    """Run the scripts' steps and the launcher once (see module doc)."""
    env = {**environ, "SPARK_HOME": spark_home}
    args = [arg for key, value in settings for arg in ("--conf", f"{key}={value}")]
    with tempfile.TemporaryDirectory(prefix="flintlock-launch-") as scratch:
        env_file = os.path.join(scratch, "env")
        done = subprocess.run(["bash", "-c", _PROBE_SCRIPT, "probe", env_file, *args,
                               "pyspark-shell"], env=env, capture_output=True, check=True,
                              timeout=CONNECT_TIMEOUT_S)
        with open(env_file, "rb") as handle:
            after = parse_environment(handle.read())
    added = {name: value for name, value in after.items()
             if env.get(name) != value and name not in _SHELL_OWN}
    return DriverCommand(parse_launcher_output(done.stdout), added)


def driver_command(spark_home: str, settings: Sequence[tuple[str, str]],
                   environ: Mapping[str, str], cache_dir: str) -> DriverCommand | None:
    """The cached command for these inputs, probed and cached on a miss; None where the
    direct start is unsupported or the probe failed."""
    reason = unsupported_reason(spark_home, environ)
    java = class_data.find_java(environ)
    if reason is not None or java is None:
        LOG.debug("driver JVM through spark-submit: %s", reason or "no java")
        return None
    try:
        path = os.path.join(cache_dir, "launch",
                            command_key(java, spark_home, settings, environ) + ".json")
        cached = _read(path)
        if cached is not None:
            return cached
        command = _probe(spark_home, settings, environ)
        _write(path, command)
        return command
    except (OSError, ValueError, subprocess.SubprocessError) as exc:
        LOG.debug("driver JVM through spark-submit: %s", exc)
        return None


def _read(path: str) -> DriverCommand | None:
    """The cached command, or None: none cached, or an entry that is unreadable or names no
    runnable program and SparkSubmit last (probed again)."""
    try:
        with open(path) as handle:
            data = json.load(handle)
        command = DriverCommand(tuple(data["prefix"]), dict(data["environment"]))
    except FileNotFoundError:
        return None
    except (ValueError, KeyError, TypeError) as exc:
        LOG.debug("unreadable launch command %s: %r", path, exc)
        return None
    if not _runnable(command):
        LOG.debug("unusable launch command %s: %r", path, command.prefix[:1])
        return None
    return command


def _runnable(command: DriverCommand) -> bool:
    prefix = command.prefix
    if len(prefix) < 2 or prefix[-1] != SUBMIT_CLASS or not isinstance(prefix[0], str):
        return False
    program = prefix[0] if os.path.isabs(prefix[0]) else shutil.which(prefix[0])
    return program is not None and os.access(program, os.X_OK)


def _write(path: str, command: DriverCommand) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd, part = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".part")
    with os.fdopen(fd, "w") as handle:
        json.dump({"prefix": list(command.prefix), "environment": dict(command.environment)},
                  handle)
    os.replace(part, path)


def start_driver(command: DriverCommand, settings: Sequence[tuple[str, str]],
                 spark_home: str) -> Any:
    """Start the driver JVM and connect to it as PySpark does; PySpark's gateway object."""
    scratch = tempfile.mkdtemp(prefix="flintlock-gateway-")
    info = os.path.join(scratch, "info")
    env = {**os.environ, "SPARK_HOME": spark_home, **command.environment,
           "SPARK_CONNECT_MODE": "0", "_PYSPARK_DRIVER_CONN_INFO_PATH": info}
    try:
        # stdin piped: the JVM ends when this process does (its pipe closes), as under PySpark
        proc = subprocess.Popen(command.argv(settings), stdin=subprocess.PIPE, env=env,
                                preexec_fn=_ignore_sigint)
        port, secret = _connection_info(proc, info)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    gateway = _connect(port, secret)
    gateway.proc = proc
    return gateway


def _ignore_sigint() -> None:  # in the child: Ctrl-C goes to the Python driver, not the JVM
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _connection_info(proc: subprocess.Popen[bytes], info: str) -> tuple[int, str]:
    """The port and secret the JVM writes (PySpark's format) once its gateway listens."""
    deadline = time.monotonic() + CONNECT_TIMEOUT_S
    while not os.path.isfile(info):  # the JVM renames a complete file into place
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise DriverStartFailed(f"the driver JVM exited ({proc.returncode}) or did not "
                                    f"start its gateway within {CONNECT_TIMEOUT_S} s")
        time.sleep(0.01)
    with open(info, "rb") as handle:  # a 4-byte port, then the secret's length and UTF-8
        port, length = struct.unpack(">ii", handle.read(8))
        return port, handle.read(length).decode()


def _connect(port: int, secret: str) -> Any:
    """PySpark's own connection to a running gateway (``launch_gateway`` with the port and
    secret in the environment, as under spark-submit), the variables restored after."""
    from pyspark.java_gateway import launch_gateway

    names = ("PYSPARK_GATEWAY_PORT", "PYSPARK_GATEWAY_SECRET")
    saved = {name: os.environ.get(name) for name in names}
    os.environ.update({names[0]: str(port), names[1]: secret})
    try:
        return launch_gateway()  # type: ignore[no-untyped-call]
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
