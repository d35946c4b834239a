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


@pytest.mark.parametrize("sockets", [True, False], ids=["selector", "socket-free"])
def test_call_now_or_soon_runs_on_the_caller_only_while_the_loop_is_idle(sockets: bool) -> None:
    io = IOThread("flintlock-test-io", sockets=sockets)
    ran: list[tuple[str, bool]] = []
    io.call_now_or_soon(lambda: ran.append(("before start", io.in_loop())))
    assert ran == []  # not running yet: posted
    io.start()
    idle = threading.Event()
    io.call_soon(idle.set)
    assert idle.wait(10)
    # the loop may not be back in select yet: wait until a task can run on this thread
    for _ in range(1000):
        io.call_now_or_soon(lambda: ran.append(("idle", io.in_loop())))
        if ran[-1:] == [("idle", False)]:
            break
        threading.Event().wait(0.001)
    io.stop()
    assert ran[0] == ("before start", True)
    assert ran[-1] == ("idle", False)  # ran right here, before call_now_or_soon returned


def test_call_now_or_soon_posts_behind_a_busy_loop_and_keeps_the_order() -> None:
    io = IOThread("flintlock-test-io", sockets=True)
    io.start()
    ran: list[tuple[str, bool]] = []
    busy, release, done = threading.Event(), threading.Event(), threading.Event()

    def long_task() -> None:
        busy.set()
        release.wait(10)
        ran.append(("long", io.in_loop()))

    io.call_soon(long_task)
    assert busy.wait(10)
    io.call_now_or_soon(lambda: ran.append(("inline?", io.in_loop())))
    io.call_soon(lambda: (ran.append(("after", io.in_loop())), done.set()))
    assert ran == []  # the loop is busy: nothing ran on this thread
    release.set()
    assert done.wait(10)
    io.stop()
    assert ran == [("long", True), ("inline?", True), ("after", True)]
    io.call_now_or_soon(lambda: ran.append(("stopped", io.in_loop())))
    assert ran[-1] == ("after", True)  # a stopped loop runs nothing


def test_a_cancelled_timer_never_runs() -> None:
    io = IOThread("flintlock-test-io-cancel", sockets=False)
    io.start()
    ran: list[str] = []
    done = threading.Event()
    io.call_later(0.001, lambda: ran.append("cancelled")).cancel()
    io.call_later(0.002, lambda: (ran.append("kept"), done.set()))
    assert done.wait(10)
    io.stop()
    assert ran == ["kept"]
