import pytest

from flintlock.testing.environments import local_configuration
from flintlock.testing.faults import InjectedFailure, RaiseOnce, RaiseOnceAfter, RaiseRepeatedly


def test_raise_once_fails_the_first_time_only(tmp_path):
    fail = RaiseOnce(tmp_path / "marker", 3)
    assert [fail(v) for v in (1, 2)] == [1, 2]
    with pytest.raises(InjectedFailure):
        fail(3)
    assert (tmp_path / "marker").exists()
    assert RaiseOnce(tmp_path / "marker", 3)(3) == 3  # a restarted job passes it


def test_raise_once_after_waits_for_a_matching_file_then_fails_once(tmp_path):
    fail = RaiseOnceAfter(tmp_path / "marker", tmp_path / "chk-*", every=2, delay_s=0.0)
    assert [fail(v) for v in range(4)] == list(range(4))  # nothing matches yet
    (tmp_path / "chk-1").mkdir()
    assert fail(4) == 4  # the fifth record: checked on every second record only
    with pytest.raises(InjectedFailure):
        fail(5)
    assert [fail(v) for v in range(6, 10)] == [6, 7, 8, 9]
    assert RaiseOnceAfter(tmp_path / "marker", tmp_path / "chk-*")(1) == 1


def test_local_configuration_sets_checkpoints_restarts_and_options(tmp_path):
    config = local_configuration(tmp_path, restart_attempts=2, restart_delay="5 ms",
                                 options={"execution.buffer-timeout": "7 ms"})
    assert config.get_string("execution.checkpointing.dir", "") == str(tmp_path / "chk")
    assert config.get_string("restart-strategy.type", "") == "fixed-delay"
    assert config.get_string("restart-strategy.fixed-delay.attempts", "") == "2"
    assert config.get_string("execution.buffer-timeout", "") == "7 ms"
    assert local_configuration(tmp_path).get_string("restart-strategy.type", "") == "none"


def test_raise_repeatedly_is_due_once_a_newer_checkpoint_completed(tmp_path):
    fail = RaiseRepeatedly(tmp_path / "failure", tmp_path / "chk", 2, first_after=1)
    checkpoint = tmp_path / "chk" / "job"
    (checkpoint / "chk-1").mkdir(parents=True)
    (checkpoint / "chk-1" / "_metadata").touch()
    assert not fail.due() and fail(0) == 0  # not newer than first_after
    (checkpoint / "chk-2").mkdir()
    (checkpoint / "chk-2" / "_metadata").touch()
    assert fail.due()
    with pytest.raises(InjectedFailure):
        fail(1)
    assert fail.failures() == 1 and not fail.due()  # the next one needs a newer checkpoint
    (checkpoint / "chk-3").mkdir()
    (checkpoint / "chk-3" / "_metadata").touch()
    assert fail.due()
    with pytest.raises(InjectedFailure):
        fail(2)
    (checkpoint / "chk-4").mkdir()
    (checkpoint / "chk-4" / "_metadata").touch()
    assert fail.failures() == 2 and not fail.due() and fail(3) == 3  # all happened
