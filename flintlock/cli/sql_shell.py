"""``flintlock sql``: Flink's SQL client for flintlock — an interactive shell and ``-f`` scripts.

Statements end with ``;`` and may span lines (``BEGIN STATEMENT SET; ... END;`` is one
statement); each is run by a ``TableEnvironment`` (streaming mode unless ``--batch`` or
``SET 'execution.runtime-mode' = 'batch'``) and answered as Flink's SQL client answers:

* a query prints its rows in tableau form as they arrive (Ctrl-C stops it and its job);
* DDL and ``SET``/``RESET``/``USE`` print ``[INFO] Execute statement succeeded.``;
* an ``INSERT`` or statement set is submitted and prints its job id; at the end of a script the
  shell waits for the jobs it submitted (with ``table.dml-sync`` each INSERT waits at once);
* an error prints ``[ERROR] Could not execute SQL statement. Reason:`` and the cause's class
  and message, never a Python traceback (``--verbose`` adds it). A script stops at its first
  error with exit code 1; the interactive shell goes on.

``QUIT;`` / ``EXIT;`` leave the shell; ``HELP;`` lists the commands. Owned by the calling
thread; the jobs run wherever ``env.execute()`` would run them (embedded Spark by default).
"""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Iterator
from typing import Any, TextIO

from flintlock.cli.errors import EXIT_FAILURE

