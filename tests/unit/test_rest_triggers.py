"""Savepoint triggers: outcomes are kept until fetched, so a closing endpoint knows whether a
client still waits for one."""

from concurrent.futures import Future

import pytest

from flintlock.runtime.rest.triggers import (
    DuplicateTriggerError,
    SavepointAbandonedError,
    SavepointTriggers,
    TriggerState,
    UnknownTriggerError,
)


@pytest.fixture
def triggers():
    ids = iter(["a", "b", "c"])
    return SavepointTriggers(lambda: next(ids))


def test_in_progress_until_the_future_completes(triggers):
    future = Future()
    trigger_id = triggers.add(future)
    assert trigger_id == "a"
    assert triggers.status("a").state is TriggerState.IN_PROGRESS
    future.set_result("/sp/1")
    status = triggers.status("a")
    assert (status.state, status.location, status.failure) == (
        TriggerState.COMPLETED, "/sp/1", None)


def test_an_outcome_is_unfetched_until_a_client_reads_it(triggers):
    done, running = Future(), Future()
    triggers.add(done)
    triggers.add(running)
    assert triggers.unfetched() == []
    done.set_result("/sp")
    assert triggers.unfetched() == ["a"]
    assert triggers.wait_until_fetched(0) is False
    triggers.status("b")  # still in progress: reading it fetches nothing
    assert triggers.unfetched() == ["a"]
    triggers.status("a")
    assert triggers.unfetched() == []
    assert triggers.wait_until_fetched(0) is True


def test_fail_in_progress_fails_only_the_unfinished(triggers):
    done, running = Future(), Future()
    triggers.add(done)
    triggers.add(running)
    done.set_result("/sp")
    triggers.fail_in_progress("job ended")
    assert triggers.status("a").location == "/sp"
    failure = triggers.status("b").failure
    assert isinstance(failure, SavepointAbandonedError) and "job ended" in str(failure)


def test_unknown_and_duplicate_ids(triggers):
    with pytest.raises(UnknownTriggerError):
        triggers.status("zzz")
    triggers.add(Future(), "mine")
    with pytest.raises(DuplicateTriggerError):
        triggers.add(Future(), "mine")


def test_errors_survive_pickling():
    import pickle

    for error in (UnknownTriggerError("x"), DuplicateTriggerError("y"),
                  SavepointAbandonedError("gone")):
        assert str(pickle.loads(pickle.dumps(error))) == str(error)
