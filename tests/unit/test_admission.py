"""``Admission``: the cap on unauthenticated connections and its once-per-burst reports."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flintlock.runtime.admission import Admission, AdmissionError, Admitted, BurstEnded, Refused


def test_admits_up_to_the_limit_then_refuses() -> None:
    admission = Admission(2)
    assert [admission.admit() for _ in range(4)] == [
        Admitted(), Admitted(), Refused(2, first_of_burst=True), Refused(2, first_of_burst=False)]
    assert admission.pending == 2 and admission.refused_total == 2


def test_a_burst_ends_when_half_the_limit_has_cleared() -> None:
    admission = Admission(4)
    for _ in range(4):
        admission.admit()
    assert admission.admit() == Refused(4, first_of_burst=True)
    assert admission.release() is None  # 3 pending: still near the cap
    assert admission.admit() == Admitted()
    assert admission.admit() == Refused(4, first_of_burst=False)  # the same burst
    assert admission.release() is None
    assert admission.release() == BurstEnded(2)  # 2 pending: half the limit
    assert [admission.admit(), admission.admit()] == [Admitted(), Admitted()]
    assert admission.admit() == Refused(4, first_of_burst=True)  # a new burst


def test_releases_without_refusals_report_nothing() -> None:
    admission = Admission(1)
    admission.admit()
    assert admission.release() is None


def test_an_unbalanced_release_is_an_error() -> None:
    with pytest.raises(AdmissionError):
        Admission(1).release()


def test_the_limit_must_be_positive() -> None:
    with pytest.raises(ValueError):
        Admission(0)


@given(st.integers(1, 8), st.lists(st.booleans(), max_size=200))
def test_never_more_than_the_limit_pending_and_one_report_per_burst(
    limit: int, steps: list[bool]
) -> None:
    admission = Admission(limit)
    firsts = ends = refused = reported = 0
    for admit in steps:
        if admit:
            decision = admission.admit()
            if isinstance(decision, Refused):
                refused += 1
                firsts += decision.first_of_burst
        elif admission.pending:
            ended = admission.release()
            if ended is not None:
                ends += 1
                reported += ended.refused
        assert 0 <= admission.pending <= limit
    assert ends <= firsts <= ends + 1  # every burst starts once and ends at most once
    assert reported <= refused == admission.refused_total


class _Listener:
    """A listening socket's ``accept`` as the acceptor sees it: the queued connections, then
    "nothing waiting"."""

    def __init__(self, count: int) -> None:
        self.queued = [(_Conn(i), ("127.0.0.1", 1000 + i)) for i in range(count)]

    def accept(self):
        if not self.queued:
            raise BlockingIOError
        return self.queued.pop(0)


class _Conn:
    def __init__(self, number: int) -> None:
        self.number = number


def test_the_acceptor_admits_up_to_the_cap_and_refuses_the_rest_once_logged(caplog) -> None:
    from flintlock.runtime.admission import Acceptor

    refused = []
    listener = _Listener(5)
    acceptor = Acceptor(listener, 2, "test endpoint 1",  # type: ignore[arg-type]
                        lambda sock, limit: refused.append((sock.number, limit)))
    with caplog.at_level("INFO", logger="flintlock.runtime.admission"):
        admitted = [sock.number for sock, _ in acceptor.accept_waiting()]
        assert admitted == [0, 1] and refused == [(2, 2), (3, 2), (4, 2)]
        assert acceptor.pending == 2
        acceptor.release()
        acceptor.release()
    messages = [r.getMessage() for r in caplog.records]
    assert messages == [
        "test endpoint 1: 2 unauthenticated connections are pending (the limit); closing new "
        "ones unread until they clear",
        "test endpoint 1: the flood ended; 3 unauthenticated connections were closed unread"]
