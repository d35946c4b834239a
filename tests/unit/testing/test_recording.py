"""The test kit's recordings: one list per name in a process, whoever pickled it."""

from __future__ import annotations

import pickle
import threading

from flintlock.testing.recording import CollectingSink, HoldUntilRecorded, Recording


def test_a_recording_pickles_by_name_into_the_same_list() -> None:
    recording = Recording("unit.by-name")
    recording.clear()
    copy = pickle.loads(pickle.dumps(recording))
    copy.append(1)
    assert copy is recording and recording == [1] and Recording("unit.by-name").items() == [1]


def test_clear_all_empties_every_recording() -> None:
    first, second = Recording("unit.first"), Recording("unit.second")
    first.append("a")
    second.extend(["b", "c"])
    Recording.clear_all()
    assert len(first) == 0 and list(second) == []


def test_hold_until_recorded_lets_its_record_pass_once_the_count_is_reached() -> None:
    recording = Recording("unit.hold")
    recording.clear()
    hold = HoldUntilRecorded(recording, 2, timeout_s=30)
    passed: list[str] = []
    worker = threading.Thread(target=lambda: passed.append(hold.map("end")))
    worker.start()
    recording.append("timer 1")
    assert not recording.wait_for_length(3, 0.01)  # only the count it asked for matters
    recording.append("timer 2")
    worker.join(30)
    assert passed == ["end"]


def test_the_collecting_sink_appends_every_batch_it_writes() -> None:
    recording = Recording("unit.sink")
    recording.clear()
    writer = pickle.loads(pickle.dumps(CollectingSink(recording))).create_writer(0, 1)
    writer.restore([])
    writer.write([1, 2])
    assert writer.snapshot_state(1) == []
    writer.commit(1)
    writer.write([3])
    writer.end_input()
    writer.close()
    assert recording == [1, 2, 3]


def test_hold_until_recorded_at_a_value_lets_every_other_record_pass() -> None:
    recording = Recording("unit.hold-at")
    recording.clear()
    hold = HoldUntilRecorded(recording, 1, timeout_s=30, at="last")
    assert [hold(r) for r in ("first", "second")] == ["first", "second"]  # no wait
    worker = threading.Thread(target=lambda: hold("last"))
    worker.start()
    recording.append("fired")
    worker.join(30)
    assert not worker.is_alive()
