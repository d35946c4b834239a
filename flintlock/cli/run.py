"""``flintlock run``: runs a user's Python job script with settings from the command line.

The script runs in this process as ``__main__`` (``runpy``), with its own directory first on
``sys.path`` and ``sys.argv`` = the script and its arguments, exactly as ``python job.py``
would run it. The settings reach every ``StreamExecutionEnvironment`` the script creates
without any change to the API: ``get_execution_environment()`` starts from
``Configuration.load()``, which reads ``$FLINTLOCK_CONF_DIR/flintlock-conf.yaml``. So this
command writes a temporary conf directory whose ``flintlock-conf.yaml`` is the user's own
file (``$FLINTLOCK_CONF_DIR``, else the working directory, over Flink's from
``$FLINK_CONF_DIR``, which the script then does not read again) overlaid with the command's
settings — ``--conf`` first, then ``--parallelism`` (``parallelism.default``), ``--master``
(``flintlock.spark.master``) and ``--from-savepoint`` (``execution.state-recovery.path``) —
and points ``FLINTLOCK_CONF_DIR`` at it while the script runs. Settings the script makes in
code still win, as in Flink.

Every key and value is validated before the script starts. ``--detached`` starts the same
command without ``--detached`` as a background process (its output in a log file under
``$FLINTLOCK_HOME/log``), waits until its first job has written its job file, prints the job
id and returns.

Owned by the CLI's one thread; the process-wide state it changes (``os.environ``,
``sys.argv``, ``sys.path``) is restored when the script returns.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import runpy
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

import yaml

from flintlock.cli.errors import CliError
from flintlock.cli.jobs import absolute
from flintlock.common.config import CONF_DIR_ENV, CONF_FILE_NAME, Configuration
from flintlock.common.errors import ConfigurationError
from flintlock.common.flink_conf import FLINK_CONF_DIR_ENV
from flintlock.common.options import cluster, execution
from flintlock.runtime.jobmanager.errors import JobCancelledError
from flintlock.runtime.rest.jobfiles import jobs_dir, read_job_files

CONF_HINT = "docs/configuration.md lists every configuration key"
DETACHED_STARTUP_TIMEOUT_S = 180.0


def settings_from_args(args: argparse.Namespace) -> dict[str, str]:
    """The command's settings by key, validated; ``CliError`` names the first bad one."""
    settings: dict[str, str] = {}
    for item in args.conf or []:
        key, separator, value = item.partition("=")
        if not separator or not key.strip():
            raise CliError(f"--conf {item!r}: expected key=value",
                           "for example --conf execution.checkpointing.interval=10s")
        settings[key.strip()] = value.strip()
    recovery = absolute(args.from_savepoint)
    flags = {execution.PARALLELISM.key: args.parallelism, cluster.SPARK_MASTER.key: args.master,
             execution.STATE_RECOVERY_PATH.key: recovery}
    settings.update({key: str(value) for key, value in flags.items() if value is not None})
    try:
        Configuration(settings)
    except ConfigurationError as error:
        raise CliError(str(error), CONF_HINT) from error
    _check_savepoint_path(recovery)
    return settings


def _check_savepoint_path(path: str | None) -> None:
    if path is None or ("://" in path and not path.startswith("file://")):
        return
    local = path.removeprefix("file://")
    if not os.path.exists(local):
        raise CliError(f"savepoint {path} does not exist",
                       "`flintlock savepoint` and `flintlock stop` print the path to give")


def merged_configuration(settings: dict[str, str]) -> Configuration:
    """The user's ``flintlock-conf.yaml`` (if any) overlaid with ``settings``."""
    try:
        base = Configuration.load()
    except ConfigurationError as error:
        raise CliError(str(error), CONF_HINT) from error
    return base.merged(settings)


def run(args: argparse.Namespace, out: TextIO) -> int:
    settings = settings_from_args(args)
    script = Path(args.script)
    if not script.is_file():
        raise CliError(f"no job script at {script}",
                       "give the path of a Python file that builds a job and calls execute()")
    configuration = merged_configuration(settings)
    if args.detached:
        return _run_detached(args, out)
    with _conf_dir(configuration) as conf_dir, _script_context(script, args.args, conf_dir):
        try:
            # an absolute path, as python job.py has given __main__ since 3.9: tracebacks name it
            runpy.run_path(str(script.resolve()), run_name="__main__")
        except SystemExit as exit_:
            return _exit_code(exit_.code)
        except KeyboardInterrupt:
            raise CliError("interrupted", "", 130) from None
        except JobCancelledError as error:
            raise CliError(f"the job of {script} was cancelled" + (f" ({error})" if str(error)
                                                                   else ""), "") from error
        except Exception as error:
            raise CliError(f"the job script {script} failed: {type(error).__name__}: {error}",
                           "rerun with --verbose for the traceback") from error
    return 0


def _exit_code(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


@contextlib.contextmanager
def _conf_dir(configuration: Configuration) -> Iterator[str]:
    with tempfile.TemporaryDirectory(prefix="flintlock-conf-") as directory:
        path = Path(directory) / CONF_FILE_NAME
        values = {key: _plain(value) for key, value in configuration.raw_items().items()}
        path.write_text(yaml.safe_dump(values, sort_keys=True), encoding="utf-8")
        yield directory


def _plain(value: object) -> object:
    """A value YAML can write: what came from YAML stays, anything else becomes text."""
    if value is None or isinstance(value, (str, int, float, bool, list, dict)):
        return value
    return str(value)


@contextlib.contextmanager
def _script_context(script: Path, script_args: list[str], conf_dir: str) -> Iterator[None]:
    """``conf_dir``'s file already holds what ``$FLINK_CONF_DIR`` gave, so the script does not
    read (and warn about) the Flink file a second time."""
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    saved_env = {name: os.environ.get(name) for name in (CONF_DIR_ENV, FLINK_CONF_DIR_ENV)}
    sys.argv = [str(script), *script_args]
    sys.path.insert(0, str(script.resolve().parent))
    os.environ[CONF_DIR_ENV] = conf_dir
    os.environ.pop(FLINK_CONF_DIR_ENV, None)
    try:
        yield
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path
        for name, value in saved_env.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


# -- detached ---------------------------------------------------------------------------------

def _attached_command(args: argparse.Namespace) -> list[str]:
    command = [sys.executable, "-m", "flintlock.cli.main", "run"]
    for flag, value in (("--parallelism", args.parallelism), ("--master", args.master),
                        ("--from-savepoint", args.from_savepoint)):
        if value is not None:
            command += [flag, str(value)]
    for item in args.conf or []:
        command += ["--conf", item]
    return [*command, str(args.script), *args.args]


def _run_detached(args: argparse.Namespace, out: TextIO) -> int:
    log_dir = jobs_dir().parent / "log"
    log_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    log_path = log_dir / f"run-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.log"
    with open(log_path, "ab") as log:
        child = subprocess.Popen(_attached_command(args), stdin=subprocess.DEVNULL, stdout=log,
                                 stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + args.startup_timeout
    while time.monotonic() < deadline:
        jobs = [job for job in read_job_files() if job.pid == child.pid]
        if jobs:
            print(f"Job has been submitted with JobID {jobs[0].job_id}", file=out)
            print(f"Driver process {child.pid}; output in {log_path}", file=out)
            return 0
        if child.poll() is not None:
            raise CliError(f"the job script exited (code {child.returncode}) before a job started",
                           f"its output is in {log_path}")
        time.sleep(0.2)
    print(f"The job script is running (process {child.pid}) but started no job within "
          f"{args.startup_timeout:g} s; output in {log_path}", file=out)
    return 0
