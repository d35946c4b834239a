"""Types PyFlink programs import for annotations and checks are the types flintlock hands
them (issue 27)."""

import pytest

from flintlock.datastream.state import BroadcastState, ReadOnlyBroadcastState
from flintlock.runtime.tasks import broadcast_operator


def test_broadcast_states_are_pyflinks_types():
    state = broadcast_operator.BroadcastState("rules", {"a": 1})
    view = broadcast_operator.ReadOnlyBroadcastState(state)
    assert isinstance(state, BroadcastState)
    assert isinstance(view, ReadOnlyBroadcastState) and not isinstance(view, BroadcastState)
    assert list(view.items()) == [("a", 1)]
    with pytest.raises(broadcast_operator.ReadOnlyBroadcastStateError):
        view.clear()
    with pytest.raises(broadcast_operator.ReadOnlyBroadcastStateError):
        view.put("b", 2)
