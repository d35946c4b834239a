"""HybridSource (issue 27): sources read one after the other, under PyFlink's import path,
with checkpoints, restores and rescales in between; build-time checks."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flintlock.datastream.connectors import Source
from flintlock.datastream.connectors.hybrid_source import (
    HybridSource,
    HybridSourceBuilder,
    InvalidHybridSourceError,
)
from flintlock.datastream.connectors.number_seq import NumberSequenceSource

from .fakes import SourceHarness, drain


def _hybrid(*ranges):
    first, *rest = (NumberSequenceSource(a, b) for a, b in ranges)
    builder = HybridSource.builder(first)
    assert isinstance(builder, HybridSourceBuilder)
    for source in rest:
        builder = builder.add_source(source)
    return builder.build()


def test_one_reader_reads_the_sources_in_order():
    harness = SourceHarness(_hybrid((1, 5), (100, 103), (7, 8)), 1)
    assert drain(harness.readers[0], max_records=2) == [1, 2, 3, 4, 5, 100, 101, 102, 103, 7, 8]


def test_each_reader_reads_its_share_of_a_source_before_the_next_source():
    harness = SourceHarness(_hybrid((0, 99), (1000, 1099)), 3)
    outputs = [drain(reader) for reader in harness.readers]
    assert sorted(x for out in outputs for x in out) == [*range(100), *range(1000, 1100)]
    for out in outputs:
        switch = next(i for i, x in enumerate(out) if x >= 1000)
        assert all(x < 1000 for x in out[:switch]) and all(x >= 1000 for x in out[switch:])


def test_a_restore_after_the_switch_does_not_read_the_first_source_again():
    harness = SourceHarness(_hybrid((0, 9), (10, 19)), 1)
    harness.poll(0, 12)  # all of the first source and two of the second
    snapshot = harness.checkpoint(1)
    harness.poll(0, 3)
    harness.restore(snapshot, 1)
    assert harness.run_to_end() == list(range(20))


def test_it_is_a_source_bounded_as_its_last_source():
    hybrid = _hybrid((1, 2), (3, 4))
    assert isinstance(hybrid, Source)
    assert hybrid.is_bounded()
    assert [type(s) for s in hybrid.get_sources()] == [NumberSequenceSource] * 2


class _Unbounded(NumberSequenceSource):
    def is_bounded(self):
        return False


def test_only_the_last_source_may_be_unbounded():
    last_unbounded = HybridSource.builder(NumberSequenceSource(1, 2)).add_source(
        _Unbounded(3, 4)).build()
    assert not last_unbounded.is_bounded()
    with pytest.raises(InvalidHybridSourceError, match="every source but the last"):
        HybridSource.builder(_Unbounded(1, 2)).add_source(NumberSequenceSource(3, 4)).build()


def test_sources_that_cannot_be_enumerated_are_refused():
    with pytest.raises(InvalidHybridSourceError, match="must be a Source"):
        HybridSource.builder("files").build()
    with pytest.raises(InvalidHybridSourceError, match="enumerate"):
        HybridSource.builder(Source()).build()


def test_a_checkpoint_of_another_chain_is_refused():
    state = _hybrid((1, 2), (3, 4)).create_enumerator(1, None).snapshot_state(1)
    with pytest.raises(InvalidHybridSourceError, match="2 sources"):
        _hybrid((1, 2), (3, 4), (5, 6)).create_enumerator(1, state)


operations = st.lists(st.one_of(
    st.tuples(st.just("poll"), st.integers(0, 4), st.integers(1, 40)),
    st.tuples(st.just("checkpoint"), st.just(0), st.just(0)),
    st.tuples(st.just("crash"), st.integers(1, 4), st.just(0))), max_size=30)


@settings(max_examples=100, deadline=None)
@given(lengths=st.lists(st.integers(1, 60), min_size=1, max_size=3),
       parallelism=st.integers(1, 4), ops=operations)
def test_every_record_of_every_source_exactly_once_under_crashes_and_rescales(
        lengths, parallelism, ops):
    ranges = [(1000 * i, 1000 * i + n - 1) for i, n in enumerate(lengths)]
    harness = SourceHarness(_hybrid(*ranges), parallelism)
    snapshot, checkpoint_id = None, 0
    for op, a, b in ops:
        if op == "poll":
            harness.poll(a % len(harness.readers), b)
        elif op == "checkpoint":
            checkpoint_id += 1
            snapshot = harness.checkpoint(checkpoint_id)
        else:
            harness.restore(snapshot, a)
    assert sorted(harness.run_to_end()) == [x for a, b in ranges for x in range(a, b + 1)]
