"""TaskManager main functions and a small JobManager endpoint for the Spark tests.

The mains are shipped to executors by value (``cloudpickle.register_pickle_by_value``), so the
Python workers need not import the tests package.
"""

from __future__ import annotations

import os
import queue
import socket
import sys
import threading
from dataclasses import dataclass
from typing import Any

from flintlock.runtime.auth import DATA_PLANE, authenticate_client, authenticate_server
from flintlock.runtime.rpc import MessageDispatcher, RpcConnection, RpcServer
from flintlock.spark.bootstrap import TaskManagerContext, TaskManagerMain
from flintlock.spark.launcher import AttemptReports

WAIT_S = 60.0


@dataclass(frozen=True)
class Registered:
    attempt: int
    tm_index: int
    pid: int
    host: str = ""
    data_port: int = 0


@dataclass(frozen=True)
class PeersWanted:
    count: int


class FakeJobManager:
    """An RpcServer that records registrations and answers peer look-ups."""

    def __init__(self, secret: bytes, stdout: Any = None) -> None:
        self.secret = secret
        self.stdout = stdout
        self.reports = AttemptReports(stdout)
        self.registered: queue.Queue[Registered] = queue.Queue()
        self._peers: dict[int, tuple[str, int]] = {}
        self._peers_changed = threading.Condition()
        dispatcher = (
            MessageDispatcher()
            .register(Registered, self._on_registered)
            .register(PeersWanted, self._on_peers_wanted)
        )
        self.server = RpcServer(self.reports.install(dispatcher), secret)

    def _on_registered(self, connection: RpcConnection, message: Registered) -> None:
        with self._peers_changed:
            self._peers[message.tm_index] = (message.host, message.data_port)
            self._peers_changed.notify_all()
        self.registered.put(message)

    def _on_peers_wanted(self, connection: RpcConnection, message: PeersWanted) -> object:
        with self._peers_changed:
            self._peers_changed.wait_for(lambda: len(self._peers) >= message.count, WAIT_S)
            return dict(self._peers)

    def close(self) -> None:
        self.server.close()


def register(context: TaskManagerContext, host: str = "", port: int = 0) -> None:
    context.jm.call(Registered(context.attempt, context.tm_index, os.getpid(), host, port),
                    WAIT_S)


def register_print_and_report(context: TaskManagerContext) -> dict[str, Any]:
    register(context)
    print(f"hello from TM {context.tm_index}")
    print("no newline at the end", end="")
    return {"pid": os.getpid(), "index": context.tm_index}


def import_job_module_and_start_a_thread(module_dir: str) -> TaskManagerMain:
    def main(context: TaskManagerContext) -> dict[str, Any]:
        sys.path.insert(0, module_dir)
        import flintlock_test_job_module  # type: ignore[import-not-found]

        stop = threading.Event()
        helper = threading.Thread(target=stop.wait, name="job-helper", daemon=True)
        helper.start()
        stop.set()
        return {"pid": os.getpid(), "value": flintlock_test_job_module.VALUE}

    return main


def report_interpreter_state(module_dir: str) -> TaskManagerMain:
    def main(context: TaskManagerContext) -> dict[str, Any]:
        own = {context.jm._reader, context.jm._dispatcher, threading.current_thread()}
        return {
            "pid": os.getpid(),
            "foreign_threads": [t.name for t in threading.enumerate() if t not in own],
            "job_module_loaded": "flintlock_test_job_module" in sys.modules,
            "job_path_present": module_dir in sys.path,
        }

    return main


def fail_in_tm_1(context: TaskManagerContext) -> str:
    if context.tm_index == 1:
        raise ValueError(f"bad record in TM {context.tm_index}")
    return "fine"


def exit_hard_in_tm_1(context: TaskManagerContext) -> str:
    if context.tm_index == 1:
        os._exit(3)
    return "fine"


def register_and_hang(context: TaskManagerContext) -> None:
    register(context)
    threading.Event().wait()


def exchange_over_tcp(context: TaskManagerContext) -> dict[str, Any]:
    """TM 0 sends a greeting to TM 1 over an authenticated socket; addresses via the JM."""
    listener = socket.create_server(("127.0.0.1", 0))
    try:
        register(context, "127.0.0.1", listener.getsockname()[1])
        peers = context.jm.call(PeersWanted(context.num_task_managers), WAIT_S)
        assert isinstance(peers, dict)
        if context.tm_index == 0:
            received = ""
            with socket.create_connection(peers[1], timeout=WAIT_S) as sock:
                authenticate_client(sock, context.secret, DATA_PLANE, WAIT_S)
                sock.sendall(b"hello from TM 0\n")
        else:
            listener.settimeout(WAIT_S)
            conn, _ = listener.accept()
            with conn:
                authenticate_server(conn, context.secret, DATA_PLANE, WAIT_S)
                conn.settimeout(WAIT_S)
                received = conn.makefile("rb").readline().decode().strip()
        return {"index": context.tm_index, "cwd": os.getcwd(), "pid": os.getpid(),
                "received": received}
    finally:
        listener.close()
