"""The network I/O thread: posted tasks run in order on it, timers fire, stop leaves nothing."""

from __future__ import annotations

import threading

import psutil
import pytest

from flintlock.runtime.network.io_thread import IOThread


@pytest.mark.parametrize("sockets", [True, False], ids=["selector", "socket-free"])
def test_tasks_run_in_posting_order_on_the_loop_thread_then_timers(sockets: bool) -> None:
    before = psutil.Process().num_fds()
    io = IOThread("flintlock-test-io", sockets=sockets)
    io.start()
    ran: list[tuple[str, bool]] = []
    done = threading.Event()
    io.call_later(0.001, lambda: (ran.append(("timer", io.in_loop())), done.set()))
    for name in ("a", "b", "c"):
        io.call_soon(lambda name=name: ran.append((name, io.in_loop())))
    assert done.wait(10)
    closed = []
    io.add_closer(lambda: closed.append(io.in_loop()))
    removed = io.add_closer(lambda: closed.append(False))
    io.remove_closer(removed)
    io.stop()
    assert ran == [("a", True), ("b", True), ("c", True), ("timer", True)]
    assert closed == [True]
    assert "flintlock-test-io" not in {t.name for t in threading.enumerate()}
    assert psutil.Process().num_fds() == before


def test_an_escaping_error_is_logged_and_the_loop_keeps_running(
    caplog: pytest.LogCaptureFixture,
) -> None:
    io = IOThread("flintlock-test-io", sockets=False)
    io.start()
    done = threading.Event()

    def broken() -> None:
        raise ValueError("a bug in a handler")

    io.call_soon(broken)
    io.call_soon(done.set)
    assert done.wait(10)
    io.stop()
    assert "a bug in a handler" in caplog.text


def test_a_socket_free_loop_has_no_selector() -> None:
    io = IOThread("flintlock-test-io", sockets=False)
    with pytest.raises(RuntimeError):
        io.selector  # noqa: B018 — the access itself is what fails
    io.stop()
