"""flintlock's own classes inside pickled state (issue 14): every one the savepoint fixtures
hold must still be found — where it is, or through ``pickles.MOVED`` — and a moved class is
found through ``MOVED``."""

from __future__ import annotations

import pickle
import pickletools
from pathlib import Path

import pytest

from flintlock.datastream.connectors import number_seq
from flintlock.runtime.checkpoint.metadata import resolve_savepoint
from flintlock.runtime.checkpoint.storage import read_state
from flintlock.runtime.enumerators import EnumeratorState
from flintlock.runtime.state import pickles
from flintlock.runtime.state.snapshots import TaskStateSnapshot

FIXTURES = Path(__file__).parents[2] / "fixtures" / "savepoints"


def _pickles_in(data: bytes | memoryview) -> list[bytes]:
    """The pickles concatenated in ``data`` (blocks, elements), each on its own."""
    found, data = [], bytes(data)
    while data:
        end = next(pos for op, _, pos in pickletools.genops(data) if op.name == "STOP") + 1
        found.append(data[:end])
        data = data[end:]
    return found


def _globals(data: bytes) -> set[tuple[str, str]]:
    """(module, name) of every class or function a pickle refers to."""
    names, strings = set(), []
    for op, arg, _ in pickletools.genops(data):
        if op.name in ("SHORT_BINUNICODE", "BINUNICODE", "UNICODE"):
            strings.append(arg)
        elif op.name == "STACK_GLOBAL":
            names.add((strings[-2], strings[-1]))
        elif op.name == "GLOBAL":
            names.add(tuple(arg.split(" ", 1)))
    return names


def _state_pickles() -> list[bytes]:
    """Every pickle of state in every savepoint fixture with state: enumerator states,
    operator-state elements, key-group blocks."""
    found = []
    for directory in sorted(FIXTURES.glob("v*-*")):
        if not list(directory.glob("*-keyed")):
            continue
        for state in resolve_savepoint(str(directory)).task_states.values():
            if isinstance(state, EnumeratorState):
                found.append(state.data)
            if not isinstance(state, TaskStateSnapshot):
                continue
            for operator in state.subtask_states.values():
                blobs = [h.handle for h in operator.managed_keyed_state]
                blobs += [h.handle for h in operator.managed_operator_state]
                for blob in blobs:
                    found += _pickles_in(read_state(blob))  # type: ignore[arg-type]
    return found


def test_every_flintlock_class_in_the_fixtures_state_is_still_found() -> None:
    referred = {name for data in _state_pickles() for name in _globals(data)
                if name[0].split(".")[0] == "flintlock"}
    assert ("flintlock.datastream.connectors.number_seq", "NumberSequenceSplit") in referred
    missing = []
    for module, name in sorted(referred):
        try:
            pickles.find_class(module, name)
        except (AttributeError, ImportError) as exc:
            missing.append(f"{module}.{name}: {exc}")
    assert not missing, (
        "savepoints hold these classes in their state; a moved class needs an entry in "
        f"flintlock.runtime.state.pickles.MOVED: {missing}")


def test_every_fixture_state_pickle_loads() -> None:
    values = [pickles.loads(data) for data in _state_pickles()]
    splits = [v for v in values if isinstance(v, number_seq.NumberSequenceSplit)]
    assert sorted((s.split_id, s.current, s.to) for s in splits) == [
        ("0", 896, 1999), ("1", 2896, 3999)]


def test_a_moved_class_is_found_through_moved(monkeypatch: pytest.MonkeyPatch) -> None:
    old = pickle.dumps(number_seq.NumberSequenceSplit("7", 1, 9), protocol=5)
    cls = number_seq.NumberSequenceSplit
    monkeypatch.setattr(number_seq, "RangeSplit", cls, raising=False)
    monkeypatch.delattr(number_seq, "NumberSequenceSplit")
    cls.__qualname__ = "RangeSplit"  # the class now lives under another name
    try:
        with pytest.raises(AttributeError):
            pickles.loads(old)
        monkeypatch.setattr(pickles, "MOVED", {
            ("flintlock.datastream.connectors.number_seq", "NumberSequenceSplit"):
                ("flintlock.datastream.connectors.number_seq", "RangeSplit")})
        assert pickles.loads(old) == cls("7", 1, 9)
        assert pickles.loads(memoryview(old)) == cls("7", 1, 9)
    finally:
        cls.__qualname__ = "NumberSequenceSplit"
