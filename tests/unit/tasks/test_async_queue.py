"""The async I/O queue (I/O free): ordered and unordered emission, watermarks never
overtaken, capacity, and what a checkpoint keeps; the retry strategies' arithmetic; the
mailbox's wait for wake."""

from __future__ import annotations

import threading

import pytest

from flintlock.datastream.async_retry_strategies import (
    ExponentialBackoffDelayRetryStrategy,
    FixedDelayRetryStrategy,
)
from flintlock.runtime.tasks.async_queue import (
    AsyncQueueFullError,
    AsyncResultQueue,
    RecordEntry,
    UnknownAsyncEntryError,
    WatermarkEntry,
)
from flintlock.runtime.tasks.mailbox import Mailbox


def _shown(entries):
    return [f"w{e.timestamp}" if isinstance(e, WatermarkEntry) else e.outputs for e in entries]


def test_ordered_results_wait_for_every_earlier_record():
    queue = AsyncResultQueue(10, ordered=True)
    a, b, c = (queue.add_record(v, None) for v in "abc")
    queue.complete(c, ["C"])
    queue.complete(b, ["B"])
    assert queue.pop_ready() == []
    queue.complete(a, ["A"])
    assert _shown(queue.pop_ready()) == [["A"], ["B"], ["C"]]
    assert len(queue) == 0


def test_ordered_watermarks_leave_in_their_place():
    queue = AsyncResultQueue(10, ordered=True)
    a = queue.add_record("a", 1)
    queue.add_watermark(1)
    b = queue.add_record("b", 2)
    queue.complete(b, ["B"])
    assert queue.pop_ready() == []
    queue.complete(a, ["A"])
    assert _shown(queue.pop_ready()) == [["A"], "w1", ["B"]]


def test_unordered_results_leave_as_they_complete_but_never_cross_a_watermark():
    queue = AsyncResultQueue(10, ordered=False)
    a, b = queue.add_record("a", 1), queue.add_record("b", 2)
    queue.add_watermark(2)
    c = queue.add_record("c", 3)
    queue.complete(c, ["C"])
    queue.complete(b, ["B"])
    assert _shown(queue.pop_ready()) == [["B"]]
    queue.complete(a, ["A"])
    assert _shown(queue.pop_ready()) == [["A"], "w2", ["C"]]
    assert len(queue) == 0


def test_unordered_watermark_with_nothing_before_it_leaves_at_once():
    queue = AsyncResultQueue(4, ordered=False)
    queue.add_watermark(5)
    assert _shown(queue.pop_ready()) == ["w5"]


def test_capacity_counts_records_and_watermarks():
    queue = AsyncResultQueue(2, ordered=False)
    entry = queue.add_record("a", None)
    queue.add_watermark(1)
    assert queue.is_full
    with pytest.raises(AsyncQueueFullError, match="capacity of 2"):
        queue.add_record("b", None)
    queue.complete(entry, [])
    assert _shown(queue.pop_ready()) == [[], "w1"]
    assert not queue.is_full


@pytest.mark.parametrize("ordered", [True, False])
def test_a_checkpoint_keeps_every_entry_not_yet_emitted_in_order(ordered):
    queue = AsyncResultQueue(10, ordered=ordered)
    a, b = queue.add_record("a", 1), queue.add_record("b", 2)
    queue.add_watermark(2)
    c = queue.add_record("c", 3)
    queue.complete(b, ["B"])
    queue.complete(c, ["C"])
    queue.pop_ready()
    kept = [e.timestamp if isinstance(e, WatermarkEntry) else e.value for e in queue.entries()]
    assert kept == (["a", "b", 2, "c"] if ordered else ["a", 2, "c"])
    queue.complete(a, ["A"])


def test_completing_an_entry_twice_or_one_not_queued_is_refused():
    queue = AsyncResultQueue(3, ordered=False)
    entry = queue.add_record("a", None)
    queue.complete(entry, ["A"])
    with pytest.raises(UnknownAsyncEntryError):
        queue.complete(entry, ["A"])
    with pytest.raises(UnknownAsyncEntryError):
        queue.complete(RecordEntry("x", None), [])


def test_capacity_must_be_positive():
    with pytest.raises(ValueError, match="positive"):
        AsyncResultQueue(0, ordered=True)


def test_fixed_delay_allows_max_attempts_retries():
    strategy = FixedDelayRetryStrategy(3, 100, None, None)
    assert [strategy.can_retry(n) for n in (1, 2, 3, 4)] == [True, True, True, False]
    assert strategy.get_backoff_time_millis(2) == 100


def test_exponential_backoff_multiplies_up_to_the_maximum():
    strategy = ExponentialBackoffDelayRetryStrategy(9, 10, 50, 2.0, None, None)
    assert [strategy.get_backoff_time_millis(n) for n in range(1, 6)] == [10, 20, 40, 50, 50]


@pytest.mark.parametrize("bad", [
    dict(max_attempts=0, backoff_time_millis=1),
    dict(max_attempts=1, backoff_time_millis=0),
])
def test_retry_strategies_refuse_non_positive_settings(bad):
    with pytest.raises(ValueError, match="greater than zero"):
        FixedDelayRetryStrategy(result_predicate=None, exception_predicate=None, **bad)


def test_wait_for_wake_ignores_mail_already_queued_and_ends_on_wake():
    mailbox = Mailbox()
    mailbox.put(lambda: None, "trigger 1")
    woken = threading.Event()

    def waiter():
        mailbox.wait_for_wake(None)
        woken.set()

    thread = threading.Thread(target=waiter)
    thread.start()
    mailbox.wake()
    thread.join(10)
    assert woken.is_set()
    assert [m.description for m in mailbox.take_all()] == ["trigger 1"]


def test_wait_for_wake_ends_on_new_mail():
    mailbox = Mailbox()
    done = threading.Event()
    started = threading.Event()

    def waiter():
        started.set()
        mailbox.wait_for_wake(None)
        done.set()

    thread = threading.Thread(target=waiter)
    thread.start()
    started.wait()
    mailbox.put(lambda: None, "cancel", urgent=True)
    thread.join(10)
    assert done.is_set()
