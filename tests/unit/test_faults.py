import pytest

from flintlock.testing.faults import InjectedFailure, RaiseOnce


def test_raise_once_fails_the_first_time_only(tmp_path):
    fail = RaiseOnce(tmp_path / "marker", 3)
    assert [fail(v) for v in (1, 2)] == [1, 2]
    with pytest.raises(InjectedFailure):
        fail(3)
    assert (tmp_path / "marker").exists()
    assert RaiseOnce(tmp_path / "marker", 3)(3) == 3  # a restarted job passes it
