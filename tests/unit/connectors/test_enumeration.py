"""The round-robin dealer, the dealing enumerator and the split-queue reader."""

import pytest

from flintlock.datastream.connectors._enumeration import (
    DealerState,
    DealingEnumerator,
    SplitDealer,
    SplitQueueReader,
)

from .fakes import FakeEnumeratorContext, drain


class ListDiscovery:
    def __init__(self, initial, later=()):
        self._initial = list(initial)
        self._later = list(later)
        self.discovered = 0

    def initial(self):
        return list(self._initial)

    def discover(self):
        self.discovered += 1
        found, self._later = self._later, []
        return found

    def snapshot(self):
        return ("seen", self.discovered)


def test_dealer_deals_round_robin_in_order():
    dealer = SplitDealer(3)
    dealer.deal(["a", "b", "c", "d", "e"])
    assert [dealer.pending(i) for i in range(3)] == [["a", "d"], ["b", "e"], ["c"]]
    assert dealer.take(1) == ["b", "e"]
    assert dealer.take(1) == []
    dealer.deal(["f"])
    assert dealer.pending(2) == ["c", "f"]


def test_dealer_restored_at_the_same_parallelism_keeps_lists_and_cursor():
    dealer = SplitDealer(2, DealerState((("a",), ()), 3))
    dealer.deal(["x"])
    assert [dealer.pending(0), dealer.pending(1)] == [["a"], ["x"]]


def test_dealer_restored_at_another_parallelism_deals_again():
    dealer = SplitDealer(3, DealerState((("a", "c"), ("b",)), 3))
    assert [dealer.pending(i) for i in range(3)] == [["a"], ["c"], ["b"]]


def test_dealer_rejects_zero_parallelism():
    with pytest.raises(ValueError):
        SplitDealer(0)


def test_bounded_enumerator_assigns_on_registration_then_signals_the_end():
    ctx = FakeEnumeratorContext(2)
    enumerator = DealingEnumerator(2, None, ListDiscovery(["s0", "s1", "s2"]), bounded=True)
    enumerator.start(ctx)
    assert ctx.actions == []
    enumerator.add_reader(1)
    enumerator.add_reader(0)
    assert ctx.actions == [("assign", 1, ("s1",)), ("no_more", 1, ()),
                           ("assign", 0, ("s0", "s2")), ("no_more", 0, ())]
    assert ctx.periodic == []


def test_a_reader_registering_again_gets_no_split_twice():
    ctx = FakeEnumeratorContext(1)
    enumerator = DealingEnumerator(1, None, ListDiscovery(["s0"]), bounded=True)
    enumerator.start(ctx)
    enumerator.add_reader(0)
    enumerator.add_reader(0)
    assert ctx.assigned[0] == ["s0"]
    assert ctx.actions[-1] == ("no_more", 0, ())


def test_a_failed_readers_splits_come_back_to_it_first_at_its_next_registration():
    # BATCH region failover (issue 29): the restarted reader reads its splits again
    ctx = FakeEnumeratorContext(2)
    enumerator = DealingEnumerator(2, None, ListDiscovery(["s0", "s1", "s2"]), bounded=True)
    enumerator.start(ctx)
    enumerator.add_reader(0)
    enumerator.add_splits_back(["s0", "s2"], 0)
    ctx.actions.clear()
    enumerator.add_reader(0)
    assert ctx.actions == [("assign", 0, ("s0", "s2")), ("no_more", 0, ())]


def test_restored_enumerator_does_not_discover_the_initial_splits_again():
    ctx = FakeEnumeratorContext(2)
    first = DealingEnumerator(2, None, ListDiscovery(["s0", "s1"]), bounded=True)
    first.start(ctx)
    first.add_reader(0)
    snapshot = first.snapshot_state(1)
    assert snapshot.discovery == ("seen", 0)
    ctx2 = FakeEnumeratorContext(2)
    again = DealingEnumerator(2, snapshot, ListDiscovery(["s0", "s1"]), bounded=True)
    again.start(ctx2)
    again.add_reader(0)
    again.add_reader(1)
    assert ctx2.assigned == {0: [], 1: ["s1"]}


def test_continuous_enumerator_discovers_periodically_and_never_ends():
    ctx = FakeEnumeratorContext(2)
    discovery = ListDiscovery(["s0"], later=["n0", "n1"])
    enumerator = DealingEnumerator(2, None, discovery, bounded=False, discovery_interval_ms=500)
    enumerator.start(ctx)
    assert [interval for interval, _ in ctx.periodic] == [500]
    enumerator.add_reader(0)
    ctx.tick()
    assert ctx.assigned == {0: ["s0", "n1"], 1: []}
    assert enumerator.snapshot_state(3).dealer.pending == ((), ("n0",))
    enumerator.add_reader(1)
    assert ctx.assigned == {0: ["s0", "n1"], 1: ["n0"]}
    assert enumerator.snapshot_state(4).dealer.pending == ((), ())
    assert ctx.no_more == set()


def test_unbounded_enumerator_without_interval_deals_the_initial_splits_only():
    ctx = FakeEnumeratorContext(1)
    discovery = ListDiscovery(["s0"], later=["never"])
    enumerator = DealingEnumerator(1, None, discovery, bounded=False)
    enumerator.start(ctx)
    enumerator.add_reader(0)
    assert ctx.actions == [("assign", 0, ("s0",))]
    assert ctx.periodic == [] and discovery.discovered == 0


class CountdownReader(SplitQueueReader):
    """Splits are (name, remaining); a split of remaining -1 has nothing available yet."""

    def read_split(self, split, budget, out):
        name, remaining = split
        if remaining < 0:
            return split, False
        count = min(budget, remaining)
        out.extend(f"{name}{remaining - i}" for i in range(count))
        return (name, remaining - count), remaining - count == 0


def test_reader_is_finished_only_after_no_more_splits():
    reader = CountdownReader()
    reader.add_splits([("a", 2)])
    assert reader.poll(10) == (["a2", "a1"], False)
    assert reader.poll(10) == ([], False)
    reader.notify_no_more_splits()
    assert reader.poll(10) == ([], True)


def test_reader_snapshot_holds_unfinished_splits_with_positions():
    reader = CountdownReader()
    reader.restore([("a", 3), ("b", 1)])
    assert reader.poll(2) == (["a3", "a2"], False)
    assert reader.snapshot_state(1) == [("a", 1), ("b", 1)]
    assert reader.poll(5) == (["a1", "b1"], False)
    assert reader.snapshot_state(2) == []


def test_reader_stops_at_a_split_with_nothing_available():
    reader = CountdownReader()
    reader.add_splits([("w", -1), ("b", 1)])
    reader.notify_no_more_splits()
    assert reader.poll(5) == ([], False)
    assert reader.snapshot_state(1) == [("w", -1), ("b", 1)]


def test_drain_fails_for_a_reader_that_never_ends():
    reader = CountdownReader()
    with pytest.raises(AssertionError):
        drain(reader, limit=3)
