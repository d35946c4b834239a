"""``flintlock history --dir DIR [--port N]``: serves the dashboard of the jobs archived in
DIR (``jobmanager.archive.fs.dir``) read-only, as Flink's HistoryServer does, on 127.0.0.1
(``flintlock.runtime.rest.history_server``).

It prints the page's address with a token made for this run in the URL's fragment (which no
browser sends to a server) and serves until interrupted (Ctrl-C, SIGTERM). A directory that
does not exist, or a port that cannot be bound, is a ``CliError`` with a hint.

Owned by the calling thread; the server runs on its own threads.
"""

from __future__ import annotations

import argparse
import signal
import threading
from pathlib import Path
from typing import TextIO

from flintlock.cli.errors import CliError
from flintlock.runtime.rest.history_server import HistoryServer

HOST = "127.0.0.1"
DEFAULT_PORT = 8082
"""Flink's ``historyserver.web.port``."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dir", required=True, metavar="DIR",
                        help="the archive directory (the jobs' jobmanager.archive.fs.dir)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, metavar="N",
                        help=f"port on {HOST} (default {DEFAULT_PORT}; 0 picks a free one)")


def start(directory: str, port: int) -> HistoryServer:
    """The history server of ``directory``, serving; ``CliError`` if it cannot."""
    path = Path(directory).expanduser()
    if not path.is_dir():
        raise CliError(f"no archive directory {path}",
                       "pass the jobs' jobmanager.archive.fs.dir (a job writes its archive "
                       "there when it ends)")
    if not 0 <= port <= 65535:
        raise CliError(f"--port {port} is not a port", "use 0 to 65535 (0: a free port)")
    try:
        return HistoryServer(path, HOST, port)
    except OSError as error:
        raise CliError(f"cannot serve on {HOST}:{port}: {error.strerror or error}",
                       "choose another --port (0 picks a free one)") from error


def serve(args: argparse.Namespace, out: TextIO, stop: threading.Event | None = None) -> int:
    server = start(args.dir, args.port)
    stop = stop or threading.Event()
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        print(f"History server of {Path(args.dir).expanduser()}: "
              f"{server.url}/#token={server.token}", file=out, flush=True)
        print("Ctrl-C stops it.", file=out, flush=True)
        try:
            stop.wait()
        except KeyboardInterrupt:
            pass
    finally:
        server.close()
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    return 0
