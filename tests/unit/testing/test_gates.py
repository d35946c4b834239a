"""The test kit's gates: a job held at a point until the test opens the gate, without timing."""

from __future__ import annotations

import threading

import pytest

from flintlock.datastream.connectors.number_seq import NumberSequenceSource, NumberSequenceSplit
from flintlock.testing.gates import (
    FileGate,
    FileLimit,
    GatedNumberSequenceSource,
    GatedSource,
    HoldAt,
    MeteredNumberSequenceSource,
    gated_records,
    open_when,
)


def gated_sequence(end, gate, before_gate):  # type: ignore[no-untyped-def]
    """The sequence 0..end through ``GatedSource``, the wrapper of any connector."""
    return GatedSource(NumberSequenceSource(0, end), gate, before_gate)


def sequence_of_numbers(end, gate, before_gate):  # type: ignore[no-untyped-def]
    return GatedNumberSequenceSource(0, end, gate, before_gate)


GATED = pytest.mark.parametrize("gated", [sequence_of_numbers, gated_sequence],
                                ids=["numbers", "any-source"])


def reader_of(gate: FileGate, before_gate: int, end: int = 9,  # type: ignore[no-untyped-def]
              gated=sequence_of_numbers):
    reader = gated(end, gate, before_gate).create_reader(0, 1)
    reader.add_splits([NumberSequenceSplit("0", 0, end)])
    reader.notify_no_more_splits()
    return reader


def test_a_gate_is_closed_and_not_reached_until_marked(tmp_path) -> None:
    gate = FileGate(tmp_path / "gate")
    assert not gate.is_open() and not gate.has_arrived()
    gate.arrive()
    gate.open()
    assert gate.is_open() and gate.has_arrived()
    assert FileGate(tmp_path / "gate").is_open()  # the files are the gate: any copy sees it


@GATED
def test_the_gated_source_holds_after_its_share_and_goes_on_once_open(tmp_path, gated) -> None:
    gate = FileGate(tmp_path / "gate")
    reader = reader_of(gate, before_gate=4, gated=gated)
    assert reader.poll(3) == ([0, 1, 2], False)
    assert reader.poll(3) == ([3], False)
    assert not gate.has_arrived()
    assert reader.poll(3) == ([], False)  # held: nothing available, not finished
    assert gate.has_arrived()
    assert reader.snapshot_state(1) == [NumberSequenceSplit("0", 4, 9)]
    gate.open()
    assert reader.poll(10) == ([4, 5, 6, 7, 8, 9], True)


@GATED
def test_an_open_gate_holds_nothing(tmp_path, gated) -> None:
    gate = FileGate(tmp_path / "gate")
    gate.open()
    assert reader_of(gate, before_gate=0, gated=gated).poll(20) == (list(range(10)), True)
    assert not gate.has_arrived()


def test_gated_sources_nest_into_holds_one_after_another(tmp_path) -> None:
    first, second = FileGate(tmp_path / "first"), FileGate(tmp_path / "second")
    reader = reader_of(first, 3, gated=lambda end, gate, before: GatedSource(
        GatedNumberSequenceSource(0, end, gate, before), second, 5))
    assert reader.poll(10) == ([0, 1, 2], False)
    assert reader.poll(10) == ([], False)
    assert first.has_arrived() and not second.has_arrived()
    first.open()
    assert reader.poll(10) == ([3, 4], False)
    assert reader.poll(10) == ([], False)
    assert second.has_arrived()
    second.open()
    assert reader.poll(10) == ([5, 6, 7, 8, 9], True)


def test_gated_records_refuses_holds_out_of_order(tmp_path) -> None:
    gate = FileGate(tmp_path / "gate")
    with pytest.raises(ValueError):
        gated_records(None, gate, list(range(5)), 3, then=[(FileGate(tmp_path / "2"), 3)])


def test_hold_at_blocks_its_record_until_the_gate_opens(tmp_path) -> None:
    gate = FileGate(tmp_path / "gate")
    hold = HoldAt(gate, 2)
    passed: list[int] = []

    def run() -> None:
        for value in range(4):
            passed.append(hold(value))

    worker = threading.Thread(target=run)
    worker.start()
    try:
        gate.wait_arrived(10)
        assert passed == [0, 1]  # 1 was appended before 2 reached the gate
    finally:
        gate.open()
        worker.join(10)
    assert passed == [0, 1, 2, 3]


def test_hold_at_fails_instead_of_hanging_on_a_forgotten_gate(tmp_path) -> None:
    hold = HoldAt(FileGate(tmp_path / "gate"), "x", timeout_s=0.01)
    with pytest.raises(TimeoutError):
        hold("x")


@GATED
def test_a_negative_share_is_refused(tmp_path, gated) -> None:
    with pytest.raises(ValueError):
        gated(1, FileGate(tmp_path / "gate"), -1)


def test_a_gated_source_is_its_source_but_for_the_hold(tmp_path) -> None:
    source = GatedSource(NumberSequenceSource(0, 9), FileGate(tmp_path / "gate"), 1)
    assert source.is_bounded()
    enumerator = source.create_enumerator(2, None)
    assert type(enumerator) is type(NumberSequenceSource(0, 9).create_enumerator(2, None))
    assert source.create_reader(0, 1).pending_records() == 0  # the wrapped reader's gauge


def test_open_when_opens_the_gate_once_the_condition_holds(tmp_path) -> None:
    gate = FileGate(tmp_path / "gate")
    ready = FileGate(tmp_path / "ready")  # a condition the test controls
    opener = open_when(gate, ready.is_open, timeout_s=30)
    assert not gate.is_open()
    ready.open()
    opener.join(30)
    assert gate.is_open()


def test_open_when_opens_the_gate_anyway_after_the_bound(tmp_path) -> None:
    gate = FileGate(tmp_path / "gate")
    open_when(gate, lambda: False, timeout_s=0.01).join(30)
    assert gate.is_open()


def test_a_metered_sequence_reads_below_its_limit_by_position(tmp_path) -> None:
    limit = FileLimit(tmp_path / "limit", 3)
    reader = MeteredNumberSequenceSource(0, 9, limit).create_reader(0, 1)
    reader.add_splits([NumberSequenceSplit("0", 0, 9)])
    reader.notify_no_more_splits()
    assert reader.poll(10) == ([0, 1, 2], False)
    assert reader.poll(10) == ([], False)  # idle at the limit
    limit.set(7)
    assert FileLimit(tmp_path / "limit", 0).value() == 7  # the file is the limit
    assert reader.poll(10) == ([3, 4, 5, 6], False)
    restored = MeteredNumberSequenceSource(0, 9, limit).create_reader(0, 1)
    restored.restore(reader.snapshot_state(1))
    restored.notify_no_more_splits()
    assert restored.poll(10) == ([], False)  # a restored reader holds at the same number
    limit.set(10)
    assert restored.poll(10) == ([7, 8, 9], True)
