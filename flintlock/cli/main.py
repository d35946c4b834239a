"""The ``flintlock`` command: ``run`` a job script; ``list``, ``cancel``, ``savepoint`` and
``stop`` running jobs; ``history`` serves archived jobs' dashboards (see docs/cli.md).

``main(argv)`` parses the arguments, runs one command and returns the exit code; it is the
console-script entry point (``flintlock = "flintlock.cli.main:main"``) and also runs as
``python -m flintlock.cli.main``. A failure is printed as ``error: ...`` and ``hint: ...`` on
stderr with a non-zero exit code — a traceback only with ``--verbose``. ``-v`` logs at INFO,
``-vv`` at DEBUG; ``--version`` prints flintlock's version. Usage mistakes take
the same shape (exit code 2).

Owned by the calling thread.
"""

from __future__ import annotations

import argparse
import logging
import sys
import traceback
from collections.abc import Callable, Sequence
from typing import NoReturn, TextIO

from flintlock import __version__
from flintlock.cli import history, info, jobs, sql_shell
from flintlock.cli import run as run_command
from flintlock.cli.errors import EXIT_FAILURE, EXIT_USAGE, CliError

Command = Callable[[argparse.Namespace, TextIO], int]


class _Parser(argparse.ArgumentParser):
    """Usage errors become a ``CliError`` (one line and a hint) instead of usage + exit."""

    def error(self, message: str) -> NoReturn:
        raise CliError(message, f"`{self.prog} --help` shows the usage", EXIT_USAGE)


def build_parser() -> argparse.ArgumentParser:
    verbose = _Parser(add_help=False)
    verbose.add_argument("-v", "--verbose", action="count", default=argparse.SUPPRESS,
                         help="show tracebacks and INFO logging; -vv: DEBUG logging")
    parser = _Parser(prog="flintlock", parents=[verbose],
                     description="Run and operate flintlock streaming jobs.")
    parser.add_argument("--version", action="version",
                        version=f"flintlock {__version__} (Flink 2.x API, PySpark runtime)")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    _add_run(commands, verbose)
    listing = commands.add_parser("list", parents=[verbose], help="list the running jobs",
                                  description="List the jobs running on this machine.")
    listing.set_defaults(handler=jobs.list_jobs)
    _job_command(commands, verbose, "info", "show a running job's throughput, backpressure "
                 "and latest checkpoint", info.show_info, 10)
    _job_command(commands, verbose, "cancel", "cancel a running job", jobs.cancel_job, 60)
    savepoint = _job_command(commands, verbose, "savepoint", "take a savepoint of a running job",
                             jobs.trigger_savepoint, 600)
    savepoint.add_argument("directory", nargs="?", default=None, metavar="DIR",
                           help="target directory (default: execution.checkpointing."
                                "savepoint-dir of the job)")
    stop = _job_command(commands, verbose, "stop", "stop a job with a final savepoint",
                        jobs.stop_job, 600)
    stop.add_argument("--savepoint", nargs="?", const="", default="", metavar="DIR",
                      help="where the final savepoint goes (default: execution.checkpointing."
                           "savepoint-dir of the job)")
    stop.add_argument("--drain", action="store_true",
                      help="advance to the end of event time first (MAX_WATERMARK: every "
                           "window and timer fires into the savepoint)")
    sql = commands.add_parser("sql", parents=[verbose], help="the SQL shell (Flink's SQL client)",
                              description="Run SQL statements interactively, or a script with "
                                          "-f.")
    sql_shell.add_arguments(sql)
    sql.set_defaults(handler=sql_shell.run)
    archived = commands.add_parser(
        "history", parents=[verbose], help="serve the dashboard of archived jobs",
        description="Serve the dashboard of the jobs archived in a directory "
                    "(jobmanager.archive.fs.dir), read-only, on 127.0.0.1.")
    history.add_arguments(archived)
    archived.set_defaults(handler=history.serve)
    return parser


def _add_run(commands: argparse._SubParsersAction[_Parser], verbose: _Parser
             ) -> None:
    run = commands.add_parser(
        "run", parents=[verbose], help="run a Python job script",
        description="Run a Python job script with these settings applied to every "
                    "StreamExecutionEnvironment it creates.")
    run.add_argument("-p", "--parallelism", type=_positive_int, metavar="N",
                     help="default parallelism (parallelism.default)")
    run.add_argument("-m", "--master", metavar="URL",
                     help="Spark master, e.g. local[4] or spark://host:7077 "
                          "(flintlock.spark.master)")
    run.add_argument("-s", "--from-savepoint", metavar="PATH",
                     help="restore from this savepoint (execution.state-recovery.path)")
    run.add_argument("-D", "--conf", action="append", metavar="KEY=VALUE",
                     help="any configuration setting; repeat for more")
    run.add_argument("-d", "--detached", action="store_true",
                     help="run in a background process; print the job id and return")
    run.add_argument("--startup-timeout", type=float, metavar="SECONDS",
                     default=run_command.DETACHED_STARTUP_TIMEOUT_S,
                     help="with --detached: how long to wait for the job to start")
    run.add_argument("script", metavar="SCRIPT", help="the job's Python file")
    run.add_argument("args", nargs=argparse.REMAINDER, metavar="ARGS",
                     help="arguments for the script")
    run.set_defaults(handler=run_command.run)


def _job_command(commands: argparse._SubParsersAction[_Parser],
                 verbose: _Parser, name: str, summary: str, handler: Command,
                 timeout_s: float) -> argparse.ArgumentParser:
    command = commands.add_parser(name, parents=[verbose], help=summary,
                                  description=summary[0].upper() + summary[1:] + ".")
    command.add_argument("job_id", metavar="JOB_ID", help="job id, or a unique prefix of one")
    command.add_argument("--timeout", type=float, default=timeout_s, metavar="SECONDS",
                         help=f"how long to wait for the outcome (default {timeout_s:g})")
    command.set_defaults(handler=handler)
    return command


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, not {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a number >= 1, not {value}")
    return value


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Runs one ``flintlock`` command; returns its exit code."""
    out = out or sys.stdout
    verbose = 0
    try:
        args = build_parser().parse_args(None if argv is None else list(argv))
        verbose = int(getattr(args, "verbose", 0) or 0)
        _configure_logging(verbose)
        if not hasattr(args, "handler"):
            raise CliError("no command given", "`flintlock --help` lists the commands",
                           EXIT_USAGE)
        handler: Command = args.handler
        return handler(args, out)
    except CliError as error:
        return _report(error, verbose, error.exit_code)
    except Exception as error:
        return _report(error, verbose, EXIT_FAILURE)


def _report(error: BaseException, verbose: int, exit_code: int) -> int:
    if verbose:
        traceback.print_exception(error, file=sys.stderr)
    message = error.message if isinstance(error, CliError) else (
        f"unexpected {type(error).__name__}: {error}")
    print(f"error: {message}", file=sys.stderr)
    hint = error.hint if isinstance(error, CliError) else "rerun with --verbose for the traceback"
    if hint and not (verbose and "--verbose" in hint):
        print(f"hint: {hint}", file=sys.stderr)
    return exit_code


def _configure_logging(verbose: int) -> None:
    """``-v``: INFO, ``-vv`` (or more): DEBUG, else WARNING."""
    level = logging.DEBUG if verbose >= 2 else logging.INFO if verbose == 1 else logging.WARNING
    logging.basicConfig(level=level,
                        format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger().setLevel(level)  # also where logging was configured before
    logging.getLogger("flintlock.runtime.rest.server").setLevel(logging.INFO)


if __name__ == "__main__":
    sys.exit(main())
