"""The TaskManager's watchdog for cancelled task threads that do not end (real threads)."""

from __future__ import annotations

import logging
import threading

from flintlock.runtime.cancellation import await_task_threads, thread_stack


def _stuck_in_user_code(release: threading.Event) -> None:
    release.wait(30)  # bounded: the test sets it


def _thread(target, *args) -> threading.Thread:
    thread = threading.Thread(target=target, args=args, daemon=True, name="flintlock-task-x")
    thread.start()
    return thread


def _cancellation_getting_through_at(n: int, release: threading.Event):
    """A ``cancel_again`` whose ``n``-th call releases the stuck thread, and its calls."""
    cancels: list[int] = []

    def cancel_again() -> None:
        cancels.append(1)
        if len(cancels) == n:
            release.set()

    return cancels, cancel_again


def test_threads_that_end_are_joined_without_callbacks():
    threads = [_thread(lambda: None) for _ in range(3)]
    calls = []
    assert await_task_threads(threads, interval_s=0.05, timeout_s=5.0,
                              cancel_again=lambda: calls.append("cancel"),
                              on_timeout=lambda alive: calls.append(alive))
    assert calls == []


def test_a_stuck_thread_is_cancelled_again_and_its_stack_logged_each_interval(caplog):
    release = threading.Event()
    stuck = _thread(_stuck_in_user_code, release)
    cancels, cancel_again = _cancellation_getting_through_at(3, release)
    with caplog.at_level(logging.WARNING, logger="flintlock.runtime.cancellation"):
        ended = await_task_threads([stuck], interval_s=0.05, timeout_s=30.0,
                                   cancel_again=cancel_again, on_timeout=lambda alive: None)
    assert ended
    assert len(cancels) == 3
    reports = [r.getMessage() for r in caplog.records]
    assert len(reports) == 3
    assert all("_stuck_in_user_code" in report and "flintlock-task-x" in report
               for report in reports)


def test_after_the_timeout_the_threads_still_alive_are_handed_over():
    release = threading.Event()
    stuck = _thread(_stuck_in_user_code, release)
    done = _thread(lambda: None)
    handed = []
    try:
        ended = await_task_threads([stuck, done], interval_s=0.02, timeout_s=0.2,
                                   cancel_again=lambda: None, on_timeout=handed.append)
        assert not ended
        assert handed == [[stuck]]
    finally:
        release.set()
        stuck.join(5)


def test_a_zero_timeout_waits_for_ever():
    release = threading.Event()
    stuck = _thread(_stuck_in_user_code, release)
    cancels, cancel_again = _cancellation_getting_through_at(10, release)
    assert await_task_threads([stuck], interval_s=0.01, timeout_s=0,
                              cancel_again=cancel_again,
                              on_timeout=lambda alive: (_ for _ in ()).throw(AssertionError))
    assert len(cancels) == 10


def test_the_stack_of_an_ended_thread_is_empty():
    thread = _thread(lambda: None)
    thread.join()
    assert thread_stack(thread) == ""