PROMPT = "Flink SQL> "
CONTINUATION = "> "
HELP = """The following commands are available:

HELP                 Prints the available commands.
QUIT/EXIT            Quits the SQL CLI client.
SET                  Sets a session configuration property: 'SET 'key'='value';'.
                     Use 'SET;' for listing all properties.
RESET                Resets a session configuration property: 'RESET 'key';'.
                     Use 'RESET;' to reset all properties.
BEGIN STATEMENT SET  Begins a statement set: 'BEGIN STATEMENT SET;'.
END                  Ends a statement set: 'END;'.

Every other statement (CREATE, DROP, SHOW, DESCRIBE, EXPLAIN, SELECT, INSERT, ...) runs as
TableEnvironment.execute_sql runs it.
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-f", "--file", metavar="SCRIPT",
                        help="run the statements of this SQL file, then exit")
    parser.add_argument("-D", "--conf", action="append", metavar="KEY=VALUE",
                        help="a session configuration setting; repeat for more")
    parser.add_argument("--batch", action="store_true", help="start in batch mode")


def run(args: argparse.Namespace, out: TextIO) -> int:
    shell = SqlShell(out, batch=args.batch, verbose=bool(getattr(args, "verbose", False)))
    for setting in args.conf or []:
        key, _, value = setting.partition("=")
        shell.environment().get_config().set(key.strip(), value.strip())
    if args.file is not None:
        with open(args.file, encoding="utf-8") as handle:
            script = handle.read()
        return shell.run_script(script)
    return shell.interactive(sys.stdin)


class SqlShell:
    def __init__(self, out: TextIO, batch: bool = False, verbose: bool = False) -> None:
        self.out = out
        self.batch = batch
        self.verbose = verbose
        self._env: Any = None
        self._jobs: list[Any] = []

    def environment(self) -> Any:
        if self._env is None:
            from flintlock.table import EnvironmentSettings, TableEnvironment

            settings = (EnvironmentSettings.in_batch_mode() if self.batch
                        else EnvironmentSettings.in_streaming_mode())
            self._env = TableEnvironment.create(settings)
        return self._env

    # -- modes --------------------------------------------------------------------------------

    def run_script(self, script: str) -> int:
        for statement in split_statements(script):
            self.out.write(f"{PROMPT}{statement};\n")
            if not self.execute(statement):
                return EXIT_FAILURE
        return self.wait_for_jobs()

    def interactive(self, lines: TextIO) -> int:
        self.out.write("Welcome to flintlock's SQL shell. Statements end with ';'. "
                       "Type HELP; for help.\n\n")
        buffer: list[str] = []
        while True:
            self.out.write(CONTINUATION if buffer else PROMPT)
            self.out.flush()
            line = lines.readline()
            if not line:
                self.out.write("\n")
                break
            buffer.append(line)
            text = "".join(buffer)
            complete = list(split_statements(text, keep_incomplete=True))
            if not complete or complete[-1][1]:
                continue
            buffer = []
            done = False
            for statement, _ in complete:
                if statement.strip().upper() in ("QUIT", "EXIT"):
                    done = True
                    break
                self.execute(statement)
            if done:
                self.out.write("Shutting down the session...\ndone.\n")
                break
        return self.wait_for_jobs()

    # -- one statement ------------------------------------------------------------------------

    def execute(self, statement: str) -> bool:
        """Runs one statement and prints its answer; False when it failed."""
        keyword = statement.strip().split(None, 1)[0].upper() if statement.strip() else ""
        if keyword == "HELP":
            self.out.write(HELP + "\n")
            return True
        try:
            result = self.environment().execute_sql(statement)
            self._answer(keyword, result)
            return True
        except KeyboardInterrupt:
            self.out.write("\n[INFO] Query cancelled.\n")
            return True
        except Exception as error:  # every failure is shown, none is fatal
            self._error(error)
            return False

    def _answer(self, keyword: str, result: Any) -> None:
        from flintlock.table.result_kind import ResultKind

        client = result.get_job_client()
        if client is not None and keyword in ("INSERT", "EXECUTE", "BEGIN"):
            self.out.write("[INFO] Submitting SQL update statement to the cluster...\n")
            self.out.write("[INFO] SQL update statement has been successfully submitted to "
                           f"the cluster:\nJob ID: {client.get_job_id()}\n\n")
            self._jobs.append(result)
            return
        if result.get_result_kind() == ResultKind.SUCCESS:
            message = ("Session property has been set." if keyword == "SET" else
                       "Session property has been reset." if keyword == "RESET" else
                       "Execute statement succeeded.")
            self.out.write(f"[INFO] {message}\n\n")
            return
        stdout = sys.stdout
        sys.stdout = self.out
        try:
            result.print()
        finally:
            sys.stdout = stdout
        self.out.write("\n")

    def _error(self, error: BaseException) -> None:
        self.out.write("[ERROR] Could not execute SQL statement. Reason:\n")
        self.out.write(f"{type(error).__module__}.{type(error).__qualname__}: {error}\n\n")
        if self.verbose:
            self.out.write("".join(traceback.format_exception(error)) + "\n")

    def wait_for_jobs(self) -> int:
        status = 0
        for result in self._jobs:
            try:
                result.wait()
            except Exception as error:  # reported; the shell exits with 1
                self._error(error)
                status = EXIT_FAILURE
        self._jobs = []
        return status


def split_statements(text: str, keep_incomplete: bool = False) -> Iterator[Any]:
    """The statements of ``text`` (without their ``;``), respecting quotes, comments and
    statement sets. With ``keep_incomplete`` yields ``(statement, incomplete)`` pairs, the
    last one incomplete when the text does not end a statement."""
    statements: list[str] = []
    current: list[str] = []
    quote: str | None = None
    index = 0
    in_set = False
    while index < len(text):
        char = text[index]
        if quote is not None:
            current.append(char)
            if char == quote:
                quote = None
        elif char in ("'", "`", '"'):
            quote = char
            current.append(char)
        elif text.startswith("--", index):
            end = text.find("\n", index)
            index = len(text) if end < 0 else end
            continue
        elif text.startswith("/*", index) and not text.startswith("/*+", index):
            end = text.find("*/", index + 2)
            index = len(text) if end < 0 else end + 2
            continue
        elif char == ";":
            statement = "".join(current).strip()
            upper = " ".join(statement.upper().split())
            last = upper.rsplit(";", 1)[-1].strip()
            if not in_set and (upper == "BEGIN STATEMENT SET"
                               or upper.startswith("EXECUTE STATEMENT SET BEGIN")):
                in_set = True
                current.append(";")
            elif in_set and last == "END":
                in_set = False
                statements.append(statement)
                current = []
            elif in_set:
                current.append(";")
            else:
                if statement:
                    statements.append(statement)
                current = []
        else:
            current.append(char)
        index += 1
    rest = "".join(current).strip()
    if keep_incomplete:
        pairs = [(s, False) for s in statements]
        if rest:
            pairs.append((rest, True))
        yield from pairs
        return
    yield from statements
    if rest:
        yield rest

