"""The task mailbox: urgent mail first, and every kind in the order it was put."""

from flintlock.runtime.tasks.mailbox import Mailbox


def test_urgent_mail_runs_first_but_keeps_its_own_order():
    mailbox = Mailbox()
    for name, urgent in (("a", False), ("trigger 1", True), ("b", False), ("trigger 2", True)):
        mailbox.put(lambda: None, name, urgent=urgent)
    assert [m.description for m in mailbox.take_all()] == ["trigger 1", "trigger 2", "a", "b"]
    assert not mailbox.has_mail()


def test_a_closed_mailbox_drops_offers_and_returns_what_was_left():
    mailbox = Mailbox()
    mailbox.put(lambda: None, "left", urgent=True)
    assert [m.description for m in mailbox.close()] == ["left"]
    assert mailbox.offer(lambda: None, "late") is False
