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
