"""Duration, Time and Instant: factories, conversions, value semantics, pickling."""

import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flintlock.common import Duration, Instant, Time


def test_duration_factories_agree_on_milliseconds() -> None:
    assert Duration.of_millis(1500).to_milliseconds() == 1500
    assert Duration.of_seconds(2).to_milliseconds() == 2000
    assert Duration.of_minutes(3).to_milliseconds() == 180_000
    assert Duration.of_hours(1).to_milliseconds() == 3_600_000
    assert Duration.of_days(1).to_milliseconds() == 86_400_000
    assert Duration.of_nanos(2_500_000).to_milliseconds() == 2
    assert Duration.of_nanos(2_500_000).to_nanos() == 2_500_000


def test_negative_duration_truncates_toward_zero_like_java() -> None:
    assert Duration.of_nanos(-1_500_000).to_milliseconds() == -1


def test_duration_equality_hash_and_order() -> None:
    assert Duration.of_seconds(1) == Duration.of_millis(1000)
    assert hash(Duration.of_seconds(1)) == hash(Duration.of_millis(1000))
    assert Duration.of_millis(1) < Duration.of_millis(2)
    assert Duration.of_millis(1) != Time.milliseconds(1)


def test_time_factories() -> None:
    assert Time.seconds(5).to_milliseconds() == 5000
    assert Time.minutes(1) == Time.milliseconds(60_000)
    assert Time.hours(2).to_milliseconds() == 7_200_000
    assert Time.days(1).to_duration() == Duration.of_days(1)
    assert str(Time.milliseconds(7)) == "7 ms"


@pytest.mark.parametrize("bad", [1.5, "1", True, None])
def test_non_integer_amounts_are_rejected(bad: object) -> None:
    with pytest.raises(TypeError):
        Duration.of_seconds(bad)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Time.seconds(bad)  # type: ignore[arg-type]


def test_values_are_immutable() -> None:
    with pytest.raises(AttributeError):
        Duration.of_millis(1)._nanos = 5  # type: ignore[misc]
    with pytest.raises(AttributeError):
        Time.seconds(1)._millis = 5  # type: ignore[misc]


def test_instant_normalises_nanos_and_converts_to_epoch_millis() -> None:
    assert Instant(1, 1_500_000_000) == Instant(2, 500_000_000)
    assert Instant.of_epoch_milli(1234).to_epoch_milli() == 1234
    assert Instant.of_epoch_milli(-1).seconds == -1
    assert Instant.of_epoch_milli(-1).nanos == 999_000_000
    assert Instant(1, 0) < Instant(1, 1)


@given(st.integers(min_value=-(2**62), max_value=2**62))
def test_every_value_survives_pickling(amount: int) -> None:
    for value in (Duration.of_nanos(amount), Time.milliseconds(amount),
                  Instant.of_epoch_milli(amount)):
        assert pickle.loads(pickle.dumps(value)) == value


@given(st.integers(min_value=-(2**50), max_value=2**50))
def test_instant_epoch_milli_round_trips(millis: int) -> None:
    assert Instant.of_epoch_milli(millis).to_epoch_milli() == millis
