"""NumberSequenceSource: splitting, reading, checkpoint/restore and rescaling."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flintlock.datastream.connectors import Source
from flintlock.datastream.connectors.number_seq import (
    NumberSequenceSource,
    NumberSequenceSplit,
    split_range,
)

from .fakes import SourceHarness


def test_split_range_covers_the_range_in_near_equal_parts():
    assert split_range(1, 10, 3) == [NumberSequenceSplit("0", 1, 4), NumberSequenceSplit("1", 5, 7),
                                     NumberSequenceSplit("2", 8, 10)]


def test_split_range_leaves_out_empty_splits():
    assert split_range(5, 6, 4) == [NumberSequenceSplit("0", 5, 5), NumberSequenceSplit("1", 6, 6)]


def test_the_source_is_a_bounded_source_with_pyflink_getters():
    source = NumberSequenceSource(3, 9)
    assert isinstance(source, Source)
    assert source.is_bounded()
    assert (source.get_start(), source.get_end()) == (3, 9)


@pytest.mark.parametrize("args", [(1.0, 2), (1, "2"), (True, 3)])
def test_bounds_must_be_ints(args):
    with pytest.raises(TypeError):
        NumberSequenceSource(*args)


def test_end_before_start_is_rejected():
    with pytest.raises(ValueError):
        NumberSequenceSource(5, 4)


def test_both_ends_are_included_and_each_reader_ascends():
    harness = SourceHarness(NumberSequenceSource(-3, 20), 3)
    per_reader = []
    for index in range(3):
        records, _ = harness.readers[index].poll(1000)
        per_reader.append(records)
    assert sorted(x for r in per_reader for x in r) == list(range(-3, 21))
    assert all(r == sorted(r) for r in per_reader)


def test_a_restore_continues_right_after_the_checkpointed_position():
    harness = SourceHarness(NumberSequenceSource(0, 99), 2)
    harness.poll(0, 10)
    snapshot = harness.checkpoint(1)
    harness.poll(0, 10)
    harness.poll(1, 10)
    harness.restore(snapshot, 2)
    assert sorted(harness.run_to_end()) == list(range(100))


def test_a_fresh_restart_starts_over():
    harness = SourceHarness(NumberSequenceSource(0, 9), 2)
    harness.poll(0, 3)
    harness.restore(None, 2)
    assert sorted(harness.run_to_end()) == list(range(10))


operations = st.lists(st.one_of(
    st.tuples(st.just("poll"), st.integers(0, 4), st.integers(1, 40)),
    st.tuples(st.just("checkpoint"), st.just(0), st.just(0)),
    st.tuples(st.just("crash"), st.integers(1, 5), st.just(0))), max_size=30)


@settings(max_examples=150, deadline=None)
@given(start=st.integers(-50, 50), length=st.integers(1, 300),
       parallelism=st.integers(1, 5), ops=operations)
def test_every_number_exactly_once_under_any_crashes_and_rescales(start, length, parallelism,
                                                                   ops):
    harness = SourceHarness(NumberSequenceSource(start, start + length - 1), parallelism)
    snapshot, checkpoint_id = None, 0
    for op, a, b in ops:
        if op == "poll":
            harness.poll(a % len(harness.readers), b)
        elif op == "checkpoint":
            checkpoint_id += 1
            snapshot = harness.checkpoint(checkpoint_id)
        else:
            harness.restore(snapshot, a)
    assert sorted(harness.run_to_end()) == list(range(start, start + length))
