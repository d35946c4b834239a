"""The task's one timer service (issue 19): due timers become mail, run on the task thread in
due order, never at the same time as other mail such as a barrier that arrives meanwhile."""

from __future__ import annotations

import threading

from flintlock.common.clock import SYSTEM_CLOCK
from flintlock.runtime.tasks.mailbox import Mailbox
from flintlock.runtime.tasks.timer_service import TaskTimerService
from flintlock.testing.waiting import wait_until


def _run_mail_until(mailbox: Mailbox, done: threading.Event) -> None:
    """The task loop: run mail until ``done`` (bounded by wait_until's timeout)."""
    def step() -> bool:
        for mail in mailbox.take_all():
            mail.action()
        mailbox.wait(0.01)
        return done.is_set()

    wait_until(step)


def test_timers_run_as_mail_in_due_order_and_cancelled_ones_never() -> None:
    mailbox = Mailbox()
    timers = TaskTimerService(mailbox, SYSTEM_CLOCK, "t")
    fired: list[tuple[str, int]] = []
    done = threading.Event()
    timers.schedule_after(0.03, lambda: (fired.append(("late", threading.get_ident())),
                                         done.set()), "late")
    timers.schedule_after(0.0, lambda: fired.append(("early", threading.get_ident())), "early")
    timers.schedule_after(0.01, lambda: fired.append(("cancelled", 0)), "x").cancel()
    now = timers.now_ms()
    timers.schedule(now, lambda timestamp: fired.append(("processing-time", timestamp)))
    _run_mail_until(mailbox, done)
    me = threading.get_ident()
    assert [name for name, _ in fired] == ["early", "processing-time", "late"]
    assert fired[0][1] == me and fired[2][1] == me and fired[1][1] == now
    timers.close()
    assert not any(t.name == "flintlock-timers-t" for t in threading.enumerate())


def test_a_barrier_arriving_while_a_timer_fires_runs_after_it_on_the_task_thread() -> None:
    mailbox = Mailbox()
    timers = TaskTimerService(mailbox, SYSTEM_CLOCK, "barrier")
    order: list[tuple[str, int]] = []
    in_timer, barrier_put, done = threading.Event(), threading.Event(), threading.Event()

    def on_timer() -> None:
        order.append(("timer starts", threading.get_ident()))
        in_timer.set()
        barrier_put.wait(10)  # the barrier arrives while the timer's callback runs
        order.append(("timer ends", threading.get_ident()))

    def barrier() -> None:
        order.append(("barrier", threading.get_ident()))
        done.set()

    def network_thread() -> None:
        in_timer.wait(10)
        mailbox.put(barrier, "trigger 1", urgent=True)
        barrier_put.set()

    other = threading.Thread(target=network_thread)
    other.start()
    timers.schedule_after(0.0, on_timer, "timer")
    _run_mail_until(mailbox, done)
    other.join()
    timers.close()
    me = threading.get_ident()
    assert order == [("timer starts", me), ("timer ends", me), ("barrier", me)]


def test_a_closed_service_schedules_nothing() -> None:
    mailbox = Mailbox()
    timers = TaskTimerService(mailbox, SYSTEM_CLOCK, "closed")
    timers.close()
    handle = timers.schedule_after(0.0, lambda: None, "late")
    assert handle.cancelled and not mailbox.has_mail()
